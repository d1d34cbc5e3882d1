"""The record-layout migration of a memory knowledge base (record layout 1 -> 2).

Records written before layout 2 (`file_id = <user_key>#<episode id>`, fields as metadata) are
found by an index that can list them (`LegacyIndex`, implemented by the LangBot adapter) and
rewritten, one memory space at a time, inside that space's write gate as the operation
`migration` (serialized with the space's other writes, refused while it is fenced, audited in
the installation log):

1. records whose layout-2 copy already exists are not written again (an earlier run wrote them,
   or the record has changed since: the newer copy wins);
2. the others are embedded again and written in layout 2;
3. they are read back; only when every one is there
4. are the old rows deleted (by their old `file_id`, which names exactly one record).

A crash or an unknown outcome between two steps loses nothing: the next run finds the old rows
again and goes on from step 1. When a whole pass of the KB finds no old row, the KB is marked
migrated in plugin storage (`layout_marker_key`, built in `_storage.py`) and is never scanned
again; a KB created by this release is marked at creation (`mark_current`). Until then every
process checks it once, at the first use of the KB (`ensure`), or when asked (`migrate`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol, runtime_checkable

from .._bookkeeping import Bookkeeping
from .._gate import WriteGate
from .._storage import layout_marker_key, legacy_layout_marker_key
from ..episodes.store import EpisodeStore
from ..errors import FencedError, HostError, LTMError
from ..kb_settings import KBSettings
from ..operations import Operation
from ..ports import IndexRecord, VectorIndex, VectorWrites
from ..spaces import L2Space, Space
from ..timefields import now_iso
from ..wording import Phrase

log = logging.getLogger("LongTermMemory")
REWRITTEN = Phrase("audit.layout_rewritten", "episodes rewritten in record layout 2: {count}")
OLD_ROWS_REMOVED = Phrase("audit.layout_old_rows_removed", "rows of the old record layout removed: {count}")

SCAN_PAGE = 500
MAX_ROUNDS = 20
BATCH = 64  # records per gated write (one host upsert)


class LegacyRows(Protocol):
    """Records of the older layout, each with the key that deletes exactly it."""

    records: list[tuple[IndexRecord, str]]
    scanned: int  # rows looked at (of any layout)
    more: bool


@runtime_checkable
class LegacyIndex(Protocol):
    """The capability this migration needs from an index whose host may still hold layout-1 records."""

    async def legacy_page(self, kb_id: str, limit: int, offset: int) -> LegacyRows: ...

    async def present(self, space: L2Space, record_ids: Sequence[str]) -> set[str]:
        """Which of these records of `space` the index returns now (read-back after a write)."""
        ...


@runtime_checkable
class LegacyWrites(Protocol):
    """Its write: on the write side of the store, which only a gated write's step receives."""

    async def delete_legacy(self, kb_id: str, keys: Sequence[str]) -> None: ...


async def _delete_legacy(index: VectorWrites, kb_id: str, keys: Sequence[str]) -> None:
    assert isinstance(index, LegacyWrites)  # the adapter whose `LegacyIndex` found these rows
    await index.delete_legacy(kb_id, keys)


@dataclass
class MigrationReport:
    kb_id: str
    done: bool = False
    rewritten: int = 0  # records written in layout 2
    removed: int = 0  # old rows deleted
    spaces: int = 0
    fenced: list[str] = field(default_factory=list)  # spaces skipped because they are fenced
    error: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"kb_id": self.kb_id, "done": self.done, "rewritten": self.rewritten, "removed": self.removed,
                "spaces": self.spaces, "fenced": list(self.fenced), "error": self.error}


