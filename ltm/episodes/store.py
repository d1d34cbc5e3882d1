"""Scoped access to L2 records through the vector-index port (S5, E1-E3): every call names its
space as one value (`L2Space`, from `MemoryScope.l2`), and hands it on to the port as it is.

Every record that comes back is re-checked against the caller's `user_key` before
it leaves this module, even though the index already filters: a backend that
drops filters must fail closed, never leak. The store also owns the plugin's own
index of each space (`lexical.py`): its writes keep it current, and its reads correct it
where the store disagrees (every row a read decodes is shown to the index, against the
index's count of writes taken before that read), so no caller does that bookkeeping.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import HostError
from ..ports import Embedder, IndexHit, IndexRecord, VectorIndex, VectorWrites
from ..spaces import L2Space
from .index_pages import IndexPages
from .lexical import LexicalIndexes
from .model import Episode, newest_rows
from .space_index import SpaceIndex

log = logging.getLogger("LongTermMemory")

LIST_BATCH = 1000  # records per listing call: stores page by offset, so fewer, larger pages cost far less
MAX_ENUMERATED = 20000  # management listings stop here and say so
EMBED_BATCH = 32
UPSERT_BATCH = 64


class Hit:
    """One vector search result: the id and distance at once, the episode when first asked for (the
    row is decoded then, and re-checked for the space; None when it is not a record of it). A decoded
    record goes to `seen`: the store's index of the space follows the row if it disagrees."""

    __slots__ = ("_decoded", "_episode", "_hit", "_seen", "_space_key", "distance", "episode_id")

    def __init__(self, hit: IndexHit, space_key: str, seen: Callable[[Episode], None]) -> None:
        self.episode_id = hit.record_id
        self.distance = hit.distance
        self._hit = hit
        self._space_key = space_key
        self._seen = seen
        self._episode: Episode | None = None
        self._decoded = False

    @property
    def episode(self) -> Episode | None:
        if not self._decoded:
            self._decoded = True
            record = self._hit.record
            if record is not None and record.space_key == self._space_key and record.record_id == self.episode_id:
                self._episode = Episode.from_record(record)
                self._seen(self._episode)
            else:
                log.warning("[LongTermMemory] the index returned a hit outside the space; dropped")
        return self._episode


@dataclass(frozen=True)
class Enumeration:
    episodes: list[Episode]
    truncated: bool


