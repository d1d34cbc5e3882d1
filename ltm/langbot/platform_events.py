"""A platform event as an event processor run receives it (`ctx.event.data`, docs/HOST-FACTS.md 14.2),
read into the core's values (`Recall`, `MemberLeft`), its ids made storable like every host id.

    message.deleted:    {type, message_id, chat_type: group|private, chat_id, operator: {id}, bot_uuid, ...}
    group.member_left:  {type, group: {id}, member: {id}, is_kicked, operator: {id}, bot_uuid, ...}

A private chat's `chat_id` is the other person's id, which is the launcher id of LangBot's session
`person_<id>`. Anything else, or an event whose ids cannot be read, is None: the plugin does nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import ValidationError
from ..identity import Identity
from ..platform_values import MemberLeft, Recall

EVENT_TYPES = ("message.deleted", "group.member_left")
_LAUNCHER = {"group": "group", "private": "person"}


def _id_of(value: Any) -> Any:
    """An id field (a string or an int); None when it is not one."""
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip() else None


def _id_in(value: Any) -> Any:
    """The `id` of an object field (`{id, name}`); None when it has none."""
    return _id_of(value.get("id")) if isinstance(value, dict) else None


def platform_event(data: Any) -> Recall | MemberLeft | None:
    if not isinstance(data, dict) or not _id_of(data.get("bot_uuid")):
        return None
    try:
        if data.get("type") == "message.deleted":
            return _recall(data)
        if data.get("type") == "group.member_left":
            return _member_left(data)
    except ValidationError:
        return None
    return None


def _recall(data: dict[str, Any]) -> Recall | None:
    launcher = _LAUNCHER.get(str(data.get("chat_type")))
    chat_id, message_id = _id_of(data.get("chat_id")), _id_of(data.get("message_id"))
    if launcher is None or chat_id is None or message_id is None:
        return None
    chat = Identity.from_host(launcher_type=launcher, launcher_id=chat_id, bot_uuid=data["bot_uuid"],
                              message_id=message_id)
    operator = Identity.from_host(launcher_type=launcher, launcher_id=chat_id,
                                  sender_id=_id_in(data.get("operator")))
    if not chat.message_id or not chat.bot_uuid:
        return None
    return Recall(replace(chat, message_id=""), chat.message_id, operator.sender_id)


def _member_left(data: dict[str, Any]) -> MemberLeft | None:
    group_id, member_id = _id_in(data.get("group")), _id_in(data.get("member"))
    if group_id is None or member_id is None:
        return None
    who = Identity.from_host(launcher_type="group", launcher_id=group_id, bot_uuid=data["bot_uuid"],
                             sender_id=member_id)
    operator = Identity.from_host(launcher_type="group", launcher_id=group_id, sender_id=_id_in(data.get("operator")))
    if not who.sender_id or not who.bot_uuid:
        return None
    return MemberLeft(replace(who, sender_id=""), who.sender_id, data.get("is_kicked") is True, operator.sender_id)
