"""Space indexes saved in plugin storage, so a restart does not read a big space again (issue 19).

Building the index of a 100,000-record space means paging the whole space out of the vector
store (stores page by offset: minutes). Once built, the index is saved in pages through the
storage layer, and the next process loads the pages instead (seconds). The saved index is a
cache of the store, never a source of records: recall and listings fetch every record they hand
on from the store (`EpisodeStore.get_many`), so a wrong index could only ever reorder or miss,
and it is kept from doing even that:

- **Never trusted after a change.** The head record says `clean` only when the pages hold exactly
  what the store held, with no write since. Before the plugin writes a record of the space
  (`EpisodeStore.upsert_batch`, `delete`), `mark_stale` turns a clean head `stale`, and if that
  storage write fails, the record write is refused (nothing written). A stale, missing or damaged
  head, or a page that does not match it, means: build from the store again.
- **Written in an order that a crash cannot tear.** A save writes every page of a new generation
  first, then the head naming that generation, then deletes the previous generation's pages: a
  head never names a page that is not there, and a save interrupted part-way leaves the old head,
  which is stale (a write happened since it was clean) or names the old, complete generation.
- **Checked when loaded.** A loaded index is compared with the first page the store lists
  (`lexical.py`); a record the store has and the index does not, or with another status, makes
  it stale. So does any id a later fetch finds missing or changed.

- **No deleted record's words stay behind.** Pages hold each record's text, speaker and tags. Before
  the plugin deletes records of a space (`EpisodeStore.delete`: a forget, a bulk delete, a document's
  removal, a person's erasure), `discard` deletes the space's head and every page it ever saved (an
  abandoned save's unnamed pages too), inside the same call, so the delete reports done only once no
  saved page holds the deleted text; the next save writes the index afresh. A page is written under
  the lock writers take first, so no page of an older save can land after that. Cost: one key listing
  and a few deletes per delete, nothing per turn; a restart before the next save rebuilds the space.

- **Records, not postings.** A page row holds what the index keeps of a record (`rows_of`); a load
  posts every row again with this process's `tokenize`, so a tokenizer change (new stems, stopwords)
  can never leave postings made by the old rules. `FORMAT` versions the row layout: a head of
  another format is not read, and the space is built from the store again.

Keys: `v2/wordindex/<kb>/<user_key>/head` and `.../<generation>/<page>` (`ltm/_storage.py`).
Values are JSON through `Bookkeeping`, the storage writer of what is not memory (pages bypass its cache:
they are read once; a page is rebuilt from the vector records, so it is written outside the gate).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

from .._bookkeeping import Bookkeeping
from .._storage import word_index_head_key, word_index_kb_prefix, word_index_page_key, word_index_space_prefix
from ..errors import HostError, HostFailure, OutcomeUnknown
from ..spaces import L2Space
from .model import Episode, EpisodeStatus, FactTime, partial_episode
from .space_index import SpaceIndex

log = logging.getLogger("LongTermMemory")

FORMAT = 1
PAGE_ROWS = 10_000  # ~2 MB of JSON per page: well inside one storage value and one protocol message
CLEAN, STALE = "clean", "stale"


class IndexPages:
    def __init__(self, store: Bookkeeping) -> None:
        self._store = store

    async def _head(self, space: L2Space) -> dict[str, Any] | None:
        head = await self._store.get(word_index_head_key(space))
        return head if isinstance(head, dict) and head.get("format") == FORMAT else None

    async def is_clean(self, space: L2Space) -> bool:
        """A saved index that may be loaded (costs no host call when none was ever saved)."""
        head = await self._head(space)
        return head is not None and head.get("state") == CLEAN

    async def load(self, space: L2Space) -> SpaceIndex | None:
        """The saved index of the space if its head is clean and every page matches it, else None.
        Yields between pages: a big index is rebuilt without holding up the turns running meanwhile."""
        try:
            head = await self._head(space)
            if head is None or head.get("state") != CLEAN:
                return None
            generation, pages, records = head.get("generation"), head.get("pages"), head.get("records")
            if not (isinstance(generation, int) and isinstance(pages, int) and isinstance(records, int)):
                return None
            index = SpaceIndex(space.space_key)
            for number in range(pages):
                page = await self._store.get(word_index_page_key(space, generation, number), keep=False)
                if not (isinstance(page, dict) and page.get("generation") == generation
                        and page.get("page") == number and isinstance(page.get("rows"), list)):
                    log.info("[LongTermMemory] saved word index of kb=%s: page %d missing or foreign; rebuilding",
                             space.kb_id, number)
                    return None
                for count, row in enumerate(page["rows"], start=1):
                    index.add(episode_of(row, space.space_key))
                    if count % 2000 == 0:
                        await asyncio.sleep(0)  # turns running meanwhile are not held up
                await asyncio.sleep(0)
        except (ValueError, TypeError):
            log.warning("[LongTermMemory] saved word index of kb=%s is damaged; rebuilding", space.kb_id)
            return None
        if len(index) != records:
            log.warning("[LongTermMemory] saved word index of kb=%s holds %d of %d records; rebuilding", space.kb_id,
                        len(index), records)
            return None
        return index

    async def mark_stale(self, space: L2Space) -> None:
        """Before a write to the space: a clean head becomes stale. Raises HostError when that could not
        be made sure (the caller then writes nothing)."""
        try:
            head = await self._head(space)
            if head is None or head.get("state") != CLEAN:
                return
            await self._store.set(word_index_head_key(space), {**head, "state": STALE})
        except HostFailure as exc:
            raise HostError(f"the saved word index of this memory space could not be marked out of date "
                            f"({exc.message}); nothing was written, try again") from None

    async def discard(self, space: L2Space) -> None:
        """Before records of the space are deleted: its saved head and every page (they hold the records'
        words). Raises HostError when that could not be made sure (the caller then deletes nothing)."""
        try:
            keys = await self._store.keys(word_index_space_prefix(space))
            for key in sorted(keys, key=lambda k: not k.endswith("/head")):  # the head first: nothing reads on
                await self._store.delete(key)
        except HostFailure as exc:
            raise HostError(f"the saved word index of this memory space could not be removed before the delete "
                            f"({exc.message}); nothing was deleted, try again") from None

    async def save(self, space: L2Space, rows: list[list[object]], still_current: Callable[[], bool],
                   guard: asyncio.Lock) -> bool:
        """Write `rows` (a snapshot of the index) as a new generation and make it the clean head, if
        `still_current()` says no write started since the snapshot. `guard` is the lock writers hold
        while they mark the head stale: the last check and the clean head happen under it, so no write
        can slip in between. True when saved."""
        head = await self._head(space)
        previous = head.get("generation") if head is not None else None
        old_pages = head.get("pages") if head is not None else 0
        generation = previous + 1 if isinstance(previous, int) else 1
        pages = max(1, -(-len(rows) // PAGE_ROWS))
        for number in range(pages):
            chunk = rows[number * PAGE_ROWS : (number + 1) * PAGE_ROWS]
            async with guard:  # a delete's `discard` never runs while a page of an older snapshot is landing
                if not still_current():
                    return False  # pages already written stay unnamed; the next save (or a delete) removes them
                await self._store.set(word_index_page_key(space, generation, number),
                                      {"generation": generation, "page": number, "rows": chunk}, keep=False)
        async with guard:
            if not still_current():
                return False
            await self._store.set(word_index_head_key(space), {
                "format": FORMAT, "state": CLEAN, "generation": generation, "pages": pages, "records": len(rows)})
        if isinstance(previous, int) and isinstance(old_pages, int):
            await self._delete_pages(space, previous, old_pages)
        log.info("[LongTermMemory] word index saved kb=%s records=%d pages=%d", space.kb_id, len(rows), pages)
        return True

    async def _delete_pages(self, space: L2Space, generation: int, pages: int) -> None:
        for number in range(pages):
            try:
                await self._store.delete(word_index_page_key(space, generation, number))
            except (HostError, OutcomeUnknown):
                return  # an orphaned page is never read (no head names it); the next save tries no more

    async def forget_kb(self, kb_id: str) -> None:
        """Every saved index of a knowledge base (it was removed, or its records were rewritten)."""
        prefix = word_index_kb_prefix(kb_id)
        keys = await self._store.keys(prefix)
        for key in sorted(keys, key=lambda k: not k.endswith("/head")):  # heads first: no page is read after
            await self._store.delete(key)


_BY_VALUE = {status.value: status for status in EpisodeStatus}


def rows_of(index: SpaceIndex) -> Iterator[list[object]]:
    """Every record of the index as a compact row (what a page holds; `episode_of` reads it back)."""
    for episode_id in index.ids():
        e = index.episode(episode_id)
        if e is None:
            continue
        row: list[object] = [e.episode_id, e.content, e.timestamp, e.status.value, e.importance, e.sender_id,
                             e.sender_name]
        fact = e.fact
        if e.tags or fact.event_at or fact.valid_from or fact.valid_until:
            row += [list(e.tags), fact.event_at, fact.valid_from, fact.valid_until]
        yield row


def episode_of(row: object, space_key: str) -> Episode:
    """The (partial) record a page row holds; ValueError for anything `rows_of` would not write."""
    if not isinstance(row, list) or len(row) not in (7, 11):
        raise ValueError("a saved index row is a list of 7 or 11 fields")
    episode_id, content, timestamp, status, importance, sender_id, sender_name = row[:7]
    tags = row[7] if len(row) == 11 else []
    times = [str(t) if t else None for t in row[8:11]] if len(row) == 11 else [None, None, None]
    if not (isinstance(episode_id, str) and episode_id and isinstance(content, str) and isinstance(timestamp, str)
            and isinstance(status, str) and status in _BY_VALUE and isinstance(importance, int)
            and isinstance(sender_id, str) and isinstance(sender_name, str)
            and isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        raise ValueError("a saved index row has a field of the wrong type")
    return partial_episode(episode_id=episode_id, space_key=space_key, content=content, timestamp=timestamp,
                           importance=importance, tags=tuple(tags), status=_BY_VALUE[status], sender_id=sender_id,
                           sender_name=sender_name, fact=FactTime(*times) if any(times) else FactTime())
