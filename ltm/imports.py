"""Parsing of episode import batches: `!memory import l2`, the console and KB documents (E10).

The whole batch is validated before anything is written; the first bad record
fails the import with its position, so nothing is half-imported.
"""

from __future__ import annotations

import json
from typing import Any

from .episodes import EpisodeDraft, EpisodeStatus, parse_status
from .errors import ValidationError
from .identity import clean_id
from .secrets_filter import secret_kind
from .service import ImportRecord
from .timefields import normalize_time

MAX_IMPORT_RECORDS = 5000
MAX_IMPORT_BYTES = 8 * 1024 * 1024
_IMPORTABLE = (EpisodeStatus.ACTIVE, EpisodeStatus.SUPERSEDED, EpisodeStatus.ARCHIVED)


def load_json(text: str | bytes) -> Any:
    if isinstance(text, bytes):
        if len(text) > MAX_IMPORT_BYTES:
            raise ValidationError(f"the import is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MiB")
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValidationError("the import is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


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


def parse_records(payload: Any, *, source: str = "import", default_source_ref: str | None = None) -> list[ImportRecord]:
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
    draft = EpisodeDraft.parse(raw, source=str(item.get("source") or source))
    kind = secret_kind(draft.content)
    if kind:
        raise ValidationError(f"content looks like {kind}; secrets are never stored")
    status = parse_status(item.get("status") or "active")
    if status not in _IMPORTABLE:
        raise ValidationError(f"status {status.value} cannot be imported")
    original_id = str(item.get("id") or item.get("episode_id") or "").strip() or None
    if original_id:
        if original_id in seen_ids:
            raise ValidationError(f"duplicate id {original_id}")
        seen_ids.add(original_id)
    supersedes = item.get("supersedes") or []
    if isinstance(supersedes, str):
        supersedes = [supersedes]
    if not isinstance(supersedes, list) or not all(isinstance(s, str) for s in supersedes):
        raise ValidationError("supersedes must be a list of ids")
    return ImportRecord(
        draft=draft,
        status=status,
        timestamp=normalize_time(item.get("timestamp"), "timestamp"),
        sender_id=clean_id(item.get("sender_id")) if "sender_id" in item else None,
        sender_name=str(item.get("sender_name") or "") if "sender_name" in item else None,
        original_id=original_id,
        supersedes=tuple(supersedes),
        superseded_by=str(item.get("superseded_by") or "") or None,
        superseded_at=normalize_time(item.get("superseded_at"), "superseded_at"),
    )
