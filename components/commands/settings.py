"""`!memory settings`: the memory KB's effective settings, and an admin's overrides of them.

The creation settings of the knowledge base stay the base; `set` overrides one for the whole
installation (every chat of every bot), `reset` brings back the creation value. Both need a bot
admin in any chat, whatever `command_admin_only_in_groups` says: they change every chat's memory.
A bad value gets the message creating the KB with it would get.
"""

from __future__ import annotations

from components.commands.args import UsageError, parse_args, split_head
from components.commands.registry import Call, Subcommands
from components.common.chat_text import Own, clip, inert, lines
from components.common.i18n import Catalogue
from ltm import EffectiveSettings, SettingChange, SettingOrigin, SettingValue
from ltm import shown_value as shown

SUBCOMMANDS = Subcommands()
USAGE = ("!memory settings — effective settings and where each comes from\n"
         "!memory settings set <name> <value> — override one for this installation (bot admins)\n"
         "!memory settings reset <name> — back to the knowledge base's creation value (bot admins)",
         "!memory settings — 当前生效的设置及各自的来源\n"
         "!memory settings set <name> <value> — 为本安装覆盖一项设置（机器人管理员）\n"
         "!memory settings reset <name> — 恢复知识库创建时的值（机器人管理员）")

SAY = Catalogue({
    "settings.unknown_action": ("unknown action “{action}”", "未知的操作“{action}”"),
    "settings.name_it": ("name the setting", "请写出设置的名称"),
    "settings.give_value": ("give the new value of {name}", "请给出 {name} 的新值"),
    "settings.admins_only": ("!memory settings {action}: only bot admins change the settings; they apply to every "
                             "chat of this installation.",
                             "!memory settings {action}：只有机器人管理员可以修改设置；设置作用于本安装的所有聊天。"),
    "settings.origin_override": ("override; created {creation}", "覆盖值；创建时为 {creation}"),
    "settings.origin_creation": ("creation", "创建时的值"),
    "settings.origin_default": ("default", "默认值"),
    "settings.title": ("Memory settings of knowledge base {kb_id} (effective value, origin):",
                       "知识库 {kb_id} 的记忆设置（生效值，来源）："),
    "settings.line": ("{name}: {value} ({origin})", "{name}：{value}（{origin}）"),
    "settings.overridden": ("{count} overridden for this installation.", "本安装覆盖了 {count} 项。"),
    "settings.no_overrides": ("No overrides: the creation settings apply.", "没有覆盖：使用创建时的设置。"),
    "settings.change": ("Change: !memory settings set <name> <value> · !memory settings reset <name> (bot admins)",
                        "修改：!memory settings set <name> <value> · !memory settings reset <name>（机器人管理员）"),
    "settings.same_creation": ("{name} is {value} already (the creation value); nothing changed.",
                               "{name} 已经是 {value}（创建时的值）；没有改动。"),
    "settings.same_override": ("{name} is {value} already (override); nothing changed.",
                               "{name} 已经是 {value}（覆盖值）；没有改动。"),
    "settings.now_override": ("override for this installation", "本安装的覆盖值"),
    "settings.now_creation": ("the creation value again", "恢复为创建时的值"),
    "settings.changed": ("{name}: {before} -> {after} ({where}). It applies from the next message in every chat; "
                         "the change is in the installation's audit log.",
                         "{name}：{before} -> {after}（{where}）。从下一条消息起作用于所有聊天；这次修改记在本安装的"
                         "审计日志中。"),
})


@SUBCOMMANDS("settings", USAGE)
async def settings(call: Call) -> Own:
    head, rest = split_head(call.rest)
    action = head.lower()
    if action == "":
        return settings_text(await call.memory.settings())
    if action not in ("set", "reset"):
        raise UsageError("settings", SAY("settings.unknown_action", action=inert(head, 20)))
    args = parse_args("settings", rest, max_positional=2 if action == "set" else 1)
    if not args.positional:
        raise UsageError("settings", SAY("settings.name_it"))
    if action == "set" and len(args.positional) < 2:
        raise UsageError("settings", SAY("settings.give_value", name=clip(args.positional[0], 40)))
    if not call.is_admin:
        return SAY("settings.admins_only", action=Own(action))
    name = args.positional[0]
    if action == "set":  # a bad name or value: the message creating the KB with it gets
        return changed_text(await call.memory.set_setting(name, args.positional[1], actor=call.scope))
    return changed_text(await call.memory.reset_setting(name, actor=call.scope))


# --------------------------------------------------------------------------- reply text
def origin_text(value: SettingValue) -> Own:
    if value.origin is SettingOrigin.OVERRIDE:
        return SAY("settings.origin_override", creation=shown(value.creation))
    return SAY("settings.origin_creation" if value.origin is SettingOrigin.CREATION else "settings.origin_default")


def settings_text(view: EffectiveSettings) -> Own:
    count = len(view.overridden)
    return lines(SAY("settings.title", kb_id=view.kb_id),
                 [SAY("settings.line", name=v.name, value=shown(v.value), origin=origin_text(v)) for v in view.values],
                 SAY("settings.overridden", count=count) if count else SAY("settings.no_overrides"),
                 SAY("settings.change"))


def changed_text(change: SettingChange) -> Own:
    after = change.after
    if not change.changed:
        key = "settings.same_override" if after.origin is SettingOrigin.OVERRIDE else "settings.same_creation"
        return SAY(key, name=change.name, value=shown(after.value))
    where = SAY("settings.now_override" if after.origin is SettingOrigin.OVERRIDE else "settings.now_creation")
    return SAY("settings.changed", name=change.name, before=shown(change.before), after=shown(after.value),
               where=where)
