"""What Milvus Lite cannot show: a Milvus cluster's insert-only rows (an `insert` of an id already
there adds a second row) and its raw cosine similarity as the distance, in memory."""

from __future__ import annotations

from typing import Any

from .base import ListResult, SearchHit, check_lengths, cosine, fixed_conditions
from .memory_table import MemoryTable, fixed_row, row_metadata


class InsertOnlyBackend:
    """A Milvus cluster as LangBot drives it, where Milvus Lite differs: `insert` of an id that is
    already there adds a second row (both are returned until a delete removes every row of that id),
    and the distance is the raw cosine similarity (higher is better). The fixed schema, as `milvus`."""

    name = "milvus-insert"
    stand_in = True

    def __init__(self) -> None:
        self._table = MemoryTable(insert_only=True)

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        check_lengths(ids, vectors, metadatas, documents)
        if ids:
            self._table.write(collection, ids, vectors, [fixed_row(meta.get("text", ""), meta) for meta in metadatas])

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        rows = self._table.matching(collection, fixed_conditions(filters, "milvus"))
        scored = sorted(((cosine(vector, row["vector"]), pid, row) for pid, row in rows), key=lambda t: t[0],
                        reverse=True)
        return [{"id": pid, "distance": sim, "metadata": row_metadata(row)} for sim, pid, row in scored[:top_k]]

    async def delete(self, collection: str, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> int:
        conditions = [("file_id", "$in", list(file_ids))] if file_ids else fixed_conditions(filters, "milvus")
        if conditions:
            self._table.delete(collection, conditions)
        return len(file_ids) if file_ids else 0

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        return self._table.listing(collection, fixed_conditions(filters, "milvus"), limit, offset)

    async def drop(self, collection: str) -> None:
        self._table.drop(collection)

    async def close(self) -> None:
        self._table.clear()


BACKEND = InsertOnlyBackend
