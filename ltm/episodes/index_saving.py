"""Space indexes across restarts: loading one from the pages a previous process saved, and saving it
again (issue 19). The part of `LexicalIndexes` (lexical.py) that speaks to the saved pages
(`IndexPages`, index_pages.py); `LexicalIndexes` builds on it, and the state both keep per space lives here.

- A load is taken only when the saved head is clean, and only once it is caught up: the writes that
  landed meanwhile (the plugin is the only writer) are replayed onto it, and the result is checked
  against the store's first page at a moment no write is out; one write in doubt, or any disagreement,
  makes it a build from the store.
- A save (spaces above `FIRST_PAGE`) runs `save_delay` seconds after the last write, or at once after a
  build; one that overlaps a write is abandoned (the next write schedules another).
"""

from __future__ import annotations

import abc
import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import partial

from ..errors import HostFailure
from ..spaces import L2Space
from ..tasks import detached
from .index_pages import IndexPages, rows_of
from .model import Episode
from .space_index import SpaceIndex

log = logging.getLogger("LongTermMemory")

# One page of a space: (space, limit, offset) -> (records, more pages follow).
PageLoader = Callable[[L2Space, int, int], Awaitable[tuple[list[Episode], bool]]]
FIRST_PAGE = 200  # a space that fits in one page is indexed inside the call that needs it, and never saved
YIELD_EVERY = 2000  # records handled between two yields to the event loop while building, loading, saving


class SavedIndexes(abc.ABC):
    """The per-space state of every index of this process, and their loads from and saves to storage."""

    def __init__(self, loader: PageLoader, pages: IndexPages | None) -> None:
        self._page = loader
        self._pages = pages
        self._ready: dict[L2Space, SpaceIndex] = {}
        self._guards: dict[L2Space, asyncio.Lock] = {}  # a writer marking the saved head vs a save publishing it
        self._writes: Counter[L2Space] = Counter()  # bumped when a write starts or an index is dropped
        self._inflight: Counter[L2Space] = Counter()  # writes started and not finished
        self._saving: dict[L2Space, asyncio.Task[None]] = {}
        self._save_due: dict[L2Space, float] = {}
        self._forgetting: dict[str, asyncio.Task[None]] = {}
        # Writes that landed while a saved index was loading, replayed onto it (None: one was in doubt).
        self._replay: dict[L2Space, list[Callable[[SpaceIndex], None]] | None] = {}
        self.save_delay = 0.0  # set by the subclass (lexical.SAVE_DELAY)
        self.loads = 0  # how many indexes came from saved pages

    @abc.abstractmethod
    async def _build(self, key: L2Space) -> None:
        """Read the space from the store (lexical.py): what a load that cannot be trusted falls back to."""

    @staticmethod
    def _done(tasks: dict[L2Space, asyncio.Task[None]], key: L2Space, task: asyncio.Task[None]) -> None:
        if tasks.get(key) is task:
            del tasks[key]

    def _forget_saved(self, kb_id: str) -> None:
        """Remove every saved index of the KB, in the background (once at a time per KB)."""
        if self._pages is not None and kb_id not in self._forgetting:
            task = detached(self._forget(kb_id))
            self._forgetting[kb_id] = task
            task.add_done_callback(lambda _t: self._forgetting.pop(kb_id, None))

    async def _saved(self, key: L2Space) -> bool:
        if self._pages is None:
            return False
        forgetting = self._forgetting.get(key.kb_id)
        if forgetting is not None:
            await asyncio.gather(forgetting, return_exceptions=True)
        try:
            return await self._pages.is_clean(key)
        except HostFailure:
            return False

    async def _load(self, key: L2Space) -> None:
        kb_id = key.kb_id
        assert self._pages is not None
        try:
            index = await self._pages.load(key)
            if index is not None and await self._caught_up(key, index):
                return
            if index is not None:
                log.info("[LongTermMemory] saved index of kb=%s does not match the store; building", kb_id)
        except HostFailure as exc:
            log.info("[LongTermMemory] saved index of kb=%s not loaded (%s)", kb_id, exc.code)
        except Exception:  # a background load must never surface; a build follows
            log.warning("[LongTermMemory] saved index of kb=%s not loaded; building", kb_id, exc_info=True)
        finally:
            self._replay.pop(key, None)
        await self._build(key)

    async def _caught_up(self, key: L2Space, index: SpaceIndex) -> bool:
        """The loaded pages plus the writes that landed meanwhile (the plugin is the only writer: each is
        replayed in order), checked against the store's first page at a moment no write is out; then kept.
        False when a write was in doubt or the store disagrees (then the space is built from the store)."""
        replayed = 0
        for _ in range(3):
            for _wait in range(1500):  # a write out now decides what the page shows: wait for it (30 s at most)
                if not self._inflight[key]:
                    break
                await asyncio.sleep(0.02)
            else:
                return False
            pending = self._replay.get(key)
            if pending is None:
                return False
            for change in pending:
                change(index)
            replayed += len(pending)
            pending.clear()
            before = self._writes[key]
            first, _ = await self._page(key, FIRST_PAGE, 0)
            if self._writes[key] != before:
                continue  # a write started while the page was read: replay it and look again
            if not index.agrees_with(first):
                return False
            self.loads += 1
            self._ready[key] = index
            self._replay.pop(key, None)  # from now on writes go to the ready index
            log.info("[LongTermMemory] index loaded kb=%s records=%d (writes replayed: %d)", key.kb_id, len(index),
                     replayed)
            if replayed:
                self._schedule_save(key, self.save_delay)  # the saved head is stale since those writes
            return True
        return False

    async def _forget(self, kb_id: str) -> None:
        assert self._pages is not None
        try:
            await self._pages.forget_kb(kb_id)
        except HostFailure as exc:
            log.warning("[LongTermMemory] saved indexes of kb=%s not removed (%s); their heads stay stale",
                        kb_id, exc.code)
        except Exception:  # background work: logged here, or only as an unretrieved task
            log.warning("[LongTermMemory] saved indexes of kb=%s not removed", kb_id, exc_info=True)

    def _schedule_save(self, key: L2Space, delay: float) -> None:
        index = self._ready.get(key)
        if self._pages is None or index is None or len(index) <= FIRST_PAGE:
            return
        self._save_due[key] = time.monotonic() + delay
        if key not in self._saving:
            task = detached(self._saver(key))
            self._saving[key] = task
            task.add_done_callback(partial(self._done, self._saving, key))

    async def _saver(self, key: L2Space) -> None:
        kb_id = key.kb_id
        assert self._pages is not None
        pages = self._pages
        try:
            while key in self._save_due:
                wait = self._save_due[key] - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                    continue
                del self._save_due[key]
                index = self._ready.get(key)
                if index is None or self._inflight[key]:
                    continue  # a write is out: it schedules the next save when it lands
                before = self._writes[key]
                rows = []
                for row in rows_of(index):
                    rows.append(row)
                    if len(rows) % YIELD_EVERY == 0:
                        await asyncio.sleep(0)  # a write meanwhile makes this save stale: `current` says so

                def current(before: int = before) -> bool:
                    return self._writes[key] == before and not self._inflight[key]

                await pages.save(key, rows, current, self._guards.setdefault(key, asyncio.Lock()))
        except HostFailure as exc:
            log.info("[LongTermMemory] index of kb=%s not saved (%s); it is built again after a restart", kb_id,
                     exc.code)
        except Exception:  # background work: logged here, or only as an unretrieved task
            log.warning("[LongTermMemory] index of kb=%s not saved; it is built again after a restart", kb_id,
                        exc_info=True)

