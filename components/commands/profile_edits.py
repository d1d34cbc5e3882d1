"""`!memory profile set|remove|clear`: an operator edits this chat's L1 profiles.

    !memory profile set <field> <value> [--speaker ID | --me]     name, traits, preferences or notes
    !memory profile remove <field> [value] [--speaker ID | --me]  a list item, or the whole field
    !memory profile clear [--speaker ID | --me]                   the whole profile

Without `--speaker` / `--me` the session profile is meant. A list value is comma-separated
(`set traits vegetarian, early riser` replaces the list). Who may: anyone for their own speaker
profile (`--me`, or their own sender id); in a group chat everything else needs a bot admin,
unless the operator allows everyone (`command_admin_only_in_groups`), the same rule as every
subcommand that changes a group's memory. The values are checked by the same rules as the
`update_profile` tool.
"""

from __future__ import annotations

from typing import Any

from components.commands.args import UsageError, parse_args
from components.commands.profile_view import profile_lines
from components.commands.registry import Call
from components.common.chat_text import Own, clip, lines
from components.common.i18n import Catalogue, term
from ltm import Profile, params

FIELDS = ("name", "traits", "preferences", "notes")
LIST_FIELDS = ("traits", "preferences")
ACTIONS = ("set", "remove", "clear")

SAY = Catalogue({
    "profile_edits.session": ("the session profile", "会话画像"),
    "profile_edits.speaker": ("the speaker profile of {sender}", "发言者 {sender} 的画像"),
    "profile_edits.cleared": ("Cleared {label}.", "已清空{label}。"),
    "profile_edits.session_empty": ("The session profile is empty already; nothing changed.",
                                    "会话画像已经是空的；没有改动。"),
    "profile_edits.speaker_empty": ("The speaker profile of {sender} is empty already; nothing changed.",
                                    "发言者 {sender} 的画像已经是空的；没有改动。"),
    "profile_edits.name_field": ("name the field: name, traits, preferences or notes",
                                 "请写出字段：name、traits、preferences 或 notes"),
    "profile_edits.set": ("{field} set in {label}.", "已设置{label}的{field}。"),
    "profile_edits.removed": ("{field} removed from {label}.", "已从{label}的{field}中移除。"),
    "profile_edits.emptied": ("{field} cleared in {label}.", "已清空{label}的{field}。"),
    "profile_edits.now_empty": ("(now empty)", "（现在为空）"),
    "profile_edits.me_or_speaker": ("give --me or --speaker, not both", "请只给 --me 或 --speaker 其中之一"),
    "profile_edits.me_unknown": ("--me needs a known sender; this message has none",
                                 "--me 需要已知的发送者；这条消息没有"),
    "profile_edits.group_admins": ("!memory profile {action}: in a group only bot admins change the session profile "
                                   "or another member's profile; you can change your own with --me.",
                                   "!memory profile {action}：群聊中只有机器人管理员可以修改会话画像或其他成员的画像；"
                                   "你可以用 --me 修改自己的画像。"),
    "profile_edits.give_value": ("give the new value of {field} (to empty it: !memory profile remove {field})",
                                 "请给出 {field} 的新值（要清空它：!memory profile remove {field}）"),
    "profile_edits.one_value": ("{field} is one value: “!memory profile remove {field}” empties it",
                                "{field} 只有一个值：“!memory profile remove {field}”会清空它"),
})


async def edit(call: Call, action: str, rest: str) -> Own:
    args = parse_args("profile", rest, switches=frozenset({"me"}), options=frozenset({"speaker"}),
                      max_positional=None if action != "clear" else 0)
    target, sender_id = _target(call, args.option("speaker").strip(), "me" in args.switches)
    refusal = _refusal(call, target, sender_id, action)
    if refusal:
        return refusal
    speaker = clip(sender_id, 80)
    label = SAY("profile_edits.session") if target == "session" else SAY("profile_edits.speaker", sender=speaker)
    if action == "clear":
        if await call.memory.clear_profile(call.scope, target, sender_id):
            return SAY("profile_edits.cleared", label=label)
        return SAY("profile_edits.session_empty") if target == "session" else SAY("profile_edits.speaker_empty",
                                                                                   sender=speaker)
    if not args.positional:
        raise UsageError("profile", SAY("profile_edits.name_field"))
    field = params.choice(args.positional[0], "field", FIELDS)
    value = " ".join(args.positional[1:]).strip()
    change = _change(action, field, value)
    profile = await call.memory.edit_profile(call.scope, target, sender_id, change)
    done = "profile_edits.set" if action == "set" else "profile_edits.removed" if value else "profile_edits.emptied"
    return lines(SAY(done, field=term(f"profile.field.{field}"), label=label), _shown(profile))


def _target(call: Call, speaker: str, me: bool) -> tuple[str, str]:
    if me and speaker:
        raise UsageError("profile", SAY("profile_edits.me_or_speaker"))
    if me:
        if not call.scope.sender_id:
            raise UsageError("profile", SAY("profile_edits.me_unknown"))
        return "speaker", call.scope.sender_id
    return ("speaker", speaker) if speaker else ("session", "")


def _refusal(call: Call, target: str, sender_id: str, action: str) -> Own | None:
    own = target == "speaker" and sender_id == call.scope.sender_id and bool(sender_id)
    identity = call.scope.identity
    in_group = identity is not None and identity.launcher_type == "group"
    if own or not in_group or call.may_change_shared():
        return None
    return SAY("profile_edits.group_admins", action=Own(action))


def _change(action: str, field: str, value: str) -> dict[str, Any]:
    # A list value goes to the core split but unfiltered: the core decides what is an item, so a value of
    # separators only ("," "，" "、") is refused there, the same as an empty item list from the console.
    items = params.PHRASES.split(value) if field in LIST_FIELDS else None
    if action == "set":
        if not value:
            raise UsageError("profile", SAY("profile_edits.give_value", field=Own(field)))
        return {field: items if items is not None else value, "mode": "replace"}
    if not value:  # the whole field
        return {field: [] if field in LIST_FIELDS else "", "mode": "replace"}
    if items is None:
        raise UsageError("profile", SAY("profile_edits.one_value", field=Own(field)))
    return {field: items, "mode": "remove"}  # these list items


def _shown(profile: Profile) -> list[Own]:
    shown = profile_lines(profile)
    return [Own(f"  {line}") for line in shown] if shown else [Own("  " + SAY("profile_edits.now_empty"))]
