"""An import batch in this plugin's own export format, read and validated before anything is written (C, E10).

A record this plugin cannot store (status `deleted`, over a limit, a credential, a wrong type, an id
repeated in the batch) is skipped and named by its index in the array with its reason (`SkippedRecord`);
the rest are `ImportRecord`s, which `transfer.py` writes. So an export of the official plugin, whose bare
`export l2` includes deleted records, imports as it is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .. import params
from ..errors import ValidationError
from ..guards import refuse_secrets
from ..identity import clean_id
from ..provenance import MessageRef
from ..secrets import secret_kind
from ..skipped import SkippedRecord
from ..timefields import normalize_time
from .model import EpisodeDraft, EpisodeStatus, clean_speaker, parse_status

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
    message: MessageRef | None = None  # the platform message it came from, as exported (X1)


@dataclass(frozen=True)
class ParsedBatch:
    records: list[ImportRecord]  # each knows its index in the array
    skipped: list[SkippedRecord[int]]


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
        message=MessageRef.parse(item.get("message"), "message"),
    )
    if original_id:  # only a record that is kept claims its id
        seen_ids.add(original_id)
    return record
