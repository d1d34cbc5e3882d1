"""Every space index of this process (`space_index.py`), built once and kept current (E6, E7).

Why: the vector window (the nearest `vector_window` records) misses memories that share the
question's rare words but not its overall meaning, and the host's own "full text" search on
LangBot's Chroma is a substring match of the whole message (useless for a natural-language
question). Listings need every record of a space in order, which stores that page by offset
cannot give cheaply. The plugin is the only writer of its memory KB, so it keeps its own index of
each space: whole-space word candidates and listing order with **no host call per turn**.

- Keyed by the space (`L2Space`); made the first time recall or a listing needs it: loaded from the
  pages a previous process saved (`index_pages.py`) when their head is clean and the store's first
  page agrees with them, else built by paging every record of the space (`VectorIndex.page`). A
  space of at most `FIRST_PAGE` records is built inside that call; a bigger one (or a saved one) in
  a background task, so no turn ever waits (at 100,000 records a build pages for minutes on stores
  that page by offset); until it is ready, callers go on without it. No `MAX_ENUMERATED` cut: a
  partial index would silently recall less. Each page is re-checked for the space, as every read
  is (`EpisodeStore._own`).
- Kept current by the store's own writes (`EpisodeStore.upsert_batch`, `delete`): `writing()` runs
  before each (the saved head is marked stale first, or, before a delete, the saved index is removed,
  since its pages hold the deleted records' words; the write counts as started), then a write
  that succeeded is applied, and one that failed or whose outcome is unknown drops the space's index
  (rebuilt at the next use); removing a KB drops all of its indexes, saved ones too. A write during
  a build makes it stale (offsets shift under it): it is not kept and is tried again once. A write
  during a load of saved pages is replayed onto them (the plugin is the only writer), and the
  result checked against the store once no write is out; one in doubt makes the load a build.
- Saved (spaces above `FIRST_PAGE`): right after a build from the store, and `save_delay` seconds
  after the last write; a save that overlaps a write is abandoned (the next write schedules one).
  Loading and saving are `SavedIndexes` (`index_saving.py`), which this class builds on.
- Corrected when the store disagrees: a record a fetch finds missing, or found with another status,
  or a search hit the index does not know, is fixed in place (`heal`) and, since one wrong entry
  suggests more, the space is read again in the background. The store's reads do this themselves
  (`store.py`): whoever reads through the store keeps the index true without knowing of it.
- Holds every status; callers filter, so archived or superseded records are found only when the
  recall's filters ask for them.
- Background work runs in a fresh `contextvars.Context` (docs/HOST-FACTS.md 10: a task that
  inherited the invocation of the turn that started it would fail once that turn's handler returned).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Coroutine, Iterable, Sequence
from functools import partial
from typing import Any

from ..spaces import L2Space
from ..tasks import detached
from .index_pages import IndexPages
from .index_saving import FIRST_PAGE, YIELD_EVERY, PageLoader, SavedIndexes
from .model import Episode, newest_rows
from .space_index import SpaceIndex

log = logging.getLogger("LongTermMemory")

# A space bigger than FIRST_PAGE (index_saving.py) is indexed in the background, in pages this big (stores
# page by offset, so fewer, larger pages cost far less at 100,000 records); callers go on without it meanwhile.
BUILD_PAGE = 1000
SAVE_DELAY = 30.0  # seconds after the last write before a big space's index is saved again


class LexicalIndexes(SavedIndexes):
    """Every space's index in this process, and the bookkeeping that keeps them current (loading and
    saving them: `SavedIndexes`, index_saving.py)."""

    def __init__(self, loader: PageLoader, pages: IndexPages | None = None) -> None:
        super().__init__(loader, pages)
        self._locks: dict[L2Space, asyncio.Lock] = {}  # one build or load at a time per space
        self._healed: dict[L2Space, tuple[int, int]] = {}  # the last correction's count of writes: before, after
        self._building: dict[L2Space, asyncio.Task[None]] = {}
        self.save_delay = SAVE_DELAY
        self.builds = 0  # how many times a space was read in full from the store (tests and benchmarks look)

    # ------------------------------------------------------------------ reads
    async def space_unless_busy(self, key: L2Space) -> SpaceIndex | None:
        """As `space`, but None instead of waiting for a read of the space already under way: a write
        (its duplicate check) never queues behind an index build."""
        lock = self._locks.get(key)
        if key not in self._ready and (key in self._building or (lock is not None and lock.locked())):
            return None
        return await self.space(key)

    async def space(self, key: L2Space) -> SpaceIndex | None:
        """The space's index; None while one is made in the background, or when a small space could not
        be read consistently now."""
        ready = self._ready.get(key)
        if ready is not None or key in self._building:
            return ready
        async with self._locks.setdefault(key, asyncio.Lock()):
            for _ in range(2):
                ready = self._ready.get(key)
                if ready is not None or key in self._building:
                    return ready
                self._replay[key] = []  # before the head is read: no write that lands after it is missed
                if await self._saved(key):
                    self._background(key, self._load(key))
                    return None
                self._replay.pop(key, None)
                before = self._writes[key]
                first, more = await self._page(key, FIRST_PAGE, 0)
                if more:
                    self._background(key, self._build(key))
                    return None
                self.builds += 1
                if self._writes[key] != before:
                    log.info("[LongTermMemory] index of a space changed while it was built; again")
                    continue
                return self._keep(key, first)
        return None

    def _background(self, key: L2Space, work: Coroutine[Any, Any, None]) -> None:
        task = detached(work)
        self._building[key] = task
        task.add_done_callback(partial(self._done, self._building, key))

    async def flush(self) -> None:
        """Save now what would be saved after `save_delay`, and wait for it (shutdown, benchmarks)."""
        keys = {*self._save_due, *self._saving}
        for task in list(self._saving.values()):
            task.cancel()  # asleep until the old due time, or part-way: a save starts afresh below
        await asyncio.gather(*self._saving.values(), return_exceptions=True)
        self._saving.clear()
        for key in keys:
            self._schedule_save(key, 0.0)
        await self.settled()

    async def settled(self) -> None:
        """Wait for the background builds, loads and saves running now (tests, benchmarks, shutdown)."""
        while self._building or self._saving or self._forgetting:
            running = [*self._building.values(), *self._saving.values(), *self._forgetting.values()]
            await asyncio.gather(*running, return_exceptions=True)

    async def _build(self, key: L2Space) -> None:
        kb_id = key.kb_id
        try:
            for _ in range(2):
                before = self._writes[key]
                episodes: list[Episode] = []
                offset, more = 0, True
                while more:
                    page, more = await self._page(key, BUILD_PAGE, offset)
                    episodes.extend(page)
                    offset += BUILD_PAGE
                    if self._writes[key] != before:
                        break  # stale already: start again
                self.builds += 1
                index = SpaceIndex(key.space_key)
                for number, episode in enumerate(newest_rows(episodes), start=1):
                    index.add(episode)
                    if number % YIELD_EVERY == 0:
                        await asyncio.sleep(0)  # a big space: turns running meanwhile are not held up
                if self._writes[key] == before:
                    self._ready[key] = index
                    log.info("[LongTermMemory] index built kb=%s records=%d", kb_id, len(index))
                    self._schedule_save(key, 0.0)
                    return
                log.info("[LongTermMemory] index of a space changed while it was built; again")
        except Exception as exc:  # noqa: BLE001 - a background build must never surface; the next use retries
            log.info("[LongTermMemory] index of kb=%s not built (%s); vector window only", kb_id,
                     type(exc).__name__)

    def _keep(self, key: L2Space, episodes: Iterable[Episode]) -> SpaceIndex:
        index = SpaceIndex(key.space_key)
        for episode in newest_rows(episodes):
            index.add(episode)
        self._ready[key] = index
        log.info("[LongTermMemory] index built kb=%s records=%d", key.kb_id, len(index))
        return index

    def loaded(self, key: L2Space) -> SpaceIndex | None:
        return self._ready.get(key)

    # ------------------------------------------------------------------ corrections from the store
    def mark(self, key: L2Space) -> int:
        """Taken before a read whose answer may go to `heal`: writes counted since then explain differences."""
        return self._writes[key]

    def heal(self, key: L2Space, since: int, found: Sequence[Episode] = (), missing: Iterable[str] = ()) -> None:
        """The store showed `found` (records of the space, re-checked) and lacks `missing`, in a read that
        started at `mark` `since`: where the index disagrees, correct it now and read the space again in the
        background."""
        kb_id = key.kb_id
        index = self._ready.get(key)
        writes = self._writes[key]
        # A correction counts as a write (below) yet explains no difference in a read that began before it:
        # the store shows a read's rows here one at a time, as they are decoded (`store.Hit`).
        current = writes == since or self._healed.get(key) == (since, writes)
        if index is None or self._inflight[key] or not current:
            return  # a write during or since the read explains any difference
        wrong = [e for e in found if index.status(e.episode_id) is not e.status]
        gone = [i for i in missing if i in index]
        if not wrong and not gone:
            return
        for episode in wrong:
            index.add(episode)
        for episode_id in gone:
            index.remove(episode_id)
        if key in self._building:  # a read's later rows, one by one: said once, when the space is read again
            log.info("[LongTermMemory] index of kb=%s corrected from the store (%d record(s)) while it is read "
                     "again", kb_id, len(wrong) + len(gone))
        else:
            log.warning("[LongTermMemory] index of kb=%s disagreed with the store (%d record(s)); reading the "
                        "space again", kb_id, len(wrong) + len(gone))
            self._writes[key] += 1  # a save now would keep the wrong rest
            self._healed[key] = (since, self._writes[key])
            self._background(key, self._build(key))

    # ------------------------------------------------------------------ writes (the store calls these)
    @contextlib.asynccontextmanager
    async def writing(self, key: L2Space, *, deleting: bool = False) -> AsyncIterator[None]:
        """Around one store write to the space: counts it as started (no build, load or save that
        overlaps it is kept) and marks the space's saved index stale first, or, when the write
        deletes records, removes it (its pages hold their words) (HostError: nothing may be written)."""
        started = False
        try:
            async with self._guards.setdefault(key, asyncio.Lock()):
                self._writes[key] += 1
                self._inflight[key] += 1
                started = True
                if self._pages is not None:
                    await (self._pages.discard if deleting else self._pages.mark_stale)(key)
            yield
        finally:
            if started:
                self._inflight[key] -= 1
                if not self._inflight[key]:
                    del self._inflight[key]

    def upserted(self, key: L2Space, episodes: Iterable[Episode]) -> None:
        for episode in episodes:
            index = self._ready.get(key)
            if index is not None:
                index.add(episode)
                self._schedule_save(key, self.save_delay)
            elif (pending := self._replay.get(key)) is not None:
                pending.append(partial(SpaceIndex.add, episode=episode))

    def deleted(self, key: L2Space, episode_ids: Iterable[str]) -> None:
        index = self._ready.get(key)
        if index is not None:
            for episode_id in episode_ids:
                index.remove(episode_id)
            self._schedule_save(key, self.save_delay)
        elif (pending := self._replay.get(key)) is not None:
            pending.extend(partial(SpaceIndex.remove, episode_id=i) for i in episode_ids)

    def drop_space(self, key: L2Space) -> None:
        """In doubt (a failed or unknown write): forget the index; the next use rebuilds it."""
        self._writes[key] += 1
        self._ready.pop(key, None)
        if key in self._replay:
            self._replay[key] = None  # a load running now is not kept

    def drop_kb(self, kb_id: str, *, saved: bool = True) -> None:
        """The KB was removed or its records rewritten by another path: forget its indexes (`saved`: and disk)."""
        for key in [k for k in (*self._ready, *self._writes, *self._saving, *self._replay) if k.kb_id == kb_id]:
            self._writes[key] += 1
            self._ready.pop(key, None)
            if key in self._replay:
                self._replay[key] = None
            self._save_due.pop(key, None)
            saver = self._saving.pop(key, None)
            if saver is not None:
                saver.cancel()
        if saved:
            self._forget_saved(kb_id)
