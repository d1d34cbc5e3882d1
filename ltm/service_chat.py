"""The facade's part for what a chat does beyond memory: its conversation record (V) and its platform
events (X). `MemoryService` (ltm/service.py) inherits it, so components still call one entry point; it
only delegates, like the rest of the facade."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .conversation import (
    PACK_MAX_CHARS,
    ContextPack,
    ConversationRecord,
    FoldOutcome,
    HostMessage,
    SpokenTurn,
    TurnRecorded,
)
from .identity import MemoryScope
from .parts import MemoryParts
from .platform_events.events import EventOutcome
from .platform_events.move import BotMove
from .platform_values import MemberLeft, Recall


class ChatFacade:
    _m: MemoryParts

    # ------------------------------------------------------------------ the conversation record (V)
    async def record_turn(self, scope: MemoryScope, turn: SpokenTurn) -> TurnRecorded:
        """V1: one finished turn appended to the chat's record when `conversation_enabled` (else skipped,
        and why), then the oldest turns folded into the summary when a fold is due (V2). Call it off the
        reply path: a fold may ask the chat model (30 s at most)."""
        return await self._m.conversations.record_turn(scope, turn)

    async def fold_conversation(self, scope: MemoryScope) -> FoldOutcome:
        """V2: fold the oldest turns while a fold is due; returns at once when one runs for this chat."""
        return await self._m.conversations.fold(scope)

    async def conversation(self, scope: MemoryScope) -> ConversationRecord:
        """The chat's recorded turns and summary (what `!memory conversation` and the console show)."""
        return await self._m.conversations.view(scope)

    async def conversation_pack(self, scope: MemoryScope, history: Sequence[HostMessage],
                                max_chars: int = PACK_MAX_CHARS) -> ContextPack:
        """V3: the summary and the recorded turns that `history` (LangBot's, for this request) lacks."""
        return await self._m.conversations.pack(scope, history, max_chars)

    async def clear_conversation(self, scope: MemoryScope) -> int:
        """V4: the chat's turns and summary removed (audited); how many turns went."""
        return await self._m.conversations.clear(scope)

    async def erase_conversation_speaker(self, scope: MemoryScope, sender_id: str) -> int:
        """V4: one speaker's turns removed from the chat's record, the summary rebuilt without them or
        dropped (audited as `person_erase`); how many turns went."""
        return await self._m.conversations.erase_speaker(scope, sender_id)

    async def edit_conversation_summary(self, scope: MemoryScope, text: Any) -> ConversationRecord:
        """V4: the summary's text replaced by an operator's (checked like a model's, audited)."""
        return await self._m.conversations.edit_summary(scope, text)

    async def export_conversation(self, scope: MemoryScope) -> dict[str, Any]:
        return await self._m.conversations.export(scope)

    async def import_conversation(self, scope: MemoryScope, payload: Any) -> ConversationRecord:
        """V4: an export into this chat's empty record (`StateError` when it has one: clear it first)."""
        return await self._m.conversations.import_record(scope, payload)

    # ------------------------------------------------------------------ platform events (X)
    async def message_recalled(self, event: Recall) -> EventOutcome:
        """X2: what the recalled message made in its chat taken back (when `withdraw_recalled_messages`)."""
        return await self._m.platform.recall(event)

    async def member_left(self, event: MemberLeft) -> EventOutcome:
        """X3: the member erased from that group's memory (when `erase_members_who_leave`)."""
        return await self._m.platform.member_left(event)

    async def move_bot(self, old_bot: Any, scope: MemoryScope, *, dry_run: bool) -> BotMove:
        """The memory of a deleted bot (`old_bot`, its uuid) copied into the same chats of `scope`'s bot: an
        admin's decision, never automatic; `dry_run` says what would be copied and writes nothing."""
        return await self._m.mover.move(old_bot, scope, dry_run=dry_run)
