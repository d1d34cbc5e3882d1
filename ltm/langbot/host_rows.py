"""The LangBot vector API calls the adapter makes, one method per host action, and the first check of
every row read back (it must be a layout-2 record of the asked space: `layout.from_metadata`).
These are the row calls `StoreProbing` declares (`store_probe.py`); `HostVectorIndex`
(`vector_index.py`) builds the port on them."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from functools import partial
from typing import Any

from ..ports import IndexHit, IndexRecord, Vector, write_sent
from . import layout
from .calls import host_call as _call
from .store_probe import StoreProbing, Traits

log = logging.getLogger("LongTermMemory")


class HostRows(StoreProbing):
    """Raw rows over the SDK's vector calls; `HostVectorIndex` builds the port on them."""

    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin
        self._dims: dict[str, int] = {}

    async def _upsert_rows(self, collection: str, records: Sequence[IndexRecord], vectors: Sequence[Vector], *,
                           gone: bool = False, alt: Sequence[bool] | None = None) -> None:
        if not records:
            return
        alts = list(alt) if alt is not None else [False] * len(records)
        write_sent()
        await _call("vector upsert", self._plugin.vector_upsert(
            collection_id=collection, vectors=[list(v) for v in vectors],
            ids=[layout.host_id(r.space, r.record_id, alt=a) for r, a in zip(records, alts)],
            metadata=[layout.to_metadata(r, gone=gone, alt=a) for r, a in zip(records, alts)],
            documents=[r.text for r in records]))
        self._dims[collection] = len(vectors[0])

    async def _search_rows(self, collection: str, vector: Vector, top_k: int, filters: dict[str, Any],
                           search_type: str = "vector", query_text: str = "") -> list[dict[str, Any]]:
        rows = await _call("vector search", self._plugin.vector_search(
            collection_id=collection, query_vector=list(vector), top_k=top_k, filters=filters,
            search_type=search_type, query_text=query_text))
        self._dims.setdefault(collection, len(vector))
        return [r for r in rows or [] if isinstance(r, dict)]

    async def _list_rows(self, collection: str, filters: dict[str, Any] | None, limit: int, offset: int
                         ) -> list[dict[str, Any]]:
        return (await self._list_counted(collection, filters, limit, offset))[0]

    async def _list_counted(self, collection: str, filters: dict[str, Any] | None, limit: int, offset: int
                            ) -> tuple[list[dict[str, Any]], int]:
        """The rows and the host's `total` (-1 where the store does not count what a filter matches)."""
        listing = await _call("vector list", self._plugin.vector_list(
            collection_id=collection, filters=filters, limit=limit, offset=offset))
        items = listing.get("items") if isinstance(listing, dict) else None
        total = listing.get("total") if isinstance(listing, dict) else None
        counted = total if isinstance(total, int) and not isinstance(total, bool) else -1
        return [i for i in items or [] if isinstance(i, dict)], counted

    async def _delete_rows(self, collection: str, *, file_ids: list[str] | None = None,
                           filters: dict[str, Any] | None = None) -> None:
        write_sent()
        await _call("vector delete", self._plugin.vector_delete(
            collection_id=collection, file_ids=file_ids, filters=filters))

    @staticmethod
    def _meta(row: dict[str, Any]) -> Any:
        return row.get("metadata")

    def _own(self, rows: Sequence[dict[str, Any]], space: str, what: str) -> list[tuple[IndexRecord, dict[str, Any]]]:
        found: list[tuple[IndexRecord, dict[str, Any]]] = []
        for row in rows:
            record = layout.from_metadata(self._meta(row), space)
            if record is not None:
                found.append((record, row))
        foreign = len(rows) - len(found)
        if foreign:
            log.warning("[LongTermMemory] vector %s returned %d record(s) outside the scope; dropped", what, foreign)
        return found

    def _hits(self, rows: Sequence[dict[str, Any]], space: str, traits: Traits) -> list[IndexHit]:
        """Hits of `space`, decoded only when their record is asked for: the routing fields name the
        record and its space (a row filed elsewhere is dropped here), the payload is checked on decoding.
        Two rows of one record (an insert-only store, for a moment) are decoded at once: the newer wins."""
        rows_of: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            record_id = layout.row_record_id(self._meta(row), space)
            if record_id is not None:
                rows_of.setdefault(record_id, []).append(row)
        foreign = len(rows) - sum(len(r) for r in rows_of.values())
        if foreign:
            log.warning("[LongTermMemory] vector search returned %d record(s) outside the scope; dropped", foreign)
        hits: list[IndexHit] = []
        for record_id, found in rows_of.items():
            if len(found) > 1:
                decoded = [(r, row) for row in found if (r := layout.from_metadata(self._meta(row), space))]
                if not decoded:
                    continue
                chosen = {r.record_id: r for r in layout.newest(r for r, _ in decoded)}
                record, row = next((r, row) for r, row in decoded if chosen.get(r.record_id) is r)
                hits.append(IndexHit(record, self._distance(row, traits)))
                continue
            hits.append(IndexHit(None, self._distance(found[0], traits), record_id=record_id,
                                 decode=partial(layout.from_metadata, self._meta(found[0]), space)))
        return hits

    @staticmethod
    def _distance(row: dict[str, Any], traits: Traits) -> float:
        raw = float(row.get("distance") or 0.0)
        distance = 1.0 - raw if traits.similarity else raw
        return distance if math.isfinite(distance) else 2.0
