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
import contextvars
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Sequence
from functools import partial
from typing import Any

from ..errors import HostFailure
from ..spaces import L2Space
from .index_pages import IndexPages, rows_of
from .model import Episode, newest_rows
from .space_index import SpaceIndex

log = logging.getLogger("LongTermMemory")

SpaceKey = L2Space
# One page of a space: (space, limit, offset) -> (records, more pages follow).
PageLoader = Callable[[L2Space, int, int], Awaitable[tuple[list[Episode], bool]]]
FIRST_PAGE = 200  # a space that fits in one page is indexed inside the call that needs it ...
BUILD_PAGE = 1000  # ... a bigger one in the background, in pages this big (stores page by offset, so
# fewer, larger pages cost far less at 100,000 records); callers go on without it until it is ready
SAVE_DELAY = 30.0  # seconds after the last write before a big space's index is saved again
YIELD_EVERY = 2000  # records handled between two yields to the event loop while building, loading, saving


class LexicalIndexes:
    """Every space's index in this process, and the bookkeeping that keeps them current."""

    def __init__(self, loader: PageLoader, pages: IndexPages | None = None) -> None:
        self._page = loader
        self._pages = pages
        self._ready: dict[SpaceKey, SpaceIndex] = {}
        self._locks: dict[SpaceKey, asyncio.Lock] = {}  # one build or load at a time per space
        self._guards: dict[SpaceKey, asyncio.Lock] = {}  # a writer marking the saved head vs a save publishing it
        self._writes: Counter[SpaceKey] = Counter()  # bumped when a write starts or an index is dropped
        self._inflight: Counter[SpaceKey] = Counter()  # writes started and not finished
        self._healed: dict[SpaceKey, tuple[int, int]] = {}  # the last correction's count of writes: before, after
        self._building: dict[SpaceKey, asyncio.Task[None]] = {}
        self._saving: dict[SpaceKey, asyncio.Task[None]] = {}
        self._save_due: dict[SpaceKey, float] = {}
        self._forgetting: dict[str, asyncio.Task[None]] = {}
        # Writes that landed while a saved index was loading, replayed onto it (None: one was in doubt).
        self._replay: dict[SpaceKey, list[Callable[[SpaceIndex], None]] | None] = {}
        self.save_delay = SAVE_DELAY
        self.builds = 0  # how many times a space was read in full from the store (tests and benchmarks look)
        self.loads = 0  # how many indexes came from saved pages

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

    def _background(self, key: SpaceKey, work: Coroutine[Any, Any, None]) -> None:
        task = _detached(work)
        self._building[key] = task
        task.add_done_callback(partial(self._done, self._building, key))

    @staticmethod
    def _done(tasks: dict[SpaceKey, asyncio.Task[None]], key: SpaceKey, task: asyncio.Task[None]) -> None:
        if tasks.get(key) is task:
            del tasks[key]

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

    async def _load(self, key: SpaceKey) -> None:
        kb_id = key.kb_id
        assert self._pages is not None
        try:
            index = await self._pages.load(key)
            if index is not None and await self._caught_up(key, index):
                return
            if index is not None:
                log.info("[LongTermMemory] saved index of kb=%s does not match the store; building", kb_id)
        except Exception as exc:  # noqa: BLE001 - a background load must never surface; a build follows
            log.info("[LongTermMemory] saved index of kb=%s not loaded (%s)", kb_id, type(exc).__name__)
        finally:
            self._replay.pop(key, None)
        await self._build(key)

    async def _caught_up(self, key: SpaceKey, index: SpaceIndex) -> bool:
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

    async def _build(self, key: SpaceKey) -> None:
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

    def _keep(self, key: SpaceKey, episodes: Iterable[Episode]) -> SpaceIndex:
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
        if saved and self._pages is not None and kb_id not in self._forgetting:
            task = _detached(self._forget(kb_id))
            self._forgetting[kb_id] = task
            task.add_done_callback(lambda _t: self._forgetting.pop(kb_id, None))

    async def _forget(self, kb_id: str) -> None:
        assert self._pages is not None
        try:
            await self._pages.forget_kb(kb_id)
        except HostFailure as exc:
            log.warning("[LongTermMemory] saved indexes of kb=%s not removed (%s); their heads stay stale",
                        kb_id, exc.code)

    # ------------------------------------------------------------------ saving
    def _schedule_save(self, key: SpaceKey, delay: float) -> None:
        index = self._ready.get(key)
        if self._pages is None or index is None or len(index) <= FIRST_PAGE:
            return
        self._save_due[key] = time.monotonic() + delay
        if key not in self._saving:
            task = _detached(self._saver(key))
            self._saving[key] = task
            task.add_done_callback(partial(self._done, self._saving, key))

    async def _saver(self, key: SpaceKey) -> None:
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


def _detached(work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    return asyncio.get_running_loop().create_task(work, context=contextvars.Context())

