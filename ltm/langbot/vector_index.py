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
import dataclasses
import logging
import math
import uuid
from collections.abc import Sequence
from typing import Any

from ..errors import HostError, OutcomeUnknown
from ..ports import PROBE_TEXT, IndexHit, IndexPage, IndexRecord, StoreProfile, Vector, reports_writes, write_sent
from . import layout
from .calls import host_call as _call

log = logging.getLogger("LongTermMemory")

LIST_PAGE = 200
SCAN_LIMIT = 20_000  # a scan of one space for a record (stores without a uuid filter) stops here
SPEAKER_OVERFETCH = 25  # speaker search without a speaker filter: the space's best top_k x this ...
SPEAKER_OVERFETCH_MAX = 500  # ... but never more than this many rows
DROP_ROUNDS = 400


@dataclasses.dataclass(frozen=True)
class Traits:
    keeps_metadata: bool
    filters_metadata: bool
    filters_uuid: bool
    similarity: bool
    replaces: bool
    single_delete: bool
    dimension: int
    text_search: bool = False

    @property
    def rewrite_deletes_first(self) -> bool:
        """A store that keeps only text/file_id/uuid (Milvus inserts; pgvector would not need it but
        cannot be told apart reliably) or that kept both rows of a rewrite."""
        return not self.keeps_metadata or not self.replaces

    def profile(self, problems: Sequence[str]) -> StoreProfile:
        if self.keeps_metadata and self.filters_metadata:
            kind = "keeps and filters plugin metadata (like Chroma, Qdrant or SeekDB)"
        elif self.keeps_metadata:
            kind = "keeps plugin metadata but filters on file_id only (like Valkey Search)"
        elif self.similarity:
            kind = "fixed schema (text, file_id, uuid), scores by similarity (like Milvus)"
        else:
            kind = "fixed schema (text, file_id, uuid), scores by distance (like pgvector)"
        can = ["isolates every memory space on file_id"]
        cannot: list[str] = []
        can.append("speaker-first recall by filter" if self.filters_metadata else
                   f"speaker-first recall from the space's best {SPEAKER_OVERFETCH}x matches (at most "
                   f"{SPEAKER_OVERFETCH_MAX})")
        if self.filters_uuid:
            can.append("opens and deletes one memory by its key")
        else:
            cannot.append(f"open one memory by its key: it scans the memory's space (up to {SCAN_LIMIT:,} "
                          "records), so show/forget/archive slow down as a space grows")
            if self.single_delete:
                can.append("deletes one memory by moving it to its space's graveyard, then deleting that "
                           "(two writes)")
        if not self.single_delete:
            cannot.append("delete one memory: forget and single deletes are refused; deleting a whole "
                          "scope and archiving still work")
        can.append("widens recall with the store's full-text matches" if self.text_search else
                   "recalls by vector similarity (the store has no full-text search)")
        if not self.rewrite_deletes_first:
            can.append("changes a memory in one write")
        elif self.filters_uuid:
            can.append("changes a memory by writing the new row under its second key, then deleting the "
                       "old row (a failure in between leaves two rows; reads keep the newer)")
        else:
            can.append("changes a memory by deleting the old row, then writing the new one (a lost answer "
                       "in between pauses the space until an admin checks it)")
        return StoreProfile(kind, supported=not problems and self.single_delete, can=tuple(can),
                            cannot=tuple(cannot))


def _unit(dimension: int) -> list[float]:
    return [1.0] + [0.0] * (dimension - 1)


