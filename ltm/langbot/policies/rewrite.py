"""How records are written, when some of them may be there already.

- `InPlace`: the store replaces a record written again under its id (one write).
- `SecondKey`: an insert-only store that deletes by key: the new row goes in under the record's other
  key first, then the old row is deleted by its exact key. A refusal or a lost answer of the insert
  leaves the old row as it was; one of the delete leaves two rows, and reads keep the newer.
- `DeleteFirst`: a store that keeps only text/file_id/uuid and cannot delete by key, or that kept both
  rows of a rewrite: the old row is deleted first. If the store then refuses the new row, the old one
  is written back (a status change keeps the content, so the new vector is the old one's): a refusal
  stays "nothing changed". Only when that fails too is the outcome unknown.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from ...errors import HostError, OutcomeUnknown
from ...ports import IndexRecord, Vector
from .. import layout
from ..host_rows import HostRows, RowWriter, meta, own
from .delete import Delete
from .health import Line, line
from .keyed_read import KeyedRead

log = logging.getLogger("LongTermMemory")


class Rewrite(Protocol):
    """Writes records of one space (`space`: its key, as the layout filters on it) into `collection`."""

    @property
    def health(self) -> Line | None: ...

    async def write(self, writer: RowWriter, collection: str, space: str, records: Sequence[IndexRecord],
                    vectors: Sequence[Vector]) -> None: ...


class InPlace:
    health: Line | None = line("can.rewrite_one_write", "changes a memory in one write")

    @staticmethod
    async def write(writer: RowWriter, collection: str, space: str, records: Sequence[IndexRecord],
                    vectors: Sequence[Vector]) -> None:
        await writer.upsert(collection, records, vectors)


def _read_failed(exc: OutcomeUnknown) -> HostError:
    """A read changed nothing: a lost answer before the write is not a reason to fence."""
    return HostError(f"could not read the records before rewriting them ({exc.message})")


class SecondKey:
    health: Line | None = line("can.rewrite_second_key", "changes a memory by writing the new row under its second "
                              "key, then deleting the old row (a failure in between leaves two rows; reads keep the "
                              "newer)")

    def __init__(self, rows: HostRows) -> None:
        self._rows = rows

    async def write(self, writer: RowWriter, collection: str, space: str, records: Sequence[IndexRecord],
                    vectors: Sequence[Vector]) -> None:
        present: dict[str, set[bool]] = {}
        ids = sorted({r.record_id for r in records})
        try:
            rows = await self._rows.list_rows(collection, layout.keys_filter(space, ids), 2 * len(ids) + 2, 0)
        except OutcomeUnknown as exc:
            raise _read_failed(exc) from None
        for record, row in own(rows, space, "list"):
            present.setdefault(record.record_id, set()).add(layout.is_alt(meta(row)))
        both = [rid for rid, alts in present.items() if len(alts) == 2]
        if both:  # an earlier delete went unanswered: drop the second key's row first (the first stays)
            await writer.delete(collection, filters=layout.exact_keys_filter(
                layout.record_key(space, rid, alt=True) for rid in both))
            for rid in both:
                present[rid] = {False}
        alt = [False in present.get(r.record_id, set()) for r in records]
        await writer.upsert(collection, records, vectors, alt=alt)
        old = [layout.record_key(space, r.record_id, alt=not a) for r, a in zip(records, alt) if r.record_id in present]
        if not old:
            return
        try:
            await writer.delete(collection, filters=layout.exact_keys_filter(old))
        except (HostError, OutcomeUnknown) as exc:
            log.warning("[LongTermMemory] old row of %d rewritten record(s) in kb=%s not deleted (%s); reads "
                        "keep the newer row", len(old), collection, exc.code)


class DeleteFirst:
    health: Line | None = line("can.rewrite_delete_first", "changes a memory by deleting the old row, then writing "
                              "the new one (a lost answer in between pauses the space until an admin checks it)")

    def __init__(self, read: KeyedRead, delete: Delete) -> None:
        self._read = read
        self._delete = delete

    async def write(self, writer: RowWriter, collection: str, space: str, records: Sequence[IndexRecord],
                    vectors: Sequence[Vector]) -> None:
        try:
            replaced = await self._read.find(collection, space, {r.record_id for r in records})
        except OutcomeUnknown as exc:
            raise _read_failed(exc) from None
        if replaced:
            await self._delete.delete(writer, collection, space, sorted(replaced))
        try:
            await writer.upsert(collection, records, vectors)
        except HostError as exc:
            if not replaced:
                raise
            await _write_back(writer, collection, records, vectors, replaced, exc)


async def _write_back(writer: RowWriter, collection: str, records: Sequence[IndexRecord], vectors: Sequence[Vector],
                      replaced: dict[str, IndexRecord], refusal: HostError) -> None:
    rewritten = [(r, v) for r, v in zip(records, vectors) if r.record_id in replaced]
    lost = (f"the store removed the old row of {len(rewritten)} record(s) and then refused the new one "
            f"({refusal.message})")
    if any(replaced[new.record_id].text != new.text for new, _ in rewritten):
        raise OutcomeUnknown(lost + "; the old rows could not be written back") from None
    try:
        await writer.upsert(collection, [replaced[r.record_id] for r, _ in rewritten], [v for _, v in rewritten])
    except (HostError, OutcomeUnknown) as exc:
        raise OutcomeUnknown(f"{lost}; writing the old rows back failed too ({exc.message})") from None
    raise HostError(f"the store refused the write ({refusal.message}); the old rows were written back") from None
