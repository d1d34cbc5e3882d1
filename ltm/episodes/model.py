"""L2 episodes: the domain object, its validation and its flat field form (E1-E5, E9).

An episode is stored by the vector index as an `IndexRecord`: its isolation key
(`user_key`) and speaker travel as the record's routing fields, its text as the
searchable text, and everything else as flat fields (lists JSON-encoded, because
not every backend keeps list values). How those land in a particular host's
metadata is the LangBot adapter's business.
"""

from __future__ import annotations

import enum
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from .. import params
from ..errors import ValidationError, quoted
from ..ports import IndexRecord
from ..provenance import MessageRef
from ..spaces import L2Space
from ..timefields import newest_per_id, normalize_time, now_iso, parse_aware, parse_stored
from ..wording import Phrase

MAX_CONTENT_CHARS = 2000
MAX_TAGS = 10
MAX_TAG_CHARS = 40
MAX_SOURCE_REF_CHARS = 300
MAX_SPEAKER_CHARS = 200
DEFAULT_IMPORTANCE = 2
# The recall record size budget: one stored record (its text, its speaker, and the name and value of
# every flat field) stays within this many characters, so whatever recall hands on stays bounded. An
# ordinary episode stays well inside it; a consolidation summary is checked before it is activated
# (its lineage grows with its sources). A character bound, not a token estimate.
MAX_RECORD_CHARS = 8000


