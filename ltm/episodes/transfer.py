"""Moving episodes in and out of a space: export, import batches, JSON documents (C, E10).

An import is validated before anything is written. A record this plugin cannot store (status
`deleted`, over a limit, a credential, a wrong type, an id repeated in the batch) is skipped and
named by its index in the array with its reason (`SkippedRecord`); the rest is written, so an
export of the official plugin, whose bare `export l2` includes deleted records, imports as it is.
Writes then go through the write gate in batches;
each applied batch is audited at once, so a failure part-way is reported as a
partial import naming what was stored (`PartialWrite`).

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

import json
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from .. import params
from .._gate import WriteGate, WriteTx
from .._storage import JsonStore, document_key
from ..errors import ValidationError
from ..guards import refuse_secrets
from ..host_values import escape_bot_uuid
from ..identity import Isolation, MemoryScope, clean_id, scope_of_space_key
from ..kb_settings import KBSettings
from ..operations import DUPLICATE_OF, SKIPPED_OF, Operation
from ..secrets import redact_for_log, secret_kind
from ..skipped import SkippedRecord
from ..spaces import Space
from ..timefields import format_utc, normalize_time, parse_naive_as_utc
from ..wording import Phrase
from .duplicates import DuplicateFinder, Probe
from .lifecycle import DerivedRecords, NoDerivedRecords, new_episode, write_episodes
from .model import (
    MAX_SPEAKER_CHARS,
    STATUS_LABEL,
    Episode,
    EpisodeDraft,
    EpisodeStatus,
    clean_speaker,
    derived_episode_id,
    parse_status,
)
from .sameness import fact_key
from .store import EpisodeStore

log = logging.getLogger("LongTermMemory")
RECORD_REMEMBERED = Phrase("audit.record_remembered", "record #{position} already remembered: not written")
IMPORTED = Phrase("audit.episode_imported", "imported ({status})")
RECORD_SKIPPED = Phrase("audit.record_skipped", "record at index {index} not imported: {reason}")
DOCUMENT_DELETED = Phrase("audit.document_deleted", "document {document_id} deleted")

MAX_IMPORT_RECORDS = 5000
MAX_IMPORT_BYTES = 8 * 1024 * 1024
_IMPORTABLE = (EpisodeStatus.ACTIVE, EpisodeStatus.SUPERSEDED, EpisodeStatus.ARCHIVED)


@dataclass(frozen=True)
class ImportRecord:
    """One validated episode of an import batch."""

    draft: EpisodeDraft
    index: int = 0  # its place in the array as given (0-based)
    status: EpisodeStatus = EpisodeStatus.ACTIVE
    timestamp: str | None = None
    sender_id: str | None = None
    sender_name: str | None = None
    original_id: str | None = None
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    superseded_at: str | None = None
    status_changed_at: str | None = None


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
class ParsedBatch:
    records: list[ImportRecord]  # each knows its index in the array
    skipped: list[SkippedRecord[int]]


@dataclass(frozen=True)
class ImportResult:
    episodes: list[Episode]  # what was written, in batch order
    duplicates: list[BatchDuplicate] = field(default_factory=list)
    similar: list[BatchSimilar] = field(default_factory=list)
    skipped: list[SkippedRecord[int]] = field(default_factory=list)


def load_json(text: str | bytes) -> Any:
    if isinstance(text, bytes):
        if len(text) > MAX_IMPORT_BYTES:
            raise ValidationError(f"the import is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MiB")
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValidationError("the import is not UTF-8 text") from None
    if len(text) > MAX_IMPORT_BYTES:
        raise ValidationError(f"the import is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MiB")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ValidationError("the JSON is nested too deeply") from None


def episode_list(payload: Any) -> list[Any]:
    """A list of episodes, or an object with an `episodes` list."""
    if isinstance(payload, dict):
        if "episodes" not in payload:
            raise ValidationError('expected a list of episodes or {"episodes": [...]}')
        if "version" in payload:  # the official `export l2` envelope, version 1
            params.known_version(payload["version"], 1, "the official L2 export")
        payload = payload["episodes"]
    if not isinstance(payload, list):
        raise ValidationError('"episodes" must be a list')
    if len(payload) > MAX_IMPORT_RECORDS:
        raise ValidationError(f"at most {MAX_IMPORT_RECORDS} episodes per import")
    return payload


def parse_batch(payload: Any, *, source: str = "import", default_source_ref: str | None = None) -> ParsedBatch:
    """Every record that can be stored, and every one that cannot with its reason (skip and report)."""
    return parse_items(episode_list(payload), source=source, default_source_ref=default_source_ref)


def parse_items(items: Sequence[Any], *, source: str, default_source_ref: str | None = None,
                indexes: Sequence[int] | None = None) -> ParsedBatch:
    """`indexes`: each item's place in the array the caller was given, when it passes on only some."""
    if not items:
        raise ValidationError("the import has no episodes")
    records: list[ImportRecord] = []
    skipped: list[SkippedRecord[int]] = []
    seen_ids: set[str] = set()
    for number, item in enumerate(items):
        index = indexes[number] if indexes is not None else number
        try:
            records.append(replace(_parse_one(item, source, default_source_ref, seen_ids), index=index))
        except ValidationError as exc:
            # A message may quote a few characters of a bad value: never one that looks like a credential.
            reason = exc.message if not secret_kind(exc.message) else "a field looks like a credential"
            skipped.append(SkippedRecord(index, reason))
    return ParsedBatch(records, skipped)


