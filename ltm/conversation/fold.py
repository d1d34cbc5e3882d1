"""The record's rules as pure functions: append a turn, choose what a fold takes, fold it in, erase a
speaker, clear (V1, V2, V4). `ConversationBook.change` runs each on the record read under the lock.

The budget holds at every length, with a model or without:
- a fold is **due** at three quarters of either budget (turns, characters) and takes the oldest turns
  until the rest is at most half of each (`ConversationLimits`), so folds come in batches, not per turn;
- the usual fold runs after the append, off the reply path, by the chat model (`Conversations.fold`);
- an append that would pass a budget (no fold kept up: the model was slow or failing, or turns came in
  faster) folds the oldest turns by the fallback digest **in the same write**, so a stored record never
  exceeds its budget, and no turn is lost: every turn is either in the record or folded into the summary
  (`covers_to` is the last folded turn, `turns` start right after it).
"""

from __future__ import annotations

from dataclasses import replace

from .. import wording
from ..operations import Operation
from .book import Audited, Change
from .digest import extended, render, without_speaker
from .model import (
    MAX_SUMMARY_SPEAKERS,
    ConversationLimits,
    ConversationRecord,
    RecordedTurn,
    Summary,
    SummarySource,
)
from .text import PreparedTurn

FOLDED = wording.Phrase("audit.conversation_folded", "folded turns {first}-{last} into the summary ({how})")
CLEARED = wording.Phrase("audit.conversation_cleared",
                         "conversation record cleared ({turns} turns, a summary of {folded} earlier turns)")
ERASED = wording.Phrase("audit.conversation_erased",
                        "turns of a speaker removed from the conversation record: {turns}; summary {summary}")
HOW = {SummarySource.MODEL: wording.Phrase("conversation.by_model", "by the chat model"),
       SummarySource.FALLBACK: wording.Phrase("conversation.by_fallback", "by the fallback digest")}
WITHDRAWN_TURN = wording.Phrase("audit.conversation_withdrawn",
                                "turn of message {message_id} withdrawn: it was recalled")
SUMMARY_AFTER = {"kept": wording.Phrase("conversation.summary_kept", "unchanged"),
                 "rebuilt": wording.Phrase("conversation.summary_rebuilt", "rebuilt from the other speakers' turns"),
                 "none": wording.Phrase("conversation.summary_none", "none")}


def to_fold(record: ConversationRecord, limits: ConversationLimits) -> tuple[RecordedTurn, ...]:
    """The oldest turns whose folding leaves the rest within half of each budget (empty: none due)."""
    if not limits.fold_due(record) and not limits.over(record):
        return ()
    turns = record.turns
    for count in range(1, len(turns) + 1):
        if limits.settled(turns[count:]):
            return turns[:count]
    return turns


def folded(record: ConversationRecord, turns: tuple[RecordedTurn, ...], limits: ConversationLimits, now: str, *,
           model_text: str = "", model: str = "") -> ConversationRecord:
    """`record` with `turns` (its oldest, in order) folded into the summary: by the model's text when given,
    else by the digest's rendering. The digest always grows by the folded turns' lines."""
    if not turns:
        return record
    last = turns[-1].seq
    digest, dropped = extended(record.summary, turns, limits.summary_max_chars)
    speakers = list(record.summary.speakers)
    for turn in turns:
        if turn.sender_id and turn.sender_id not in speakers:
            speakers.append(turn.sender_id)
    overflow = record.summary.speakers_overflow or len(speakers) > MAX_SUMMARY_SPEAKERS
    source = SummarySource.MODEL if model_text else SummarySource.FALLBACK
    summary = Summary(text=model_text or render(digest, dropped), source=source, digest=digest, covers_to=last,
                      folded=record.summary.folded + len(turns), dropped=dropped,
                      speakers=tuple(speakers[-MAX_SUMMARY_SPEAKERS:]), speakers_overflow=overflow,
                      updated_at=now, model=model if model_text else "")
    return replace(record, turns=tuple(t for t in record.turns if t.seq > last), summary=summary,
                   revision=record.revision + 1)


