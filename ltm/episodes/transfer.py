"""Moving episodes in and out of a space: export, import batches, JSON documents (C, E10).

An import is validated before anything is written (`import_batch.py`: a record this plugin cannot
store is skipped and named with its reason; the names it defines are this module's public ones too).
Writes then go through the write gate in batches; each applied batch is audited at once, so a
failure part-way is reported as a partial import naming what was stored (`PartialWrite`). A KB
upload in the official plugin's form is read by `ltm/official/keyed_upload.py` and written here.

A record whose `original_id` is already held in the space (as the `original_id` of an imported
record, or as an episode's own id) was imported before: it is not written again, so importing one
export twice writes nothing new the second time.

A KB document's index (`doc:<kb>:<document>`) is written BEFORE its episodes and
names every id the document will create, so deleting the document always finds
them, even after an ingest that stopped part-way.

An active record that states the same fact as an active episode of its speaker in the space, or
as an earlier active record of the same batch, is not written (`duplicates.py`): the result
names it by position with the id that already holds the fact (`ImportResult.duplicates`, each
audited as `import_duplicate` / `document_duplicate`), and links of the batch to it point at
that id. Near duplicates are written and named (`ImportResult.similar`).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from .._gate import WriteGate, WriteTx
from .._storage import JsonStore, document_key
from ..errors import ValidationError
from ..identity import MemoryScope
from ..kb_settings import KBSettings
from ..operations import DUPLICATE_OF, SKIPPED_OF, Operation
from ..skipped import SkippedRecord
from ..spaces import L2Space
from ..wording import Phrase
from .duplicates import DuplicateFinder, Probe
from .import_batch import (
    MAX_IMPORT_BYTES,
    ImportRecord,
    ParsedBatch,
    episode_list,
    load_json,
    nothing_stored,
    parse_batch,
    parse_items,
    parse_records,
)
from .lifecycle import DerivedRecords, NoDerivedRecords, new_episode, write_episodes
from .model import (
    MAX_SPEAKER_CHARS,
    STATUS_LABEL,
    Episode,
    EpisodeStatus,
    derived_episode_id,
)
from .sameness import fact_key
from .store import EpisodeStore

log = logging.getLogger("LongTermMemory")
RECORD_REMEMBERED = Phrase("audit.record_remembered", "record #{position} already remembered: not written")
IMPORTED = Phrase("audit.episode_imported", "imported ({status})")
RECORD_SKIPPED = Phrase("audit.record_skipped", "record at index {index} not imported: {reason}")
DOCUMENT_DELETED = Phrase("audit.document_deleted", "document {document_id} deleted")


@dataclass(frozen=True)
class BatchDuplicate:
    """A record of a batch that was not written: the fact is already held by `existing_id`."""

    position: int  # 1-based, in the batch as given
    original_id: str | None
    existing_id: str
    in_batch: bool  # held by an earlier record of the same batch (else by the space)


@dataclass(frozen=True)
class BatchSimilar:
    position: int
    episode_id: str  # the written record
    similar_ids: tuple[str, ...]


@dataclass(frozen=True)
class ImportResult:
    episodes: list[Episode]  # what was written, in batch order
    duplicates: list[BatchDuplicate] = field(default_factory=list)
    similar: list[BatchSimilar] = field(default_factory=list)
    skipped: list[SkippedRecord[int]] = field(default_factory=list)


def materialize(scope: MemoryScope, records: Sequence[ImportRecord], document_id: str | None,
                 keep_speakers: bool, linkable: Collection[str] = ()) -> list[Episode]:
    """New ids in the caller's space; links inside the batch (and to `linkable`: ids of records imported
    with it in other writes) are carried over to the new ids. A record with an id gets the id derived from
    the space and that id, so an import cut short and run again gives each record the id the first run
    gave it, and a link a stored record holds finds the record it names."""
    id_map = {i: derived_episode_id(scope.l2, i)
              for i in (*linkable, *(r.original_id for r in records if r.original_id))}
    episodes: list[Episode] = []
    for record in records:
        episode = new_episode(scope, record.draft)
        new_id = id_map.get(record.original_id or "", episode.episode_id)
        sender_id, sender_name = episode.sender_id, episode.sender_name
        if keep_speakers and (record.sender_id is not None or record.sender_name is not None):
            # A record that names its speaker keeps exactly what it names: the importer's id or name
            # is never mixed into another speaker's record.
            sender_id, sender_name = record.sender_id or "", record.sender_name or ""
        episodes.append(replace(
            episode,
            episode_id=new_id,
            timestamp=record.timestamp or episode.timestamp,
            status=record.status,
            sender_id=sender_id,
            sender_name=sender_name,
            original_id=record.original_id,
            document_id=document_id,
            supersedes=tuple(id_map[i] for i in record.supersedes if i in id_map),
            superseded_by=id_map.get(record.superseded_by or ""),
            superseded_at=record.superseded_at if record.superseded_by in id_map else None,
            status_changed_at=record.status_changed_at,  # an export's time fields come back as they were
            # What a record came from is the record's own (an export's), never the importing message.
            message=record.message if keep_speakers else None,
        ))
    return episodes


def _audit_skipped(tx: WriteTx, operation: Operation, skipped: Sequence[SkippedRecord[int]],
                   document_id: str = "") -> None:
    for record in skipped:
        tx.noted(operation, "episode", "", RECORD_SKIPPED(index=record.position, reason=record.reason),
                 index=record.position, document_id=document_id)


def _audit_import(operation: Operation, document_id: str | None) -> Any:
    def audit(tx: WriteTx, e: Episode) -> None:
        tx.applied(operation, "episode", e.episode_id, IMPORTED(status=STATUS_LABEL[e.status]()),
                   original_id=e.original_id or "", document_id=document_id or "")
    return audit


class EpisodeTransfer:
    def __init__(self, gate: WriteGate, store: EpisodeStore, json_store: JsonStore,
                 derived: DerivedRecords | None = None, duplicates: DuplicateFinder | None = None) -> None:
        self._gate = gate
        self._store = store
        self._json = json_store
        self._derived: DerivedRecords = derived or NoDerivedRecords()
        self._duplicates = duplicates or DuplicateFinder(store)

    async def import_episodes(self, scope: MemoryScope, settings: KBSettings, records: Sequence[ImportRecord], *,
                              skipped: Sequence[SkippedRecord[int]] = (), operation: Operation = Operation.IMPORT,
                              keep_speakers: bool = True, linkable: Collection[str] = ()) -> ImportResult:
        """`records` are written (one gated write), `skipped` ones were refused by `parse_batch` and are
        named in the result and the audit; a batch whose every record was skipped writes nothing."""
        if not records and not skipped:
            raise ValidationError("the import has no episodes")
        if not records:
            return ImportResult([], skipped=list(skipped))
        episodes = materialize(scope, records, None, keep_speakers, linkable)
        async with self._gate.write_l2(scope, operation) as tx:
            result, vectors = await self._sift(tx, scope, settings, episodes, records, DUPLICATE_OF[operation])
            _audit_skipped(tx, SKIPPED_OF[operation], skipped)
            await write_episodes(tx, self._store, settings, result.episodes, _audit_import(operation, None),
                                 vectors=vectors)
        log.info("[LongTermMemory] import scope=%s user_key=%s records=%d duplicates=%d skipped=%d", scope.chat_key,
                 scope.space_key, len(result.episodes), len(result.duplicates), len(skipped))
        return replace(result, skipped=list(skipped))

    async def preview_import(self, scope: MemoryScope, settings: KBSettings, records: Sequence[ImportRecord],
                             linkable: Collection[str] = ()) -> ImportResult:
        """What `import_episodes` would write and what it would find held already, writing nothing (a
        migration's dry run): the same checks, the same embedding of what is new."""
        episodes = materialize(scope, records, None, True, linkable)
        result, _vectors = await self._sift(None, scope, settings, episodes, records, Operation.IMPORT)
        return result

    async def ingest_document(self, scope: MemoryScope, settings: KBSettings, records: Sequence[ImportRecord],
                              document_id: str, skipped: Sequence[SkippedRecord[int]] = ()) -> ImportResult:
        [result] = await self.ingest_parts(settings, [(scope, records)], document_id, skipped)
        return result

    async def ingest_parts(self, settings: KBSettings, parts: Sequence[tuple[MemoryScope, Sequence[ImportRecord]]],
                           document_id: str, skipped: Sequence[SkippedRecord[int]] = ()) -> list[ImportResult]:
        """A document's records, one gated write per memory space it names (an upload in the official
        plugin's form may name several: ltm/official/keyed_upload.py). Before a part's records are
        written, the document's index names them and every part written before, so deleting the
        document finds them all. The file's skipped records are audited in the first part's space."""
        written: list[dict[str, Any]] = []
        results: list[ImportResult] = []
        for number, (scope, records) in enumerate(parts):
            episodes = materialize(scope, records, document_id, keep_speakers=True)
            key = document_key(scope.kb_id, document_id)
            async with self._gate.write_l2(scope, Operation.DOCUMENT_IMPORT) as tx:
                result, vectors = await self._sift(tx, scope, settings, episodes, records,
                                                   DUPLICATE_OF[Operation.DOCUMENT_IMPORT])
                if number == 0:
                    _audit_skipped(tx, SKIPPED_OF[Operation.DOCUMENT_IMPORT], skipped, document_id=document_id)
                # Only what this document creates: deleting it never removes a record it merely repeated.
                part = {"user_key": scope.space_key, "scope_key": scope.chat_key,
                        "isolation": scope.isolation.value, "ids": [e.episode_id for e in result.episodes]}
                index = {"parts": [*written, part]} if written else part
                await tx.set(key, index)
                await write_episodes(tx, self._store, settings, result.episodes,
                                     _audit_import(Operation.DOCUMENT_IMPORT, document_id), vectors=vectors)
            written.append(part)
            results.append(replace(result, skipped=list(skipped) if number == 0 else []))
        return results

    async def _sift(self, tx: WriteTx | None, scope: MemoryScope, settings: KBSettings, episodes: list[Episode],
                    records: Sequence[ImportRecord], operation: Operation) -> tuple[ImportResult, list[list[float]]]:
        """The batch without its duplicates (each audited), links re-pointed, and the kept records'
        vectors (one embedding pass for the check and the write). A record imported before (its
        `original_id` is held in the space) is a duplicate whatever its status, and is not embedded."""
        positions = [r.index + 1 for r in records]
        held_by: dict[str, str] = {}  # id of a record not written -> the id that holds its fact
        duplicates: list[BatchDuplicate] = []

        def not_written(i: int, existing_id: str, in_batch: bool) -> None:
            episode = episodes[i]
            duplicates.append(BatchDuplicate(positions[i], episode.original_id, existing_id, in_batch))
            held_by[episode.episode_id] = existing_id
            if tx is not None:  # None: a dry run, which writes nothing
                tx.noted(operation, "episode", existing_id, RECORD_REMEMBERED(position=positions[i]),
                         position=positions[i], original_id=episode.original_id or "", in_batch=in_batch)

        imported = await self._imported_before(scope, episodes)
        for i, episode in enumerate(episodes):
            if episode.original_id and episode.original_id in imported:
                not_written(i, imported[episode.original_id], False)
        fresh = [i for i, e in enumerate(episodes) if e.episode_id not in held_by]
        embedded = await self._store.embed(settings.embedding_model_uuid, [episodes[i].content for i in fresh])
        vector_of = dict(zip(fresh, embedded))
        active = [i for i in fresh if episodes[i].is_active]
        findings = await self._duplicates.against_space(
            scope.l2, settings.embedding_model_uuid,
            [Probe(episodes[i].content, episodes[i].sender_id, vector_of[i]) for i in active], batch=True)
        first_of: dict[tuple[str, str], int] = {}
        similar: list[BatchSimilar] = []
        for i, finding in zip(active, findings):
            episode = episodes[i]
            batch_key = (episode.sender_id, fact_key(episode.content))
            earlier = first_of.get(batch_key) if batch_key[1] else None
            if finding.same is not None and finding.same.episode is not None:
                not_written(i, finding.same.episode.episode_id, False)
            elif earlier is not None:
                not_written(i, episodes[earlier].episode_id, True)
            else:
                if batch_key[1]:
                    first_of[batch_key] = i
                ids = tuple(m.episode.episode_id for m in finding.similar if m.episode is not None)
                if ids:
                    similar.append(BatchSimilar(positions[i], episode.episode_id, ids))
        kept = [(_relinked(episodes[i], held_by), vector_of[i]) for i in fresh if episodes[i].episode_id not in held_by]
        duplicates.sort(key=lambda d: d.position)
        return ImportResult([e for e, _ in kept], duplicates, similar), [v for _, v in kept]

    async def held_ids(self, scope: MemoryScope, records: Sequence[ImportRecord]) -> set[str]:
        """The ids of `records` the space already holds (what a dry run of an import reports as already
        imported); a read only."""
        ids = {r.original_id for r in records if r.original_id}
        if not ids:
            return set()
        listing = await self._store.enumerate(scope.l2)
        held = {e.episode_id for e in listing.episodes} | {e.original_id for e in listing.episodes if e.original_id}
        return ids & held

    async def _imported_before(self, scope: MemoryScope, episodes: Sequence[Episode]) -> dict[str, str]:
        """Ids a batch names that the space already holds: an imported record's `original_id`, or an
        episode's own id (an export of this space imported back) -> the stored episode's id."""
        if not any(e.original_id for e in episodes):
            return {}
        listing = await self._store.enumerate(scope.l2)
        held: dict[str, str] = {}
        for stored in listing.episodes:
            held.setdefault(stored.episode_id, stored.episode_id)
            if stored.original_id:
                held.setdefault(stored.original_id, stored.episode_id)
        return held

    async def document_parts(self, kb_id: str, document_id: str) -> list[tuple[MemoryScope, list[str]]]:
        """Each memory space a document wrote into, with the ids it created there."""
        index = await self._json.get(document_key(kb_id, document_id))
        if not isinstance(index, dict):
            return []
        raw = index["parts"] if isinstance(index.get("parts"), list) else [index]
        parts = []
        for part in raw:
            if isinstance(part, dict) and part.get("user_key") and part.get("scope_key"):
                scope = MemoryScope.stored(str(part["scope_key"]), str(part["user_key"]), kb_id,
                                           str(part.get("isolation") or "session"))
                parts.append((scope, [str(i) for i in part.get("ids") or []]))
        return parts

    async def delete_document(self, kb_id: str, document_id: str) -> int:
        """Remove exactly the records one ingested document created (E10), and first whatever was derived
        from them (K5; in bot isolation the space, and so the cascade, covers every chat of the bot).
        One gated write per space; the index goes with the last, so a stop part-way is finished later."""
        parts = await self.document_parts(kb_id, document_id)
        removed = 0
        for number, (scope, ids) in enumerate(parts):
            async with self._gate.write_l2(scope, Operation.DOCUMENT_DELETE) as tx:  # the scope is of this KB
                present = await self._present(scope.l2, ids)
                if present:
                    # K5: summaries built from the document's records, and drafts quoting them, go first.
                    await self._derived.before_change(tx, scope, present, removed=True)
                    await tx.index_write("vector delete", partial(self._store.delete, space=scope.l2,
                                                                  episode_ids=present))
                    for episode_id in present:
                        tx.applied(Operation.DOCUMENT_DELETE, "episode", episode_id,
                                   DOCUMENT_DELETED(document_id=document_id))
                if number == len(parts) - 1:
                    await tx.delete(document_key(kb_id, document_id))
            removed += len(present)
        return removed

    async def _present(self, space: L2Space, ids: list[str]) -> list[str]:
        """Which of `ids` are stored: one enumeration of the space (single gets beyond its limit)."""
        listing = await self._store.enumerate(space)
        stored = {e.episode_id for e in listing.episodes}
        present = [i for i in ids if i in stored]
        if listing.truncated:
            present += [i for i in ids if i not in stored and await self._store.get(space, i) is not None]
        return present

    async def export(self, scope: MemoryScope, statuses: tuple[EpisodeStatus, ...]) -> dict[str, Any]:
        listing = await self._store.enumerate(scope.l2)
        episodes = sorted((e for e in listing.episodes if e.status in statuses), key=lambda e: e.timestamp)
        export: dict[str, Any] = {
            "user_key": scope.space_key,
            "statuses": [s.value for s in statuses],
            "episodes": [e.to_public() for e in episodes],
        }
        if listing.truncated:
            export["truncated"] = True  # never pass off a partial export as complete
        return export


def _relinked(episode: Episode, held_by: dict[str, str]) -> Episode:
    """Links of a batch record to a record that was not written point at the id that holds its fact."""
    if not held_by or not (episode.superseded_by in held_by or set(episode.supersedes) & held_by.keys()):
        return episode
    return replace(episode, supersedes=tuple(dict.fromkeys(held_by.get(i, i) for i in episode.supersedes)),
                   superseded_by=held_by.get(episode.superseded_by or "", episode.superseded_by))


__all__ = ["MAX_IMPORT_BYTES", "MAX_SPEAKER_CHARS", "BatchDuplicate", "BatchSimilar", "EpisodeTransfer",
           "ImportRecord", "ImportResult", "ParsedBatch", "episode_list", "load_json", "nothing_stored",
           "parse_batch", "parse_items", "parse_records"]
