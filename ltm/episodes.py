"""L2 episodes: the domain object, its validation, and its vector-store metadata (E1-E5, E9).

The host's `vector_search` returns no document text, so the memory text lives in
metadata (`content`, and `text` for stores that keep only that field). Lists are
stored as JSON strings because not every backend keeps list values.
"""

from __future__ import annotations

import enum
import json
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import ValidationError
from .timefields import normalize_time, now_iso, parse_aware

MAX_CONTENT_CHARS = 2000
MAX_TAGS = 10
MAX_TAG_CHARS = 40
MAX_SOURCE_REF_CHARS = 300
DEFAULT_IMPORTANCE = 2


class EpisodeStatus(str, enum.Enum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"
    DELETED = "deleted"  # tombstone, reserved (E2)


class ClaimType(str, enum.Enum):
    UNKNOWN = "unknown"
    USER_STATEMENT = "user_statement"
    INFERENCE = "inference"


def parse_status(value: Any) -> EpisodeStatus:
    try:
        return EpisodeStatus(str(value).strip().lower())
    except ValueError:
        allowed = ", ".join(s.value for s in EpisodeStatus)
        raise ValidationError(f"unknown status {str(value)[:30]!r}; use one of: {allowed}") from None


def new_episode_id() -> str:
    # Qdrant only accepts UUID point ids, so episode ids are UUIDs everywhere.
    return str(uuid.uuid4())


def scoped_record_id(user_key: str, episode_id: str) -> str:
    """Packed `file_id` of a record: deleting or fetching by it can only hit this scope."""
    return f"{user_key}#{episode_id}"


def speaker_key(user_key: str, sender_id: str) -> str:
    """Packed one-field filter for 'this speaker in this space' (portable filters, S6)."""
    return f"{user_key}|{sender_id}"


@dataclass(frozen=True)
class FactTime:
    """Fact time and provenance (E9). All optional; None means unknown."""

    event_at: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    source_ref: str | None = None
    claim_type: ClaimType = ClaimType.UNKNOWN

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> "FactTime":
        event_at = normalize_time(raw.get("event_at"), "event_at")
        valid_from = normalize_time(raw.get("valid_from"), "valid_from")
        valid_until = normalize_time(raw.get("valid_until"), "valid_until")
        if valid_from and valid_until and parse_aware(valid_from, "valid_from") >= parse_aware(valid_until, "valid_until"):
            raise ValidationError("valid_from must be earlier than valid_until")
        source_ref = raw.get("source_ref")
        if source_ref is not None and not isinstance(source_ref, str):
            raise ValidationError("source_ref must be a string")
        source_ref = (source_ref or "").strip() or None
        if source_ref and len(source_ref) > MAX_SOURCE_REF_CHARS:
            raise ValidationError(f"source_ref is longer than {MAX_SOURCE_REF_CHARS} characters")
        claim_raw = raw.get("claim_type") or ClaimType.UNKNOWN.value
        try:
            claim_type = ClaimType(str(claim_raw).strip().lower())
        except ValueError:
            raise ValidationError(
                "claim_type must be one of: unknown, user_statement, inference"
            ) from None
        return cls(event_at, valid_from, valid_until, source_ref, claim_type)


def clean_content(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("content is required")
    text = value.strip()
    if len(text) > MAX_CONTENT_CHARS:
        raise ValidationError(f"content is longer than {MAX_CONTENT_CHARS} characters ({len(text)})")
    return text


def clean_importance(value: Any) -> int:
    if value is None or value == "":
        return DEFAULT_IMPORTANCE
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if number is None or not 1 <= number <= 5:
        raise ValidationError("importance must be an integer from 1 to 5")
    return number


def clean_tags(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        items = [part for part in value.split(",")]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise ValidationError("tags must be a list of strings")
    tags: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ValidationError("tags must be a list of strings")
        tag = item.strip().lower()
        if not tag:
            continue
        if len(tag) > MAX_TAG_CHARS:
            raise ValidationError(f"tag {tag[:20]!r}... is longer than {MAX_TAG_CHARS} characters")
        if tag not in tags:
            tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise ValidationError(f"at most {MAX_TAGS} tags")
    return tuple(tags)


@dataclass(frozen=True)
class EpisodeDraft:
    """A validated episode that is not stored yet."""

    content: str
    importance: int = DEFAULT_IMPORTANCE
    tags: tuple[str, ...] = ()
    fact: FactTime = field(default_factory=FactTime)
    source: str = "tool"
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, raw: dict[str, Any], *, source: str = "tool") -> "EpisodeDraft":
        if not isinstance(raw, dict):
            raise ValidationError("an episode must be a JSON object")
        return cls(
            content=clean_content(raw.get("content")),
            importance=clean_importance(raw.get("importance")),
            tags=clean_tags(raw.get("tags")),
            fact=FactTime.parse(raw),
            source=source,
        )


def _json_list(value: Any) -> list[str]:
    if value in (None, ""):
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    try:
        loaded = json.loads(value)
    except (TypeError, ValueError):
        return [str(value)]
    return [str(v) for v in loaded] if isinstance(loaded, list) else [str(loaded)]


@dataclass(frozen=True)
class Episode:
    """One stored L2 record, read back from the vector store."""

    episode_id: str
    user_key: str
    content: str
    timestamp: str
    importance: int = DEFAULT_IMPORTANCE
    tags: tuple[str, ...] = ()
    status: EpisodeStatus = EpisodeStatus.ACTIVE
    sender_id: str = ""
    sender_name: str = ""
    bot_uuid: str = ""
    session_name: str = ""
    source: str = ""
    fact: FactTime = field(default_factory=FactTime)
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    superseded_at: str | None = None
    status_changed_at: str | None = None
    document_id: str | None = None
    original_id: str | None = None
    derived_from: tuple[str, ...] = ()

    @property
    def is_active(self) -> bool:
        return self.status is EpisodeStatus.ACTIVE

    def with_status(self, status: EpisodeStatus, **changes: Any) -> "Episode":
        return replace(self, status=status, status_changed_at=now_iso(), **changes)

    def to_metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "episode_id": self.episode_id,
            "uuid": self.episode_id,
            "file_id": scoped_record_id(self.user_key, self.episode_id),
            "user_key": self.user_key,
            "speaker_key": speaker_key(self.user_key, self.sender_id),
            "content": self.content,
            "text": self.content,
            "timestamp": self.timestamp,
            "importance": self.importance,
            "tags": json.dumps(list(self.tags), ensure_ascii=False),
            "status": self.status.value,
            "sender_id": self.sender_id,
            "sender_name": self.sender_name,
            "bot_uuid": self.bot_uuid,
            "session_name": self.session_name,
            "source": self.source,
            "claim_type": self.fact.claim_type.value,
        }
        optional = {
            "event_at": self.fact.event_at,
            "valid_from": self.fact.valid_from,
            "valid_until": self.fact.valid_until,
            "source_ref": self.fact.source_ref,
            "superseded_by": self.superseded_by,
            "superseded_at": self.superseded_at,
            "status_changed_at": self.status_changed_at,
            "document_id": self.document_id,
            "original_id": self.original_id,
        }
        meta.update({k: v for k, v in optional.items() if v})
        if self.supersedes:
            meta["supersedes"] = json.dumps(list(self.supersedes))
        if self.derived_from:
            meta["derived_from"] = json.dumps(list(self.derived_from))
        return meta

    @classmethod
    def from_metadata(cls, meta: dict[str, Any]) -> "Episode":
        """Lenient reader: old or foreign records lack fields; missing status = active (E2)."""
        raw_status = meta.get("status") or EpisodeStatus.ACTIVE.value
        try:
            status = EpisodeStatus(raw_status)
        except ValueError:
            status = EpisodeStatus.ACTIVE
        try:
            claim = ClaimType(meta.get("claim_type") or "unknown")
        except ValueError:
            claim = ClaimType.UNKNOWN
        try:
            importance = int(meta.get("importance", DEFAULT_IMPORTANCE))
        except (TypeError, ValueError):
            importance = DEFAULT_IMPORTANCE
        return cls(
            episode_id=str(meta.get("episode_id") or meta.get("uuid") or ""),
            user_key=str(meta.get("user_key") or ""),
            content=str(meta.get("content") or meta.get("text") or ""),
            timestamp=str(meta.get("timestamp") or ""),
            importance=min(5, max(1, importance)),
            tags=tuple(_json_list(meta.get("tags"))),
            status=status,
            sender_id=str(meta.get("sender_id") or ""),
            sender_name=str(meta.get("sender_name") or ""),
            bot_uuid=str(meta.get("bot_uuid") or ""),
            session_name=str(meta.get("session_name") or ""),
            source=str(meta.get("source") or ""),
            fact=FactTime(
                event_at=meta.get("event_at") or None,
                valid_from=meta.get("valid_from") or None,
                valid_until=meta.get("valid_until") or None,
                source_ref=meta.get("source_ref") or None,
                claim_type=claim,
            ),
            supersedes=tuple(_json_list(meta.get("supersedes"))),
            superseded_by=meta.get("superseded_by") or None,
            superseded_at=meta.get("superseded_at") or None,
            status_changed_at=meta.get("status_changed_at") or None,
            document_id=meta.get("document_id") or None,
            original_id=meta.get("original_id") or None,
            derived_from=tuple(_json_list(meta.get("derived_from"))),
        )

    def to_public(self) -> dict[str, Any]:
        """Plain JSON view used by tools, export and the console."""
        data: dict[str, Any] = {
            "id": self.episode_id,
            "content": self.content,
            "timestamp": self.timestamp,
            "importance": self.importance,
            "tags": list(self.tags),
            "status": self.status.value,
            "sender_id": self.sender_id,
            "sender_name": self.sender_name,
            "source": self.source,
            "event_at": self.fact.event_at,
            "valid_from": self.fact.valid_from,
            "valid_until": self.fact.valid_until,
            "source_ref": self.fact.source_ref,
            "claim_type": self.fact.claim_type.value,
        }
        if self.supersedes:
            data["supersedes"] = list(self.supersedes)
        if self.superseded_by:
            data["superseded_by"] = self.superseded_by
            data["superseded_at"] = self.superseded_at
        if self.original_id:
            data["original_id"] = self.original_id
        if self.document_id:
            data["document_id"] = self.document_id
        return data
