"""pgvector as LangBot drives it (`vdbs/pgvector_db.py`): the fixed (text, file_id, chunk_uuid)
schema; every other filter key is dropped, so only `file_id` and `uuid` filters hold."""

from __future__ import annotations

import logging
from typing import Any

from .base import ListResult, SearchHit, check_lengths, cosine, normalize_filter, row_matches

logger = logging.getLogger(__name__)

# Filter field -> stored column. The host accepts "uuid" and "chunk_uuid".
FIXED_FIELDS = {"text": "text", "file_id": "file_id", "uuid": "chunk_uuid", "chunk_uuid": "chunk_uuid"}


class FixedSchemaBackend:
    """pgvector as LangBot drives it (`vdbs/pgvector_db.py`, no PostgreSQL extension here): the fixed
    (text, file_id, chunk_uuid) schema, upsert, cosine distance, vector search only, a search before
    the knowledge base's first write fails, delete-by-filter reports the rows it deleted."""

    name = "fixed"

    def __init__(self) -> None:
        # collection -> id -> row; dicts keep insertion order for list().
        self._rows: dict[str, dict[str, dict[str, Any]]] = {}
        self._dims: dict[str, int] = {}

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        check_lengths(ids, vectors, metadatas, documents)
        if not ids:
            return
        dim = self._dims.setdefault(collection, len(vectors[0]))
        rows = self._rows.setdefault(collection, {})
        for i, (pid, vec, meta) in enumerate(zip(ids, vectors, metadatas)):
            if len(vec) != dim:
                raise ValueError(f"expected {dim} dimensions, not {len(vec)}")
            doc = documents[i] if documents is not None else ""
            # Every other metadata key is silently lost, as in the real stores;
            # pgvector falls back to the document when metadata has no text.
            rows[pid] = {
                "vector": [float(x) for x in vec],
                "text": meta.get("text") or doc or "",
                "file_id": or_empty(meta.get("file_id")),
                "chunk_uuid": or_empty(meta.get("uuid")),
            }

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        if collection not in self._dims:
            raise ValueError("no selected pgvector embedding dimension for this knowledge base")
        if search_type != "vector":
            raise ValueError("pgvector currently supports vector search only")
        conditions = fixed_conditions(filters)
        rows = self._rows.get(collection, {})
        scored = [
            (1.0 - cosine(vector, row["vector"]), pid, row)
            for pid, row in rows.items()
            if row_matches(row, conditions)
        ]
        scored.sort(key=lambda t: t[0])
        return [{"id": pid, "distance": dist, "metadata": fixed_metadata(row)}
                for dist, pid, row in scored[:top_k]]

    async def delete(self, collection: str, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> int:
        rows = self._rows.get(collection, {})
        if file_ids:
            wanted = set(file_ids)
            for pid in [p for p, r in rows.items() if r["file_id"] in wanted]:
                del rows[pid]
            return len(file_ids)
        if not filters:
            return 0
        conditions = fixed_conditions(filters)
        if not conditions:
            # Deleting with an empty condition would wipe the store: the host skips it.
            logger.warning("fixed-schema delete skipped: no supported filter condition in %r", filters)
            return 0
        doomed = [p for p, r in rows.items() if row_matches(r, conditions)]
        for pid in doomed:
            del rows[pid]
        return len(doomed)

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        conditions = fixed_conditions(filters)
        matched = [(pid, row) for pid, row in self._rows.get(collection, {}).items()
                   if row_matches(row, conditions)]
        items = [{"id": pid, "document": row["text"], "metadata": fixed_metadata(row)}
                 for pid, row in matched[offset:offset + limit]]
        return {"items": items, "total": len(matched)}

    async def drop(self, collection: str) -> None:
        self._rows.pop(collection, None)
        self._dims.pop(collection, None)

    async def close(self) -> None:
        self._rows.clear()




def or_empty(value: Any) -> Any:
    return "" if value is None else value


def fixed_metadata(row: dict[str, Any]) -> dict[str, Any]:
    return {"text": row["text"], "file_id": row["file_id"], "uuid": row["chunk_uuid"]}


def fixed_conditions(filters: dict[str, Any] | None) -> list[tuple[str, str, Any]]:
    kept = []
    for field, op, value in normalize_filter(filters):
        column = FIXED_FIELDS.get(field)
        if column is None:
            logger.warning("fixed-schema store: filter field %r is not supported and was dropped", field)
            continue
        kept.append((column, op, value))
    return kept


