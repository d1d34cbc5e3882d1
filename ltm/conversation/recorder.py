"""`Conversations`: record a finished turn, fold the oldest turns into the summary, pack what LangBot's
history lacks, clear, erase a speaker (V1-V4). What the service's conversation methods call.

The fold is single-flight per chat: a second request while one runs for the same chat returns at once
(`FoldOutcome.in_flight`); the running one re-reads the record after each commit and folds again while
it is due (at most `MAX_ROUNDS` times), so turns that came in meanwhile are not left waiting. The model
is asked with no lock held (30 s at most); the result is committed under the chat's L1 lock only if the
record's summary is still the one the fold started from and the planned turns are still its oldest
(`revision`): an erasure, a clear or an append's own fallback fold in between makes it stale, and it is
planned again. A fold cut short anywhere loses nothing: until its one write lands, the turns are still
in the record.

The fold does not propose review candidates: every user message already goes through candidate
extraction when it is answered (Q1), so the fold would only propose the same facts again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import HostFailure, StateError, ValidationError
from ..identity import MemoryScope
from ..kb_settings import KBSettings
from ..operations import Operation
from ..ports import LanguageModel
from ..timefields import now_iso
from .book import Change, ConversationBook
from .fold import appended, cleared, erased, fold_audit, folded, to_fold, withdrawn
from .model import (
    PACK_MAX_CHARS,
    ConversationLimits,
    ConversationRecord,
    RecordedTurn,
    SummarySource,
    conversation_model,
)
from .pack import ContextPack, HostMessage, context_pack
from .prompt import MODEL_TIMEOUT_S, build_request, parse_reply
from .text import NotRecorded, SpokenTurn, not_recorded, prepared
from .transfer import edited, exported, imported, parse_import

log = logging.getLogger("LongTermMemory")

MAX_ROUNDS = 3
SettingsSource = Callable[[], Awaitable[tuple[str, KBSettings] | None]]


@dataclass(frozen=True)
class FoldOutcome:
    folded: int = 0  # turns folded into the summary by this request
    source: SummarySource = SummarySource.NONE  # how the last round wrote the summary
    note: str = ""  # why the model's text was not used (no model, timeout, refusal, a refused answer)
    in_flight: bool = False  # another fold of this chat was running: nothing done here
    stale: int = 0  # rounds whose result arrived after the record changed (planned again)


@dataclass(frozen=True)
class TurnRecorded:
    turn: RecordedTurn | None = None
    skipped: NotRecorded | None = None
    withheld: int = 0  # sides withheld as credentials
    folded_at_once: int = 0  # turns the append itself folded by the fallback (the budget was reached)
    fold: FoldOutcome | None = None  # the fold that followed, when one was due


class Conversations:
    def __init__(self, book: ConversationBook, llm: LanguageModel, settings: SettingsSource) -> None:
        self._book = book
        self._llm = llm
        self._settings = settings
        self._folding: set[str] = set()  # chats with a fold in flight

    async def _limits(self) -> tuple[KBSettings | None, ConversationLimits]:
        found = await self._settings()
        settings = found[1] if found else None
        return settings, ConversationLimits.of(settings) if settings else ConversationLimits()

    async def view(self, scope: MemoryScope) -> ConversationRecord:
        return await self._book.read(scope)

    async def pack(self, scope: MemoryScope, history: Sequence[HostMessage], max_chars: int = PACK_MAX_CHARS
                   ) -> ContextPack:
        """What the record adds to LangBot's own history; empty while recording is off."""
        settings, _ = await self._limits()
        if settings is None or not settings.conversation_enabled:
            return ContextPack()
        return context_pack(await self._book.read(scope), history, max_chars, settings.conversation_host_window)

    async def record_turn(self, scope: MemoryScope, turn: SpokenTurn) -> TurnRecorded:
        """Append one finished turn (only when `conversation_enabled`), then fold when one is due."""
        settings, limits = await self._limits()
        if settings is None or not settings.conversation_enabled:
            return TurnRecorded(skipped=NotRecorded.DISABLED)
        reason = not_recorded(turn)
        if reason is not None:
            return TurnRecorded(skipped=reason)
        if not turn.sender_id and scope.identity is not None:  # the speaker of the turn's own scope
            turn = replace(turn, sender_id=scope.sender_id, sender_name=turn.sender_name or scope.sender_name)
        now = now_iso()
        ready = prepared(turn, limits, now)
        recorded, at_once = await self._book.change(scope, Operation.CONVERSATION_RECORD,
                                                    lambda record: appended(record, ready, limits, now))
        if ready.withheld:
            log.info("[LongTermMemory] conversation turn %d of scope=%s: %d side(s) withheld as credentials",
                     recorded.seq, scope.chat_key, ready.withheld)
        outcome = None
        if limits.fold_due(await self._book.read(scope)):
            outcome = await self.fold(scope)
        return TurnRecorded(recorded, withheld=ready.withheld, folded_at_once=at_once, fold=outcome)

    async def fold(self, scope: MemoryScope) -> FoldOutcome:
        """Fold the oldest turns into the summary while a fold is due (V2); single-flight per chat."""
        if scope.chat_key in self._folding:
            return FoldOutcome(in_flight=True)
        self._folding.add(scope.chat_key)
        try:
            return await self._fold(scope)
        finally:
            self._folding.discard(scope.chat_key)

    async def _fold(self, scope: MemoryScope) -> FoldOutcome:
        settings, limits = await self._limits()
        total, stale, source, note = 0, 0, SummarySource.NONE, ""
        for _ in range(MAX_ROUNDS):
            base = await self._book.read(scope)
            turns = to_fold(base, limits)
            if not turns:
                break
            model = conversation_model(settings) if settings else ""
            text, note = await self._model_text(model, base, turns, limits) if model else ("", "no model")
            now = now_iso()

            def commit(current: ConversationRecord, base: ConversationRecord = base,
                       turns: tuple[RecordedTurn, ...] = turns, text: str = text, model: str = model,
                       now: str = now) -> Change[SummarySource | None]:
                if current.revision != base.revision or current.turns[:len(turns)] != turns:
                    return Change(None, None)
                after = folded(current, turns, limits, now, model_text=text, model=model)
                return Change(after, after.summary.source, (fold_audit(turns, after.summary.source, after),))

            landed = await self._book.change(scope, Operation.CONVERSATION_FOLD, commit)
            if landed is None:
                stale += 1
                continue
            total, source = total + len(turns), landed
            log.info("[LongTermMemory] conversation fold scope=%s turns=%d-%d how=%s%s", scope.chat_key,
                     turns[0].seq, turns[-1].seq, landed.value, f" note={note!r}" if note else "")
        return FoldOutcome(total, source, note, stale=stale)

    async def _model_text(self, model: str, record: ConversationRecord, turns: tuple[RecordedTurn, ...],
                          limits: ConversationLimits) -> tuple[str, str]:
        """The model's new summary and "", or "" and why there is none (the fallback is used then)."""
        budget = limits.summary_max_chars
        messages = build_request(record.summary.text, turns, budget)
        try:
            reply = await asyncio.wait_for(
                self._llm.complete(model, messages, timeout_s=MODEL_TIMEOUT_S, max_output_chars=budget + 200),
                MODEL_TIMEOUT_S)
            return parse_reply(reply, budget), ""
        except TimeoutError:
            return "", f"no answer in {MODEL_TIMEOUT_S:g} s"
        except HostFailure as exc:
            return "", f"the model call failed: {exc.code}"
        except ValidationError as exc:
            return "", f"answer refused: {exc.message}"

    async def clear(self, scope: MemoryScope) -> int:
        """Every turn and the summary removed (audited); the number of turns removed."""
        return await self._book.change(scope, Operation.CONVERSATION_CLEAR, cleared)

    async def erase_speaker(self, scope: MemoryScope, sender_id: str,
                            operation: Operation = Operation.PERSON_ERASE) -> int:
        """`sender_id`'s turns removed, the summary rebuilt without them or dropped (`fold.erased`)."""
        _, limits = await self._limits()
        now = now_iso()
        return await self._book.change(scope, operation,
                                       lambda record: erased(record, sender_id, limits, now, operation))

    async def withdraw_message(self, scope: MemoryScope, message_id: str) -> int:
        """X2: the recorded turn of a recalled platform message removed (audited); how many turns went."""
        return await self._book.change(scope, Operation.MESSAGE_WITHDRAW, lambda record: withdrawn(record, message_id))

    async def edit_summary(self, scope: MemoryScope, text: Any) -> ConversationRecord:
        """The summary's text replaced by an operator's (audited); the record as it is now."""
        _, limits = await self._limits()
        now = now_iso()
        await self._book.change(scope, Operation.CONVERSATION_EDIT, lambda record: edited(record, text, limits, now))
        return await self._book.read(scope)

    async def export(self, scope: MemoryScope) -> dict[str, Any]:
        return exported(await self._book.read(scope), scope.chat_key, now_iso())

    async def import_record(self, scope: MemoryScope, payload: Any) -> ConversationRecord:
        """An export read whole, then written into this chat's empty record (`transfer.py`)."""
        _, limits = await self._limits()
        now = now_iso()
        incoming = parse_import(payload, limits, now)
        done = await self._book.change(scope, Operation.CONVERSATION_IMPORT,
                                       lambda record: imported(record, incoming, limits, now))
        if done is None:
            raise StateError("this chat already has a conversation record: clear it first "
                             "(!memory conversation clear), then import; nothing was imported")
        return await self._book.read(scope)
