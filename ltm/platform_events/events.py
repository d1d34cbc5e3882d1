"""What the plugin does when its event processor receives a platform event (X2, X3 in
docs/REQUIREMENTS.md; the events as LangBot delivers them: docs/HOST-FACTS.md 14).

- `message.deleted` (a recall): when the memory KB's `withdraw_recalled_messages` is on (the default),
  the message is noted as recalled at once (a turn still running cannot write from it any more,
  ltm/recalls.py), then, in a chat that holds memory, what it made is taken back (`withdrawal.py`), and
  its turn leaves the chat's conversation record (a turn folded into the summary already stays there).
- `group.member_left`: when `erase_members_who_leave` is on (off by default), the member is erased from
  that group's memory through the person erasure (ltm/person/): their episodes (in bot isolation, the
  bot's shared space is the group's episode space, so their episodes there go), their speaker profile,
  the candidates of their messages, a snapshot that shows them, and the audit stops naming them.

An event about a chat that holds no memory, a person it holds nothing of, or a message that made nothing
changes nothing (the outcome says why). Every event is noted per bot (`!memory health`: is the processor
bound?).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..conversation import Conversations
from ..diagnostics import Diagnostics
from ..identity import Identity, MemoryScope
from ..kb_registry import KnowledgeBaseRegistry
from ..person import PersonErasure, PersonRegistry
from ..platform_values import MemberLeft, Recall
from ..recalls import RecalledMessages
from ..timefields import now_iso
from .withdrawal import MessageWithdrawal, Withdrawal

log = logging.getLogger("LongTermMemory")


@dataclass(frozen=True)
class EventOutcome:
    """What one platform event did: `skipped` says why nothing was looked at; otherwise the withdrawal or
    the erasure (which may have found nothing)."""

    event_type: str
    skipped: str = ""
    withdrawal: Withdrawal | None = None
    erasure: PersonErasure | None = None


class PlatformEvents:
    def __init__(self, kbs: KnowledgeBaseRegistry, diagnostics: Diagnostics, recalled: RecalledMessages,
                 withdrawal: MessageWithdrawal, people: PersonRegistry, conversations: Conversations) -> None:
        self._kbs = kbs
        self._diagnostics = diagnostics
        self._recalled = recalled
        self._withdrawal = withdrawal
        self._people = people
        self._conversations = conversations

    async def recall(self, event: Recall) -> EventOutcome:
        await self._diagnostics.note_platform_event(event.chat.bot_uuid, "message.deleted", now_iso())
        found = await self._kbs.memory_kb()
        if found is not None and not found[1].withdraw_recalled_messages:
            return EventOutcome("message.deleted", skipped="withdraw_recalled_messages is off")
        message = event.message
        self._recalled.note(message)  # first: a turn of this message still running writes nothing more
        scope = await self._known(event.chat)
        if scope is None:
            return EventOutcome("message.deleted", skipped="this chat holds no memory")
        withdrawal = await self._withdrawal.withdraw(scope, message)
        turns = await self._conversations.withdraw_message(scope, message.message_id)  # the recorded turn (V)
        log.info("[LongTermMemory] message %s recalled in %s: episodes=%d candidates=%d profiles=%d kept=%d "
                 "turns=%d", message.message_id, message.chat_key, len(withdrawal.episodes),
                 len(withdrawal.candidates), len(withdrawal.profiles), len(withdrawal.kept), turns)
        return EventOutcome("message.deleted", withdrawal=withdrawal)

    async def member_left(self, event: MemberLeft) -> EventOutcome:
        await self._diagnostics.note_platform_event(event.chat.bot_uuid, "group.member_left", now_iso())
        found = await self._kbs.memory_kb()
        if found is None or not found[1].erase_members_who_leave:
            return EventOutcome("group.member_left", skipped="erase_members_who_leave is off")
        scope = await self._known(event.chat)
        if scope is None:
            return EventOutcome("group.member_left", skipped="this chat holds no memory")
        held = await self._people.find_speaker(event.member_id, scope)
        if not held.spaces:
            return EventOutcome("group.member_left", skipped="this chat holds nothing of that member")
        erasure = await self._people.erase_speaker(event.member_id, dry_run=False, chat=scope)
        log.info("[LongTermMemory] member %s left %s (kicked=%s): erased from %d space(s)", held.sender_id,
                 scope.chat_key, event.kicked, len(erasure.spaces))
        return EventOutcome("group.member_left", erasure=erasure)

    async def _known(self, chat: Identity) -> MemoryScope | None:
        """The chat's scope (no speaker, no message: the event's writes are the plugin's own), or None when
        the chat never held memory."""
        if chat.chat_key not in await self._diagnostics.known_scopes():
            return None
        return await self._kbs.scope_for(chat)
