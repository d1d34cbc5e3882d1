"""Persisted write fences (SPEC F1-F4).

A memory space is one of:
- `l1:<scope_key>`               L1 profiles, audit, snapshots of one session;
- `l2:<kb_id>:<user_key>`        L2 episodes of one isolation key in one KB;
- `installation`                 the installation-wide `kb_configs` record.

When a host write's outcome is unknown, the space's fence is raised: the live
process refuses further writes at once, and the fence is persisted so a restarted
plugin refuses too. Reads never look at fences.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from .errors import FencedError
from .store import JsonStore
from .timefields import now_iso

log = logging.getLogger("LongTermMemory")

INSTALLATION_SPACE = "installation"
_PREFIX = "fence:"


def l1_space(scope_key: str) -> str:
    return f"l1:{scope_key}"


def l2_space(kb_id: str, user_key: str) -> str:
    return f"l2:{kb_id}:{user_key}"


def describe_space(space: str) -> dict[str, str]:
    """The parts of a fence space key, for views that show fences (the console)."""
    if space == INSTALLATION_SPACE:
        return {"kind": "installation"}
    if space.startswith("l1:"):
        return {"kind": "l1", "scope_key": space[3:]}
    if space.startswith("l2:"):
        kb_id, _, user_key = space[3:].partition(":")
        return {"kind": "l2", "kb_id": kb_id, "user_key": user_key}
    return {"kind": "other"}


@dataclass(frozen=True)
class Fence:
    space: str
    operation: str
    reason: str
    since: str

    def to_dict(self) -> dict[str, Any]:
        return {"space": self.space, "operation": self.operation, "reason": self.reason, "since": self.since}


class FenceRegistry:
    def __init__(self, store: JsonStore):
        self._store = store
        self._fences: dict[str, Fence] | None = None

    async def _loaded(self) -> dict[str, Fence]:
        if self._fences is None:
            fences: dict[str, Fence] = {}
            for key in await self._store.keys(_PREFIX):
                raw = await self._store.get(key)
                if isinstance(raw, dict):
                    space = key[len(_PREFIX):]
                    fences[space] = Fence(space, str(raw.get("operation", "")), str(raw.get("reason", "")),
                                          str(raw.get("since", "")))
            self._fences = fences
        return self._fences

    async def get(self, space: str) -> Fence | None:
        return (await self._loaded()).get(space)

    async def all(self) -> list[Fence]:
        return sorted((await self._loaded()).values(), key=lambda f: f.space)

    async def check(self, space: str) -> None:
        fence = await self.get(space)
        if fence is not None:
            raise FencedError(
                f"memory writes here are paused since {fence.since}: an earlier {fence.operation} may or may not "
                "have reached the store. An admin must check and clear the fence (Memory Console > Diagnostics)."
            )

    async def raise_fence(self, space: str, operation: str, reason: str) -> Fence:
        fence = Fence(space, operation, reason[:200], now_iso())
        (await self._loaded())[space] = fence  # refuse in this process even if persisting fails
        try:
            await self._store.set(_PREFIX + space, fence.to_dict())
        except Exception:  # noqa: BLE001 - the in-memory fence still protects this process
            log.exception("[LongTermMemory] could not persist fence for %s", space)
        log.warning("[LongTermMemory] fence raised space=%s operation=%s", space, operation)
        return fence

    async def clear(self, space: str) -> bool:
        fences = await self._loaded()
        existed = space in fences
        await self._store.delete(_PREFIX + space)
        fences.pop(space, None)
        return existed