class LayoutMigrations:
    def __init__(self, gate: WriteGate, store: Bookkeeping, index: VectorIndex, episodes: EpisodeStore) -> None:
        self._gate = gate
        self._store = store
        self._index = index
        # Embeds the rewritten records, and is told after every pass over a KB: records were written
        # around it, so its word indexes of that KB are rebuilt.
        self._episodes = episodes
        self._done: set[str] = set()
        self._locks: dict[str, asyncio.Lock] = {}

    # ------------------------------------------------------------------ creation
    async def mark_current(self, kb_id: str) -> None:
        """A KB created by this release has nothing to migrate. A marker that cannot be written is
        logged (creation goes on): the next process scans once and finds nothing."""
        self._done.add(kb_id)
        try:
            await self._store.set(layout_marker_key(kb_id), {"layout": 2, "at": now_iso(), "new": True})
        except LTMError as exc:
            log.warning("[LongTermMemory] migration marker of kb=%s not written (%s)", kb_id, exc.code)
            self._done.discard(kb_id)

    # ------------------------------------------------------------------ first use
    async def ensure(self, kb_id: str, settings: KBSettings) -> None:
        """Migrate once per knowledge base; later calls cost nothing. Never raises: a migration that
        cannot finish now is retried by the next process (or by `migrate`, which the test host calls)."""
        if kb_id in self._done:
            return
        lock = self._locks.setdefault(kb_id, asyncio.Lock())
        async with lock:
            if kb_id in self._done:
                return
            try:
                if await self._store.get(layout_marker_key(kb_id)) or await self._store.get(
                        legacy_layout_marker_key(kb_id)):
                    self._done.add(kb_id)
                    return
                report = await self.migrate(kb_id, settings)
            except LTMError as exc:
                log.warning("[LongTermMemory] layout migration of kb=%s not finished: %s", kb_id, exc.code)
                return
            if not report.done:
                # Try again in the next process, not on every call of this one.
                self._done.add(kb_id)

    # ------------------------------------------------------------------ the migration
    async def migrate(self, kb_id: str, settings: KBSettings) -> MigrationReport:
        try:
            return await self._migrate(kb_id, settings)
        finally:
            self._episodes.records_rewritten(kb_id)

    async def _migrate(self, kb_id: str, settings: KBSettings) -> MigrationReport:
        report = MigrationReport(kb_id)
        index = self._index
        if not isinstance(index, LegacyIndex):
            report.done = True
            self._done.add(kb_id)
            return report
        counted: set[str] = set()
        for _ in range(MAX_ROUNDS):
            found = progressed = False
            offset = 0
            while True:
                page = await index.legacy_page(kb_id, SCAN_PAGE, offset)
                removed_here = 0
                by_space: dict[str, list[tuple[IndexRecord, str]]] = {}
                for record, key in page.records:
                    by_space.setdefault(record.space_key, []).append((record, key))
                chunks = [(space_key, items[i:i + BATCH]) for space_key, items in by_space.items()
                          for i in range(0, len(items), BATCH)]
                for space_key, items in chunks:
                    found = True
                    if space_key in report.fenced:
                        continue
                    try:
                        written, removed = await self._migrate_space(settings, L2Space(kb_id, space_key), items)
                    except FencedError:
                        report.fenced.append(space_key)
                        continue
                    except LTMError as exc:
                        report.error = f"{exc.code}: {exc.message}"
                        log.warning("[LongTermMemory] layout migration of kb=%s stopped: %s", kb_id, report.error)
                        return report
                    report.rewritten += written
                    report.removed += removed
                    report.spaces += space_key not in counted
                    counted.add(space_key)
                    removed_here += removed
                    progressed = True
                if not page.more:
                    break
                offset += max(0, page.scanned - removed_here)  # deleted rows leave the listing
            if not found:
                report.done = True
                break
            if not progressed:
                break
        if report.done:
            await self._store.set(layout_marker_key(kb_id), {"layout": 2, "at": now_iso(),
                                                             "rewritten": report.rewritten, "removed": report.removed})
            self._done.add(kb_id)
        log.info("[LongTermMemory] layout migration kb=%s done=%s rewritten=%d removed=%d fenced=%d", kb_id,
                 report.done, report.rewritten, report.removed, len(report.fenced))
        return report

    async def _migrate_space(self, settings: KBSettings, space: L2Space,
                             items: Sequence[tuple[IndexRecord, str]]) -> tuple[int, int]:
        index = self._index
        assert isinstance(index, LegacyIndex)
        async with self._gate.write(None, Space.l2(space), Operation.MIGRATION) as tx:  # no scope: a KB's records
            ids = [record.record_id for record, _ in items]
            already = await index.present(space, ids)
            to_write = list({r.record_id: r for r, _ in items if r.record_id not in already}.values())
            if to_write:
                vectors = await self._episodes.embed(settings.embedding_model_uuid, [r.text for r in to_write])
                await tx.index_write("vector upsert", lambda writes: writes.upsert(space, to_write, vectors))
                back = await index.present(space, [r.record_id for r in to_write])
                missing = [r.record_id for r in to_write if r.record_id not in back]
                if missing:
                    raise HostError(f"{len(missing)} record(s) written in the new layout were not read back; "
                                    "their old rows are kept")
                tx.applied(Operation.MIGRATION, "space", space.space_key, REWRITTEN(count=len(to_write)),
                           episode_ids=[r.record_id for r in to_write])
            keys = [key for _, key in items]
            await tx.index_write("vector delete", partial(_delete_legacy, kb_id=space.kb_id, keys=keys))
            tx.applied(Operation.MIGRATION, "space", space.space_key, OLD_ROWS_REMOVED(count=len(keys)))
        return len(to_write), len(keys)
