"""Chroma: real `chromadb`; `where` is passed verbatim (a flat multi-key filter raises), default
squared-L2 distance, full-text and hybrid search (rank fusion, min-max scaled)."""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

from .base import ListResult, SearchHit, check_lengths

logger = logging.getLogger(__name__)

_RRF_K = 60
_CHROMA_NAME_RE = re.compile(r"^[a-zA-Z0-9._-]{3,512}$")


class ChromaBackend:
    """Real chromadb, one private database per instance so tests never share data."""

    name = "chroma"
    stand_in = False

    def __init__(self) -> None:
        import chromadb
        from chromadb.config import Settings

        # EphemeralClient instances in one process share a single in-memory
        # system, so isolation comes from a unique database, not a new client.
        self._admin = chromadb.AdminClient(Settings(is_persistent=False))
        self._database = f"fakehost_{uuid.uuid4().hex}"
        self._admin.create_database(self._database)
        self._client = chromadb.EphemeralClient(database=self._database)
        self._closed = False

    def _collection(self, collection: str, *, create: bool) -> Any | None:
        if not _CHROMA_NAME_RE.match(collection):
            raise ValueError(
                f"Invalid Chroma collection name {collection!r}: "
                "expected 3-512 characters from [a-zA-Z0-9._-]"
            )
        if create:
            # No hnsw space configured, exactly like the host: default squared L2.
            return self._client.get_or_create_collection(collection, embedding_function=None)
        from chromadb.errors import NotFoundError

        try:
            return self._client.get_collection(collection, embedding_function=None)
        except NotFoundError:
            return None

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        check_lengths(ids, vectors, metadatas, documents)
        col = self._collection(collection, create=True)
        kwargs: dict[str, Any] = {"ids": ids, "embeddings": vectors, "metadatas": metadatas}
        if documents is not None:
            kwargs["documents"] = documents
        col.upsert(**kwargs)

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        col = self._collection(collection, create=False)
        if col is None:
            return []
        where = filters or None
        if search_type == "vector":
            return self._vector_hits(col, vector, top_k, where)
        if search_type == "full_text":
            return self._full_text_hits(col, query_text, top_k, where)
        if search_type == "hybrid":
            vec_hits = self._vector_hits(col, vector, top_k, where)
            text_hits = self._full_text_hits(col, query_text, top_k, where)
            return _rrf_fuse(vec_hits, text_hits, top_k, vector_weight)
        raise ValueError(f"Unsupported search_type: {search_type}")

    @staticmethod
    def _vector_hits(col: Any, vector: list[float], top_k: int,
                     where: dict[str, Any] | None) -> list[SearchHit]:
        res = col.query(query_embeddings=[vector], n_results=top_k, where=where,
                        include=["metadatas", "distances", "documents"])
        # The host flattens the first (only) query row and drops the documents.
        return [
            {"id": i, "distance": float(d), "metadata": dict(m or {})}
            for i, d, m in zip(res["ids"][0], res["distances"][0], res["metadatas"][0])
        ]

    @staticmethod
    def _full_text_hits(col: Any, query_text: str, top_k: int,
                        where: dict[str, Any] | None) -> list[SearchHit]:
        res = col.get(where=where, where_document={"$contains": query_text}, limit=top_k,
                      include=["metadatas", "documents"])
        # $contains is a boolean filter with no ranking, hence distance 0.0.
        return [
            {"id": i, "distance": 0.0, "metadata": dict(m or {})}
            for i, m in zip(res["ids"], res["metadatas"])
        ]

    async def delete(self, collection: str, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> int:
        col = self._collection(collection, create=True)
        if file_ids:
            col.delete(where={"file_id": {"$in": list(file_ids)}})
            return len(file_ids)  # host reports the request size, not the real count
        if filters:
            col.delete(where=filters)
        return 0

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        col = self._collection(collection, create=False)
        if col is None:
            return {"items": [], "total": 0}
        where = filters or None
        res = col.get(where=where, limit=limit, offset=offset, include=["metadatas", "documents"])
        items = [
            {"id": i, "document": doc, "metadata": dict(m or {})}
            for i, doc, m in zip(res["ids"], res["documents"], res["metadatas"])
        ]
        # Chroma cannot count a filtered set cheaply, so the host reports -1.
        total = col.count() if where is None else -1
        return {"items": items, "total": total}

    async def drop(self, collection: str) -> None:
        if self._collection(collection, create=False) is not None:
            self._client.delete_collection(collection)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Dropping the database frees its collections in the shared system.
        try:
            self._admin.delete_database(self._database)
        except Exception:  # pragma: no cover - best-effort cleanup
            logger.debug("could not drop chroma database %s", self._database, exc_info=True)


def _rrf_fuse(vec_hits: list[SearchHit], text_hits: list[SearchHit], top_k: int,
              vector_weight: float | None) -> list[SearchHit]:
    """Reciprocal-rank fusion, then min-max scaled into a distance in [0, 1]."""
    w_vec = 0.5 if vector_weight is None else float(vector_weight)
    w_text = 1.0 - w_vec
    scores: dict[str, float] = {}
    metadata: dict[str, dict[str, Any]] = {}
    for weight, hits in ((w_vec, vec_hits), (w_text, text_hits)):
        for rank, hit in enumerate(hits, start=1):
            scores[hit["id"]] = scores.get(hit["id"], 0.0) + weight / (_RRF_K + rank)
            metadata.setdefault(hit["id"], hit["metadata"])
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)[:top_k]
    if not ranked:
        return []
    best, worst = ranked[0][1], ranked[-1][1]
    span = best - worst
    # Min-max scaling: the best hit gets 0.0 and the worst returned hit 1.0,
    # even when it is relevant (a host quirk the plugin must tolerate).
    return [
        {"id": i, "distance": 0.0 if span == 0 else (best - s) / span, "metadata": metadata[i]}
        for i, s in ranked
    ]


BACKEND = ChromaBackend
