"""Milvus: real Milvus Lite, through the host's `milvus.py` translation (its filter expression,
its fixed fields, and the dimension a collection gets when its first call is not a write)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from .base import ListResult, SearchHit, fixed_conditions, fixed_metadata
from .process_engine import ProcessEngine

logger = logging.getLogger(__name__)

_MILVUS_DEFAULT_DIM = 1536  # the host's dimension for a collection created by a call that is not a write


def _open_milvus_lite(folder: str) -> Any:
    from pymilvus import MilvusClient

    return MilvusClient(uri=str(Path(folder) / "milvus.db"))


# One Milvus Lite database per test process (its server takes about a second to start); every backend
# instance works in collections of its own and drops them when it closes.
_MILVUS_LITE = ProcessEngine("ltm-milvus-lite-", _open_milvus_lite, lambda client: client.close())
# The record's metadata keys and the columns the host writes them to (every other key is lost).
_COLUMNS = {"text": "text", "file_id": "file_id", "uuid": "chunk_uuid"}


def milvus_literal(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def build_milvus_expr(filters: dict[str, Any] | None) -> str:
    """The host's `_build_milvus_expr`: unsupported fields are dropped with a warning."""
    parts: list[str] = []
    ops = {"$eq": "==", "$ne": "!=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
    for column, op, value in fixed_conditions(filters, "milvus"):
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
    stand_in = False

    def __init__(self) -> None:
        self._client = _MILVUS_LITE.get()
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
            meta = metadatas[i] if i < len(metadatas) else {}
            columns = {col: meta[key] for key, col in _COLUMNS.items() if key in meta}
            data.append({"id": pid, "vector": vectors[i], **columns})
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
            meta = {key: entity[col] for key, col in _COLUMNS.items() if col in entity}
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
                  "metadata": fixed_metadata(row.get("text"), row.get("file_id"), row.get("chunk_uuid"))}
                 for row in rows]
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


BACKEND = MilvusLiteBackend