class HostVectorIndex:
    """VectorIndex (and the optional `DescribedIndex`, and the layout migration's `LegacyIndex`) over the host's API."""

    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin
        self._traits: dict[str, Traits] = {}
        self._problems: dict[str, list[str]] = {}
        self._dims: dict[str, int] = {}
        self._probing: dict[str, asyncio.Lock] = {}

    # ------------------------------------------------------------------ raw host calls
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
        listing = await _call("vector list", self._plugin.vector_list(
            collection_id=collection, filters=filters, limit=limit, offset=offset))
        items = listing.get("items") if isinstance(listing, dict) else None
        return [i for i in items or [] if isinstance(i, dict)]

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

    # ------------------------------------------------------------------ what the store can do
    async def _traits_for(self, collection: str, vector: Vector) -> Traits:
        traits = self._traits.get(collection)
        if traits is not None:
            return traits
        async with self._probing.setdefault(collection, asyncio.Lock()):  # one probe for concurrent first calls
            traits = self._traits.get(collection)
            if traits is None:
                traits, problems = await self._probe(collection, vector)
                if traits is None:
                    raise HostError("the vector store could not be probed: " + "; ".join(problems))
        return traits

    async def prepare(self, collection: str, vector: Vector) -> StoreProfile:
        """Probe a new collection; raises HostError when the probe could not run (on Milvus the first
        call fixes a collection's dimension, so a KB whose first write failed must not be kept)."""
        traits, problems = await self._probe(collection, vector)
        if traits is None:
            raise HostError("the vector store could not be probed: " + "; ".join(problems))
        return traits.profile(problems)

    def profile(self, collection: str) -> StoreProfile | None:
        traits = self._traits.get(collection)
        return traits.profile(self._problems.get(collection, [])) if traits is not None else None

    async def probe_isolation(self, collection: str, vector: Vector) -> list[str]:
        """Two archived probe records in two fresh spaces, asked with exactly the filters and deletes
        the plugin uses: any way one space saw or removed the other is reported (empty: isolated)."""
        _, problems = await self._probe(collection, vector)
        return problems

    async def _probe(self, collection: str, vector: Vector) -> tuple[Traits | None, list[str]]:
        run = uuid.uuid4().hex[:12]
        a, b = (IndexRecord(rid, f"health-probe:{run}:{side}", f"probe-{side}", PROBE_TEXT,
                            {"episode_id": rid, "content": PROBE_TEXT, "status": "archived", "source": "health_probe",
                             "status_changed_at": "0"})
                for rid, side in ((str(uuid.uuid4()), "a"), (str(uuid.uuid4()), "b")))
        id_a, id_b = layout.host_id(a.space, a.record_id), layout.host_id(b.space, b.record_id)
        problems: list[str] = []
        traits: Traits | None = None
        try:
            await self._upsert_rows(collection, [a, b], [vector, vector])
            rows = await self._search_rows(collection, vector, 10, layout.space_filter(a.space))
            if id_b in {str(r.get("id")) for r in rows}:
                problems.append("search filtered on one scope returned another scope's record")
            mine = [r for r in rows if str(r.get("id")) == id_a]
            if not mine:
                problems.append("search filtered on a scope did not return that scope's record")
            similarity = bool(mine) and float(mine[0].get("distance") or 0.0) > 0.5
            items = await self._list_rows(collection, layout.space_filter(a.space), 10, 0)
            if id_b in {str(i.get("id")) for i in items}:
                problems.append("list filtered on one scope returned another scope's record")
            item_a = next((i for i in items if str(i.get("id")) == id_a), None)
            meta_a = self._meta(item_a) if item_a is not None else None
            if layout.from_metadata(meta_a, a.space) is None:
                problems.append("the store did not keep the record's text, file_id and uuid")
            keeps = isinstance(meta_a, dict) and meta_a.get("user_key") == a.space
            by_speaker = await self._list_rows(collection, layout.speaker_filter(a.space, a.speaker), 10, 0)
            filters_metadata = keeps and {str(i.get("id")) for i in by_speaker} == {id_a}
            by_key = await self._list_rows(collection, layout.keys_filter(b.space, [b.record_id]), 10, 0)
            filters_uuid = {str(i.get("id")) for i in by_key} == {id_b}
            rewritten = dataclasses.replace(a, fields={**a.fields, "status_changed_at": "1"})
            await self._upsert_rows(collection, [rewritten], [vector])
            again = await self._list_rows(collection, layout.space_filter(a.space), 10, 0)
            replaces = sum(1 for i in again if str(i.get("id")) == id_a) == 1
            text_search = await self._probe_text_search(collection, a.space, id_a, vector)
            traits = Traits(keeps, filters_metadata, filters_uuid, similarity, replaces, False, len(vector),
                            text_search)
            await self._delete_records(collection, traits, a.space, [a.record_id])
            left_a = await self._list_rows(collection, layout.space_filter(a.space), 10, 0)
            left_b = await self._list_rows(collection, layout.space_filter(b.space), 10, 0)
            if id_b not in {str(i.get("id")) for i in left_b}:
                problems.append("deleting one scope's record removed another scope's record")
            traits = dataclasses.replace(traits, single_delete=id_a not in {str(i.get("id")) for i in left_a})
            await self._delete_rows(collection, file_ids=[layout.space_token(a.space)])
            if id_b not in {str(i.get("id")) for i in await self._list_rows(
                    collection, layout.space_filter(b.space), 10, 0)}:
                problems.append("deleting one scope removed another scope's record")
        except (HostError, OutcomeUnknown) as exc:
            problems.append(f"probe failed: {exc}")
            traits = None
        finally:
            try:
                await self._delete_rows(collection, file_ids=[
                    layout.space_token(a.space), layout.space_token(b.space),
                    layout.gone_token(a.space), layout.gone_token(b.space)])
            except (HostError, OutcomeUnknown):
                problems.append("probe records could not be removed")
        if traits is not None:
            self._traits[collection] = traits
            self._problems[collection] = problems
            self._dims[collection] = len(vector)
            log.info("[LongTermMemory] vector store of kb=%s: %s; problems=%d", collection,
                     traits.profile(problems).kind, len(problems))
        return traits, problems

    async def _probe_text_search(self, collection: str, space: str, host_id: str, vector: Vector) -> bool:
        """A full-text search for the probe's text with the opposite vector: a store that answers by
        text returns the record at distance 0; one that ignores the mode answers by vector (far away);
        pgvector refuses the mode."""
        try:
            rows = await self._search_rows(collection, [-x for x in vector], 5, layout.space_filter(space),
                                           search_type="full_text", query_text=PROBE_TEXT)
        except HostError:
            return False
        return any(str(r.get("id")) == host_id and abs(float(r.get("distance") or 0.0)) < 1e-6 for r in rows)

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
            hits = [h for h in hits if h.record.speaker == speaker][:top_k]
        log.info("[LongTermMemory] vector search kb=%s filter=%s results=%d", collection,
                 "speaker" if speaker else "space", len(hits))
        return hits

    def _hits(self, rows: Sequence[dict[str, Any]], space: str, traits: Traits) -> list[IndexHit]:
        found = self._own(rows, space, "search")
        chosen = {r.record_id: r for r in layout.newest(r for r, _ in found)}
        hits: list[IndexHit] = []
        for record, row in found:
            if chosen.get(record.record_id) is not record:
                continue
            chosen.pop(record.record_id)
            raw = float(row.get("distance") or 0.0)
            distance = 1.0 - raw if traits.similarity else raw
            hits.append(IndexHit(record, distance if math.isfinite(distance) else 2.0))
        return hits

    async def search_text(self, collection: str, space: str, text: str, vector: Vector, top_k: int
                          ) -> list[IndexHit] | None:
        """LangBot's full-text mode: Chroma answers substring matches with distance 0; Qdrant and Milvus
        ignore the mode and answer plain vector hits (non-zero distances): then there is no text search.
        pgvector refuses the mode (a HostError the caller treats as no text search)."""
        traits = await self._traits_for(collection, vector)
        rows = await self._search_rows(collection, vector, top_k, layout.space_filter(space),
                                       search_type="full_text", query_text=text)
        if traits.similarity or any(abs(float(r.get("distance") or 0.0)) > 1e-9 for r in rows):
            log.info("[LongTermMemory] kb=%s ignores full-text search; vector only", collection)
            return None
        return self._hits(rows, space, traits)

    async def get(self, collection: str, space: str, record_id: str) -> IndexRecord | None:
        found = await self._find(collection, space, [record_id])
        return found.get(record_id)

    async def _find(self, collection: str, space: str, record_ids: Sequence[str]) -> dict[str, IndexRecord]:
        """Records of `space` by id: one keyed list where the store filters on `uuid`, else a scan."""
        wanted = set(record_ids)
        if not wanted:
            return {}
        traits = self._traits.get(collection)
        if traits is None or traits.filters_uuid:
            keys = {key for r in wanted for key in layout.record_keys(space, r)}
            rows = await self._list_rows(collection, layout.keys_filter(space, sorted(wanted)), 2 * len(wanted) + 2, 0)
            honoured = all(isinstance(self._meta(r), dict) and self._meta(r).get("uuid") in keys for r in rows)
            if honoured:
                records = layout.newest(r for r, _ in self._own(rows, space, "list"))
                return {r.record_id: r for r in records if r.record_id in wanted}
        return await self._scan(collection, space, wanted)

    async def _scan(self, collection: str, space: str, wanted: set[str]) -> dict[str, IndexRecord]:
        found: list[IndexRecord] = []
        offset = 0
        while offset < SCAN_LIMIT:
            rows = await self._list_rows(collection, layout.space_filter(space), LIST_PAGE, offset)
            found.extend(r for r, _ in self._own(rows, space, "list") if r.record_id in wanted)
            if len(rows) < LIST_PAGE or {r.record_id for r in found} >= wanted:
                break
            offset += LIST_PAGE
        return {r.record_id: r for r in layout.newest(found)}

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