def nothing_stored(skipped: Sequence[SkippedRecord[int]], shown: int = 3) -> ValidationError:
    """The refusal of a batch none of whose records can be stored: each (the first few) by its index."""
    listed = "; ".join(f"[{r.position}] {r.reason}" for r in skipped[:shown])
    more = f"; and {len(skipped) - shown} more" if len(skipped) > shown else ""
    return ValidationError(f"no record can be stored: {listed}{more}")


def parse_records(payload: Any, *, source: str = "import", default_source_ref: str | None = None
                  ) -> list[ImportRecord]:
    """The strict form: the first record that cannot be stored fails the whole batch."""
    batch = parse_batch(payload, source=source, default_source_ref=default_source_ref)
    if batch.skipped:
        first = batch.skipped[0]
        raise ValidationError(f"episode #{first.position + 1}: {first.reason}; nothing was imported")
    return batch.records


def _parse_one(item: Any, source: str, default_source_ref: str | None, seen_ids: set[str]) -> ImportRecord:
    if not isinstance(item, dict):
        raise ValidationError("must be a JSON object")
    raw = dict(item)
    if default_source_ref and not raw.get("source_ref"):
        raw["source_ref"] = default_source_ref
    item_source = params.text(item.get("source"), "source", max_chars=40, required=False) or source
    draft = EpisodeDraft.parse(raw, source=item_source)
    status = parse_status(item.get("status") or "active")
    if status not in _IMPORTABLE:
        raise ValidationError(f"status {status.value}: a deleted episode is not kept by this plugin")
    original_id = params.text(item.get("id") or item.get("episode_id"), "id", max_chars=params.MAX_ID_CHARS,
                              required=False) or None
    if original_id and original_id in seen_ids:
        raise ValidationError("its id is the id of an earlier record of this import")
    supersedes = params.word_list(item.get("supersedes"), "supersedes", max_items=100, item_chars=params.MAX_ID_CHARS)
    sender_id = clean_id(clean_speaker(item.get("sender_id"), "sender_id")) if "sender_id" in item else None
    sender_name = clean_speaker(item.get("sender_name"), "sender_name") if "sender_name" in item else None
    refuse_secrets([*draft.texts(), ("sender_id", sender_id or ""), ("sender_name", sender_name or ""),
                    ("id", original_id or ""), ("source", item_source),
                    *(("an item of supersedes", s) for s in supersedes)])
    record = ImportRecord(
        draft=draft,
        status=status,
        timestamp=normalize_time(item.get("timestamp"), "timestamp"),
        sender_id=sender_id,
        sender_name=sender_name,
        original_id=original_id,
        supersedes=tuple(supersedes),
        superseded_by=params.text(item.get("superseded_by"), "superseded_by", max_chars=params.MAX_ID_CHARS,
                                  required=False) or None,
        superseded_at=normalize_time(item.get("superseded_at"), "superseded_at"),
        status_changed_at=normalize_time(item.get("status_changed_at"), "status_changed_at"),
    )
    if original_id:  # only a record that is kept claims its id
        seen_ids.add(original_id)
    return record


