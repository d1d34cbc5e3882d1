"""Vector-store backends of the fake host, reproducing LangBot 4.11.2's translation.

The host forwards the plugin's vector calls to one of several stores and each
store treats filters, metadata and distances differently (see
docs/HOST-FACTS.md 6 and 12). These classes reproduce those
differences on purpose, including the unfriendly ones, so that plugin tests
fail here the same way they would fail on a real host:

* ``ChromaBackend``: real ``chromadb``; ``where`` is passed verbatim (a flat
  multi-key filter raises), default squared-L2 distance, full-text / hybrid.
* ``QdrantBackend``: real ``qdrant_client`` in memory; filters rebuilt into
  FieldConditions (flat multi-key works, ``$and`` fails), ids must be UUIDs,
  distance = 1 - cosine score, search_type ignored.
* ``FixedSchemaBackend``: behaves like Milvus / pgvector through the host; only
  ``text``, ``file_id`` and ``uuid`` survive and other filter keys are dropped.

All backends receive the physical collection name (``lb_<kb uuid>``); the
``FakeLangBotHost`` resolves knowledge bases and adds the ``_langbot_*`` keys.
"""

from __future__ import annotations

import logging
import math
import re
import uuid
from pathlib import Path
from typing import Any, Protocol

logger = logging.getLogger(__name__)

SearchHit = dict[str, Any]
ListResult = dict[str, Any]

_RANGE_OPS = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}
_SUPPORTED_OPS = {"$eq", "$ne", "$in", "$nin", *_RANGE_OPS}
_RRF_K = 60


class VectorBackend(Protocol):
    """Interface shared by every fake vector store."""

    name: str

    async def upsert(
        self,
        collection: str,
        ids: list[str],
        vectors: list[list[float]],
        metadatas: list[dict[str, Any]],
        documents: list[str] | None = None,
    ) -> None: ...

    async def search(
        self,
        collection: str,
        vector: list[float],
        top_k: int = 5,
        filters: dict[str, Any] | None = None,
        search_type: str = "vector",
        query_text: str = "",
        vector_weight: float | None = None,
    ) -> list[SearchHit]: ...

    async def delete(
        self,
        collection: str,
        file_ids: list[str] | None = None,
        filters: dict[str, Any] | None = None,
    ) -> int: ...

    async def list(
        self,
        collection: str,
        filters: dict[str, Any] | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> ListResult: ...

    async def drop(self, collection: str) -> None: ...

    async def close(self) -> None: ...


# --------------------------------------------------------------------------
# Filter normalization (host: vector/filter_utils.py)
# --------------------------------------------------------------------------


def normalize_filter(filters: dict[str, Any] | None) -> list[tuple[str, str, Any]]:
    """Turn a Chroma-style filter into ``(field, op, value)`` triples.

    Like the host, every top-level key is a field name, so ``$and``/``$or``
    come out as a field called ``"$and"`` with a list value; the backend that
    consumes the triples decides whether that fails.
    """
    conditions: list[tuple[str, str, Any]] = []
    for field, spec in (filters or {}).items():
        if isinstance(spec, dict):
            for op, value in spec.items():
                if op not in _SUPPORTED_OPS:
                    raise ValueError(f"Unsupported filter operator: {op}")
                conditions.append((field, op, value))
        else:
            conditions.append((field, "$eq", spec))
    return conditions


def _check_lengths(ids: list[str], vectors: list[list[float]],
                   metadatas: list[dict[str, Any]], documents: list[str] | None) -> None:
    if len(ids) != len(vectors) or len(ids) != len(metadatas):
        raise ValueError(
            f"ids, vectors and metadata must have the same length "
            f"(got {len(ids)}, {len(vectors)}, {len(metadatas)})"
        )
    if documents is not None and len(documents) != len(ids):
        raise ValueError(
            f"documents must have the same length as ids (got {len(documents)}, {len(ids)})"
        )


# --------------------------------------------------------------------------
# Chroma
# --------------------------------------------------------------------------

_CHROMA_NAME_RE = re.compile(r"^[a-zA-Z0-9._-]{3,512}$")


class ChromaBackend:
    """Real chromadb, one private database per instance so tests never share data."""

    name = "chroma"

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
        _check_lengths(ids, vectors, metadatas, documents)
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


# --------------------------------------------------------------------------
# Qdrant
# --------------------------------------------------------------------------


class QdrantBackend:
    """Real qdrant_client in-memory store with the host's filter rebuild."""

    name = "qdrant"

    def __init__(self) -> None:
        from qdrant_client import AsyncQdrantClient

        self._client = AsyncQdrantClient(location=":memory:")

    async def _exists(self, collection: str) -> bool:
        return await self._client.collection_exists(collection)

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        from qdrant_client import models

        _check_lengths(ids, vectors, metadatas, documents)
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
                                              range=models.Range(**{_RANGE_OPS[op]: value})))
    if not must and not must_not:
        return None
    return models.Filter(must=must or None, must_not=must_not or None)


