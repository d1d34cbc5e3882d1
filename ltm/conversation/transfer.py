"""A chat's conversation record as a document, and the operator's edit of its summary (V4).

The export (`!memory export conversation`, and the `conversation` part of the Memory Console's export) is

    {"format": "longterm-memory-conversation", "version": 1, "scope_key": ..., "exported_at": ...,
     "turns": [{seq, at, sender_id, sender_name, message_id, user_text, reply_text}...],
     "summary": {text, source, digest: [{seq, at, sender_id, sender_name, text}...], covers_to, folded,
                 dropped, speakers, speakers_overflow, updated_at, model}}

the stored record's own fields (`docs/ARCHITECTURE.md`, "Storage layout"), so nothing is lost between two
installations. An import reads that document whole before anything is written, and every text in it goes
through what a recorded turn goes through (`text.prepared`: cleaned, cut to the chat's side budget, a side
that looks like a credential withheld), the summary and digest through the summary budget (a summary text
that looks like a credential is refused). Turns are numbered again from 1 in their order, the summary's
digest lines below them; past the chat's budget the oldest are folded by the digest in the same write,
as an append does. An import fills an empty record only: it never mixes two chats' turns, and a chat
that already has one is refused with what to do (clear it first).

An operator's edit replaces the summary's text (`SummarySource.EDITED`); its digest and the speakers it
may hold stay, so a later erasure of one of them still rebuilds it from the digest. Without a chat model,
the next fold renders the digest again and the edit is replaced: the fallback summary is the digest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .. import params, wording
from ..errors import ValidationError
from ..guards import refuse_secrets
from ..identity import clean_id
from ..operations import Operation
from .book import Audited, Change
from .digest import fitted
from .fold import fold_audit, folded, to_fold
from .model import (
    MAX_SUMMARY_SPEAKERS,
    ConversationLimits,
    ConversationRecord,
    RecordedTurn,
    Summary,
    SummarySource,
)
from .text import SpokenTurn, bounded, prepared

EXPORT_FORMAT = "longterm-memory-conversation"
EXPORT_FIELDS = ("format", "version", "scope_key", "exported_at", "turns", "summary")
MAX_IMPORT_TURNS = 1_000
EDITED = wording.Phrase("audit.conversation_edited", "summary edited ({chars} characters)")
IMPORTED = wording.Phrase("audit.conversation_imported",
                          "conversation imported: turns {turns}, a summary of {chars} characters")


def exported(record: ConversationRecord, chat_key: str, now: str) -> dict[str, Any]:
    stored = record.to_dict()
    return {"format": EXPORT_FORMAT, "version": 1, "scope_key": chat_key, "exported_at": now,
            "turns": stored["turns"], "summary": stored["summary"]}


def _spoken(raw: Any, position: int) -> SpokenTurn:
    """One exported turn as the listener would hand it over (its texts are prepared like a new turn's)."""
    if not isinstance(raw, Mapping):
        raise ValidationError(f"turns[{position}] must be an object; nothing was imported")
    turn = RecordedTurn.from_dict({**raw, "seq": position + 1})
    assert turn is not None  # a Mapping with an int seq always reads
    at = params.text(turn.at, f"turns[{position}].at", max_chars=40, required=False)
    return SpokenTurn(turn.user_text, turn.reply_text, clean_id(turn.sender_id), turn.sender_name,
                      turn.message_id, at)


def parse_import(payload: Any, limits: ConversationLimits, now: str) -> ConversationRecord:
    """The record an export describes, cleaned and bounded like recorded turns (nothing written yet)."""
    if not isinstance(payload, Mapping) or payload.get("format") != EXPORT_FORMAT:
        raise ValidationError(f'expected a conversation export: {{"format": "{EXPORT_FORMAT}", "turns": [...], '
                              '"summary": {...}}; nothing was imported')
    params.reject_unknown(dict(payload), EXPORT_FIELDS)
    raw_turns = payload.get("turns") or []
    if not isinstance(raw_turns, list) or len(raw_turns) > MAX_IMPORT_TURNS:
        raise ValidationError(f"turns must be a list of at most {MAX_IMPORT_TURNS}; nothing was imported")
    raw_summary = payload.get("summary") or {}
    if not isinstance(raw_summary, Mapping):
        raise ValidationError("summary must be an object; nothing was imported")
    stored = Summary.from_dict(raw_summary)
    lines = tuple(replace(line, seq=i + 1, sender_id=clean_id(line.sender_id),
                          text=bounded(line.text, limits.summary_max_chars))
                  for i, line in enumerate(stored.digest))
    digest, dropped = fitted(lines, stored.dropped, limits.summary_max_chars)
    text = bounded(stored.text, limits.summary_max_chars)
    refuse_secrets([("the summary", text), *(("a digest line", line.text) for line in digest)])
    base = len(lines)
    turns = []
    for position, raw in enumerate(raw_turns):
        ready = prepared(_spoken(raw, position), limits, now)
        turns.append(RecordedTurn(base + position + 1, ready.at, ready.sender_id, ready.sender_name,
                                  ready.message_id, ready.user_text, ready.reply_text))
    speakers = tuple(dict.fromkeys(clean_id(s) for s in stored.speakers if clean_id(s)))
    summary = Summary() if not text and not digest else Summary(
        text=text, source=stored.source if text else SummarySource.NONE, digest=digest, covers_to=base,
        folded=max(stored.folded, base), dropped=dropped, speakers=speakers[-MAX_SUMMARY_SPEAKERS:],
        speakers_overflow=stored.speakers_overflow or len(speakers) > MAX_SUMMARY_SPEAKERS,
        updated_at=stored.updated_at or now, model=stored.model)
    return ConversationRecord(tuple(turns), summary, next_seq=base + len(turns) + 1)


def imported(current: ConversationRecord, incoming: ConversationRecord, limits: ConversationLimits, now: str
             ) -> Change[int | None]:
    """The incoming record in place of an empty one (None: the chat has a record, nothing written); past
    the budget its oldest turns are folded by the digest in the same write."""
    if not current.empty:
        return Change(None, None)
    record = incoming
    audited: list[Audited] = []
    oldest = to_fold(record, limits)
    if oldest:
        record = folded(record, oldest, limits, now)
        audited.append(fold_audit(oldest, SummarySource.FALLBACK, record))
    chars = len(record.summary.text)
    entry = Audited(Operation.CONVERSATION_IMPORT, "record", IMPORTED(turns=len(incoming.turns), chars=chars),
                    {"turns": len(incoming.turns), "summary_chars": len(record.summary.text)})
    return Change(replace(record, revision=current.revision + 1), len(incoming.turns), (entry, *audited))


def edited(record: ConversationRecord, text: Any, limits: ConversationLimits, now: str) -> Change[Summary]:
    """The summary's text replaced by an operator's (checked like a model's: within the budget, no
    credential); its digest, coverage and speakers stay."""
    new = params.text(text, "summary", max_chars=limits.summary_max_chars, required=False, multiline=True)
    refuse_secrets([("the summary", new)])
    if new == record.summary.text:
        return Change(None, record.summary)
    summary = replace(record.summary, text=new, source=SummarySource.EDITED if new else SummarySource.NONE,
                      updated_at=now, model="")
    entry = Audited(Operation.CONVERSATION_EDIT, "summary", EDITED(chars=len(new)), {"chars": len(new)})
    return Change(replace(record, summary=summary, revision=record.revision + 1), summary, (entry,))

