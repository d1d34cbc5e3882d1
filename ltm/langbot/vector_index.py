"""The vector index port over LangBot's vector API, on every backend LangBot 4.11.2 ships.

Records sit in the store as `layout` describes: the space in `file_id` (the one field
every backend keeps and filters), the record in `text`. What differs per backend is
learned, not assumed from a name (docs/HOST-FACTS.md 12): once per collection and
process the index writes two throwaway records in two throwaway spaces and watches
what the store does with them (`probe`). It learns whether the store

- keeps plugin metadata and filters on it (then "this speaker in this space" is one
  filter; otherwise the speaker's records are taken from an over-fetched space search),
- filters on `uuid` (then one record is read and deleted by its key; otherwise it is
  read by scanning its space, and deleted by moving it into the space's graveyard
  `file_id` and deleting that),
- answers similarities rather than distances (Milvus: higher is better; turned into
  `1 - similarity` here, so every `IndexHit.distance` is lower-is-better),
- replaces a record written again (otherwise a rewrite deletes the old row first).

The probe runs when the knowledge base is created (so the first call on a new
collection is a write of real vectors: Milvus would otherwise create it with 1536
dimensions), at every health check, and otherwise before the first search or write
of a process. Every record read back is checked for its space (fail closed).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from ..errors import HostError, OutcomeUnknown
from ..ports import IndexHit, IndexPage, IndexRecord, Vector, reports_writes
from . import layout
from .host_rows import HostRows
from .store_probe import SCAN_LIMIT, SPEAKER_OVERFETCH, SPEAKER_OVERFETCH_MAX, Traits

log = logging.getLogger("LongTermMemory")

LIST_PAGE = 200
DROP_ROUNDS = 400


def _unit(dimension: int) -> list[float]:
    return [1.0] + [0.0] * (dimension - 1)


class HostVectorIndex(HostRows):
    """VectorIndex (and the optional `DescribedIndex`, and the layout migration's `LegacyIndex`) over the host's API."""

    def __init__(self, plugin: Any) -> None:
        super().__init__(plugin)
        self._traits: dict[str, Traits] = {}
        self._problems: dict[str, list[str]] = {}
        self._probing: dict[str, asyncio.Lock] = {}

    # ------------------------------------------------------------------ reads
    async def search(self, collection: str, space: str, vector: Vector, top_k: int, *,
                     speaker: str | None = None) -> list[IndexHit]:
        traits = await self._traits_for(collection, vector)
        overfetch = bool(speaker) and not traits.filters_metadata
        if speaker and traits.filters_metadata:
            filters = layout.speaker_filter(space, speaker)
        else:
            filters = layout.space_filter(space)
        asked = min(max(top_k * SPEAKER_OVERFETCH, top_k), SPEAKER_OVERFETCH_MAX) if overfetch else top_k
        rows = await self._search_rows(collection, vector, asked, filters)
        hits = self._hits(rows, space, traits)
        if speaker:
            hits = [h for h in hits if (r := h.record) is not None and r.speaker == speaker][:top_k]
        log.info("[LongTermMemory] vector search kb=%s filter=%s results=%d", collection,
                 "speaker" if speaker else "space", len(hits))
        return hits

    async def search_text(self, collection: str, space: str, text: str, vector: Vector, top_k: int
                          ) -> list[IndexHit] | None:
        """LangBot's full-text mode: Chroma answers substring matches with distance 0, SeekDB text matches
        at one minus their relevance; Qdrant and Milvus ignore the mode and answer plain vector hits: the
        store probe told which (`Traits.text_search`); without text search the caller uses vectors only.
        pgvector refuses the mode (a HostError the caller treats as no text search)."""
        traits = await self._traits_for(collection, vector)
        if traits.similarity or not traits.text_search:
            log.info("[LongTermMemory] kb=%s ignores full-text search; vector only", collection)
            return None
        rows = await self._search_rows(collection, vector, top_k, layout.space_filter(space),
                                       search_type="full_text", query_text=text)
        return self._hits(rows, space, traits)

    async def get(self, collection: str, space: str, record_id: str) -> IndexRecord | None:
        found = await self._find(collection, space, [record_id])
        return found.get(record_id)

    async def _find(self, collection: str, space: str, record_ids: Sequence[str], *, complete: bool = False
                    ) -> dict[str, IndexRecord]:
        """Records of `space` by id: one keyed read where the store filters on `uuid`, else a scan. The keyed
        read is a search on a store that counts every list (`Traits.keyed_by_search`); a search may be
        approximate, so what it did not return is listed by key before it is called gone."""
        wanted = set(record_ids)
        if not wanted:
            return {}
        traits = self._traits.get(collection)
        if traits is None or traits.filters_uuid:
            searched: dict[str, IndexRecord] = {}
            if traits is not None and traits.keyed_by_search:
                searched = await self._keyed(collection, space, wanted, _unit(traits.dimension)) or {}
                if len(searched) == len(wanted):
                    return searched
            listed = await self._keyed(collection, space, wanted - set(searched), None)
            if listed is not None:
                return {**searched, **listed}
        return await self._scan(collection, space, wanted, complete=complete)

    async def _keyed(self, collection: str, space: str, wanted: set[str], vector: Vector | None
                     ) -> dict[str, IndexRecord] | None:
        """One read filtered on the records' keys (a search with `vector`, else a list); None when the
        store answered rows the filter does not match (it ignored the filter)."""
        keys = {key for r in wanted for key in layout.record_keys(space, r)}
        filters = layout.keys_filter(space, sorted(wanted))
        if vector is None:
            rows = await self._list_rows(collection, filters, 2 * len(wanted) + 2, 0)
        else:
            rows = await self._search_rows(collection, vector, 2 * len(wanted) + 2, filters)
        if not all(isinstance(self._meta(r), dict) and self._meta(r).get("uuid") in keys for r in rows):
            return None
        records = layout.newest(r for r, _ in self._own(rows, space, "list"))
        return {r.record_id: r for r in records if r.record_id in wanted}

    async def _scan(self, collection: str, space: str, wanted: set[str], *, complete: bool = False
                    ) -> dict[str, IndexRecord]:
        """`complete=True`: a scan that stops at SCAN_LIMIT without finding every record is refused
        (HostError) rather than answered as if the rest did not exist."""
        found: list[IndexRecord] = []
        offset = 0
        while offset < SCAN_LIMIT:
            rows = await self._list_rows(collection, layout.space_filter(space), LIST_PAGE, offset)
            found.extend(r for r, _ in self._own(rows, space, "list") if r.record_id in wanted)
            if len(rows) < LIST_PAGE or {r.record_id for r in found} >= wanted:
                break
            offset += LIST_PAGE
        else:
            if complete:
                raise HostError(f"this store cannot look records up by key: a scan of the space stopped at "
                                f"{SCAN_LIMIT:,} records")
        return {r.record_id: r for r in layout.newest(found)}

    async def get_many(self, collection: str, space: str, record_ids: Sequence[str]) -> list[IndexRecord]:
        found = await self._find(collection, space, record_ids, complete=True)
        return [found[r] for r in dict.fromkeys(record_ids) if r in found]

    async def present(self, collection: str, space: str, record_ids: Sequence[str]) -> set[str]:
        return set(await self._find(collection, space, record_ids))

    async def page(self, collection: str, space: str, limit: int, offset: int) -> IndexPage:
        rows = await self._list_rows(collection, layout.space_filter(space), limit, offset)
        records = layout.newest(r for r, _ in self._own(rows, space, "list"))
        return IndexPage(records, more=len(rows) >= limit)

    # ------------------------------------------------------------------ writes
    async def upsert(self, collection: str, records: Sequence[IndexRecord], vectors: Sequence[Vector]) -> None:
        """Write records; on a store that does not replace a record written again (or keeps only
        text/file_id/uuid) a rewrite deletes the old row first. If the store then refuses the new row,
        the old one is written back (a status change keeps the content, so the new vector is the old
        one's): a refusal stays "nothing changed". Only when that fails too is the outcome unknown."""
        if not records:
            return
        reports_writes()
        traits = await self._traits_for(collection, vectors[0])
        if traits.rewrite_deletes_first and traits.filters_uuid:
            await self._rewrite_insert_first(collection, records, vectors)
            return
        replaced: dict[tuple[str, str], IndexRecord] = {}
        if traits.rewrite_deletes_first:
            for space in dict.fromkeys(r.space for r in records):
                ids = [r.record_id for r in records if r.space == space]
                try:
                    existing = await self._find(collection, space, ids)
                except OutcomeUnknown as exc:  # a read changed nothing: not a reason to fence
                    raise HostError(f"could not read the records before rewriting them ({exc.message})") from None
                if existing:
                    await self._delete_records(collection, traits, space, sorted(existing))
                    replaced.update({(space, rid): record for rid, record in existing.items()})
        try:
            await self._upsert_rows(collection, records, vectors)
        except HostError as exc:
            if not replaced:
                raise
            await self._write_back(collection, records, vectors, replaced, exc)

    async def _rewrite_insert_first(self, collection: str, records: Sequence[IndexRecord],
                                    vectors: Sequence[Vector]) -> None:
        """An insert-only store that deletes by key: the new row goes in under the record's other key
        first, then the old row is deleted by its exact key. A refusal or a lost answer of the insert
        leaves the old row as it was; one of the delete leaves two rows, and reads keep the newer."""
        present: dict[tuple[str, str], set[bool]] = {}
        for space in dict.fromkeys(r.space for r in records):
            ids = sorted({r.record_id for r in records if r.space == space})
            try:
                rows = await self._list_rows(collection, layout.keys_filter(space, ids), 2 * len(ids) + 2, 0)
            except OutcomeUnknown as exc:  # a read changed nothing: not a reason to fence
                raise HostError(f"could not read the records before rewriting them ({exc.message})") from None
            for record, row in self._own(rows, space, "list"):
                present.setdefault((space, record.record_id), set()).add(layout.is_alt(self._meta(row)))
        both = [key for key, alts in present.items() if len(alts) == 2]
        if both:  # an earlier delete went unanswered: drop the second key's row first (the first stays)
            await self._delete_rows(collection, filters=layout.exact_keys_filter(
                layout.record_key(space, rid, alt=True) for space, rid in both))
            for key in both:
                present[key] = {False}
        alt = [False in present.get((r.space, r.record_id), set()) for r in records]
        await self._upsert_rows(collection, records, vectors, alt=alt)
        old = [layout.record_key(r.space, r.record_id, alt=not a) for r, a in zip(records, alt)
               if (r.space, r.record_id) in present]
        if not old:
            return
        try:
            await self._delete_rows(collection, filters=layout.exact_keys_filter(old))
        except (HostError, OutcomeUnknown) as exc:
            log.warning("[LongTermMemory] old row of %d rewritten record(s) in kb=%s not deleted (%s); reads "
                        "keep the newer row", len(old), collection, exc.code)

    async def _write_back(self, collection: str, records: Sequence[IndexRecord], vectors: Sequence[Vector],
                          replaced: dict[tuple[str, str], IndexRecord], refusal: HostError) -> None:
        pairs = [(replaced[(r.space, r.record_id)], v) for r, v in zip(records, vectors)
                 if (r.space, r.record_id) in replaced]
        lost = (f"the store removed the old row of {len(pairs)} record(s) and then refused the new one "
                f"({refusal.message})")
        if any(old.text != new.text for old, new in zip((p[0] for p in pairs),
                                                          (r for r in records if (r.space, r.record_id) in replaced))):
            raise OutcomeUnknown(lost + "; the old rows could not be written back") from None
        try:
            await self._upsert_rows(collection, [old for old, _ in pairs], [v for _, v in pairs])
        except (HostError, OutcomeUnknown) as exc:
            raise OutcomeUnknown(f"{lost}; writing the old rows back failed too ({exc.message})") from None
        raise HostError(f"the store refused the write ({refusal.message}); the old rows were written back") from None

    async def delete(self, collection: str, space: str, record_ids: Sequence[str]) -> None:
        if not record_ids:
            return
        reports_writes()
        traits = self._traits.get(collection)
        if traits is not None:
            await self._delete_records(collection, traits, space, record_ids)
            return
        # Not probed in this process yet (no vector seen): delete by key and read back.
        await self._delete_rows(collection, filters=layout.keys_filter(space, record_ids))
        left = await self.present(collection, space, record_ids)
        if left:
            dimension = self._dims.get(collection)
            if dimension is None:
                raise HostError("the vector store kept the record after a delete by its key (it cannot filter on "
                                "uuid); run a recall or the health check once, then retry")
            await self._move_and_delete(collection, space, sorted(left), dimension)

    async def _delete_records(self, collection: str, traits: Traits, space: str, record_ids: Sequence[str]) -> None:
        if traits.filters_uuid:
            await self._delete_rows(collection, filters=layout.keys_filter(space, record_ids))
        else:
            await self._move_and_delete(collection, space, record_ids, traits.dimension)

    async def _move_and_delete(self, collection: str, space: str, record_ids: Sequence[str], dimension: int) -> None:
        """For a store that deletes by file_id only: rewrite the records under the space's graveyard
        `file_id` (a store that replaces on write moves them out of the space), then delete that."""
        husks = [IndexRecord(r, space, "", "", {}) for r in record_ids]
        await self._upsert_rows(collection, husks, [_unit(dimension)] * len(husks), gone=True)
        await self._delete_rows(collection, file_ids=[layout.gone_token(space)])

    async def drop_collection(self, collection: str) -> None:
        """Every record of the memory KB: by the host's KB key where the store filters on metadata,
        then by every `file_id` still listed (the one field every store deletes by)."""
        await self._delete_rows(collection, filters=layout.collection_filter(collection))
        seen: set[str] = set()
        for _ in range(DROP_ROUNDS):
            rows = await self._list_rows(collection, None, 500, 0)
            file_ids = sorted({str((self._meta(r) or {}).get("file_id") or "") for r in rows} - {""} - seen)
            file_ids = [f for f in file_ids if layout.legacy_deletable(f)]
            if not file_ids:
                return
            seen.update(file_ids)
            await self._delete_rows(collection, file_ids=file_ids)

    # ------------------------------------------------------------------ layout migration
    async def legacy_page(self, collection: str, limit: int, offset: int) -> layout.LegacyPage:
        rows = await self._list_rows(collection, None, limit, offset)
        found = [layout.legacy_record(self._meta(r), str(r.get("id") or "")) for r in rows]
        return layout.LegacyPage([f for f in found if f is not None], scanned=len(rows), more=len(rows) >= limit)

    async def delete_legacy(self, collection: str, keys: Sequence[str]) -> None:
        safe = [k for k in keys if layout.legacy_deletable(k)]
        if len(safe) != len(keys):
            log.warning("[LongTermMemory] %d old-layout record(s) in kb=%s have a file_id that cannot be deleted "
                        "safely (quote or backslash); left in place", len(keys) - len(safe), collection)
        if safe:
            await self._delete_rows(collection, file_ids=safe)
