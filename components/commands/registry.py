"""The `!memory` subcommands: each one declared once, next to its handler, in its feature's group.

    SUBCOMMANDS = Subcommands()

    @SUBCOMMANDS("archive", ("!memory archive <id> — hide an active episode",
                             "!memory archive <id> — 隐藏一条有效的情景记忆"), mutating=True)
    async def archive(call: Call) -> Own: ...

`mutating=True` puts the subcommand under the shared-space admin rule (see `memory.py`);
`usage` (one text per language, `components/common/i18n.py`) is what `help <subcommand>` shows and
what a usage error shows. A handler returns `Own` text built from its module's catalogue
(`components/common/chat_text.py` says how it is marked up). The command's one table is built from
an explicit tuple of groups (`memory.REGISTRY`), in the order `help` lists them.

Help comes in two sizes, so that it fits a chat bubble: `!memory help` is one line per group (the
group's catalogue line `help.group.<group>`) plus the alias table; `!memory help <group>` or
`!memory help <subcommand>` gives the usage lines. Every usage text is also a catalogue entry
(`usage.<subcommand>`), so a language overlay can translate it like any other reply text.

Aliases are the official plugin's short words (`ALIASES`): one table, resolved only here and shown
in `help`. A word that is neither a subcommand nor an alias gets the closest of both (stdlib
difflib), never the whole help.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langbot_plugin.api.entities.builtin.command.context import ExecuteContext

from components.commands.args import Args, parse_args
from components.common.chat_text import Own, inert, lines
from components.common.declarations import Declarations
from components.common.i18n import Catalogue
from ltm import MemoryScope, MemoryService

# The official plugin's aliases (its `components/commands/memory.py`), word -> subcommand.
ALIASES: Mapping[str, str] = {"h": "health", "p": "profile", "s": "search", "l": "list", "ls": "list",
                              "f": "forget", "del": "forget", "e": "export"}
HELP_WORDS = ("-h", "--help", "?")  # besides `help`: what people type when they do not know the command
SUGGEST_CUTOFF = 0.6  # difflib's default: "lst" -> list, "helth" -> health; "frobnicate" -> nothing

SAY = Catalogue({
    "registry.error": ("Error: {reason}.", "错误：{reason}。"),
    "registry.usage": ("Usage: {usage}", "用法：{usage}"),
    "registry.help_title": ("!memory commands by group (this chat only); details: !memory help <group|subcommand>",
                            "!memory 命令分组（只作用于本聊天）；详情：!memory help <group|subcommand>"),
    "registry.aliases": ("Aliases: {aliases}", "别名：{aliases}"),
    "registry.alias_of": ("{aliases} = {name}", "{aliases} = {name}"),
    "registry.group_title": ("!memory help {group}:", "!memory help {group}："),
    "registry.help_statuses": ("list/search show active episodes unless --include-superseded, --include-archived, "
                               "--include-deleted, --all-statuses or --status is given.",
                               "list/search 只显示有效的情景记忆，除非给出 --include-superseded、--include-archived、"
                               "--include-deleted、--all-statuses 或 --status。"),
    "registry.needs_admin": ("In a shared chat (a group, or any chat in bot isolation) this needs a bot admin.",
                             "在共享的聊天中（群聊，或 bot 隔离下的任何聊天）需要机器人管理员。"),
    "registry.unknown": ("Unknown subcommand “{word}”. “!memory help” lists them.",
                         "未知的子命令“{word}”。“!memory help”列出所有子命令。"),
    "registry.unknown_close": ("Unknown subcommand “{word}”; did you mean “{match}”? “!memory help” lists them.",
                               "未知的子命令“{word}”；你是不是想输入“{match}”？“!memory help”列出所有子命令。"),
    "registry.no_topic": ("No help on “{word}”. “!memory help” lists the groups and subcommands.",
                          "没有关于“{word}”的帮助。“!memory help”列出所有分组和子命令。"),
    "registry.no_topic_close": ("No help on “{word}”; did you mean “{match}”? “!memory help” lists the groups and "
                                "subcommands.",
                                "没有关于“{word}”的帮助；你是不是想输入“{match}”？“!memory help”列出所有分组和"
                                "子命令。"),
    # One line per group in `!memory help`; every subcommand of the group is named in it (a test checks).
    "help.group.view": ("view — !memory, profile, search, list, show, superseded, archived, health",
                        "view（查看）— !memory、profile、search、list、show、superseded、archived、health"),
    "help.group.change": ("change — forget, archive, restore, delete (shared chats: bot admins)",
                          "change（修改）— forget、archive、restore、delete（共享的聊天：机器人管理员）"),
    "help.group.transfer": ("transfer — export, import (JSON: l1, l2, conversation), audit, move-bot (bot admins)",
                            "transfer（迁移）— export、import（JSON：l1、l2、conversation）、audit、"
                            "move-bot（机器人管理员）"),
    "help.group.candidates": ("candidates — candidates to review; candidate accept|reject",
                              "candidates（候选）— candidates 待审阅的候选；candidate accept|reject"),
    "help.group.consolidate": ("consolidate — preview, run, drafts, discard: archive old records, summaries",
                               "consolidate（整合）— preview、run、drafts、discard：归档旧记录、摘要"),
    "help.group.conversation": ("conversation — conversation (summary, last turns), conversation clear (shared "
                                "chats: bot admins)",
                                "conversation（对话）— conversation（本聊天的摘要和最近几轮对话）、conversation clear"
                                "（共享的聊天：机器人管理员）"),
    "help.group.person": ("person — me (what is kept about you), forget-me",
                          "person（个人）— me（保存的关于你的内容）、forget-me"),
    "help.group.settings": ("settings — settings, settings set|reset (bot admins)",
                            "settings（设置）— settings、settings set|reset（机器人管理员）"),
})


@dataclass
class Call:
    """One parsed invocation: who, where, the text after the subcommand word, and the command's table."""

    ctx: ExecuteContext
    service: MemoryService
    scope: MemoryScope
    topic: str
    rest: str
    is_admin: bool
    registry: Registry
    admin_only: bool = True  # the plugin setting command_admin_only_in_groups
    config: Mapping[str, Any] = field(default_factory=dict)  # the plugin's settings, as this call read them
    gated: bool = False  # a `mutating` subcommand the caller may not run here: memory stays closed

    @property
    def memory(self) -> MemoryService:
        """The service. Closed (`NeedsAdmin`) for a mutating subcommand the caller may not run: the
        handler has read its arguments by the time it asks for memory, so an argument error, which
        says nothing about what memory holds, is reported first and the admin rule after it."""
        if self.gated:
            raise NeedsAdmin(self.topic)
        return self.service

    def may_change_shared(self) -> bool:
        """The rule of `mutating` subcommands, for a handler that decides per target: a group's memory is
        changed by bot admins only, unless the operator allows everyone."""
        return self.is_admin or not self.admin_only

    def may_change(self) -> bool:
        """The admin rule for this chat: its own space is the user's; a shared one follows `may_change_shared`."""
        return not self.scope.shared or self.may_change_shared()

    def args(self, *, switches: frozenset[str] = frozenset(), options: frozenset[str] = frozenset(),
             max_positional: int | None = None) -> Args:
        return parse_args(self.topic, self.rest, switches=switches, options=options, max_positional=max_positional)