UNNAMED_SPACE = "imported"  # the official upload's user_key for a record that names none


def keyed_items(payload: Any) -> tuple[list[Any], list[str]]:
    """An upload in the official plugin's form: a list of records (or one record), each naming its memory
    space by `user_key`; an export's envelope (`{"user_key", "episodes"}`) gives every record its key.
    Returns the records and the key each names ("" when it is not a string)."""
    default: Any = UNNAMED_SPACE
    if isinstance(payload, dict) and "episodes" in payload:
        default = payload.get("user_key") or UNNAMED_SPACE
        items = episode_list(payload)
    else:
        items = episode_list([payload] if isinstance(payload, dict) else payload)
    keys = []
    for item in items:
        key = item.get("user_key") or default if isinstance(item, dict) else default
        keys.append(key if isinstance(key, str) else "")  # as given: "g1 " and "g1" are two chats
    return [_naive_stamp_as_utc(item) for item in items], keys


def _naive_stamp_as_utc(item: Any) -> Any:
    """The official upload read a `timestamp` without a zone as UTC, and its files rely on it; any other
    time field keeps our rule (a zone is required)."""
    if not isinstance(item, dict) or not isinstance(item.get("timestamp"), str) or not item["timestamp"].strip():
        return item
    try:
        stamp = format_utc(parse_naive_as_utc(item["timestamp"], "timestamp"))
    except ValidationError:
        return item  # refused with its reason when the record is read
    return {**item, "timestamp": stamp}


def _no_space(key: str, isolation: Isolation) -> str:
    shown = redact_for_log(key, 60) or "(none)"
    if isolation is Isolation.BOT:
        return f"user_key {shown!r} is not a memory space of this knowledge base (bot isolation: bot:<bot uuid>)"
    return (f"user_key {shown!r} is not a memory space of this knowledge base (session isolation: "
            "<bot uuid>:group_<id> or <bot uuid>:person_<id>)")


def _bot_of(scope: MemoryScope) -> str:
    if scope.identity is not None:
        return scope.identity.bot_uuid
    return scope.space_key.removeprefix("bot:")


