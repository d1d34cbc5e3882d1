"""How single records are deleted. A store that filters on `uuid` deletes by the records' keys; one
that deletes by `file_id` only gets the records rewritten under their space's graveyard `file_id`
(a store that replaces on write moves them out of the space), and then deletes that. Before the
probe has run in this process, a delete by key is read back and falls back to the graveyard."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ...errors import HostError
from ...ports import IndexRecord
from .. import layout
from ..host_rows import HostRows, RowWriter, unit
from .health import Line, line
from .keyed_read import ByKeyList


class Delete(Protocol):
    @property
    def health(self) -> Line | None: ...

    async def delete(self, writer: RowWriter, collection: str, space: str, record_ids: Sequence[str]) -> None: ...


class ByKey:
    health: Line | None = None  # said by the keyed read's line (`ByKeyList`): the same uuid filter

    @staticmethod
    async def delete(writer: RowWriter, collection: str, space: str, record_ids: Sequence[str]) -> None:
        await writer.delete(collection, filters=layout.keys_filter(space, record_ids))


class ByGraveyard:
    health: Line | None = line("can.delete_by_graveyard", "deletes one memory by moving it to its space's graveyard, "
                              "then deleting that (two writes)")

    def __init__(self, dimension: int) -> None:
        self._husk = unit(dimension)

    async def delete(self, writer: RowWriter, collection: str, space: str, record_ids: Sequence[str]) -> None:
        husks = [IndexRecord(r, space, "", "", {}) for r in record_ids]
        await writer.upsert(collection, husks, [self._husk] * len(husks), gone=True)
        await writer.delete(collection, file_ids=[layout.gone_token(space)])


class ByKeyThenCheck:
    """The store's traits are not known yet (no vector seen in this process)."""

    health: Line | None = None  # an unprobed store has no health report

    def __init__(self, rows: HostRows) -> None:
        self._rows = rows

    async def delete(self, writer: RowWriter, collection: str, space: str, record_ids: Sequence[str]) -> None:
        await ByKey.delete(writer, collection, space, record_ids)
        left = await ByKeyList(self._rows).find(collection, space, set(record_ids))
        if left:
            dimension = self._rows.dimension(collection)
            if dimension is None:
                raise HostError("the vector store kept the record after a delete by its key (it cannot filter on "
                                "uuid); run a recall or the health check once, then retry")
            await ByGraveyard(dimension).delete(writer, collection, space, sorted(left))
