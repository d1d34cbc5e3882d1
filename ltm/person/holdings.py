"""What the plugin keeps about one person (a sender id) across the installation's memory spaces, and
what erasing it did, space by space."""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..candidates.candidate import Candidate
from ..conversation import RecordedTurn
from ..episodes.model import Episode
from ..identity import MemoryScope
from ..profiles.model import Profile
from ..spaces import SpaceKind
from ..timefields import now_iso

EXPORT_FORMAT = "longterm-memory-person-export"
KINDS = ("episodes", "summaries", "speaker_profiles", "candidates", "snapshots", "conversation_turns",
         "conversation_summaries")


@dataclass(frozen=True)
class PersonSpace:
    """One memory space and what it holds of the person. L2: the episodes they spoke and the summaries
    built from them (removed with them, K5). L1: their speaker profile, the candidates proposed from
    their messages, and whether the chat's injection snapshot shows them."""

    kind: SpaceKind
    key: str  # the scope_key (L1) or the user_key (L2)
    chat_key: str = ""  # L2: a chat that uses the space ("" when only its audit log names it)
    episodes: tuple[Episode, ...] = ()
    summaries: tuple[str, ...] = ()
    speaker_profile: Profile | None = None
    candidates: tuple[Candidate, ...] = ()
    snapshot: bool = False
    conversation_turns: tuple[RecordedTurn, ...] = ()
    conversation_summary: bool = False
    fenced: bool = False
    truncated: bool = False  # the space holds more records than one enumeration reads

    @property
    def holds(self) -> bool:
        return bool(self.episodes or self.speaker_profile is not None or self.candidates or self.snapshot
                    or self.conversation_turns or self.conversation_summary)

    def counts(self) -> dict[str, int]:
        return {"episodes": len(self.episodes), "summaries": len(self.summaries),
                "speaker_profiles": int(self.speaker_profile is not None), "candidates": len(self.candidates),
                "snapshots": int(self.snapshot), "conversation_turns": len(self.conversation_turns),
                "conversation_summaries": int(self.conversation_summary)}

    def statuses(self) -> dict[str, int]:
        return dict(Counter(e.status.value for e in self.episodes))

    def describe(self) -> dict[str, Any]:
        """The space and its counts, no memory text (for a dry run, a summary, the audit)."""
        data: dict[str, Any] = {"kind": self.kind.value, "key": self.key, "counts": self.counts(),
                                "fenced": self.fenced}
        if self.kind is SpaceKind.L2:
            data.update(scope_key=self.chat_key, statuses=self.statuses(), truncated=self.truncated)
        return data

    def export(self) -> dict[str, Any]:
        """Everything the space keeps of the person, as JSON."""
        data = self.describe()
        if self.kind is SpaceKind.L2:
            data.update(episodes=[e.to_public() for e in self.episodes], summaries=list(self.summaries))
        else:
            data.update(speaker_profile=self.speaker_profile.to_dict() if self.speaker_profile else None,
                        candidates=[c.to_public() for c in self.candidates], snapshot=self.snapshot,
                        conversation_turns=[t.to_dict() for t in self.conversation_turns],
                        conversation_summary=self.conversation_summary)
        return data


def _total(counts: list[dict[str, int]]) -> dict[str, int]:
    return {kind: sum(c.get(kind, 0) for c in counts) for kind in KINDS}


@dataclass(frozen=True)
class PersonRecords:
    sender_id: str
    kb_id: str
    spaces: tuple[PersonSpace, ...]  # the spaces that hold something of the person
    searched_l1: int = 0
    searched_l2: int = 0

    def counts(self) -> dict[str, int]:
        return _total([s.counts() for s in self.spaces])

    def split(self, scope: MemoryScope) -> tuple[PersonRecords, PersonRecords]:
        """(what one chat's own spaces hold, what every other space holds)."""
        mine = {(SpaceKind.L1, scope.chat_key), (SpaceKind.L2, scope.space_key)}
        here = tuple(s for s in self.spaces if (s.kind, s.key) in mine)
        rest = tuple(s for s in self.spaces if (s.kind, s.key) not in mine)
        return (PersonRecords(self.sender_id, self.kb_id, here, self.searched_l1, self.searched_l2),
                PersonRecords(self.sender_id, self.kb_id, rest, self.searched_l1, self.searched_l2))

    def summary(self) -> dict[str, Any]:
        return {"sender_id": self.sender_id, "kb_id": self.kb_id, "counts": self.counts(),
                "searched": {"l1": self.searched_l1, "l2": self.searched_l2},
                "spaces": [s.describe() for s in self.spaces]}

    def export(self) -> dict[str, Any]:
        return {"format": EXPORT_FORMAT, "version": 1, "exported_at": now_iso(), **self.summary(),
                "spaces": [s.export() for s in self.spaces]}


class Outcome(str, enum.Enum):
    PLANNED = "planned"  # a dry run: this would be erased
    ERASED = "erased"
    FENCED = "fenced"  # the space's writes are paused by a fence: reported, not written
    FAILED = "failed"


@dataclass(frozen=True)
class SpaceErasure:
    kind: SpaceKind
    key: str
    outcome: Outcome
    counts: dict[str, int] = field(default_factory=dict)  # planned, or erased
    error: str = ""
    code: str = ""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind.value, "key": self.key, "outcome": self.outcome.value,
                                "counts": self.counts}
        if self.error:
            data.update(error=self.error, code=self.code)
        return data


@dataclass(frozen=True)
class PersonErasure:
    sender_id: str
    dry_run: bool
    spaces: tuple[SpaceErasure, ...]

    def counts(self) -> dict[str, int]:
        """What was erased (or, in a dry run, would be), over the spaces that were not fenced or failed."""
        done = (Outcome.PLANNED, Outcome.ERASED)
        return _total([s.counts for s in self.spaces if s.outcome in done])

    def of(self, outcome: Outcome) -> list[SpaceErasure]:
        return [s for s in self.spaces if s.outcome is outcome]

    def to_dict(self) -> dict[str, Any]:
        return {"sender_id": self.sender_id, "dry_run": self.dry_run, "counts": self.counts(),
                "spaces": [s.to_dict() for s in self.spaces],
                "fenced": [s.key for s in self.of(Outcome.FENCED)],
                "failed": [s.key for s in self.of(Outcome.FAILED)]}
