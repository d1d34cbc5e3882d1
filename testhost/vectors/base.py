"""What every fake vector store shares: the interface the fake host calls, the host's filter
translation (LangBot 4.11.2, `vector/filter_utils.py`), the fixed (text, file_id, chunk_uuid) schema
of Milvus and pgvector, and the row checks of the stand-in stores. A store module uses these as
functions; no store inherits from another (one file per store, see `__init__.py`)."""

from __future__ import annotations

import logging
import math
from typing import Any, Protocol

logger = logging.getLogger(__name__)

SearchHit = dict[str, Any]
ListResult = dict[str, Any]

RANGE_OPS = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}
SUPPORTED_OPS = {"$eq", "$ne", "$in", "$nin", *RANGE_OPS}


class VectorBackend(Protocol):
    """Interface shared by every fake vector store."""

    name: str
    # True for a stand-in (a store's behaviour modelled in memory, where the store itself cannot run
    # here); a real store's tests run as tests/stores.py decides.
    stand_in: bool

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
                if op not in SUPPORTED_OPS:
                    raise ValueError(f"Unsupported filter operator: {op}")
                conditions.append((field, op, value))
        else:
            conditions.append((field, "$eq", spec))
    return conditions


def fixed_field_conditions(filters: dict[str, Any] | None, fields: set[str], aliases: dict[str, str],
                           store: str) -> list[tuple[str, str, Any]]:
    """The host's `strip_unsupported_fields` for a store with fixed columns: the triples of `filters`
    on those columns (aliases resolved); any other key is dropped with a warning, not refused."""
    kept = []
    for field, op, value in normalize_filter(filters):
        column = aliases.get(field, field)
        if column not in fields:
            logger.warning("%s: filter field %r is not supported and was dropped", store, field)
            continue
        kept.append((column, op, value))
    return kept


# The fixed schema's columns, and the filter keys the host maps onto them (it accepts "uuid" for chunk_uuid).
FIXED_FIELDS = frozenset({"text", "file_id", "chunk_uuid"})
FIXED_ALIASES = {"uuid": "chunk_uuid"}


def fixed_conditions(filters: dict[str, Any] | None, store: str) -> list[tuple[str, str, Any]]:
    return fixed_field_conditions(filters, FIXED_FIELDS, FIXED_ALIASES, store)


def fixed_metadata(text: Any, file_id: Any, chunk_uuid: Any) -> dict[str, Any]:
    """The metadata a fixed-schema store answers: its three columns, `chunk_uuid` back under "uuid"."""
    return {"text": text or "", "file_id": file_id or "", "uuid": chunk_uuid or ""}


def check_lengths(ids: list[str], vectors: list[list[float]],
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


def row_matches(row: dict[str, Any], conditions: list[tuple[str, str, Any]]) -> bool:
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
        if op in RANGE_OPS and not compare(actual, op, value):
            return False
    return True


def compare(actual: Any, op: str, value: Any) -> bool:
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


def cosine(a: list[float], b: list[float]) -> float:
    if len(a) != len(b):
        raise ValueError(f"expected {len(b)} dimensions, not {len(a)}")
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return 0.0 if na == 0.0 or nb == 0.0 else dot / (na * nb)
