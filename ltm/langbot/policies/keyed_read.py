"""How records are read by key. A store that filters on `uuid` answers one read filtered on the
records' keys: a list, or (where the store counts every filtered list, a second pass over the
filter) a search, whose leftovers are listed before they are called gone, since a search may be
approximate. A store that ignores the key filter is read by scanning the record's space."""

from __future__ import annotations

from collections.abc import Set
from typing import Protocol

from ...errors import HostError
from ...ports import IndexRecord, Vector
from .. import layout
from ..host_rows import HostRows, meta, own, records, unit
from .health import Line, line

SCAN_LIMIT = 20_000  # a scan of one space for a record (stores without a uuid filter) stops here
LIST_PAGE = 200


class KeyedRead(Protocol):
    @property
    def health(self) -> Line | None: ...

    async def find(self, collection: str, space: str, wanted: Set[str], *, complete: bool = False
                   ) -> dict[str, IndexRecord]:
        """The records of `space` among `wanted` (not empty) that the store holds, by id."""
        ...


class ByScan:
    """Pages through the space. `complete=True`: a scan that stops at SCAN_LIMIT without finding every
    record is refused (HostError) rather than answered as if the rest did not exist."""

    health: Line | None = line("cannot.open_by_key", "open one memory by its key: it scans the memory's space (up to "
                              "{limit} records), so show/forget/archive slow down as a space grows",
                              limit=f"{SCAN_LIMIT:,}")

    def __init__(self, rows: HostRows) -> None:
        self._rows = rows

    async def find(self, collection: str, space: str, wanted: Set[str], *, complete: bool = False
                   ) -> dict[str, IndexRecord]:
        found: list[IndexRecord] = []
        offset = 0
        while offset < SCAN_LIMIT:
            rows = await self._rows.list_rows(collection, layout.space_filter(space), LIST_PAGE, offset)
            found.extend(r for r, _ in own(rows, space, "list") if r.record_id in wanted)
            if len(rows) < LIST_PAGE or {r.record_id for r in found} >= wanted:
                break
            offset += LIST_PAGE
        else:
            if complete:
                raise HostError(f"this store cannot look records up by key: a scan of the space stopped at "
                                f"{SCAN_LIMIT:,} records")
        return {r.record_id: r for r in layout.newest(found)}


class ByKeyList:
    """One list filtered on the keys; a scan where the store answered rows the filter does not match.
    (Also the read of a collection not probed yet in this process.)"""

    # One line for both reads by key, and for the delete by key that goes with them (the same uuid filter).
    health: Line | None = line("can.open_by_key", "opens and deletes one memory by its key")

    def __init__(self, rows: HostRows) -> None:
        self._rows = rows
        self._scan = ByScan(rows)

    async def find(self, collection: str, space: str, wanted: Set[str], *, complete: bool = False
                   ) -> dict[str, IndexRecord]:
        listed = await keyed(self._rows, collection, space, wanted, None)
        return listed if listed is not None else await self._scan.find(collection, space, wanted, complete=complete)


class ByKeySearch:
    """One search filtered on the keys; what it did not return is listed by key (then as `ByKeyList`)."""

    health = ByKeyList.health

    def __init__(self, rows: HostRows, dimension: int) -> None:
        self._rows = rows
        self._query = unit(dimension)
        self._scan = ByScan(rows)

    async def find(self, collection: str, space: str, wanted: Set[str], *, complete: bool = False
                   ) -> dict[str, IndexRecord]:
        searched = await keyed(self._rows, collection, space, wanted, self._query) or {}
        if len(searched) == len(wanted):
            return searched
        listed = await keyed(self._rows, collection, space, wanted - set(searched), None)
        if listed is not None:
            return {**searched, **listed}
        return await self._scan.find(collection, space, wanted, complete=complete)


async def keyed(rows: HostRows, collection: str, space: str, wanted: Set[str], vector: Vector | None
                ) -> dict[str, IndexRecord] | None:
    """One read filtered on the records' keys (a search with `vector`, else a list); None when the
    store answered rows the filter does not match (it ignored the filter)."""
    keys = {key for r in wanted for key in layout.record_keys(space, r)}
    filters = layout.keys_filter(space, sorted(wanted))
    if vector is None:
        found = await rows.list_rows(collection, filters, 2 * len(wanted) + 2, 0)
    else:
        found = await rows.search(collection, vector, 2 * len(wanted) + 2, filters)
    if not all(isinstance(m := meta(r), dict) and m.get("uuid") in keys for r in found):
        return None
    return {r.record_id: r for r in records(found, space) if r.record_id in wanted}
