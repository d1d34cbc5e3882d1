"""Qdrant: real `qdrant_client` in memory; filters rebuilt into FieldConditions (flat multi-key
works, `$and` fails), ids must be UUIDs, distance = 1 - cosine score, `search_type` ignored."""

from __future__ import annotations

import logging
from typing import Any

from .base import RANGE_OPS, ListResult, SearchHit, check_lengths, normalize_filter

logger = logging.getLogger(__name__)


class QdrantBackend:
    """Real qdrant_client in-memory store with the host's filter rebuild."""

    name = "qdrant"
    stand_in = False
    # The in-memory local mode is not safe to call from several threads at once (bench/cost_env.py).
    thread_safe = False

    def __init__(self) -> None:
        from qdrant_client import AsyncQdrantClient

        self._client = AsyncQdrantClient(location=":memory:")

    async def _exists(self, collection: str) -> bool:
        return await self._client.collection_exists(collection)

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        from qdrant_client import models

        check_lengths(ids, vectors, metadatas, documents)
        if not ids:
            return
        if not await self._exists(collection):
            await self._client.create_collection(
                collection,
                vectors_config=models.VectorParams(size=len(vectors[0]),
                                                   distance=models.Distance.COSINE),
            )
        # `documents` is not stored: the host's Qdrant adapter ignores it
        # (docs/HOST-FACTS.md 6.1), so list() falls back to payload["text"].
        points = [
            models.PointStruct(id=pid, vector=vec, payload=dict(meta))
            for pid, vec, meta in zip(ids, vectors, metadatas)
        ]
        await self._client.upsert(collection, points=points)

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        # search_type / query_text are ignored: the host always runs a vector query.
        query_filter = build_qdrant_filter(filters)
        if not await self._exists(collection):
            return []
        res = await self._client.query_points(collection, query=vector, limit=top_k,
                                              query_filter=query_filter, with_payload=True)
        return [
            {"id": str(p.id), "distance": 1.0 - float(p.score), "metadata": dict(p.payload or {})}
            for p in res.points
        ]

    async def delete(self, collection: str, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> int:
        from qdrant_client import models

        if file_ids:
            selector = models.Filter(must=[
                models.FieldCondition(key="file_id", match=models.MatchAny(any=list(file_ids)))
            ])
            if await self._exists(collection):
                await self._client.delete(collection,
                                          points_selector=models.FilterSelector(filter=selector))
            return len(file_ids)
        if filters:
            selector = build_qdrant_filter(filters)
            if selector is not None and await self._exists(collection):
                await self._client.delete(collection,
                                          points_selector=models.FilterSelector(filter=selector))
        return 0

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        scroll_filter = build_qdrant_filter(filters)
        if not await self._exists(collection):
            return {"items": [], "total": 0}
        # Scroll has no numeric offset (it pages by point id), so skip manually.
        points, _next = await self._client.scroll(collection, scroll_filter=scroll_filter,
                                                  limit=offset + limit, with_payload=True)
        items = []
        for p in points[offset:]:
            payload = dict(p.payload or {})
            items.append({"id": str(p.id),
                          "document": payload.get("text") or payload.get("document") or "",
                          "metadata": payload})
        counted = await self._client.count(collection, count_filter=scroll_filter, exact=True)
        return {"items": items, "total": counted.count}

    async def drop(self, collection: str) -> None:
        if await self._exists(collection):
            await self._client.delete_collection(collection)

    async def close(self) -> None:
        await self._client.close()


def build_qdrant_filter(filters: dict[str, Any] | None) -> Any | None:
    """Rebuild a canonical filter into a qdrant ``Filter`` the way the host does.

    Every condition is AND-ed. Values are handed to qdrant's pydantic models
    unchecked, so a list under ``$and`` (or a bare list) fails validation.
    """
    from qdrant_client import models

    must: list[Any] = []
    must_not: list[Any] = []
    for field, op, value in normalize_filter(filters):
        if op == "$eq":
            must.append(models.FieldCondition(key=field, match=models.MatchValue(value=value)))
        elif op == "$ne":
            must_not.append(models.FieldCondition(key=field, match=models.MatchValue(value=value)))
        elif op == "$in":
            must.append(models.FieldCondition(key=field, match=models.MatchAny(any=value)))
        elif op == "$nin":
            must_not.append(models.FieldCondition(key=field, match=models.MatchAny(any=value)))
        else:
            must.append(models.FieldCondition(key=field,
                                              range=models.Range(**{RANGE_OPS[op]: value})))
    if not must and not must_not:
        return None
    return models.Filter(must=must or None, must_not=must_not or None)


BACKEND = QdrantBackend