# --------------------------------------------------------------------------
# Fixed schema (Milvus / pgvector through the host)
# --------------------------------------------------------------------------

# Filter field -> stored column. The host accepts "uuid" and "chunk_uuid".
_FIXED_FIELDS = {"text": "text", "file_id": "file_id", "uuid": "chunk_uuid", "chunk_uuid": "chunk_uuid"}


class FixedSchemaBackend:
    """In-memory store with the fixed (text, file_id, chunk_uuid) schema of Milvus/pgvector."""

    name = "fixed"

    def __init__(self) -> None:
        # collection -> id -> row; dicts keep insertion order for list().
        self._rows: dict[str, dict[str, dict[str, Any]]] = {}
        self._dims: dict[str, int] = {}

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        _check_lengths(ids, vectors, metadatas, documents)
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
                "file_id": _or_empty(meta.get("file_id")),
                "chunk_uuid": _or_empty(meta.get("uuid")),
            }

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        if search_type != "vector":
            raise ValueError("fixed-schema backend supports vector search only")
        conditions = _fixed_conditions(filters)
        rows = self._rows.get(collection, {})
        scored = [
            (1.0 - _cosine(vector, row["vector"]), pid, row)
            for pid, row in rows.items()
            if _row_matches(row, conditions)
        ]
        scored.sort(key=lambda t: t[0])
        return [{"id": pid, "distance": dist, "metadata": _fixed_metadata(row)}
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
        conditions = _fixed_conditions(filters)
        if not conditions:
            # Deleting with an empty condition would wipe the store: the host skips it.
            logger.warning("fixed-schema delete skipped: no supported filter condition in %r", filters)
            return 0
        doomed = [p for p, r in rows.items() if _row_matches(r, conditions)]
        for pid in doomed:
            del rows[pid]
        return len(doomed)

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        conditions = _fixed_conditions(filters)
        matched = [(pid, row) for pid, row in self._rows.get(collection, {}).items()
                   if _row_matches(row, conditions)]
        items = [{"id": pid, "document": row["text"], "metadata": _fixed_metadata(row)}
                 for pid, row in matched[offset:offset + limit]]
        return {"items": items, "total": len(matched)}

    async def drop(self, collection: str) -> None:
        self._rows.pop(collection, None)
        self._dims.pop(collection, None)

    async def close(self) -> None:
        self._rows.clear()


def _or_empty(value: Any) -> Any:
    return "" if value is None else value


def _fixed_metadata(row: dict[str, Any]) -> dict[str, Any]:
    return {"text": row["text"], "file_id": row["file_id"], "uuid": row["chunk_uuid"]}


def _fixed_conditions(filters: dict[str, Any] | None) -> list[tuple[str, str, Any]]:
    kept = []
    for field, op, value in normalize_filter(filters):
        column = _FIXED_FIELDS.get(field)
        if column is None:
            logger.warning("fixed-schema store: filter field %r is not supported and was dropped", field)
            continue
        kept.append((column, op, value))
    return kept


def _row_matches(row: dict[str, Any], conditions: list[tuple[str, str, Any]]) -> bool:
    for column, op, value in conditions:
        actual = row[column]
        if op == "$eq" and actual != value:
            return False
        if op == "$ne" and actual == value:
            return False
        if op == "$in" and actual not in value:
            return False
        if op == "$nin" and actual in value:
            return False
        if op in _RANGE_OPS and not _compare(actual, op, value):
            return False
    return True


def _compare(actual: Any, op: str, value: Any) -> bool:
    try:
        if op == "$gt":
            return actual > value
        if op == "$gte":
            return actual >= value
        if op == "$lt":
            return actual < value
        return actual <= value
    except TypeError:
        return False


def _cosine(a: list[float], b: list[float]) -> float:
    if len(a) != len(b):
        raise ValueError(f"expected {len(b)} dimensions, not {len(a)}")
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return 0.0 if na == 0.0 or nb == 0.0 else dot / (na * nb)


# --------------------------------------------------------------------------

BACKEND_NAMES = ("chroma", "qdrant", "fixed")


def make_backend(name: str, tmp_path: Path | str | None = None) -> VectorBackend:
    """Create a fresh, isolated backend by name ("chroma", "qdrant" or "fixed").

    ``tmp_path`` is accepted for symmetry with persistent setups; all three
    backends are in-memory and isolated per instance.
    """
    del tmp_path
    if name == "chroma":
        return ChromaBackend()
    if name == "qdrant":
        return QdrantBackend()
    if name == "fixed":
        return FixedSchemaBackend()
    raise ValueError(f"unknown backend {name!r}; expected one of {BACKEND_NAMES}")


__all__ = [
    "BACKEND_NAMES",
    "ChromaBackend",
    "FixedSchemaBackend",
    "QdrantBackend",
    "VectorBackend",
    "build_qdrant_filter",
    "make_backend",
    "normalize_filter",
]
