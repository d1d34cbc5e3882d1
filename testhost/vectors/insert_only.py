"""What Milvus Lite cannot show: a Milvus cluster's insert-only rows (an `insert` of an id already
there adds a second row) and its raw cosine similarity as the distance."""

from __future__ import annotations

from typing import Any

from .base import ListResult, SearchHit, check_lengths, cosine, row_matches
from .fixed_schema import FixedSchemaBackend, fixed_conditions, fixed_metadata, or_empty


class InsertOnlyBackend(FixedSchemaBackend):
    """A Milvus cluster as LangBot drives it, where Milvus Lite differs: `insert` of an id that is
    already there adds a second row (both are returned until a delete removes every row of that id),
    and the distance is the raw cosine similarity (higher is better)."""

    name = "milvus-insert"

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        check_lengths(ids, vectors, metadatas, documents)
        if not ids:
            return
        dim = self._dims.setdefault(collection, len(vectors[0]))
        rows = self._rows.setdefault(collection, {})
        for pid, vec, meta in zip(ids, vectors, metadatas):
            if len(vec) != dim:
                raise ValueError(f"expected {dim} dimensions, not {len(vec)}")
            serial = 0
            while f"{pid}\x00{serial}" in rows:
                serial += 1
            rows[f"{pid}\x00{serial}"] = {
                "vector": [float(x) for x in vec], "text": meta.get("text", ""),
                "file_id": or_empty(meta.get("file_id")), "chunk_uuid": or_empty(meta.get("uuid")),
            }

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        conditions = fixed_conditions(filters)
        scored = [(cosine(vector, row["vector"]), key, row) for key, row in self._rows.get(collection, {}).items()
                  if row_matches(row, conditions)]
        scored.sort(key=lambda t: t[0], reverse=True)
        return [{"id": key.split("\x00")[0], "distance": sim, "metadata": fixed_metadata(row)}
                for sim, key, row in scored[:top_k]]

    async def delete(self, collection: str, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> int:
        # Milvus resolves a delete expression to primary keys and deletes every row of those keys.
        rows = self._rows.get(collection, {})
        if file_ids:
            conditions = [("file_id", "$in", list(file_ids))]
        else:
            conditions = fixed_conditions(filters)
            if not conditions:
                return 0
        doomed_ids = {k.split("\x00")[0] for k, r in rows.items() if row_matches(r, conditions)}
        for key in [k for k in rows if k.split("\x00")[0] in doomed_ids]:
            del rows[key]
        return len(file_ids) if file_ids else 0

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        conditions = fixed_conditions(filters)
        matched = [(k, r) for k, r in self._rows.get(collection, {}).items() if row_matches(r, conditions)]
        items = [{"id": k.split("\x00")[0], "document": r["text"], "metadata": fixed_metadata(r)}
                 for k, r in matched[offset:offset + limit]]
        return {"items": items, "total": len(matched)}


