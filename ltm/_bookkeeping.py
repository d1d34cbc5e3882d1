"""The one writer of plugin storage: `Bookkeeping`, the `JsonStore` that can also write.

Memory (profiles, candidates, drafts, document indexes, the KB configuration, settings) changes only
inside a gated write, through `WriteTx.set/delete` (ltm/_gate.py): serialized, fenced, audited. The
records that are not memory are written here directly, by the few modules handed this object:

- the audit log (`_audit.py`: appends, and a person's erasure rewriting entries to name "(erased)")
  and the fences and write-ahead markers (`_fences.py`): what the gate itself keeps;
- the injection snapshot and the per-scope marker (`diagnostics.py`): rewritten freely, never audited;
  the snapshot is written after the turn, at most once per few seconds per chat (`set_later`: nobody
  waits for a diagnostic record);
- the names a chat and its latest speaker go by (`chat_labels.py`): labels for operators, not memory;
- the saved word-index pages (`episodes/index_pages.py`): a cache of the vector records, rebuilt from them
  (and removed before records are deleted, so no page keeps their words);
- the layout marker and the one-time storage-layout migration (`migrations/`): run before, or outside,
  any memory write.

Every other module receives plugin storage typed as the read-only `JsonStore`, so a storage write
outside the gate fails type checking, and only the modules above (and `parts.py`, which assembles
them) may import this one: the `only_importers` contract in pyproject.toml
(scripts/import_contracts.py) fails for any other importer.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from ._storage import JsonStore
from .errors import HostError, HostFailure
from .ports import KeyValueStore
from .tasks import detached

log = logging.getLogger("LongTermMemory")


class Bookkeeping(JsonStore):
    def __init__(self, port: KeyValueStore, *, cache: bool = True) -> None:
        super().__init__(port, cache=cache)
        self._later: dict[str, bytes] = {}  # key -> the newest value waiting to be written (`set_later`)
        self._timers: dict[str, asyncio.TimerHandle] = {}  # key -> when its writer starts
        self._writers: dict[str, asyncio.Task[None]] = {}

    async def set(self, key: str, value: Any, *, keep: bool = True) -> None:
        data = _encoded(key, value)
        await self._ensure_ready()
        await self._settle(key)
        await self._put(key, data, keep)

    def set_later(self, key: str, value: Any, *, delay: float = 0.0) -> None:
        """Write `value` after `delay` seconds, without waiting for it: a record no caller waits for (the
        injection snapshot). Until it is written, reads see it; values given meanwhile replace it, so a key
        is written at most once per `delay`; a `set` or `delete` of the key drops what waits, waits for a
        write in flight and wins. A write that fails is logged, and the key keeps what the host holds. A
        value that cannot be encoded is refused now."""
        self._later[key] = _encoded(key, value)
        if key in self._writers or key in self._timers:
            return  # the writer on its way writes the newest value
        if delay > 0:
            self._timers[key] = asyncio.get_running_loop().call_later(delay, self._start_writer, key)
        else:
            self._start_writer(key)

    def _start_writer(self, key: str) -> None:
        self._timers.pop(key, None)
        if key in self._later and key not in self._writers:
            task = detached(self._write_later(key))  # the turn that asked may have ended before the write
            self._writers[key] = task

    async def _write_later(self, key: str) -> None:
        try:
            await self._ensure_ready()
            while (data := self._later.get(key)) is not None:
                try:
                    await self._put(key, data, True)
                except HostFailure as exc:
                    log.warning("[LongTermMemory] storage record %s not written: %s", key[:60], exc.code)
                if self._later.get(key) is data:
                    del self._later[key]
        except Exception:  # a background write must not die silently
            log.exception("[LongTermMemory] storage record %s not written", key[:60])
        finally:
            self._later.pop(key, None)
            self._writers.pop(key, None)

    async def _settle(self, key: str) -> None:
        """Before a write or delete of `key`: nothing waiting is written after it, and a write in flight lands first."""
        self._later.pop(key, None)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        writer = self._writers.get(key)
        if writer is not None and writer is not asyncio.current_task():
            await asyncio.wait([writer])  # not cancelled with its waiter: a write once sent is seen through

    async def writes_landed(self) -> None:
        """Write now what `set_later` keeps waiting, and wait for every such write (tests and benchmarks,
        which count what a turn wrote)."""
        for key in list(self._timers):
            self._timers.pop(key).cancel()
            self._start_writer(key)
        while self._writers:
            await asyncio.wait(list(self._writers.values()))

    async def _read(self, key: str, keep: bool = True) -> bytes | None:
        waiting = self._later.get(key)
        return waiting if waiting is not None else await super()._read(key, keep)

    async def keys(self, prefix: str = "") -> list[str]:
        listed = await super().keys(prefix)
        waiting = [k for k in self._later if k.startswith(prefix) and k not in listed]
        return sorted(listed + waiting) if waiting else listed

    async def _put(self, key: str, data: bytes, keep: bool) -> None:
        def stored() -> None:
            if self._known is not None:
                self._known.add(key)
                self._remember(key, data, keep)

        await self._changed(key, self._port.set(key, data), stored)

    async def delete(self, key: str) -> None:
        await self._ensure_ready()
        await self._settle(key)

        def deleted() -> None:
            if self._known is not None:
                self._known.discard(key)

        await self._changed(key, self._port.delete(key), deleted)

    def raw(self) -> Bookkeeping:
        """The same storage without the first-use step and without the cache (for the step itself)."""
        return Bookkeeping(self._port, cache=False)


def _encoded(key: str, value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        # Nothing reached the host: an authoritative, local refusal.
        raise HostError(f"storage record {key[:60]} could not be encoded ({type(exc).__name__})") from None