class EpisodeStore:
    def __init__(self, index: VectorIndex, embedder: Embedder, pages: IndexPages | None = None) -> None:
        self._index = index
        self._embedder = embedder
        # The per-space index recall and listings use (episodes/lexical.py): every write below keeps it
        # current; with plugin storage, big spaces' indexes are saved there for the next process.
        self._lexical = LexicalIndexes(self._page_of, pages)

    async def embed(self, model_uuid: str, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), EMBED_BATCH):
            batch = list(texts[start : start + EMBED_BATCH])
            got = await self._embedder.embed(model_uuid, batch)
            if len(got) != len(batch) or any(not v for v in got):
                raise HostError("the embedding model returned a different number of vectors than texts")
            vectors.extend(got)
        return vectors

    @staticmethod
    def _own(records: Sequence[IndexRecord], space: L2Space) -> list[Episode]:
        own = [Episode.from_record(r) for r in records if r.space_key == space.space_key]
        if len(own) != len(records):
            log.warning("[LongTermMemory] the index returned %d record(s) outside the space; dropped",
                        len(records) - len(own))
        return own

    # ------------------------------------------------------------------ reads
    async def get(self, space: L2Space, episode_id: str) -> Episode | None:
        record = await self.get_record(space, episode_id)
        return None if record is None else Episode.from_record(record)

    async def get_record(self, space: L2Space, episode_id: str) -> IndexRecord | None:
        """One record as the index returned it (with whatever the host keeps), re-checked for its space."""
        record = await self._index.get(space, episode_id)
        return None if record is None or record.space_key != space.space_key else record

    async def word_index(self, space: L2Space) -> SpaceIndex | None:
        """The plugin's own index of the space (recall's word candidates, listing order); None while it is
        being made in the background (see lexical.py)."""
        return await self._lexical.space(space)

    async def word_index_unless_busy(self, space: L2Space) -> SpaceIndex | None:
        """The space's word index, or None while it is being read (see `LexicalIndexes.space_unless_busy`)."""
        return await self._lexical.space_unless_busy(space)

    async def word_indexes_built(self) -> None:
        """Wait until background index builds are done (benchmarks and tests; recall never waits)."""
        await self._lexical.settled()

    async def get_many(self, space: L2Space, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """These records of the space, in one host call (where the store looks records up by key). What
        the space's index says about them is corrected if the store disagrees."""
        if not episode_ids:
            return {}
        since = self._lexical.mark(space)
        records = await self._index.get_many(space, list(dict.fromkeys(episode_ids)))
        found = {e.episode_id: e for e in newest_rows(self._own(records, space)) if e.episode_id in episode_ids}
        self._lexical.heal(space, since, list(found.values()), [i for i in episode_ids if i not in found])
        return found

    async def search(self, space: L2Space, vector: Sequence[float], *, top_k: int, sender_id: str = "") -> list[Hit]:
        """One search of the whole space (or of one speaker inside it); rows are decoded on use."""
        seen = self._seen_by(space)
        rows = await self._index.search(space, vector, top_k, speaker=sender_id or None)
        return [Hit(h, space.space_key, seen) for h in rows]

    async def search_text(self, space: L2Space, text: str, vector: Sequence[float], *, top_k: int
                          ) -> list[Hit] | None:
        seen = self._seen_by(space)
        rows = await self._index.search_text(space, text, vector, top_k)
        return None if rows is None else [Hit(h, space.space_key, seen) for h in rows]

    def _seen_by(self, space: L2Space) -> Callable[[Episode], None]:
        """What a read's decoded rows are shown to: the space's index, with the count of writes taken
        now, before the read (a write since then explains any difference; see lexical.py)."""
        since = self._lexical.mark(space)

        def seen(episode: Episode) -> None:
            self._lexical.heal(space, since, (episode,))

        return seen

    async def save_word_indexes(self) -> None:
        """Save now the space indexes a write scheduled to save later, and wait (shutdown, benchmarks)."""
        await self._lexical.flush()

    async def enumerate(self, space: L2Space, limit: int | None = None) -> Enumeration:
        """Every record of one space (management paths only, never per turn), up to `limit`.
        `truncated` says that records were left out: a space of exactly `limit` records is not."""
        limit = limit or MAX_ENUMERATED
        episodes: list[Episode] = []
        offset = 0
        while True:
            page = await self._index.page(space, LIST_BATCH, offset)
            episodes.extend(self._own(page.records, space))
            offset += LIST_BATCH
            if not page.more:
                return Enumeration(episodes[:limit], truncated=len(episodes) > limit)
            if len(episodes) >= limit:
                # A full page only says that more *may* follow (filtered listings have no exact count):
                # look before saying anything was left out.
                after = await self._index.page(space, 1, offset)
                return Enumeration(episodes[:limit], truncated=len(episodes) > limit or bool(after.records))

    async def _page_of(self, space: L2Space, limit: int, offset: int) -> tuple[list[Episode], bool]:
        """One page of a space for its index (which reads whole spaces: see lexical.py)."""
        page = await self._index.page(space, limit, offset)
        return self._own(page.records, space), page.more

    # ------------------------------------------------------------------ writes
    # The store reads through the read-only `VectorIndex`; a write takes the write side as its first
    # argument, which only a gated write's step receives (`WriteTx.index_write`, ltm/_gate.py).
    async def upsert_batch(self, index: VectorWrites, space: L2Space, episodes: Sequence[Episode],
                           vectors: Sequence[Sequence[float]]) -> None:
        """One host write of at most UPSERT_BATCH records of one space (multi-batch writes are steps of
        the gate); an episode of another space is a ValueError, nothing written."""
        if any(e.space_key != space.space_key for e in episodes):
            raise ValueError("a vector write holds episodes of one space only")
        async with self._lexical.writing(space):
            try:
                await index.upsert(space, [e.to_record() for e in episodes], vectors)
            except BaseException:
                # Refused, unknown or cancelled: whatever the host holds now, rebuild from it.
                self._lexical.drop_space(space)
                raise
            self._lexical.upserted(space, episodes)
        log.info("[LongTermMemory] vector write kb=%s records=%d", space.kb_id, len(episodes))

    async def delete(self, index: VectorWrites, space: L2Space, episode_ids: Sequence[str]) -> None:
        if not episode_ids:
            return
        async with self._lexical.writing(space, deleting=True):  # no saved page keeps their words
            try:
                await index.delete(space, episode_ids)
            except BaseException:
                self._lexical.drop_space(space)
                raise
            self._lexical.deleted(space, episode_ids)
        log.info("[LongTermMemory] vector delete kb=%s records=%d", space.kb_id, len(episode_ids))

    async def drop_kb(self, index: VectorWrites, kb_id: str) -> None:
        # The saved indexes are removed by `records_rewritten`, which the removal calls after its gated
        # write: a background clean-up started inside that write would overlap it.
        try:
            await index.drop_kb(kb_id)
        finally:
            self._lexical.drop_kb(kb_id, saved=False)

    def records_rewritten(self, kb_id: str) -> None:
        """Records of `kb_id` were written by another path (the layout migration): rebuild on next use."""
        self._lexical.drop_kb(kb_id)