class NeedsAdmin(Exception):
    """A change of a shared space by someone the admin rule does not let change it."""

    def __init__(self, topic: str) -> None:
        super().__init__(topic)
        self.topic = topic


Handler = Callable[[Call], Awaitable[Own]]
Usage = tuple[str, str]  # the usage line(s) in English and in Chinese


@dataclass(frozen=True)
class Subcommand:
    name: str
    usage: Usage
    handler: Handler
    mutating: bool = False


class Subcommands(Declarations[Subcommand]):
    """One feature module's subcommands."""

    def __init__(self) -> None:
        super().__init__("!memory subcommand")

    def __call__(self, name: str, usage: Usage, *, mutating: bool = False,
                 aliases: tuple[str, ...] = ()) -> Callable[[Handler], Handler]:
        return self.decorator((name, *aliases), lambda handler: Subcommand(name, usage, handler, mutating))


def _joined(groups: tuple[Subcommands, ...]) -> Subcommands:
    """One help group's subcommands: a module's own group, or several modules' in one."""
    if len(groups) == 1:
        return groups[0]
    joined = Subcommands()
    joined.entries = Subcommands.table(groups)
    return joined


class Registry:
    """The command's table: every group's subcommands, in the order of `named` (each group under the word
    `!memory help <group>` takes), and the aliases."""

    def __init__(self, named: tuple[tuple[str, Subcommands | tuple[Subcommands, ...]], ...],
                 aliases: Mapping[str, str] = ALIASES) -> None:
        # A help group may gather several feature modules (help stays one line per group, ten lines at most).
        parts = {word: group if isinstance(group, tuple) else (group,) for word, group in named}
        self.by_group = {word: _joined(groups) for word, groups in parts.items()}
        self.groups = tuple(group for groups in parts.values() for group in groups)
        self.entries = Subcommands.table(self.groups)
        self.aliases = dict(aliases)
        for alias, name in self.aliases.items():
            if name not in self.entries or alias in self.entries:
                raise RuntimeError(f"!memory alias {alias!r} must name a subcommand and not be one")
        missing = [word for word in self.by_group if f"help.group.{word}" not in SAY.messages]
        if missing:
            raise RuntimeError(f"!memory groups without a help line: {missing}")
        # Each usage text is a catalogue entry too, so an overlay translates it by its key.
        self.usages = Catalogue({f"usage.{e.name}": e.usage for e in self.subcommands()})

    def subcommands(self) -> list[Subcommand]:
        return list(dict.fromkeys(self.entries.values()))  # one per subcommand, aliases folded

    def find(self, word: str) -> Subcommand | None:
        return self.entries.get(self.aliases.get(word, word))

    def closest(self, word: str, *, groups: bool = False) -> str | None:
        """The subcommand, alias (or, for `help`, group) spelled most like `word`, if any is close."""
        words = [w for w in (*self.entries, *self.aliases) if w]
        if groups:
            words += [g for g in self.by_group if g not in words]
        found = difflib.get_close_matches(word, words, n=1, cutoff=SUGGEST_CUTOFF)
        return found[0] if found else None

    def unknown(self, word: str) -> Own:
        match = self.closest(word.lower())
        shown = inert(word, 30)
        return SAY("registry.unknown_close", word=shown, match=Own(match)) if match \
            else SAY("registry.unknown", word=shown)

    def usage_of(self, topic: str) -> Own:
        entry = self.find(topic) or self.entries["help"]
        return self.usages(f"usage.{entry.name}")

    def usage_text(self, topic: str, reason: Own | None = None) -> Own:
        error = SAY("registry.error", reason=Own(reason.rstrip("。."))) if reason else None
        return lines(error, SAY("registry.usage", usage=self.usage_of(topic)))

    def aliases_line(self, names: list[str] | None = None) -> Own | None:
        """`Aliases: h = health · l, ls = list ...`, for every subcommand or only for `names`."""
        folded: dict[str, list[str]] = {}
        for alias, name in self.aliases.items():
            if names is None or name in names:
                folded.setdefault(name, []).append(alias)
        if not folded:
            return None
        parts = [SAY("registry.alias_of", aliases=Own(", ".join(words)), name=Own(name))
                 for name, words in folded.items()]
        return SAY("registry.aliases", aliases=Own(" · ".join(parts)))

    def help_text(self) -> Own:
        """The overview: a title, one line per group, the alias table."""
        return lines(SAY("registry.help_title"), [SAY(f"help.group.{word}") for word in self.by_group],
                     self.aliases_line())

    def help_on(self, word: str) -> Own:
        """`!memory help <word>`: a group's usage lines, or one subcommand's (an alias names its subcommand)."""
        topic = word.lower()
        group = self.by_group.get(topic)
        if group is not None:
            chosen = list(dict.fromkeys(group.entries.values()))
            title: Own | None = SAY("registry.group_title", group=Own(topic))
        else:
            entry = self.find(topic)
            if entry is None:
                match = self.closest(topic, groups=True)
                shown = inert(word, 30)
                return SAY("registry.no_topic_close", word=shown, match=Own(match)) if match \
                    else SAY("registry.no_topic", word=shown)
            chosen, title = [entry], None
        names = [e.name for e in chosen]
        listing = {"list", "search"} & set(names)
        return lines(title, [self.usages(f"usage.{e.name}") for e in chosen],
                     SAY("registry.help_statuses") if listing else None,
                     SAY("registry.needs_admin") if any(e.mutating for e in chosen) else None,
                     self.aliases_line(names))
