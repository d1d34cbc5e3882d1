"""The context pack: what the chat's record adds to LangBot's own history for one model request (V3).

A pure function of the chat's record and the history LangBot still hands the model at this turn (the
PromptPreProcessing event's messages, as (role, text) pairs): the turns of the record that history no
longer carries (after a restart, an idle day, an eviction, or past its window) and the summary of what
was folded, within a size budget, never repeating a turn the history still has.

- **Which turns the history carries** is decided by their words, since a host message has no time or
  id: a recorded turn is carried when the history holds a user message with the same text (cleaned like
  ours and compared on its first `MATCH_CHARS` characters, as both sides may cut long messages), or,
  when its message was withheld or empty, an assistant message with the same text as its reply. Each
  history message vouches for one turn only, newest first, so a repeated "ok" is not taken for all.
- **The summary** covers turns older than every turn in the record. It is offered unless the history
  reaches back past the record's oldest turn it carries (it then holds messages the record does not
  know, from before: the folded turns may well still be there).
- **What the Runner shows itself.** In LangBot 4.11.2 that history is empty on every turn (docs/HOST-FACTS.md
  13.1): a history-paging Runner (LocalAgent) shows the model the latest turns of LangBot's own
  transcript, which outlives a restart, and the listener cannot see them. `host_window` (the setting
  `conversation_host_window`) says how many of the chat's latest turns that is: they are carried, and
  the summary is left out while the window still reaches the first turn it covers.
- **The budget**: the newest turns the history lacks come first; the summary takes at most half of the
  budget when there are such turns (all of it when there are none), cut at its start so its newest
  part stays; a turn that does not fit whole is shortened rather than left out when it is the newest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..host_values import clean_host_text
from .model import PACK_MAX_CHARS, WITHHELD, ConversationRecord, RecordedTurn

MATCH_CHARS = 200
MIN_TURN_CHARS = 80  # below this, a shortened turn says too little to be worth its place


@dataclass(frozen=True)
class HostMessage:
    """One message of LangBot's history for this request."""

    role: str  # "user" | "assistant" | anything else (ignored)
    text: str


@dataclass(frozen=True)
class ContextPack:
    summary: str = ""  # the summary of earlier turns, or "" when there is none to add
    folded: int = 0  # how many turns that summary covers
    turns: tuple[RecordedTurn, ...] = ()  # recorded turns the history lacks, oldest first
    carried: int = 0  # recorded turns the history still holds (not repeated)
    left_out: int = 0  # turns the history lacks that did not fit the budget

    @property
    def empty(self) -> bool:
        return not self.summary and not self.turns

    @property
    def chars(self) -> int:
        return len(self.summary) + sum(turn_chars(t) for t in self.turns)

    def to_dict(self) -> dict[str, Any]:
        """The pack for other plugins (`_ltm_context`): plain values only."""
        return {"summary": self.summary or None, "summary_turns": self.folded,
                "earlier_turns": [{"turn": t.seq, "at": t.at, "speaker": {"id": t.sender_id, "name": t.sender_name},
                                   "said": t.user_text, "assistant": t.reply_text} for t in self.turns]}


def match_key(text: str) -> str:
    return " ".join(clean_host_text(text[: MATCH_CHARS * 4]).split())[:MATCH_CHARS].rstrip("…. ")


def turn_chars(turn: RecordedTurn) -> int:
    return len(turn.user_text) + len(turn.reply_text) + len(turn.sender_name or turn.sender_id)


def carried_turns(turns: Sequence[RecordedTurn], history: Sequence[HostMessage]) -> set[int]:
    """The seqs of the recorded turns the history still holds, matched newest first."""
    users = Counter(match_key(m.text) for m in history if m.role == "user" and m.text.strip())
    replies = Counter(match_key(m.text) for m in history if m.role == "assistant" and m.text.strip())
    carried: set[int] = set()
    for turn in reversed(turns):
        said = match_key(turn.user_text) if turn.user_text and turn.user_text != WITHHELD else ""
        if said and users[said] > 0:
            users[said] -= 1
            carried.add(turn.seq)
            continue
        answered = match_key(turn.reply_text) if turn.reply_text and turn.reply_text != WITHHELD else ""
        if not said and answered and replies[answered] > 0:
            replies[answered] -= 1
            carried.add(turn.seq)
    return carried


def reaches_back(turns: Sequence[RecordedTurn], history: Sequence[HostMessage], carried: set[int]) -> bool:
    """Whether the history holds user messages older than the record's oldest turn it carries."""
    if not carried:
        return False
    oldest = next(t for t in turns if t.seq in carried)
    for message in history:
        if message.role not in ("user", "assistant") or not message.text.strip():
            continue
        if message.role == "user":
            if oldest.user_text == WITHHELD:
                continue  # the history has the words the record withheld: compare the reply instead
            return match_key(message.text) != match_key(oldest.user_text)
        return match_key(message.text) != match_key(oldest.reply_text)
    return False


def shortened(turn: RecordedTurn, room: int) -> RecordedTurn | None:
    """`turn` cut to `room` characters in all (the reply first, then the message), or None if too little."""
    overhead = len(turn.sender_name or turn.sender_id)
    if room - overhead < MIN_TURN_CHARS:
        return None
    left = room - overhead
    user = turn.user_text if len(turn.user_text) <= left * 2 // 3 else turn.user_text[: left * 2 // 3 - 1] + "…"
    rest = left - len(user)
    reply = turn.reply_text if len(turn.reply_text) <= rest else turn.reply_text[: max(rest - 1, 0)] + "…"
    return replace(turn, user_text=user, reply_text=reply)


def in_host_window(record: ConversationRecord, host_window: int) -> set[int]:
    """The seqs of the recorded turns among the chat's latest `host_window`, which the Runner shows itself."""
    newest = record.next_seq - 1
    return {t.seq for t in record.turns if t.seq > newest - host_window}


def window_covers_summary(record: ConversationRecord, host_window: int) -> bool:
    """Whether the Runner's window still reaches back to the first turn the summary covers."""
    first = max(record.summary.covers_to - record.summary.folded + 1, 1)
    return first > record.next_seq - 1 - host_window


def context_pack(record: ConversationRecord, history: Sequence[HostMessage], max_chars: int = PACK_MAX_CHARS,
                 host_window: int = 0) -> ContextPack:
    """`host_window`: how many of the chat's latest turns the Runner shows the model itself (the setting
    `conversation_host_window`); those are never in the pack, and the summary only once the window no
    longer reaches the first turn it covers."""
    in_history = carried_turns(record.turns, history)
    carried = in_history | in_host_window(record, host_window)
    missing = [t for t in record.turns if t.seq not in carried]
    summary = "" if (record.summary.empty or reaches_back(record.turns, history, in_history)
                     or window_covers_summary(record, host_window)) else record.summary.text
    share = max_chars // 2 if missing else max_chars
    if len(summary) > share:
        summary = "…" + summary[-(share - 1):] if share > 1 else ""
    room = max_chars - len(summary)
    chosen: list[RecordedTurn] = []
    for turn in reversed(missing):
        size = turn_chars(turn)
        if size <= room:
            chosen.append(turn)
            room -= size
            continue
        if not chosen:
            cut = shortened(turn, room)
            if cut is not None:
                chosen.append(cut)
                room -= turn_chars(cut)
        break
    chosen.reverse()
    return ContextPack(summary=summary, folded=record.summary.folded if summary else 0, turns=tuple(chosen),
                       carried=len(carried), left_out=len(missing) - len(chosen))
