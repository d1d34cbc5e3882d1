"""pgvector as LangBot drives it (`vdbs/pgvector_db.py`), in memory (a fast stand-in for `pgvector.py`):
the fixed (text, file_id, chunk_uuid) schema, so only `file_id` and `uuid` filters hold."""

from __future__ import annotations

import logging
from typing import Any

from .base import ListResult, SearchHit, check_lengths, cosine, fixed_conditions
from .memory_table import MemoryTable, fixed_row, row_metadata

logger = logging.getLogger(__name__)


class FixedSchemaBackend:
    """pgvector as LangBot drives it (`vdbs/pgvector_db.py`, no PostgreSQL extension here): the fixed
    (text, file_id, chunk_uuid) schema, upsert, cosine distance, vector search only, a search before
    the knowledge base's first write fails, delete-by-filter reports the rows it deleted."""

    name = "fixed"
    stand_in = True

    def __init__(self) -> None:
        self._table = MemoryTable()

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        check_lengths(ids, vectors, metadatas, documents)
        if not ids:
            return
        # Every other metadata key is silently lost, as in the real stores;
        # pgvector falls back to the document when metadata has no text.
        docs = documents if documents is not None else [""] * len(ids)
        self._table.write(collection, ids, vectors,
                          [fixed_row(meta.get("text") or doc or "", meta) for meta, doc in zip(metadatas, docs)])

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        if self._table.dimension(collection) is None:
            raise ValueError("no selected pgvector embedding dimension for this knowledge base")
        if search_type != "vector":
            raise ValueError("pgvector currently supports vector search only")
        rows = self._table.matching(collection, fixed_conditions(filters, "fixed-schema store"))
        scored = sorted(((1.0 - cosine(vector, row["vector"]), pid, row) for pid, row in rows), key=lambda t: t[0])
        return [{"id": pid, "distance": dist, "metadata": row_metadata(row)} for dist, pid, row in scored[:top_k]]

    async def delete(self, collection: str, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> int:
        if file_ids:
            self._table.delete(collection, [("file_id", "$in", list(file_ids))])
            return len(file_ids)
        if not filters:
            return 0
        conditions = fixed_conditions(filters, "fixed-schema store")
        if not conditions:
            # Deleting with an empty condition would wipe the store: the host skips it.
            logger.warning("fixed-schema delete skipped: no supported filter condition in %r", filters)
            return 0
        return self._table.delete(collection, conditions)

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        return self._table.listing(collection, fixed_conditions(filters, "fixed-schema store"), limit, offset)

    async def drop(self, collection: str) -> None:
        self._table.drop(collection)

    async def close(self) -> None:
        self._table.clear()


BACKEND = FixedSchemaBackend