class EpisodeStatus(str, enum.Enum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"
    DELETED = "deleted"  # tombstone, reserved (E2)


LISTED_STATUSES = (EpisodeStatus.ACTIVE, EpisodeStatus.SUPERSEDED, EpisodeStatus.ARCHIVED)


class Validity(str, enum.Enum):
    """Whether a fact holds at a moment, by its `valid_from` (inclusive) and `valid_until` (exclusive);
    a fact without them holds."""

    CURRENT = "current"
    EXPIRED = "expired"  # valid_until has passed
    NOT_YET = "not yet valid"  # valid_from is still ahead


class ClaimType(str, enum.Enum):
    UNKNOWN = "unknown"
    USER_STATEMENT = "user_statement"
    INFERENCE = "inference"


STATUS_LABEL = {s: Phrase(f"status.{s.value}", s.value) for s in EpisodeStatus}


def record_chars(record: IndexRecord) -> int:
    """The size of one stored record as the recall record budget counts it (see MAX_RECORD_CHARS)."""
    return len(record.text) + len(record.speaker) + sum(len(str(k)) + len(str(v)) for k, v in record.fields.items())


def parse_status(value: Any, field_name: str = "status") -> EpisodeStatus:
    word = str(value).strip().lower() if isinstance(value, str) else ""
    try:
        return EpisodeStatus(word)
    except ValueError:
        allowed = ", ".join(s.value for s in EpisodeStatus)
        raise ValidationError(f"unknown {field_name} {quoted(value)}; use one of: {allowed}") from None


def parse_statuses(value: Any, field_name: str = "status", *,
                   default: tuple[EpisodeStatus, ...] = (EpisodeStatus.ACTIVE,)) -> tuple[EpisodeStatus, ...]:
    """One status, a list, or a comma-separated string; "all" means every listed status."""
    if params.is_blank(value):
        return default
    if isinstance(value, str) and value.strip().lower() == "all":
        return LISTED_STATUSES
    words = params.word_list(value, field_name, max_items=len(EpisodeStatus), item_chars=20)
    if not words:
        raise ValidationError(f"{field_name} must name at least one status")
    return tuple(dict.fromkeys(parse_status(w, field_name) for w in words))


def new_episode_id() -> str:
    # Qdrant only accepts UUID point ids, so episode ids are UUIDs everywhere.
    return str(uuid.uuid4())


_IMPORTED_IDS = uuid.UUID("6f1d3c52-8a4e-5b7f-9c20-4d1e8a6b3f70")


def derived_episode_id(space: L2Space, original_id: str) -> str:
    """The id an imported record with the id `original_id` gets in a space: the same every time, so an
    import run again after it stopped part-way writes each record under the id a stored link names
    (and the same in every version: stored links name these ids)."""
    return str(uuid.uuid5(_IMPORTED_IDS, f"{space.kb_id}\n{space.space_key}\n{original_id}"))


@dataclass(frozen=True)
class FactTime:
    """Fact time and provenance (E9). All optional; None means unknown."""

    event_at: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    source_ref: str | None = None
    claim_type: ClaimType = ClaimType.UNKNOWN

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> FactTime:
        event_at = normalize_time(raw.get("event_at"), "event_at")
        valid_from = normalize_time(raw.get("valid_from"), "valid_from")
        valid_until = normalize_time(raw.get("valid_until"), "valid_until")
        if valid_from and valid_until and (
                parse_aware(valid_from, "valid_from") >= parse_aware(valid_until, "valid_until")):
            raise ValidationError("valid_from must be earlier than valid_until")
        source_ref = params.text(raw.get("source_ref"), "source_ref", max_chars=MAX_SOURCE_REF_CHARS,
                                 required=False) or None
        claim = params.choice(raw.get("claim_type"), "claim_type", [c.value for c in ClaimType],
                              default=ClaimType.UNKNOWN.value)
        return cls(event_at, valid_from, valid_until, source_ref, ClaimType(claim))


def clean_content(value: Any) -> str:
    return params.text(value, "content", max_chars=MAX_CONTENT_CHARS, multiline=True)


def clean_importance(value: Any) -> int:
    return params.bounded_int(value, "importance", low=1, high=5, default=DEFAULT_IMPORTANCE)


def clean_tags(value: Any) -> tuple[str, ...]:
    tags = params.word_list(value, "tags", max_items=MAX_TAGS, item_chars=MAX_TAG_CHARS, separators=params.PHRASES)
    return tuple(dict.fromkeys(t.lower() for t in tags))


def clean_speaker(value: Any, field_name: str) -> str:
    return params.text(value, field_name, max_chars=MAX_SPEAKER_CHARS, required=False)


@dataclass(frozen=True)
class EpisodeDraft:
    """A validated episode that is not stored yet."""

    content: str
    importance: int = DEFAULT_IMPORTANCE
    tags: tuple[str, ...] = ()
    fact: FactTime = field(default_factory=FactTime)
    source: str = "tool"

    @classmethod
    def parse(cls, raw: Any, *, source: str = "tool") -> EpisodeDraft:
        if not isinstance(raw, dict):
            raise ValidationError("an episode must be a JSON object")
        return cls(
            content=clean_content(raw.get("content")),
            importance=clean_importance(raw.get("importance")),
            tags=clean_tags(raw.get("tags")),
            fact=FactTime.parse(raw),
            source=source,
        )

    def texts(self) -> list[tuple[str, str]]:
        """Every stored text of the draft, by field (checked by the secret filter)."""
        return [("the content", self.content), *(("a tag", t) for t in self.tags),
                ("source_ref", self.fact.source_ref or "")]


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


def _opt(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


@dataclass(frozen=True)
class Episode:
    """One stored L2 record."""

    episode_id: str
    space_key: str
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
    message: MessageRef | None = None  # the platform message it came from (X1); None: none known

    @property
    def is_active(self) -> bool:
        return self.status is EpisodeStatus.ACTIVE

    @property
    def is_summary(self) -> bool:
        """A consolidation summary: it names the records it was built from (K4)."""
        return bool(self.derived_from)

    def validity_at(self, moment: datetime) -> Validity:
        until = parse_stored(self.fact.valid_until)
        if until is not None and until <= moment:
            return Validity.EXPIRED
        start = parse_stored(self.fact.valid_from)
        if start is not None and start > moment:
            return Validity.NOT_YET
        return Validity.CURRENT

    def with_status(self, status: EpisodeStatus, **changes: Any) -> Episode:
        return replace(self, status=status, status_changed_at=now_iso(), **changes)

    def to_record(self) -> IndexRecord:
        fields: dict[str, Any] = {
            "episode_id": self.episode_id,
            "content": self.content,
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
        fields.update({k: v for k, v in optional.items() if v})
        if self.supersedes:
            fields["supersedes"] = json.dumps(list(self.supersedes))
        if self.derived_from:
            fields["derived_from"] = json.dumps(list(self.derived_from))
        if self.message is not None:
            fields["message_id"], fields["message_chat"] = self.message.message_id, self.message.chat_key
        return IndexRecord(self.episode_id, self.space_key, self.sender_id, self.content, fields)

    @classmethod
    def from_record(cls, record: IndexRecord) -> Episode:
        """Lenient reader: old or foreign records lack fields; a missing status is active (E2)."""
        meta = record.fields
        try:
            status = EpisodeStatus(meta.get("status") or EpisodeStatus.ACTIVE.value)
        except ValueError:
            status = EpisodeStatus.ACTIVE
        try:
            claim = ClaimType(meta.get("claim_type") or ClaimType.UNKNOWN.value)
        except ValueError:
            claim = ClaimType.UNKNOWN
        try:
            importance = int(meta.get("importance", DEFAULT_IMPORTANCE))
        except (TypeError, ValueError):
            importance = DEFAULT_IMPORTANCE
        return cls(
            episode_id=str(meta.get("episode_id") or record.record_id),
            space_key=record.space_key,
            content=str(meta.get("content") or record.text or ""),
            timestamp=str(meta.get("timestamp") or ""),
            importance=min(5, max(1, importance)),
            tags=tuple(_json_list(meta.get("tags"))),
            status=status,
            sender_id=str(meta.get("sender_id") or record.speaker or ""),
            sender_name=str(meta.get("sender_name") or ""),
            bot_uuid=str(meta.get("bot_uuid") or ""),
            session_name=str(meta.get("session_name") or ""),
            source=str(meta.get("source") or ""),
            fact=FactTime(
                event_at=_opt(meta.get("event_at")),
                valid_from=_opt(meta.get("valid_from")),
                valid_until=_opt(meta.get("valid_until")),
                source_ref=_opt(meta.get("source_ref")),
                claim_type=claim,
            ),
            supersedes=tuple(_json_list(meta.get("supersedes"))),
            superseded_by=_opt(meta.get("superseded_by")),
            superseded_at=_opt(meta.get("superseded_at")),
            status_changed_at=_opt(meta.get("status_changed_at")),
            document_id=_opt(meta.get("document_id")),
            original_id=_opt(meta.get("original_id")),
            derived_from=tuple(_json_list(meta.get("derived_from"))),
            message=MessageRef.of(meta.get("message_id"), meta.get("message_chat")) if "message_id" in meta else None,
        )

    def to_public(self) -> dict[str, Any]:
        """Plain JSON view used by every surface and by export."""
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
        if self.status_changed_at:
            data["status_changed_at"] = self.status_changed_at
        if self.original_id:
            data["original_id"] = self.original_id
        if self.document_id:
            data["document_id"] = self.document_id
        if self.derived_from:
            data["derived_from"] = list(self.derived_from)
        if self.message is not None:
            data["message"] = self.message.to_dict()
        return data


def newest_rows(episodes: Iterable[Episode]) -> list[Episode]:
    """One episode per id, the most recently changed."""
    return newest_per_id(episodes, lambda e: e.episode_id, _changed_at)


def _changed_at(episode: Episode) -> str:
    return episode.status_changed_at or episode.timestamp or ""


_DEFAULTS = Episode("", "", "", "").__dict__


def partial_episode(**fields: object) -> Episode:
    """An Episode with these fields and every other at its default. A recall builds a few hundred and a
    load every record of a space: filling the frozen dataclass's fields directly costs a third less than
    its __init__ (the result equals the one __init__ would build)."""
    episode = object.__new__(Episode)
    values = dict(_DEFAULTS)
    values.update(fields)
    episode.__dict__.update(values)
    return episode
