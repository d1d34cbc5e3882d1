"""`!memory settings`: the memory KB's effective settings, and an admin's overrides of them.

The creation settings of the knowledge base stay the base; `set` overrides one for the whole
installation (every chat of every bot), `reset` brings back the creation value. Both need a bot
admin in any chat, whatever `command_admin_only_in_groups` says: they change every chat's memory.
A bad value gets the message creating the KB with it would get.
"""

from __future__ import annotations

from components.commands.args import UsageError, parse_args, split_head
from components.commands.registry import Call, Subcommands
from ltm import EffectiveSettings, SettingChange, SettingOrigin, SettingValue
from ltm import shown_value as shown

SUBCOMMANDS = Subcommands()
USAGE = ("!memory settings — effective settings and where each comes from\n"
         "!memory settings set <name> <value> — override one for this installation (bot admins)\n"
         "!memory settings reset <name> — back to the knowledge base's creation value (bot admins)")


@SUBCOMMANDS("settings", USAGE)
async def settings(call: Call) -> str:
    head, rest = split_head(call.rest)
    action = head.lower()
    if action == "":
        return settings_text(await call.memory.settings())
    if action not in ("set", "reset"):
        raise UsageError("settings", f"unknown action {head[:20]!r}")
    args = parse_args("settings", rest, max_positional=2 if action == "set" else 1)
    if not args.positional:
        raise UsageError("settings", "name the setting")
    if action == "set" and len(args.positional) < 2:
        raise UsageError("settings", f"give the new value of {args.positional[0][:40]}")
    if not call.is_admin:
        return (f"!memory settings {action}: only bot admins change the settings; they apply to every chat "
                "of this installation.")
    name = args.positional[0]
    if action == "set":  # a bad name or value: the message creating the KB with it gets
        return changed_text(await call.memory.set_setting(name, args.positional[1], actor=call.scope))
    return changed_text(await call.memory.reset_setting(name, actor=call.scope))


# --------------------------------------------------------------------------- reply text
def origin_text(value: SettingValue) -> str:
    if value.origin is SettingOrigin.OVERRIDE:
        return f"override; created {shown(value.creation)}"
    return "creation" if value.origin is SettingOrigin.CREATION else "default"


def settings_text(view: EffectiveSettings) -> str:
    lines = [f"Memory settings of knowledge base {view.kb_id} (effective value, origin):"]
    lines += [f"{v.name}: {shown(v.value)} ({origin_text(v)})" for v in view.values]
    count = len(view.overridden)
    lines.append(f"{count} overridden for this installation." if count else "No overrides: the creation settings "
                 "apply.")
    lines.append("Change: !memory settings set <name> <value> · !memory settings reset <name> (bot admins)")
    return "\n".join(lines)


def changed_text(change: SettingChange) -> str:
    after = change.after
    if not change.changed and after.origin is not SettingOrigin.OVERRIDE:
        return f"{change.name} is {shown(after.value)} already (the creation value); nothing changed."
    if not change.changed:
        return f"{change.name} is {shown(after.value)} already (override); nothing changed."
    where = ("override for this installation" if after.origin is SettingOrigin.OVERRIDE
             else "the creation value again")
    return (f"{change.name}: {shown(change.before)} -> {shown(after.value)} ({where}). It applies from the next "
            "message in every chat; the change is in the installation's audit log.")