def fold_audit(turns: tuple[RecordedTurn, ...], source: SummarySource, record: ConversationRecord) -> Audited:
    speakers = sorted({t.sender_id for t in turns if t.sender_id})
    return Audited(Operation.CONVERSATION_FOLD, f"turns:{turns[0].seq}-{turns[-1].seq}",
                   FOLDED(first=turns[0].seq, last=turns[-1].seq, how=HOW[source]()),
                   {"turns": len(turns), "how": source.value, "speakers": speakers,
                    "summary_chars": len(record.summary.text)})


def appended(record: ConversationRecord, turn: PreparedTurn, limits: ConversationLimits, now: str
             ) -> Change[tuple[RecordedTurn, int]]:
    """The turn appended with the next number; past a budget, the oldest turns folded by the fallback in the
    same write. The result: the recorded turn, and how many turns that fold took (0: none)."""
    recorded = RecordedTurn(record.next_seq, turn.at, turn.sender_id, turn.sender_name, turn.message_id,
                            turn.user_text, turn.reply_text)
    grown = replace(record, turns=(*record.turns, recorded), next_seq=record.next_seq + 1)
    if not limits.over(grown):
        return Change(grown, (recorded, 0))
    oldest = to_fold(grown, limits)
    after = folded(grown, oldest, limits, now)
    return Change(after, (recorded, len(oldest)), (fold_audit(oldest, SummarySource.FALLBACK, after),))


def cleared(record: ConversationRecord) -> Change[int]:
    if record.empty:
        return Change(None, 0)
    entry = Audited(Operation.CONVERSATION_CLEAR, "record",
                    CLEARED(turns=len(record.turns), folded=record.summary.folded if not record.summary.empty else 0),
                    {"turns": len(record.turns), "summary_chars": len(record.summary.text)})
    return Change(None, len(record.turns), (entry,), delete=True)


def erased(record: ConversationRecord, sender_id: str, limits: ConversationLimits, now: str,
           operation: Operation) -> Change[int]:
    """`sender_id`'s turns (and the bot's replies to them) removed; the summary rebuilt without them when it
    holds any of their words: the fallback rendering of the digest's other lines (a model's text mixes
    every speaker, so it is not kept), or no summary when no line is left. The result: turns removed."""
    theirs = record.turns_of(sender_id)
    summary = record.summary
    touched = summary.may_hold(sender_id)
    if not theirs and not touched:
        return Change(None, 0)
    how = "kept"
    if touched:
        digest, dropped = without_speaker(summary, sender_id, limits.summary_max_chars)
        speakers = tuple(dict.fromkeys(line.sender_id for line in digest if line.sender_id))
        if digest:
            how = "rebuilt"
            summary = replace(summary, text=render(digest, dropped), source=SummarySource.FALLBACK, digest=digest,
                              dropped=dropped, speakers=speakers, speakers_overflow=False, updated_at=now,
                              model="")
        else:
            how = "none"
            summary = Summary(covers_to=summary.covers_to, folded=summary.folded, updated_at=now)
    after = replace(record, turns=tuple(t for t in record.turns if t.sender_id != sender_id), summary=summary,
                    revision=record.revision + 1)  # a fold planned before this never lands
    entry = Audited(operation, "speaker", ERASED(turns=len(theirs), summary=SUMMARY_AFTER[how]()),
                    {"turns": len(theirs), "summary_after": how})
    return Change(after, len(theirs), (entry,))


def withdrawn(record: ConversationRecord, message_id: str) -> Change[int]:
    """The recorded turn of a recalled platform message (and the bot's reply to it) removed (X2); a turn
    already folded is in the summary's words and stays there. The result: turns removed."""
    mine = [t for t in record.turns if message_id and t.message_id == message_id]
    if not mine:
        return Change(None, 0)
    after = replace(record, turns=tuple(t for t in record.turns if t.message_id != message_id),
                    revision=record.revision + 1)  # a fold planned with that turn never lands
    entry = Audited(Operation.MESSAGE_WITHDRAW, "record", WITHDRAWN_TURN(message_id=message_id),
                    {"turns": len(mine)})
    return Change(after, len(mine), (entry,))
