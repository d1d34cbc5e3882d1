"""`!memory settings`: the memory KB's effective settings, and an admin's overrides of them.

The creation settings of the knowledge base stay the base; `set` overrides one for the whole
installation (every chat of every bot), `reset` brings back the creation value. Both need a bot
admin in any chat, whatever `command_admin_only_in_groups` says: they change every chat's memory.
A bad value gets the message creating the KB with it would get.

Where a setting lives is said before anything else, to anyone: a plugin setting (`reply_language`, ...)
is changed on the plugin's page in the WebUI, never here; an unknown name gets the closest knowledge
base or plugin setting (difflib) and where that one lives; a refusal names the Memory Console's
Settings tab, where whoever can log in to the WebUI changes the knowledge base settings (the only way
in a chat that cannot be a bot admin, such as the WebUI's debug chat).
"""

from __future__ import annotations

import difflib

from components.commands.args import UsageError, parse_args, split_head
from components.commands.registry import Call, Subcommands
from components.common.chat_text import Own, clip, inert, lines
from components.common.i18n import Catalogue
from ltm import SETTING_NAMES, EffectiveSettings, SettingChange, SettingOrigin, SettingValue, secret_kind
from ltm import shown_value as shown

SUBCOMMANDS = Subcommands()
# The plugin's own settings (manifest.yaml `spec.config`; tests/test_settings_where.py keeps them equal).
PLUGIN_SETTINGS = ("max_profile_traits", "max_profile_preferences", "max_profile_notes_chars",
                   "command_admin_only_in_groups", "reply_language", "self_service_erasure_everywhere")
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
    # Where each kind of setting is changed in LangBot 4.11.2's WebUI, as its sidebar and pages name it.
    "settings.console_page": ("Plugin Pages > Memory Console > Settings tab", "插件页面 > 记忆控制台 >“设置”标签页"),
    "settings.plugin_page": ("Extensions > Installed > Long-Term Memory > Plugin Configuration",
                             "扩展 > 已安装 > 长期记忆 > 插件配置"),
    "settings.admins_only": ("!memory settings {action}: only bot admins change the settings here; they apply to every "
                             "chat of this installation. In the WebUI: {console}.",
                             "!memory settings {action}：这里只有机器人管理员可以修改设置；设置作用于本安装的所有聊天。"
                             "在 WebUI 中：{console}。"),
    "settings.plugin_setting": ("{name} is a plugin setting, not a knowledge base setting: change it in the WebUI "
                                "under {page}.",
                                "{name} 是插件设置，不是知识库设置：请在 WebUI 的 {page} 中修改。"),
    "settings.unknown": ("Unknown setting “{name}”. !memory settings lists the knowledge base settings; plugin "
                         "settings are in the WebUI under {page}.",
                         "未知的设置“{name}”。!memory settings 列出知识库设置；插件设置在 WebUI 的 {page} 中。"),
    "settings.unknown_kb": ("Unknown setting “{name}”; did you mean {match}? It is a knowledge base setting: "
                            "!memory settings {action} {match} (bot admins), or in the WebUI: {console}.",
                            "未知的设置“{name}”；你是不是想输入 {match}？它是知识库设置：!memory settings {action} "
                            "{match}（机器人管理员），或在 WebUI 中：{console}。"),
    "settings.unknown_plugin": ("Unknown setting “{name}”; did you mean {match}? It is a plugin setting: change it in "
                                "the WebUI under {page}.",
                                "未知的设置“{name}”；你是不是想输入 {match}？它是插件设置：请在 WebUI 的 {page} "
                                "中修改。"),
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
    name = args.positional[0]
    elsewhere = where_else(name, action)
    if elsewhere is not None:
        return elsewhere
    if not call.is_admin:
        return SAY("settings.admins_only", action=Own(action), console=SAY("settings.console_page"))
    if action == "set":  # a bad name or value: the message creating the KB with it gets
        return changed_text(await call.memory.set_setting(name, args.positional[1], actor=call.scope))
    return changed_text(await call.memory.reset_setting(name, actor=call.scope))


def where_else(name: str, action: str) -> Own | None:
    """What to say of a name that is not a knowledge base setting: where it, or the closest one, lives."""
    word = name.strip().lower()
    if word in SETTING_NAMES or secret_kind(name):
        return None  # a setting, or a credential pasted as a name: the core refuses that with its own message
    page, console = SAY("settings.plugin_page"), SAY("settings.console_page")
    if word in PLUGIN_SETTINGS:
        return SAY("settings.plugin_setting", name=Own(word), page=page)
    found = difflib.get_close_matches(word, (*SETTING_NAMES, *PLUGIN_SETTINGS), n=1, cutoff=0.6)
    if not found:
        return SAY("settings.unknown", name=clip(name, 40), page=page)
    if found[0] in PLUGIN_SETTINGS:
        return SAY("settings.unknown_plugin", name=clip(name, 40), match=Own(found[0]), page=page)
    return SAY("settings.unknown_kb", name=clip(name, 40), match=Own(found[0]), action=Own(action), console=console)


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
