"""Provenance: the platform message a memory came from (X1 in docs/REQUIREMENTS.md).

A turn on a chat platform starts from one message; LangBot names it in the query variable
`_ingress_event_id` (`platform:<bot uuid>:<message id>`, docs/HOST-FACTS.md 14.7), and the adapter puts
its id on the turn's `Identity` (`message_id`). Every episode, candidate and profile change made in that
turn keeps a `MessageRef`: the message id and the chat it was said in (`[<bot uuid>:]group_<id>` /
`person_<id>`). The speaker is kept beside it as every record already keeps it (`sender_id`,
`sender_name`). A turn without a message id (the WebUI debug chat, a tool call with no live query, an
operator's page) makes records without one: nothing of theirs can be recalled on the platform.

A recall names a message by id within one bot and chat (its author is not given): a record answers to
it only when both its message id and its chat match, so a record imported into another chat, or a
message id that another chat also uses, is never withdrawn by mistake.

Stored form (episodes: flat fields `message_id`, `message_chat`; candidates, profile changes and
exports: `{"message_id": ..., "scope_key": ...}`); a record written before provenance existed has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ValidationError
from .host_values import id_problem

MAX_MESSAGE_ID_CHARS = 120


def message_id_problem(value: str) -> str | None:
    """Why `value` is not a message id the plugin keeps (None when it is, or when it is empty)."""
    if len(value) > MAX_MESSAGE_ID_CHARS:
        return f"message_id is longer than {MAX_MESSAGE_ID_CHARS} characters"
    return id_problem(value, "message_id")


@dataclass(frozen=True)
class MessageRef:
    """One platform message: its id as the platform gives it, and the chat it was said in."""

    message_id: str
    chat_key: str

    def __post_init__(self) -> None:
        problem = message_id_problem(self.message_id) or id_problem(self.chat_key, "scope_key")
        if problem or not self.message_id or not self.chat_key:
            raise ValidationError(problem or "a message needs its id and its chat")

    def to_dict(self) -> dict[str, str]:
        return {"message_id": self.message_id, "scope_key": self.chat_key}

    @classmethod
    def read(cls, raw: Any) -> MessageRef | None:
        """Lenient read of what this plugin stored; None for none or an entry it cannot use."""
        if not isinstance(raw, dict):
            return None
        return cls.of(raw.get("message_id"), raw.get("scope_key"))

    @classmethod
    def of(cls, message_id: Any, chat_key: Any) -> MessageRef | None:
        """The reference of two stored values (None when either is missing or unusable)."""
        if not isinstance(message_id, (str, int)) or isinstance(message_id, bool) or not isinstance(chat_key, str):
            return None
        try:
            return cls(str(message_id), chat_key)
        except ValidationError:
            return None

    @classmethod
    def parse(cls, raw: Any, where: str) -> MessageRef | None:
        """Strict read for an import: absent is None, anything else must be a usable reference."""
        if raw is None:
            return None
        found = cls.read(raw)
        if found is None or set(raw) - {"message_id", "scope_key"}:
            raise ValidationError(f"{where} must be {{\"message_id\": <id>, \"scope_key\": <chat key>}}")
        return found
