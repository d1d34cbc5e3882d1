"""The conversation record of one chat: its recent turns and its rolling summary (V1-V2).

One JSON record per chat (`v2/conversation/<chat key>`, built in `ltm/_storage.py`) holds both, so
every change (a turn appended, turns folded into the summary, a speaker erased) is one storage write:
a change cut short by a crash has either happened whole or not at all, and no turn is ever both in
the record and in the summary, or in neither.

- A **recorded turn** is one user message (speaker, time, platform message id) and the bot's reply,
  numbered in the chat (`seq`, never reused).
- The **summary** is what the oldest turns were folded into: its text (the model's, or the fallback
  rendering of its digest), the **digest** (one short line per folded turn, kept within the summary
  budget: what the fallback shows and what a speaker's erasure rebuilds the summary from), the last
  folded turn (`covers_to`), and every speaker whose words the text may hold.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..kb_settings import KBSettings

RECORD_VERSION = 1
# LangBot 4.11.2 cuts a transcript message at 4,000 characters (docs/HOST-FACTS.md 13); one side of a
# turn is kept to the same, and to a quarter of the chat's character budget, so two turns always fit.
MAX_SIDE_CHARS = 4_000
# What the context pack adds to one model request at most (summary and turns together).
PACK_MAX_CHARS = 6_000
# A summary remembers at most this many speakers by id; past that, an erasure drops the model's text.
MAX_SUMMARY_SPEAKERS = 200
WITHHELD = "<withheld: looked like a credential>"


class SummarySource(str, enum.Enum):
    NONE = "none"  # nothing folded yet
    MODEL = "model"  # the chat model wrote the text
    FALLBACK = "fallback"  # the text is the rendering of the digest (no model, or its answer was refused)
    EDITED = "edited"  # an operator wrote the text (the Memory Console); like a model's, it may mix speakers


@dataclass(frozen=True)
class RecordedTurn:
    seq: int
    at: str  # UTC, ISO 8601
    sender_id: str = ""
    sender_name: str = ""
    message_id: str = ""
    user_text: str = ""
    reply_text: str = ""

    @property
    def chars(self) -> int:
        return len(self.user_text) + len(self.reply_text)

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": self.at, "sender_id": self.sender_id, "sender_name": self.sender_name,
                "message_id": self.message_id, "user_text": self.user_text, "reply_text": self.reply_text}

    @classmethod
    def from_dict(cls, raw: Any) -> RecordedTurn | None:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("seq"), int) or isinstance(raw.get("seq"), bool):
            return None
        return cls(raw["seq"], _text(raw, "at"), _text(raw, "sender_id"), _text(raw, "sender_name"),
                   _text(raw, "message_id"), _text(raw, "user_text"), _text(raw, "reply_text"))


@dataclass(frozen=True)
class DigestLine:
    """One folded turn in a few words: its own speaker, so an erasure can take it out."""

    seq: int
    at: str
    sender_id: str
    sender_name: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": self.at, "sender_id": self.sender_id, "sender_name": self.sender_name,
                "text": self.text}

    @classmethod
    def from_dict(cls, raw: Any) -> DigestLine | None:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("seq"), int) or isinstance(raw.get("seq"), bool):
            return None
        return cls(raw["seq"], _text(raw, "at"), _text(raw, "sender_id"), _text(raw, "sender_name"),
                   _text(raw, "text"))


@dataclass(frozen=True)
class Summary:
    text: str = ""
    source: SummarySource = SummarySource.NONE
    digest: tuple[DigestLine, ...] = ()
    covers_to: int = 0  # the last folded turn's seq (0: none)
    folded: int = 0  # how many turns were folded in, in all
    dropped: int = 0  # digest lines dropped for the budget (their turns stay counted in `folded`)
    speakers: tuple[str, ...] = ()  # every sender id whose words the text may hold
    speakers_overflow: bool = False  # more than MAX_SUMMARY_SPEAKERS: any erasure drops the model's text
    updated_at: str = ""
    model: str = ""

    @property
    def empty(self) -> bool:
        return not self.text

    def may_hold(self, sender_id: str) -> bool:
        """Whether the summary's text may hold `sender_id`'s words (what their erasure rebuilds)."""
        return not self.empty and (sender_id in self.speakers or self.speakers_overflow
                                   or any(line.sender_id == sender_id for line in self.digest))

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "source": self.source.value, "digest": [d.to_dict() for d in self.digest],
                "covers_to": self.covers_to, "folded": self.folded, "dropped": self.dropped,
                "speakers": list(self.speakers), "speakers_overflow": self.speakers_overflow,
                "updated_at": self.updated_at, "model": self.model}

    @classmethod
    def from_dict(cls, raw: Any) -> Summary:
        if not isinstance(raw, Mapping):
            return cls()
        try:
            source = SummarySource(raw.get("source") or "none")
        except ValueError:
            source = SummarySource.FALLBACK
        digest = tuple(d for d in (DigestLine.from_dict(x) for x in raw.get("digest") or []) if d is not None)
        speakers = tuple(str(s) for s in raw.get("speakers") or [] if isinstance(s, str))
        return cls(_text(raw, "text"), source, digest, _count(raw, "covers_to"), _count(raw, "folded"),
                   _count(raw, "dropped"), speakers, raw.get("speakers_overflow") is True, _text(raw, "updated_at"),
                   _text(raw, "model"))


@dataclass(frozen=True)
class ConversationRecord:
    turns: tuple[RecordedTurn, ...] = ()
    summary: Summary = field(default_factory=Summary)
    next_seq: int = 1
    revision: int = 0  # raised by every change to the summary: a fold started before it is stale

    @property
    def chars(self) -> int:
        return sum(t.chars for t in self.turns)

    @property
    def empty(self) -> bool:
        return not self.turns and self.summary.empty

    def turns_of(self, sender_id: str) -> tuple[RecordedTurn, ...]:
        return tuple(t for t in self.turns if t.sender_id == sender_id)

    def to_dict(self) -> dict[str, Any]:
        return {"version": RECORD_VERSION, "turns": [t.to_dict() for t in self.turns],
                "summary": self.summary.to_dict(), "next_seq": self.next_seq, "revision": self.revision}

    @classmethod
    def from_dict(cls, raw: Any) -> ConversationRecord:
        """A stored record; a damaged one reads as empty, a damaged turn is left out."""
        if not isinstance(raw, Mapping):
            return cls()
        turns = tuple(sorted((t for t in (RecordedTurn.from_dict(x) for x in raw.get("turns") or [])
                              if t is not None), key=lambda t: t.seq))
        summary = Summary.from_dict(raw.get("summary"))
        highest = max([t.seq for t in turns] + [summary.covers_to])
        return cls(turns, summary, max(_count(raw, "next_seq"), highest + 1), _count(raw, "revision"))

    def with_turns(self, turns: tuple[RecordedTurn, ...]) -> ConversationRecord:
        return replace(self, turns=turns)


@dataclass(frozen=True)
class ConversationLimits:
    """The chat's budgets, from the memory KB's effective settings."""

    max_turns: int = 20
    max_chars: int = 12_000
    summary_max_chars: int = 2_000

    @classmethod
    def of(cls, settings: KBSettings) -> ConversationLimits:
        return cls(settings.conversation_max_turns, settings.conversation_max_chars,
                   settings.conversation_summary_max_chars)

    @property
    def side_chars(self) -> int:
        """The most one side of a turn (the user's message, the reply) keeps."""
        return min(MAX_SIDE_CHARS, self.max_chars // 4)

    def over(self, record: ConversationRecord) -> bool:
        """Past the budget: the record is never stored like this (the append folds first)."""
        return len(record.turns) > self.max_turns or record.chars > self.max_chars

    def fold_due(self, record: ConversationRecord) -> bool:
        """Three quarters of either budget: time to fold, while the record still has room."""
        return len(record.turns) * 4 >= self.max_turns * 3 or record.chars * 4 >= self.max_chars * 3

    def settled(self, turns: tuple[RecordedTurn, ...]) -> bool:
        """At most half of each budget: where a fold stops."""
        return len(turns) * 2 <= self.max_turns and sum(t.chars for t in turns) * 2 <= self.max_chars


def conversation_model(settings: KBSettings) -> str:
    """The chat model that writes summaries: the conversation's own, else the consolidation model."""
    return settings.conversation_model_uuid or settings.consolidation_model_uuid


def _text(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    return value if isinstance(value, str) else ""


def _count(raw: Mapping[str, Any], key: str) -> int:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
