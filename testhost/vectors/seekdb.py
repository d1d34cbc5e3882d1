"""SeekDB: real embedded SeekDB (`pyseekdb`), driven like LangBot 4.11.2's `vdbs/seekdb.py`: the
collection name with every character outside [A-Za-z0-9_] turned into `_`, free metadata (None values
dropped, other non-scalars stored as text), the `where` filter passed verbatim, cosine distance,
full-text and hybrid search through `hybrid_search` with the relevance turned into `1 - score`."""

from __future__ import annotations

import logging
import re
from decimal import Decimal
from typing import Any

from .base import ListResult, SearchHit, check_lengths
from .process_engine import ProcessEngine

logger = logging.getLogger(__name__)

_EMPTY: list[SearchHit] = []


def _open_seekdb(folder: str) -> Any:
    import pyseekdb

    admin = pyseekdb.AdminClient(path=folder)
    # LangBot's embedded default database name; created the way its adapter does.
    if "langbot" not in [db.name for db in admin.list_databases()]:
        admin.create_database("langbot")
    return pyseekdb.Client(path=folder, database="langbot")


# One embedded SeekDB per test process (opening one takes a few seconds; a second database in it about
# one more); every backend instance works in collections of its own and drops them.
_SEEKDB = ProcessEngine("ltm-seekdb-", _open_seekdb)


def seekdb_collection_name(collection: str) -> str:
    """LangBot's `_normalize_collection_name`: SeekDB only accepts [A-Za-z0-9_]."""
    return re.sub(r"[^A-Za-z0-9_]", "_", collection)


def _json_safe(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def _clean_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: v if isinstance(v, (str, int, float, bool)) else str(v) for k, v in meta.items() if v is not None}


class SeekDBBackend:
    """Real embedded SeekDB as LangBot drives it (`vdb.use: seekdb`, `seekdb.mode: embedded`).

    One deliberate difference by default: SeekDB builds its vector index asynchronously, so a vector
    search misses rows written in the last fraction of a second (measured here: 0.2 to 1.5 s) and
    LangBot does not wait for it. The suites must not depend on timing, so before a vector or hybrid
    search that follows a write this backend calls SeekDB's own `refresh_index()` (about 0.9 s, once
    per batch of writes). `settle=False` leaves the lag as a real host has it (docs/HOST-FACTS.md 12).
    """

    name = "seekdb"
    stand_in = False

    def __init__(self, settle: bool = True) -> None:
        self._settles = settle
        self._client = _SEEKDB.get()
        self._collections: dict[str, Any] = {}
        self._unsettled: set[str] = set()

    def _existing(self, collection: str) -> Any | None:
        name = seekdb_collection_name(collection)
        coll = self._collections.get(name)
        if coll is not None:
            return coll
        if not self._client.has_collection(name):
            return None
        coll = self._client.get_collection(name, embedding_function=None)
        self._collections[name] = coll
        return coll

    def _create(self, collection: str, dim: int) -> Any:
        from pyseekdb import HNSWConfiguration

        coll = self._existing(collection)
        if coll is None:
            name = seekdb_collection_name(collection)
            coll = self._client.create_collection(
                name=name, configuration=HNSWConfiguration(dimension=dim, distance="cosine"),
                embedding_function=None)
            self._collections[name] = coll
        return coll

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        if not vectors:
            return
        check_lengths(ids, vectors, metadatas, documents)
        coll = self._create(collection, len(vectors[0]))
        kwargs: dict[str, Any] = {"ids": ids, "embeddings": vectors,
                                  "metadatas": [_clean_metadata(m) for m in metadatas]}
        if documents is not None:
            kwargs["documents"] = documents
        coll.upsert(**kwargs)
        self._unsettled.add(seekdb_collection_name(collection))

    def _settle(self, coll: Any, collection: str) -> None:
        name = seekdb_collection_name(collection)
        if name in self._unsettled and self._settles:
            coll.refresh_index()
            self._unsettled.discard(name)

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        coll = self._existing(collection)
        if coll is None:
            return _EMPTY
        relevance = False
        if search_type == "full_text":
            if not query_text:
                return _EMPTY
            query: dict[str, Any] = {"where_document": {"$contains": query_text}, "n_results": top_k}
            if filters:
                query["where"] = filters
            results = coll.hybrid_search(query=query, knn=None, n_results=top_k,
                                         include=["documents", "metadatas"])
            relevance = True
        elif search_type == "hybrid" and query_text:
            self._settle(coll, collection)
            query = {"where_document": {"$contains": query_text}, "n_results": top_k}
            knn: dict[str, Any] = {"query_embeddings": vector, "n_results": top_k}
            if filters:
                query["where"] = filters
                knn["where"] = filters
            if vector_weight is not None:
                knn["boost"] = vector_weight
                query["boost"] = 1.0 - vector_weight
            results = coll.hybrid_search(query=query, knn=knn, rank={"rrf": {}}, n_results=top_k,
                                         include=["documents", "metadatas"])
            relevance = True
        else:
            # Vector search, and hybrid without text (the host falls back to a vector search);
            # any other search_type is a vector search too, as in the host's adapter.
            self._settle(coll, collection)
            kwargs: dict[str, Any] = {"n_results": top_k, "query_embeddings": vector}
            if filters:
                kwargs["where"] = filters
            results = coll.query(**kwargs)
        results = _json_safe(results)
        ids, distances, metas = (_first_row(results.get(key)) for key in ("ids", "distances", "metadatas"))
        hits: list[SearchHit] = []
        for i, pid in enumerate(ids):
            distance = distances[i] if i < len(distances) else 0.0
            if relevance and isinstance(distance, (int, float)):
                distance = 1.0 - float(distance)
            hits.append({"id": pid, "distance": distance, "metadata": metas[i] if i < len(metas) else {}})
        return hits

    async def delete(self, collection: str, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> int:
        coll = self._existing(collection)
        if file_ids:
            for file_id in file_ids:  # one host delete_by_file_id per value
                if coll is not None:
                    coll.delete(where={"file_id": file_id})
            return len(file_ids)  # the host reports the request size
        if filters and coll is not None:
            coll.delete(where=filters)
        return 0  # SeekDB's delete returns no count, so the host reports 0

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        coll = self._existing(collection)
        if coll is None:
            return {"items": [], "total": 0}
        kwargs: dict[str, Any] = {"include": ["metadatas", "documents"], "limit": limit, "offset": offset}
        if filters:
            kwargs["where"] = filters
        results = _json_safe(coll.get(**kwargs))
        ids = results.get("ids", [])
        metas = results.get("metadatas", []) or [None] * len(ids)
        docs = results.get("documents", []) or [None] * len(ids)
        items = [{"id": pid, "document": docs[i] if i < len(docs) else None,
                  "metadata": metas[i] if i < len(metas) else {}} for i, pid in enumerate(ids)]
        # The host counts only an unfiltered listing.
        return {"items": items, "total": coll.count() if not filters else -1}

    async def drop(self, collection: str) -> None:
        name = seekdb_collection_name(collection)
        self._collections.pop(name, None)
        self._unsettled.discard(name)
        if self._client.has_collection(name):
            self._client.delete_collection(name)

    async def close(self) -> None:
        for name in list(self._collections):
            await self.drop(name)


def _first_row(value: Any) -> list[Any]:
    """The host flattens the first (only) query row of a batch-shaped answer."""
    if not value:
        return []
    return list(value[0]) if isinstance(value[0], list) else list(value)


BACKEND = SeekDBBackend
