"""Consolidation data: review drafts, closed proposals, archival candidates, limits (K1-K8).

A review draft is L1-side data of one session scope: it quotes the full text of
its sources, so it lives only as long as it is pending. A used, discarded or
cleared proposal leaves a small record (id, outcome, time; never text) so that a
replay is recognised.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..episodes.model import Episode
from ..spaces import L2Space
from ..timefields import format_utc, parse_stored
from ..wording import Said

# K8: one model call per preview, capped and bounded on both sides.
MODEL_TIMEOUT_S = 30.0
MAX_INPUT_CHARS = 12_000  # the quoted source data of one request
MAX_OUTPUT_CHARS = 8_000  # the model's whole answer
MIN_SOURCES = 2
# The answer's shape.
MAX_STATEMENTS = 20
MAX_STATEMENT_CHARS = 500
MAX_PROFILE_UPDATES = 10
# Per scope.
MAX_PENDING_DRAFTS = 5
MAX_CLOSED_KEPT = 100

SUMMARY_SOURCE = "consolidation"
SUMMARY_TAG = "summary"
PROFILE_FIELDS = ("traits", "preferences")


def source_hash(episode: Episode) -> str:
    """A digest of everything stored for one episode: any change to it (status, text, time, tags,
    links) gives another hash, so a draft over it is stale."""
    record = episode.to_record()
    payload = json.dumps({"id": record.record_id, "space": record.space_key, "speaker": record.speaker,
                          "text": record.text, "fields": dict(record.fields)},
                         ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def common_validity(bounds: list[tuple[str | None, str | None]]) -> tuple[str | None, str | None] | None:
    """The interval every source is valid in: the latest known start, the earliest known end (unknown
    bounds do not limit it). None when the sources share no instant."""
    starts = [t for t in (parse_stored(a) for a, _ in bounds) if t is not None]
    ends = [t for t in (parse_stored(b) for _, b in bounds) if t is not None]
    start: datetime | None = max(starts) if starts else None
    end: datetime | None = min(ends) if ends else None
    if start is not None and end is not None and start >= end:
        return None
    return (format_utc(start) if start else None, format_utc(end) if end else None)


@dataclass(frozen=True)
class DraftSource:
    """One source as it was when the draft was made (the hash is re-checked at run)."""

    episode_id: str
    content: str
    hash: str
    sender_id: str = ""
    sender_name: str = ""
    timestamp: str = ""
    importance: int = 2
    event_at: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None

    @classmethod
    def of(cls, episode: Episode) -> DraftSource:
        return cls(episode.episode_id, episode.content, source_hash(episode), episode.sender_id,
                   episode.sender_name, episode.timestamp, episode.importance, episode.fact.event_at,
                   episode.fact.valid_from, episode.fact.valid_until)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.episode_id, "content": self.content, "hash": self.hash, "sender_id": self.sender_id,
                "sender_name": self.sender_name, "timestamp": self.timestamp, "importance": self.importance,
                "event_at": self.event_at, "valid_from": self.valid_from, "valid_until": self.valid_until}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> DraftSource:
        return cls(str(raw.get("id") or ""), str(raw.get("content") or ""), str(raw.get("hash") or ""),
                   str(raw.get("sender_id") or ""), str(raw.get("sender_name") or ""),
                   str(raw.get("timestamp") or ""), int(raw.get("importance") or 2), _opt(raw.get("event_at")),
                   _opt(raw.get("valid_from")), _opt(raw.get("valid_until")))


@dataclass(frozen=True)
class Statement:
    text: str
    sources: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "sources": list(self.sources)}


@dataclass(frozen=True)
class ProfileUpdate:
    """A session-profile list item the model proposes (only when consolidation_apply_profile_updates)."""

    field: str
    value: str
    sources: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "value": self.value, "sources": list(self.sources)}


@dataclass(frozen=True)
class Draft:
    """A pending review draft: the sources (full text), the statements and their citations."""

    proposal_id: str
    kb_id: str
    space_key: str
    chat_key: str
    isolation: str
    created_at: str
    model: str
    sources: tuple[DraftSource, ...]
    statements: tuple[Statement, ...]
    profile_updates: tuple[ProfileUpdate, ...] = ()
    valid_from: str | None = None
    valid_until: str | None = None
    created_by_id: str = ""
    created_by_name: str = ""

    @property
    def l2(self) -> L2Space:
        """The L2 space the draft summarises."""
        return L2Space(self.kb_id, self.space_key)

    @property
    def summary(self) -> str:
        """The summary episode's content: one statement per line."""
        return "\n".join(s.text for s in self.statements)

    @property
    def source_ids(self) -> frozenset[str]:
        return frozenset(s.episode_id for s in self.sources)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1, "proposal_id": self.proposal_id, "kb_id": self.kb_id, "user_key": self.space_key,
            "scope_key": self.chat_key, "isolation": self.isolation, "created_at": self.created_at,
            "model": self.model, "sources": [s.to_dict() for s in self.sources],
            "statements": [s.to_dict() for s in self.statements],
            "profile_updates": [p.to_dict() for p in self.profile_updates],
            "valid_from": self.valid_from, "valid_until": self.valid_until,
            "created_by_id": self.created_by_id, "created_by_name": self.created_by_name,
        }

    @classmethod
    def from_dict(cls, raw: Any) -> Draft | None:
        """A stored draft, or None for a damaged record (it is then treated as missing)."""
        if not isinstance(raw, dict) or not raw.get("proposal_id"):
            return None
        try:
            return cls(
                proposal_id=str(raw["proposal_id"]), kb_id=str(raw.get("kb_id") or ""),
                space_key=str(raw.get("user_key") or ""), chat_key=str(raw.get("scope_key") or ""),
                isolation=str(raw.get("isolation") or "session"), created_at=str(raw.get("created_at") or ""),
                model=str(raw.get("model") or ""),
                sources=tuple(DraftSource.from_dict(s) for s in raw.get("sources") or []),
                statements=tuple(Statement(str(s["text"]), tuple(str(i) for i in s["sources"]))
                                 for s in raw.get("statements") or []),
                profile_updates=tuple(ProfileUpdate(str(p["field"]), str(p["value"]),
                                                    tuple(str(i) for i in p["sources"]))
                                      for p in raw.get("profile_updates") or []),
                valid_from=_opt(raw.get("valid_from")), valid_until=_opt(raw.get("valid_until")),
                created_by_id=str(raw.get("created_by_id") or ""),
                created_by_name=str(raw.get("created_by_name") or ""),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def to_public(self) -> dict[str, Any]:
        """The reviewer's view: everything a reviewer compares, nothing internal (hashes stay inside)."""
        data = self.to_dict()
        data.pop("version", None)
        for source in data["sources"]:
            source.pop("hash", None)
        data["summary"] = self.summary
        return data


@dataclass(frozen=True)
class ClosedProposal:
    """What is kept of a proposal once it left the pending state: never its text."""

    proposal_id: str
    status: str  # used | discarded | cleared | rejected
    reason: str
    at: str
    summary_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "at": self.at, "summary_id": self.summary_id}

    @classmethod
    def from_dict(cls, proposal_id: str, raw: Any) -> ClosedProposal | None:
        if not isinstance(raw, dict):
            return None
        return cls(proposal_id, str(raw.get("status") or "closed"), str(raw.get("reason") or ""),
                   str(raw.get("at") or ""), str(raw.get("summary_id") or ""))


@dataclass(frozen=True)
class Archivable:
    """A superseded record old enough to archive, and what an operator should know first."""

    episode: Episode
    notes: tuple[Said, ...] = ()


@dataclass(frozen=True)
class ConsolidationPreview:
    """`preview`: nothing about episodes changed. `draft` is set when a model draft was stored;
    otherwise `note` says why not (no model, nothing to summarize, or the rejection reason)."""

    enabled: bool
    model_configured: bool
    min_age_days: int
    max_sources: int
    archival: list[Archivable] = field(default_factory=list)
    archival_total: int = 0
    listing_truncated: bool = False
    draft: Draft | None = None
    note: Said | None = None
    rejected: bool = False

    @property
    def draft_note(self) -> str:
        return self.note.english if self.note else ""


@dataclass(frozen=True)
class ConsolidationRun:
    """`run`: archived records (archival path) or the activated summary (reviewed path)."""

    archived: list[Episode] = field(default_factory=list)
    summary: Episode | None = None
    proposal_id: str = ""
    sources: list[Episode] = field(default_factory=list)
    profile: Said | None = None  # what became of the draft's profile updates, when it had some

    @property
    def profile_note(self) -> str:
        return self.profile.english if self.profile else ""


def _opt(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
