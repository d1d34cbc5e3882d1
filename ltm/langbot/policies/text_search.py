"""Whether recall is widened with the store's full-text matches. LangBot's full-text mode: Chroma
answers substring matches with distance 0, SeekDB text matches at one minus their relevance; Qdrant
and Milvus ignore the mode and answer plain vector hits, pgvector refuses it: the probe told which
(`Traits.text_search`). Without text search the caller uses vectors only."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...ports import IndexHit, Vector
from .. import layout
from ..host_rows import HostRows, Row, hits
from .health import Line, line

log = logging.getLogger("LongTermMemory")


class FullText:
    health: Line | None = line("can.full_text", "widens recall with the store's full-text matches")

    def __init__(self, rows: HostRows, score: Callable[[Row], float]) -> None:
        self._rows = rows
        self._score = score

    async def search(self, collection: str, space: str, text: str, vector: Vector, top_k: int
                     ) -> list[IndexHit] | None:
        found = await self._rows.search(collection, vector, top_k, layout.space_filter(space),
                                        search_type="full_text", query_text=text)
        return hits(found, space, self._score)


class VectorOnly:
    health: Line | None = line("can.vector_only", "recalls by vector similarity (the store has no full-text search)")

    @staticmethod
    async def search(collection: str, space: str, text: str, vector: Vector, top_k: int) -> list[IndexHit] | None:
        log.info("[LongTermMemory] kb=%s ignores full-text search; vector only", collection)
        return None
