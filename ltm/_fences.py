"""Persisted write fences (F1-F4 in docs/REQUIREMENTS.md).

When a host write's outcome is unknown, the space's fence is raised: this process
refuses further writes there at once, and the fence is persisted so a restarted
plugin refuses too. A fence whose own storage write fails stays in memory and is
persisted again on every later fence check until it is stored. Reads never look
at fences.

A process that dies in the middle of a write sees no failure, so the gate stores a
write-ahead marker of the space before the write's first host write and removes it
after the write's audit entry (`mark` / `unmark`). A marker found when a process
first loads its fences was left by a dead one (this process has sent nothing yet):
it becomes a persisted fence of exactly that space, "the plugin stopped during
<operation>", and the stale marker is then removed.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from ._bookkeeping import Bookkeeping
from ._storage import (
    FENCE_PREFIX,
    WRITE_MARK_PREFIX,
    fence_key,
    space_of_fence_key,
    space_of_write_mark_key,
    write_mark_key,
)
from .errors import FencedError, HostError, HostFailure, LTMError
from .operations import Operation
from .spaces import Space
from .timefields import now_iso

log = logging.getLogger("LongTermMemory")


@dataclass(frozen=True)
class Fence:
    space: Space
    operation: str
    reason: str
    since: str
    target: str = ""  # what the write was changing, where a restart must know it (the KB a removal removed)

    def to_dict(self) -> dict[str, Any]:
        return {"space": self.space.key, "operation": self.operation, "reason": self.reason, "since": self.since}

    def record(self) -> dict[str, Any]:
        """What is stored: `to_dict` (what the surfaces show) and the target, when there is one."""
        return {**self.to_dict(), "target": self.target} if self.target else self.to_dict()


class FenceRegistry:
    def __init__(self, store: Bookkeeping) -> None:
        self._store = store
        self._fences: dict[str, Fence] | None = None
        self._unpersisted: set[str] = set()
        self._stale_marks: set[str] = set()  # markers stored by no write in flight of this process
        self._loading = asyncio.Lock()

    async def _loaded(self) -> dict[str, Fence]:
        if self._fences is None:
            async with self._loading:  # one load: a second one could take a live marker for a stale one
                if self._fences is None:
                    self._fences = await self._load()
                    await self._persist_pending()
        return self._fences

    async def _load(self) -> dict[str, Fence]:
        fences: dict[str, Fence] = {}
        for key in await self._store.keys(FENCE_PREFIX):
            raw = await self._store.get(key)
            space = Space.from_key(space_of_fence_key(key))
            if isinstance(raw, dict) and space is not None:
                fences[space.key] = Fence(space, str(raw.get("operation", "")), str(raw.get("reason", "")),
                                          str(raw.get("since", "")), str(raw.get("target") or ""))
        for key in await self._store.keys(WRITE_MARK_PREFIX):
            space = Space.from_key(space_of_write_mark_key(key))
            if space is None:
                continue
            self._stale_marks.add(space.key)
            if space.key not in fences:
                raw = await self._store.get(key)
                raw = raw if isinstance(raw, dict) else {}
                operation = str(raw.get("operation") or "a write")
                fences[space.key] = Fence(space, operation, f"the plugin stopped during {operation}",
                                          str(raw.get("since") or now_iso()), str(raw.get("target") or ""))
                self._unpersisted.add(space.key)
                log.warning("[LongTermMemory] fence raised space=%s: the plugin stopped during %s",
                            space.key, operation)
        return fences

    async def get(self, space: Space) -> Fence | None:
        return (await self._loaded()).get(space.key)

    async def all(self) -> list[Fence]:
        await self._persist_pending()
        return sorted((await self._loaded()).values(), key=lambda f: f.space.key)

    async def check(self, space: Space) -> None:
        await self._persist_pending()
        fence = await self.get(space)
        if fence is not None:
            raise FencedError(
                f"writes to this memory are paused since {fence.since}: an earlier {fence.operation} may or may "
                "not have reached the store; an admin must check the records and clear the fence",
                space=space.describe(), since=fence.since, operation=fence.operation,
            )

    async def raise_fence(self, space: Space, operation: Operation, reason: str, target: str = "") -> Fence:
        fence = Fence(space, str(operation), reason[:200], now_iso(), target)
        (await self._loaded())[space.key] = fence  # refuses in this process even if persisting fails
        self._unpersisted.add(space.key)
        await self._persist_pending()
        log.warning("[LongTermMemory] fence raised space=%s operation=%s", space.key, operation)
        return fence

    @property
    def unpersisted(self) -> list[str]:
        return sorted(self._unpersisted)

    async def _persist_pending(self) -> None:
        if self._fences is None or not (self._unpersisted or self._stale_marks):
            return
        for key in sorted(self._unpersisted):
            fence = self._fences.get(key)
            try:
                if fence is not None:
                    await self._store.set(fence_key(key), fence.record())
            except LTMError as exc:
                log.error("[LongTermMemory] fence for %s not persisted yet (%s); will retry", key, exc.code)
                continue
            self._unpersisted.discard(key)
        for key in sorted(self._stale_marks - self._unpersisted):
            try:  # its fence is stored: the marker has done its job
                await self._store.delete(write_mark_key(key))
            except LTMError as exc:
                log.error("[LongTermMemory] stale write marker of %s not removed yet (%s)", key, exc.code)
                continue
            self._stale_marks.discard(key)

    async def mark(self, space: Space, operation: Operation, attempts: int = 1, target: str = "") -> None:
        """The write-ahead marker of a gated write, before its first host write (the fences are loaded
        first, so a marker of this process is never taken for a dead one's). A whole record: `attempts`
        re-sends it on a refusal or a lost answer. A `target` is kept in the fence it may become."""
        await self._loaded()
        self._stale_marks.discard(space.key)  # live from now on: no clean-up may remove it meanwhile
        value = {"operation": str(operation), "since": now_iso(), **({"target": target} if target else {})}
        try:
            for attempt in range(attempts):
                try:
                    await self._store.set(write_mark_key(space.key), value)
                    return
                except HostFailure:
                    if attempt == attempts - 1:
                        raise
                    await asyncio.sleep(0.05 * (attempt + 1))
        except BaseException:
            self._stale_marks.add(space.key)  # an earlier marker may still be stored
            raise

    async def unmark(self, space: Space) -> None:
        await self._store.delete(write_mark_key(space.key))

    def leave_mark(self, space: Space) -> None:
        """A write that ended with its space fenced keeps its marker until the fence is stored (so a
        crash meanwhile still fences); it is removed at the next fence check after that."""
        self._stale_marks.add(space.key)

    async def clear(self, space: Space) -> bool:
        """Remove a fence; raises the host's error if the stored fence could not be removed."""
        fences = await self._loaded()
        existed = space.key in fences
        if space.key in self._stale_marks:  # else the next start would raise the fence again
            await self._store.delete(write_mark_key(space.key))
            self._stale_marks.discard(space.key)
        try:
            await self._store.delete(fence_key(space.key))
        except HostError:
            raise
        except BaseException:
            # The delete may or may not have landed: the fence stands and is stored again at the next
            # check, so this process and the next one agree that the space is still fenced.
            if existed:
                self._unpersisted.add(space.key)
            raise
        fences.pop(space.key, None)
        self._unpersisted.discard(space.key)
        return existed
