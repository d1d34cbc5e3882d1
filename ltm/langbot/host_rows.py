"""The LangBot vector API calls the adapter makes, one method per host action, and the first check of
every row read back (it must be a layout-2 record of the asked space: `layout.from_metadata`).

Reads go through `HostRows`; writes only through a `RowWriter`, which `HostRows.writer()` hands out.
Taking a writer tells the gate's write probe that this call reports its writes (`reports_writes`), and
every row write it sends is counted before it leaves (`write_sent`): a policy or a new port method that
writes rows cannot skip either, because it has no other way to reach `vector_upsert` or `vector_delete`.
The store's policies (`policies/`) and the probe (`store_probe.py`) are built on these calls.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

from ..ports import IndexHit, IndexRecord, Vector, reports_writes, write_sent
from . import layout
from .calls import host_call

log = logging.getLogger("LongTermMemory")

Row = dict[str, Any]


def meta(row: Row) -> Any:
    return row.get("metadata")


def unit(dimension: int) -> list[float]:
    """A vector that is valid on every store: the graveyard's husks and the keyed search's query."""
    return [1.0] + [0.0] * (dimension - 1)


class HostRows:
    """Raw rows over the SDK's vector calls, and the dimension each collection was last seen with."""

    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin
        self._dims: dict[str, int] = {}

    def dimension(self, collection: str) -> int | None:
        return self._dims.get(collection)

    def seen(self, collection: str, dimension: int) -> None:
        self._dims[collection] = dimension

    def writer(self) -> RowWriter:
        reports_writes()
        return RowWriter(self._plugin, self._dims)

    async def search(self, collection: str, vector: Vector, top_k: int, filters: dict[str, Any],
                     search_type: str = "vector", query_text: str = "") -> list[Row]:
        rows = await host_call("vector search", self._plugin.vector_search(
            collection_id=collection, query_vector=list(vector), top_k=top_k, filters=filters,
            search_type=search_type, query_text=query_text))
        self._dims.setdefault(collection, len(vector))
        return [r for r in rows or [] if isinstance(r, dict)]

    async def list_rows(self, collection: str, filters: dict[str, Any] | None, limit: int, offset: int) -> list[Row]:
        return (await self.list_counted(collection, filters, limit, offset))[0]

    async def list_counted(self, collection: str, filters: dict[str, Any] | None, limit: int, offset: int
                           ) -> tuple[list[Row], int]:
        """The rows and the host's `total` (-1 where the store does not count what a filter matches)."""
        listing = await host_call("vector list", self._plugin.vector_list(
            collection_id=collection, filters=filters, limit=limit, offset=offset))
        items = listing.get("items") if isinstance(listing, dict) else None
        total = listing.get("total") if isinstance(listing, dict) else None
        counted = total if isinstance(total, int) and not isinstance(total, bool) else -1
        return [i for i in items or [] if isinstance(i, dict)], counted


class RowWriter:
    """The only sender of row writes (see the module's docstring)."""

    def __init__(self, plugin: Any, dims: dict[str, int]) -> None:
        self._plugin = plugin
        self._dims = dims

    async def upsert(self, collection: str, records: Sequence[IndexRecord], vectors: Sequence[Vector], *,
                     gone: bool = False, alt: Sequence[bool] | None = None) -> None:
        if not records:
            return
        alts = list(alt) if alt is not None else [False] * len(records)
        await self._send("vector upsert", partial(
            self._plugin.vector_upsert, collection_id=collection, vectors=[list(v) for v in vectors],
            ids=[layout.host_id(r.space_key, r.record_id, alt=a) for r, a in zip(records, alts)],
            metadata=[layout.to_metadata(r, gone=gone, alt=a) for r, a in zip(records, alts)],
            documents=[r.text for r in records]))
        self._dims[collection] = len(vectors[0])

    async def delete(self, collection: str, *, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> None:
        await self._send("vector delete", partial(
            self._plugin.vector_delete, collection_id=collection, file_ids=file_ids, filters=filters))

    @staticmethod
    async def _send(what: str, call: Callable[[], Awaitable[Any]]) -> None:
        write_sent()
        await host_call(what, call())


def own(rows: Sequence[Row], space: str, what: str) -> list[tuple[IndexRecord, Row]]:
    """The rows that decode as records of `space`; any other row is dropped and counted in the log."""
    found: list[tuple[IndexRecord, Row]] = []
    for row in rows:
        record = layout.from_metadata(meta(row), space)
        if record is not None:
            found.append((record, row))
    foreign = len(rows) - len(found)
    if foreign:
        log.warning("[LongTermMemory] vector %s returned %d record(s) outside the scope; dropped", what, foreign)
    return found


def records(rows: Sequence[Row], space: str) -> list[IndexRecord]:
    """The newest record of each id among the listed rows of `space`."""
    return layout.newest(r for r, _ in own(rows, space, "list"))


def hits(rows: Sequence[Row], space: str, score: Callable[[Row], float]) -> list[IndexHit]:
    """Hits of `space`, decoded only when their record is asked for: the routing fields name the
    record and its space (a row filed elsewhere is dropped here), the payload is checked on decoding.
    Two rows of one record (an insert-only store, for a moment) are decoded at once: the newer wins.
    `score` turns a row's raw score into a lower-is-better distance (`policies/scores.py`)."""
    rows_of: dict[str, list[Row]] = {}
    for row in rows:
        record_id = layout.row_record_id(meta(row), space)
        if record_id is not None:
            rows_of.setdefault(record_id, []).append(row)
    foreign = len(rows) - sum(len(r) for r in rows_of.values())
    if foreign:
        log.warning("[LongTermMemory] vector search returned %d record(s) outside the scope; dropped", foreign)
    found: list[IndexHit] = []
    for record_id, same in rows_of.items():
        if len(same) > 1:
            decoded = [(r, row) for row in same if (r := layout.from_metadata(meta(row), space))]
            if not decoded:
                continue
            chosen = {r.record_id: r for r in layout.newest(r for r, _ in decoded)}
            record, row = next((r, row) for r, row in decoded if chosen.get(r.record_id) is r)
            found.append(IndexHit(record, finite(score(row))))
            continue
        found.append(IndexHit(None, finite(score(same[0])), record_id=record_id,
                              decode=partial(layout.from_metadata, meta(same[0]), space)))
    return found


def finite(distance: float) -> float:
    """A score the store could not compute (NaN, infinity) ranks last."""
    return distance if math.isfinite(distance) else 2.0
