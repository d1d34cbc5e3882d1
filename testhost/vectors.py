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
        if collection not in self._dims:
            raise ValueError("no selected pgvector embedding dimension for this knowledge base")
        if search_type != "vector":
            raise ValueError("pgvector currently supports vector search only")
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
# Milvus (real Milvus Lite, through the host's milvus.py translation)
# --------------------------------------------------------------------------

_MILVUS_FIELDS = {"text", "file_id", "chunk_uuid"}
_MILVUS_ALIASES = {"uuid": "chunk_uuid"}
_MILVUS_DEFAULT_DIM = 1536  # the host's dimension for a collection created by a call that is not a write


class _MilvusLiteServer:
    """One Milvus Lite database per test process (its server takes about a second to start); every
    backend instance works in collections of its own and drops them when it closes."""

    _client: Any = None
    _dir: str | None = None

    @classmethod
    def client(cls) -> Any:
        if cls._client is None:
            import atexit
            import shutil
            import tempfile

            from pymilvus import MilvusClient

            cls._dir = tempfile.mkdtemp(prefix="ltm-milvus-lite-")
            cls._client = MilvusClient(uri=str(Path(cls._dir) / "milvus.db"))

            def _close() -> None:
                try:
                    cls._client.close()
                finally:
                    shutil.rmtree(cls._dir or "", ignore_errors=True)

            atexit.register(_close)
        return cls._client


