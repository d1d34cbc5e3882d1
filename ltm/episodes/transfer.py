"""Moving episodes in and out of a space: export, import batches, JSON documents (C, E10).

An import is validated as a whole before anything is written (the first bad record
fails it with its position). Writes then go through the write gate in batches;
each applied batch is audited at once, so a failure part-way is reported as a
partial import naming what was stored (`PartialWrite`).

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
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import params
from .._gate import WriteGate, WriteTx
from .._storage import JsonStore, document_key
from ..errors import ValidationError
from ..guards import refuse_secrets
from ..identity import MemoryScope, clean_id
from ..kb_settings import KBSettings
from ..operations import DUPLICATE_OF, Operation
from ..spaces import Space
from ..timefields import normalize_time
from ..wording import Phrase
from .duplicates import DuplicateFinder, Probe
from .lifecycle import DerivedRecords, NoDerivedRecords, new_episode, write_episodes
from .model import (
    MAX_SENDER_CHARS,
    STATUS_LABEL,
    Episode,
    EpisodeDraft,
    EpisodeStatus,
    clean_sender,
    new_episode_id,
    parse_status,
)
from .sameness import fact_key
from .store import EpisodeStore

log = logging.getLogger("LongTermMemory")
RECORD_REMEMBERED = Phrase("audit.record_remembered", "record #{position} already remembered: not written")
IMPORTED = Phrase("audit.episode_imported", "imported ({status})")
DOCUMENT_DELETED = Phrase("audit.document_deleted", "document {document_id} deleted")

MAX_IMPORT_RECORDS = 5000
MAX_IMPORT_BYTES = 8 * 1024 * 1024
_IMPORTABLE = (EpisodeStatus.ACTIVE, EpisodeStatus.SUPERSEDED, EpisodeStatus.ARCHIVED)


@dataclass(frozen=True)
class ImportRecord:
    """One validated episode of an import batch."""

    draft: EpisodeDraft
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
class ImportResult:
    episodes: list[Episode]  # what was written, in batch order
    duplicates: list[BatchDuplicate] = field(default_factory=list)
    similar: list[BatchSimilar] = field(default_factory=list)


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
        payload = payload["episodes"]
    if not isinstance(payload, list):
        raise ValidationError('"episodes" must be a list')
    if len(payload) > MAX_IMPORT_RECORDS:
        raise ValidationError(f"at most {MAX_IMPORT_RECORDS} episodes per import")
    return payload


def parse_records(payload: Any, *, source: str = "import", default_source_ref: str | None = None
                  ) -> list[ImportRecord]:
    items = episode_list(payload)
    if not items:
        raise ValidationError("the import has no episodes")
    records: list[ImportRecord] = []
    seen_ids: set[str] = set()
    for position, item in enumerate(items, start=1):
        try:
            records.append(_parse_one(item, source, default_source_ref, seen_ids))
        except ValidationError as exc:
            raise ValidationError(f"episode #{position}: {exc.message}; nothing was imported") from None
    return records


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
        raise ValidationError(f"status {status.value} cannot be imported")
    original_id = params.text(item.get("id") or item.get("episode_id"), "id", max_chars=params.MAX_ID_CHARS,
                              required=False) or None
    if original_id:
        if original_id in seen_ids:
            raise ValidationError(f"duplicate id {original_id}")
        seen_ids.add(original_id)
    supersedes = params.word_list(item.get("supersedes"), "supersedes", max_items=100, item_chars=params.MAX_ID_CHARS)
    sender_id = clean_id(clean_sender(item.get("sender_id"), "sender_id")) if "sender_id" in item else None
    sender_name = clean_sender(item.get("sender_name"), "sender_name") if "sender_name" in item else None
    refuse_secrets([*draft.texts(), ("sender_id", sender_id or ""), ("sender_name", sender_name or "")])
    return ImportRecord(
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


def materialize(scope: MemoryScope, records: Sequence[ImportRecord], document_id: str | None,
                 keep_senders: bool) -> list[Episode]:
    """New ids in the caller's space; links inside the batch are carried over to the new ids."""
    id_map = {r.original_id: new_episode_id() for r in records if r.original_id}
    episodes: list[Episode] = []
    for record in records:
        episode = new_episode(scope, record.draft)
        new_id = id_map.get(record.original_id or "", episode.episode_id)
        sender_id, sender_name = episode.sender_id, episode.sender_name
        if keep_senders and (record.sender_id is not None or record.sender_name is not None):
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
                              operation: Operation = Operation.IMPORT, keep_senders: bool = True) -> ImportResult:
        if not records:
            raise ValidationError("the import has no episodes")
        episodes = materialize(scope, records, None, keep_senders)
        async with self._gate.write(scope, Space.l2(scope.kb_id, scope.user_key), operation) as tx:
            result, vectors = await self._sift(tx, scope, settings, episodes, DUPLICATE_OF[operation])
            await write_episodes(tx, self._store, settings, result.episodes, _audit_import(operation, None),
                                 vectors=vectors)
        log.info("[LongTermMemory] import scope=%s user_key=%s records=%d duplicates=%d", scope.scope_key,
                 scope.user_key, len(result.episodes), len(result.duplicates))
        return result

    async def ingest_document(self, scope: MemoryScope, settings: KBSettings, records: Sequence[ImportRecord],
                              document_id: str) -> ImportResult:
        episodes = materialize(scope, records, document_id, keep_senders=True)
        key = document_key(scope.kb_id, document_id)
        async with self._gate.write(scope, Space.l2(scope.kb_id, scope.user_key), Operation.DOCUMENT_IMPORT) as tx:
            result, vectors = await self._sift(tx, scope, settings, episodes, Operation.DOCUMENT_DUPLICATE)
            # Only what this document creates: deleting it never removes a record it merely repeated.
            index = {"user_key": scope.user_key, "scope_key": scope.scope_key,
                     "isolation": scope.isolation.value, "ids": [e.episode_id for e in result.episodes]}
            await tx.set(key, index)
            await write_episodes(tx, self._store, settings, result.episodes,
                                 _audit_import(Operation.DOCUMENT_IMPORT, document_id), vectors=vectors)
        return result

    async def _sift(self, tx: WriteTx, scope: MemoryScope, settings: KBSettings, episodes: list[Episode],
                    operation: Operation) -> tuple[ImportResult, list[list[float]]]:
        """The batch without its duplicates (each audited), links re-pointed, and the kept records'
        vectors (one embedding pass for the check and the write)."""
        vectors = await self._store.embed(settings.embedding_model_uuid, [e.content for e in episodes])
        active = [i for i, e in enumerate(episodes) if e.is_active]
        findings = await self._duplicates.against_space(
            scope.kb_id, scope.user_key, settings.embedding_model_uuid,
            [Probe(episodes[i].content, episodes[i].sender_id, vectors[i]) for i in active], batch=True)
        first_of: dict[tuple[str, str], int] = {}
        held_by: dict[str, str] = {}  # id of a record not written -> the id that holds its fact
        duplicates: list[BatchDuplicate] = []
        similar: list[BatchSimilar] = []
        for i, finding in zip(active, findings):
            episode = episodes[i]
            batch_key = (episode.sender_id, fact_key(episode.content))
            earlier = first_of.get(batch_key) if batch_key[1] else None
            if finding.same is not None and finding.same.episode is not None:
                duplicates.append(BatchDuplicate(i + 1, episode.original_id, finding.same.episode.episode_id, False))
            elif earlier is not None:
                duplicates.append(BatchDuplicate(i + 1, episode.original_id, episodes[earlier].episode_id, True))
            else:
                if batch_key[1]:
                    first_of[batch_key] = i
                ids = tuple(m.episode.episode_id for m in finding.similar if m.episode is not None)
                if ids:
                    similar.append(BatchSimilar(i + 1, episode.episode_id, ids))
                continue
            held_by[episode.episode_id] = duplicates[-1].existing_id
            tx.noted(operation, "episode", duplicates[-1].existing_id, RECORD_REMEMBERED(position=i + 1),
                     position=i + 1,
                     original_id=episode.original_id or "", in_batch=duplicates[-1].in_batch)
        kept = [(_relinked(e, held_by), v) for e, v in zip(episodes, vectors) if e.episode_id not in held_by]
        return ImportResult([e for e, _ in kept], duplicates, similar), [v for _, v in kept]

    async def document_scope(self, kb_id: str, document_id: str) -> tuple[MemoryScope, list[str]] | None:
        index = await self._json.get(document_key(kb_id, document_id))
        if not isinstance(index, dict) or not index.get("user_key") or not index.get("scope_key"):
            return None
        scope = MemoryScope.stored(str(index["scope_key"]), str(index["user_key"]), kb_id,
                                   str(index.get("isolation") or "session"))
        return scope, [str(i) for i in index.get("ids") or []]

    async def delete_document(self, kb_id: str, document_id: str) -> int:
        """Remove exactly the records one ingested document created (E10), and first whatever was derived
        from them (K5; in bot isolation the space, and so the cascade, covers every chat of the bot)."""
        found = await self.document_scope(kb_id, document_id)
        if found is None:
            return 0
        scope, ids = found
        async with self._gate.write(scope, Space.l2(kb_id, scope.user_key), Operation.DOCUMENT_DELETE) as tx:
            present = await self._present(kb_id, scope.user_key, ids)
            if present:
                # K5: summaries built from the document's records, and drafts quoting them, go first.
                await self._derived.before_change(tx, scope, present, removed=True)
                await tx.call("vector delete", lambda: self._store.delete(kb_id, scope.user_key, present))
                for episode_id in present:
                    tx.applied(Operation.DOCUMENT_DELETE, "episode", episode_id,
                               DOCUMENT_DELETED(document_id=document_id))
            await tx.delete(document_key(kb_id, document_id))
        return len(present)

    async def _present(self, kb_id: str, user_key: str, ids: list[str]) -> list[str]:
        """Which of `ids` are stored: one enumeration of the space (single gets beyond its limit)."""
        listing = await self._store.enumerate(kb_id, user_key)
        stored = {e.episode_id for e in listing.episodes}
        present = [i for i in ids if i in stored]
        if listing.truncated:
            present += [i for i in ids if i not in stored and await self._store.get(kb_id, user_key, i) is not None]
        return present

    async def export(self, scope: MemoryScope, statuses: tuple[EpisodeStatus, ...]) -> dict[str, Any]:
        listing = await self._store.enumerate(scope.kb_id, scope.user_key)
        episodes = sorted((e for e in listing.episodes if e.status in statuses), key=lambda e: e.timestamp)
        export: dict[str, Any] = {
            "user_key": scope.user_key,
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


__all__ = ["MAX_SENDER_CHARS", "BatchDuplicate", "BatchSimilar", "EpisodeTransfer", "ImportRecord", "ImportResult",
           "episode_list", "load_json", "parse_records"]
