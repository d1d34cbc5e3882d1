"""What a platform event says, as the core takes it (X2, X3 in docs/REQUIREMENTS.md): the values the
adapter reads an event processor's run into (`ltm/langbot/platform_events.py`) and the core acts on
(`ltm/platform_events/`). Their ids are in the kept form (`Identity.from_host`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .identity import Identity
from .provenance import MessageRef


@dataclass(frozen=True)
class Recall:
    """A message recalled in a chat (`chat`: the chat, bot included; its author is not given)."""

    chat: Identity
    message_id: str
    operator_id: str = ""

    @property
    def message(self) -> MessageRef:
        return MessageRef(self.message_id, self.chat.chat_key)


@dataclass(frozen=True)
class MemberLeft:
    """A member left a group (`chat`), on their own or removed (`kicked`, by `operator_id`)."""

    chat: Identity
    member_id: str
    kicked: bool = False
    operator_id: str = ""