def materialize(scope: MemoryScope, records: Sequence[ImportRecord], document_id: str | None,
                 keep_speakers: bool, linkable: Collection[str] = ()) -> list[Episode]:
    """New ids in the caller's space; links inside the batch (and to `linkable`: ids of records imported
    with it in other writes) are carried over to the new ids. A record with an id gets the id derived from
    the space and that id, so an import cut short and run again gives each record the id the first run
    gave it, and a link a stored record holds finds the record it names."""
    id_map = {i: derived_episode_id(scope.kb_id, scope.space_key, i)
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
        async with self._gate.write(scope, Space.l2(scope.kb_id, scope.space_key), operation) as tx:
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

    async def ingest_keyed(self, kb_id: str, settings: KBSettings, payload: Any, document_id: str,
                           bots: Collection[str] | None = None) -> list[ImportResult]:
        """An upload in the official plugin's form (`keyed_items`): each record goes to the memory space its
        `user_key` names when this KB derives that space (`scope_of_user_key`) for one of `bots` (the host's
        bot uuids as it gives them; None: not known); any other key (the official default "imported",
        another bot's, a chat key in bot isolation) is skipped and reported, never written elsewhere.
        The first result carries every skipped record."""
        items, keys = keyed_items(payload)
        batch = parse_items(items, source="document", default_source_ref=f"document:{document_id}")
        skipped = list(batch.skipped)
        ours = {escape_bot_uuid(b) for b in bots} if bots is not None else None
        grouped: dict[str, tuple[MemoryScope, list[ImportRecord]]] = {}
        for record in batch.records:
            key = keys[record.index]
            held = grouped.get(key)
            scope = held[0] if held else scope_of_space_key(key, kb_id, settings.isolation)
            if scope is None:
                skipped.append(SkippedRecord(record.index, _no_space(key, settings.isolation)))
            elif ours is not None and _bot_of(scope) not in ours:
                skipped.append(SkippedRecord(record.index, f"user_key {redact_for_log(key, 60)!r} names a bot "
                                                           "this LangBot does not have"))
            else:
                grouped.setdefault(key, (scope, []))[1].append(record)
        skipped.sort(key=lambda r: r.position)
        if not grouped:
            return [ImportResult([], skipped=skipped)]
        return await self.ingest_parts(settings, list(grouped.values()), document_id, skipped)

    async def ingest_parts(self, settings: KBSettings, parts: Sequence[tuple[MemoryScope, Sequence[ImportRecord]]],
                           document_id: str, skipped: Sequence[SkippedRecord[int]] = ()) -> list[ImportResult]:
        """A document's records, one gated write per memory space it names (an upload in the official
        plugin's form may name several). Before a part's records are written, the document's index names
        them and every part written before, so deleting the document finds them all. The file's skipped
        records are audited in the first part's space."""
        written: list[dict[str, Any]] = []
        results: list[ImportResult] = []
        for number, (scope, records) in enumerate(parts):
            episodes = materialize(scope, records, document_id, keep_speakers=True)
            key = document_key(scope.kb_id, document_id)
            async with self._gate.write(scope, Space.l2(scope.kb_id, scope.space_key),
                                        Operation.DOCUMENT_IMPORT) as tx:
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
            scope.kb_id, scope.space_key, settings.embedding_model_uuid,
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
        listing = await self._store.enumerate(scope.kb_id, scope.space_key)
        held = {e.episode_id for e in listing.episodes} | {e.original_id for e in listing.episodes if e.original_id}
        return ids & held

    async def _imported_before(self, scope: MemoryScope, episodes: Sequence[Episode]) -> dict[str, str]:
        """Ids a batch names that the space already holds: an imported record's `original_id`, or an
        episode's own id (an export of this space imported back) -> the stored episode's id."""
        if not any(e.original_id for e in episodes):
            return {}
        listing = await self._store.enumerate(scope.kb_id, scope.space_key)
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
            async with self._gate.write(scope, Space.l2(kb_id, scope.space_key), Operation.DOCUMENT_DELETE) as tx:
                present = await self._present(kb_id, scope.space_key, ids)
                if present:
                    # K5: summaries built from the document's records, and drafts quoting them, go first.
                    await self._derived.before_change(tx, scope, present, removed=True)
                    await tx.index_write("vector delete", partial(self._store.delete, kb_id=kb_id,
                                                                  space_key=scope.space_key, episode_ids=present))
                    for episode_id in present:
                        tx.applied(Operation.DOCUMENT_DELETE, "episode", episode_id,
                                   DOCUMENT_DELETED(document_id=document_id))
                if number == len(parts) - 1:
                    await tx.delete(document_key(kb_id, document_id))
            removed += len(present)
        return removed

    async def _present(self, kb_id: str, space_key: str, ids: list[str]) -> list[str]:
        """Which of `ids` are stored: one enumeration of the space (single gets beyond its limit)."""
        listing = await self._store.enumerate(kb_id, space_key)
        stored = {e.episode_id for e in listing.episodes}
        present = [i for i in ids if i in stored]
        if listing.truncated:
            present += [i for i in ids if i not in stored and await self._store.get(kb_id, space_key, i) is not None]
        return present

    async def export(self, scope: MemoryScope, statuses: tuple[EpisodeStatus, ...]) -> dict[str, Any]:
        listing = await self._store.enumerate(scope.kb_id, scope.space_key)
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


__all__ = ["MAX_SPEAKER_CHARS", "BatchDuplicate", "BatchSimilar", "EpisodeTransfer", "ImportRecord", "ImportResult",
           "ParsedBatch", "episode_list", "load_json", "nothing_stored", "parse_batch", "parse_items",
           "parse_records"]
