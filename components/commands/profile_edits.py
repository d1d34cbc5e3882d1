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
from components.commands.registry import Call
from components.common.memory_views import profile_text
from ltm import Profile, params

FIELDS = ("name", "traits", "preferences", "notes")
LIST_FIELDS = ("traits", "preferences")
ACTIONS = ("set", "remove", "clear")


async def edit(call: Call, action: str, rest: str) -> str:
    args = parse_args("profile", rest, switches=frozenset({"me"}), options=frozenset({"speaker"}),
                      max_positional=None if action != "clear" else 0)
    target, sender_id = _target(call, args.option("speaker").strip(), "me" in args.switches)
    refusal = _refusal(call, target, sender_id, action)
    if refusal:
        return refusal
    label = "the session profile" if target == "session" else f"the speaker profile of {sender_id}"
    if action == "clear":
        cleared = await call.memory.clear_profile(call.scope, target, sender_id)
        return f"Cleared {label}." if cleared else f"{label[0].upper()}{label[1:]} is empty already; nothing changed."
    if not args.positional:
        raise UsageError("profile", "name the field: name, traits, preferences or notes")
    field = params.choice(args.positional[0], "field", FIELDS)
    value = " ".join(args.positional[1:]).strip()
    change = _change(action, field, value)
    profile = await call.memory.edit_profile(call.scope, target, sender_id, change)
    verb = "set" if action == "set" else "removed from" if value else "cleared in"
    return "\n".join([f"{field} {verb} {label}.", *_shown(profile)])


def _target(call: Call, speaker: str, me: bool) -> tuple[str, str]:
    if me and speaker:
        raise UsageError("profile", "give --me or --speaker, not both")
    if me:
        if not call.scope.sender_id:
            raise UsageError("profile", "--me needs a known sender; this message has none")
        return "speaker", call.scope.sender_id
    return ("speaker", speaker) if speaker else ("session", "")


def _refusal(call: Call, target: str, sender_id: str, action: str) -> str:
    own = target == "speaker" and sender_id == call.scope.sender_id and bool(sender_id)
    identity = call.scope.identity
    in_group = identity is not None and identity.launcher_type == "group"
    if own or not in_group or call.may_change_shared():
        return ""
    return (f"!memory profile {action}: in a group only bot admins change the session profile or another "
            "member's profile; you can change your own with --me.")


def _change(action: str, field: str, value: str) -> dict[str, Any]:
    items = [p for p in params.PHRASES.split(value) if p.strip()] if field in LIST_FIELDS else None
    if action == "set":
        if not value:
            raise UsageError("profile", f"give the new value of {field} (to empty it: !memory profile remove {field})")
        return {field: items if items is not None else value, "mode": "replace"}
    if items:  # remove these list items
        return {field: items, "mode": "remove"}
    if value:
        raise UsageError("profile", f"{field} is one value: '!memory profile remove {field}' empties it")
    return {field: [] if field in LIST_FIELDS else "", "mode": "replace"}


def _shown(profile: Profile) -> list[str]:
    text = profile_text(profile)
    return [f"  {line}" for line in text.splitlines()] if text else ["  (now empty)"]
