"""Valkey Search as LangBot drives it (`vdbs/valkey_search.py`, no server here)."""

from __future__ import annotations

import logging
from typing import Any

from .base import ListResult, SearchHit, cosine, normalize_filter, row_matches

logger = logging.getLogger(__name__)


class ValkeyLikeBackend:
    """Valkey Search as LangBot drives it (`vdbs/valkey_search.py`, no server here): a hash per
    record written field by field (`HSET`: fields not sent keep their value), every metadata key kept
    as JSON and returned, `file_id` the only filterable field (other filter keys dropped; a delete left
    without a condition is skipped), cosine distance, full-text search where every word must match."""

    name = "valkey"
    stand_in = True

    def __init__(self) -> None:
        self._hashes: dict[str, dict[str, dict[str, Any]]] = {}
        self._dims: dict[str, int] = {}

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        if not vectors:
            return
        dim = self._dims.setdefault(collection, len(vectors[0]))
        if any(len(v) != dim for v in vectors):
            raise ValueError(f"All embeddings must have dimension {dim}; got mixed lengths")
        hashes = self._hashes.setdefault(collection, {})
        for i, pid in enumerate(ids):
            fields = hashes.setdefault(str(pid), {})
            meta = metadatas[i] if i < len(metadatas) else {}
            fields["vector"] = [float(x) for x in vectors[i]]
            fields["metadata_json"] = dict(meta)
            if meta.get("file_id") is not None:
                fields["file_id"] = str(meta["file_id"])
            if documents is not None and i < len(documents) and documents[i] is not None:
                fields["document"] = documents[i]

    def _matching(self, collection: str, filters: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
        conditions = []
        for field, op, value in normalize_filter(filters):
            if field != "file_id":
                logger.warning("valkey: filter field %r is not supported and was dropped", field)
                continue
            conditions.append(("file_id", op, value))
        return [(pid, f) for pid, f in self._hashes.get(collection, {}).items()
                if row_matches({"file_id": f.get("file_id", "")}, conditions)]

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        rows = self._matching(collection, filters)
        if search_type == "full_text":
            words = [w.lower() for w in query_text.split()]
            if not words:
                return []
            hits = [(pid, f) for pid, f in rows if all(w in str(f.get("document", "")).lower() for w in words)]
            return [{"id": pid, "distance": 0.0, "metadata": dict(f["metadata_json"])} for pid, f in hits[:top_k]]
        scored = sorted(((1.0 - cosine(vector, f["vector"]), pid, f) for pid, f in rows), key=lambda t: t[0])
        return [{"id": pid, "distance": d, "metadata": dict(f["metadata_json"])} for d, pid, f in scored[:top_k]]

    async def delete(self, collection: str, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> int:
        hashes = self._hashes.get(collection, {})
        if file_ids:
            for file_id in file_ids:
                for pid in [p for p, f in hashes.items() if f.get("file_id") == file_id]:
                    del hashes[pid]
            return len(file_ids)
        if not filters:
            return 0
        if not any(field == "file_id" for field, _, _ in normalize_filter(filters)):
            logger.warning("valkey delete skipped: no usable condition in %r", filters)
            return 0
        doomed = [pid for pid, _ in self._matching(collection, filters)]
        for pid in doomed:
            del hashes[pid]
        return len(doomed)

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        rows = self._matching(collection, filters)
        items = [{"id": pid, "document": f.get("document"), "metadata": dict(f["metadata_json"])}
                 for pid, f in rows[offset:offset + limit]]
        return {"items": items, "total": len(rows)}

    async def drop(self, collection: str) -> None:
        self._hashes.pop(collection, None)
        self._dims.pop(collection, None)

    async def close(self) -> None:
        self._hashes.clear()


BACKEND = ValkeyLikeBackend