def milvus_literal(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def build_milvus_expr(filters: dict[str, Any] | None) -> str:
    """The host's `_build_milvus_expr`: unsupported fields are dropped with a warning."""
    parts: list[str] = []
    ops = {"$eq": "==", "$ne": "!=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
    for field, op, value in normalize_filter(filters):
        column = _MILVUS_ALIASES.get(field, field)
        if column not in _MILVUS_FIELDS:
            logger.warning("milvus: filter field %r is not supported and was dropped", field)
            continue
        if op in ops:
            parts.append(f"{column} {ops[op]} {milvus_literal(value)}")
        elif op == "$in":
            parts.append(f"{column} in [{', '.join(milvus_literal(v) for v in value)}]")
        elif op == "$nin":
            parts.append(f"{column} not in [{', '.join(milvus_literal(v) for v in value)}]")
    return " and ".join(parts)


class MilvusLiteBackend:
    """Real Milvus Lite (`pymilvus` + `milvus-lite`, the client API of a Milvus cluster) driven
    exactly like LangBot 4.11.2's `vdbs/milvus.py`: the fixed schema (id, vector, text, file_id,
    chunk_uuid), `insert` for writes, raw COSINE similarity as the distance, a collection created by
    the first call of any kind (dimension 1536 unless that call is a write), deletes by file_id put
    between quotes without escaping."""

    name = "milvus"

    def __init__(self) -> None:
        self._client = _MilvusLiteServer.client()
        self._known: set[str] = set()

    @staticmethod
    def _normalize(collection: str) -> str:
        name = collection.replace("-", "_")
        if name and not (name[0].isalpha() or name[0] == "_"):
            name = "kb_" + name
        return name

    def _ensure(self, collection: str, dim: int | None = None) -> str:
        from pymilvus import CollectionSchema, DataType, FieldSchema
        from pymilvus.milvus_client.index import IndexParams

        name = self._normalize(collection)
        if name in self._known:
            return name
        if not self._client.has_collection(collection_name=name):
            fields = [
                FieldSchema(name="id", dtype=DataType.VARCHAR, is_primary=True, max_length=255),
                FieldSchema(name="vector", dtype=DataType.FLOAT_VECTOR, dim=dim or _MILVUS_DEFAULT_DIM),
                FieldSchema(name="text", dtype=DataType.VARCHAR, max_length=65535),
                FieldSchema(name="file_id", dtype=DataType.VARCHAR, max_length=255),
                FieldSchema(name="chunk_uuid", dtype=DataType.VARCHAR, max_length=255),
            ]
            schema = CollectionSchema(fields=fields, description="LangBot knowledge base vectors")
            self._client.create_collection(collection_name=name, schema=schema, metric_type="COSINE")
            index = IndexParams()
            index.add_index(field_name="vector", index_type="AUTOINDEX", metric_type="COSINE")
            self._client.create_index(collection_name=name, index_params=index)
        self._known.add(name)
        return name

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        if not vectors:
            return
        name = self._ensure(collection, len(vectors[0]))
        data = []
        for i, pid in enumerate(ids):
            entry: dict[str, Any] = {"id": pid, "vector": vectors[i]}
            meta = metadatas[i] if i < len(metadatas) else {}
            if "text" in meta:
                entry["text"] = meta["text"]
            if "file_id" in meta:
                entry["file_id"] = meta["file_id"]
            if "uuid" in meta:
                entry["chunk_uuid"] = meta["uuid"]
            data.append(entry)
        self._client.insert(collection_name=name, data=data)
        self._client.load_collection(collection_name=name)

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        name = self._ensure(collection)
        kwargs: dict[str, Any] = dict(collection_name=name, data=[vector], limit=top_k,
                                      search_params={"metric_type": "COSINE", "params": {}},
                                      output_fields=["text", "file_id", "chunk_uuid"])
        if filters:
            expr = build_milvus_expr(filters)
            if expr:
                kwargs["filter"] = expr
        results = self._client.search(**kwargs)
        hits: list[SearchHit] = []
        for hit in (results[0] if results else []):
            entity = hit.get("entity", {})
            meta: dict[str, Any] = {}
            if "text" in entity:
                meta["text"] = entity["text"]
            if "file_id" in entity:
                meta["file_id"] = entity["file_id"]
            if "chunk_uuid" in entity:
                meta["uuid"] = entity["chunk_uuid"]
            hits.append({"id": hit.get("id", ""), "distance": hit.get("distance", 0.0), "metadata": meta})
        return hits

    async def delete(self, collection: str, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> int:
        if file_ids:
            name = self._ensure(collection)
            for file_id in file_ids:  # one host delete_by_file_id per value, quoted without escaping
                self._client.delete(collection_name=name, filter=f'file_id == "{file_id}"')
            return len(file_ids)
        if not filters:
            return 0
        name = self._ensure(collection)
        expr = build_milvus_expr(filters)
        if not expr:
            logger.warning("milvus delete skipped: no supported filter condition in %r", filters)
            return 0
        self._client.delete(collection_name=name, filter=expr)
        return 0  # the host reports 0: Milvus delete returns no count

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        name = self._ensure(collection)
        kwargs: dict[str, Any] = dict(collection_name=name, output_fields=["text", "file_id", "chunk_uuid"],
                                      limit=limit, offset=offset)
        expr = build_milvus_expr(filters) if filters else ""
        if expr:
            kwargs["filter"] = expr
        rows = self._client.query(**kwargs)
        items = [{"id": row.get("id", ""), "document": row.get("text"),
                  "metadata": {"text": row.get("text", ""), "file_id": row.get("file_id", ""),
                               "uuid": row.get("chunk_uuid", "")}} for row in rows]
        total = -1
        try:
            counted = self._client.query(collection_name=name, output_fields=["count(*)"],
                                         **({"filter": expr} if expr else {}))
            if counted:
                total = counted[0].get("count(*)", -1)
        except Exception:  # noqa: BLE001 - the host ignores a failed count as well
            pass
        return {"items": items, "total": total}

    def dimension(self, collection: str) -> int | None:
        """Test aid: the vector dimension the collection was created with (None: not created)."""
        name = self._normalize(collection)
        if not self._client.has_collection(collection_name=name):
            return None
        described = self._client.describe_collection(collection_name=name)
        for field in described.get("fields", []):
            if field.get("name") == "vector":
                return int(field.get("params", {}).get("dim"))
        return None

    async def drop(self, collection: str) -> None:
        name = self._normalize(collection)
        self._known.discard(name)
        if self._client.has_collection(collection_name=name):
            self._client.drop_collection(collection_name=name)

    async def close(self) -> None:
        for name in list(self._known):
            if self._client.has_collection(collection_name=name):
                self._client.drop_collection(collection_name=name)
        self._known.clear()


# --------------------------------------------------------------------------
# What Milvus Lite cannot show: a Milvus cluster's insert-only rows, and Valkey Search
# --------------------------------------------------------------------------


class InsertOnlyBackend(FixedSchemaBackend):
    """A Milvus cluster as LangBot drives it, where Milvus Lite differs: `insert` of an id that is
    already there adds a second row (both are returned until a delete removes every row of that id),
    and the distance is the raw cosine similarity (higher is better)."""

    name = "milvus-insert"

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        _check_lengths(ids, vectors, metadatas, documents)
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
                "file_id": _or_empty(meta.get("file_id")), "chunk_uuid": _or_empty(meta.get("uuid")),
            }

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        conditions = _fixed_conditions(filters)
        scored = [(_cosine(vector, row["vector"]), key, row) for key, row in self._rows.get(collection, {}).items()
                  if _row_matches(row, conditions)]
        scored.sort(key=lambda t: t[0], reverse=True)
        return [{"id": key.split("\x00")[0], "distance": sim, "metadata": _fixed_metadata(row)}
                for sim, key, row in scored[:top_k]]

    async def delete(self, collection: str, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> int:
        # Milvus resolves a delete expression to primary keys and deletes every row of those keys.
        rows = self._rows.get(collection, {})
        if file_ids:
            conditions = [("file_id", "$in", list(file_ids))]
        else:
            conditions = _fixed_conditions(filters)
            if not conditions:
                return 0
        doomed_ids = {k.split("\x00")[0] for k, r in rows.items() if _row_matches(r, conditions)}
        for key in [k for k in rows if k.split("\x00")[0] in doomed_ids]:
            del rows[key]
        return len(file_ids) if file_ids else 0

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        conditions = _fixed_conditions(filters)
        matched = [(k, r) for k, r in self._rows.get(collection, {}).items() if _row_matches(r, conditions)]
        items = [{"id": k.split("\x00")[0], "document": r["text"], "metadata": _fixed_metadata(r)}
                 for k, r in matched[offset:offset + limit]]
        return {"items": items, "total": len(matched)}


class ValkeyLikeBackend:
    """Valkey Search as LangBot drives it (`vdbs/valkey_search.py`, no server here): a hash per
    record written field by field (`HSET`: fields not sent keep their value), every metadata key kept
    as JSON and returned, `file_id` the only filterable field (other filter keys dropped; a delete left
    without a condition is skipped), cosine distance, full-text search where every word must match."""

    name = "valkey"

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
                if _row_matches({"file_id": f.get("file_id", "")}, conditions)]

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
        scored = sorted(((1.0 - _cosine(vector, f["vector"]), pid, f) for pid, f in rows), key=lambda t: t[0])
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


# --------------------------------------------------------------------------

BACKEND_NAMES = ("chroma", "qdrant", "milvus", "fixed", "milvus-insert", "valkey")


def make_backend(name: str, tmp_path: Path | str | None = None) -> VectorBackend:
    """Create a fresh, isolated backend by name ("chroma", "qdrant" or "fixed").

    ``tmp_path`` is accepted for symmetry with persistent setups; every backend is
    isolated per instance (Milvus Lite shares one database per process, each instance
    in collections of its own).
    """
    del tmp_path
    if name == "chroma":
        return ChromaBackend()
    if name == "qdrant":
        return QdrantBackend()
    if name == "fixed":
        return FixedSchemaBackend()
    if name == "milvus":
        return MilvusLiteBackend()
    if name == "milvus-insert":
        return InsertOnlyBackend()
    if name == "valkey":
        return ValkeyLikeBackend()
    raise ValueError(f"unknown backend {name!r}; expected one of {BACKEND_NAMES}")


__all__ = [
    "BACKEND_NAMES",
    "ChromaBackend",
    "FixedSchemaBackend",
    "InsertOnlyBackend",
    "MilvusLiteBackend",
    "QdrantBackend",
    "ValkeyLikeBackend",
    "VectorBackend",
    "build_qdrant_filter",
    "make_backend",
    "normalize_filter",
]
