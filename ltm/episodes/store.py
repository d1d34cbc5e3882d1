"""Scoped access to L2 records through the vector-index port (S5, E1-E3).

Every record that comes back is re-checked against the caller's `user_key` before
it leaves this module, even though the index already filters: a backend that
drops filters must fail closed, never leak.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import HostError
from ..ports import Embedder, IndexHit, IndexRecord, VectorIndex
from .lexical import LexicalIndexes, SpaceIndex
from .model import Episode

log = logging.getLogger("LongTermMemory")

LIST_BATCH = 200
MAX_ENUMERATED = 20000  # management listings stop here and say so
EMBED_BATCH = 32
UPSERT_BATCH = 64


@dataclass(frozen=True)
class Hit:
    episode: Episode
    distance: float


@dataclass(frozen=True)
class Enumeration:
    episodes: list[Episode]
    truncated: bool


class EpisodeStore:
    def __init__(self, index: VectorIndex, embedder: Embedder) -> None:
        self._index = index
        self._embedder = embedder
        # The per-space word index recall uses (episodes/lexical.py): every write below keeps it current.
        self._lexical = LexicalIndexes(self._page_of)

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
    def _own(records: Sequence[IndexRecord], user_key: str) -> list[Episode]:
        own = [Episode.from_record(r) for r in records if r.space == user_key]
        if len(own) != len(records):
            log.warning("[LongTermMemory] the index returned %d record(s) outside the space; dropped",
                        len(records) - len(own))
        return own

    async def get(self, kb_id: str, user_key: str, episode_id: str) -> Episode | None:
        record = await self.get_record(kb_id, user_key, episode_id)
        return None if record is None else Episode.from_record(record)

    async def get_record(self, kb_id: str, user_key: str, episode_id: str) -> IndexRecord | None:
        """One record as the index returned it (with whatever the host keeps), re-checked for its space."""
        record = await self._index.get(kb_id, user_key, episode_id)
        return None if record is None or record.space != user_key else record

    async def word_index(self, kb_id: str, user_key: str) -> SpaceIndex | None:
        """The space's word index for recall; None while a big space is indexed in the background."""
        return await self._lexical.space(kb_id, user_key)

    async def word_index_unless_busy(self, kb_id: str, user_key: str) -> SpaceIndex | None:
        """The space's word index, or None while it is being read (see `LexicalIndexes.space_unless_busy`)."""
        return await self._lexical.space_unless_busy(kb_id, user_key)

    async def word_indexes_built(self) -> None:
        """Wait until background index builds are done (benchmarks and tests; recall never waits)."""
        await self._lexical.settled()

    def _hits(self, rows: Sequence[IndexHit], user_key: str) -> list[Hit]:
        hits = [Hit(Episode.from_record(h.record), h.distance) for h in rows if h.record.space == user_key]
        if len(hits) != len(rows):
            log.warning("[LongTermMemory] the index returned %d hit(s) outside the space; dropped",
                        len(rows) - len(hits))
        return hits

    async def search(self, kb_id: str, user_key: str, vector: Sequence[float], *, top_k: int,
                     sender_id: str = "") -> list[Hit]:
        """One search of the whole space, or of one speaker inside it."""
        rows = await self._index.search(kb_id, user_key, vector, top_k, speaker=sender_id or None)
        return self._hits(rows, user_key)

    async def search_text(self, kb_id: str, user_key: str, text: str, vector: Sequence[float], *,
                          top_k: int) -> list[Hit] | None:
        rows = await self._index.search_text(kb_id, user_key, text, vector, top_k)
        return None if rows is None else self._hits(rows, user_key)

    async def enumerate(self, kb_id: str, user_key: str, limit: int | None = None) -> Enumeration:
        """Every record of one space (management paths only, never per turn), up to `limit`."""
        limit = limit or MAX_ENUMERATED
        episodes: list[Episode] = []
        offset = 0
        while len(episodes) < limit:
            page = await self._index.page(kb_id, user_key, LIST_BATCH, offset)
            episodes.extend(self._own(page.records, user_key))
            if not page.more:
                return Enumeration(episodes, truncated=False)
            offset += LIST_BATCH
        return Enumeration(episodes[:limit], truncated=True)

    async def _page_of(self, kb_id: str, user_key: str, limit: int, offset: int) -> tuple[list[Episode], bool]:
        """One page of a space for the lexical index (which reads whole spaces: see lexical.py)."""
        page = await self._index.page(kb_id, user_key, limit, offset)
        return self._own(page.records, user_key), page.more

    async def upsert_batch(self, kb_id: str, episodes: Sequence[Episode], vectors: Sequence[Sequence[float]]) -> None:
        """One host write of at most UPSERT_BATCH records (multi-batch writes are steps of the gate)."""
        try:
            await self._index.upsert(kb_id, [e.to_record() for e in episodes], vectors)
        except BaseException:
            # Refused, unknown or cancelled: whatever the host holds now, rebuild from it.
            for user_key in {e.user_key for e in episodes}:
                self._lexical.drop_space(kb_id, user_key)
            raise
        self._lexical.upserted(kb_id, episodes)
        log.info("[LongTermMemory] vector write kb=%s records=%d", kb_id, len(episodes))

    async def delete(self, kb_id: str, user_key: str, episode_ids: Sequence[str]) -> None:
        if not episode_ids:
            return
        try:
            await self._index.delete(kb_id, user_key, episode_ids)
        except BaseException:
            self._lexical.drop_space(kb_id, user_key)
            raise
        self._lexical.deleted(kb_id, user_key, episode_ids)
        log.info("[LongTermMemory] vector delete kb=%s records=%d", kb_id, len(episode_ids))

    async def drop_kb(self, kb_id: str) -> None:
        try:
            await self._index.drop_collection(kb_id)
        finally:
            self._lexical.drop_kb(kb_id)

    def records_rewritten(self, kb_id: str) -> None:
        """Records of `kb_id` were written by another path (the layout migration): rebuild on next use."""
        self._lexical.drop_kb(kb_id)
