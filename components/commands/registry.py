"""The `!memory` subcommands: each one declared once, next to its handler, in its feature's group.

    SUBCOMMANDS = Subcommands()

    @SUBCOMMANDS("archive", ("!memory archive <id> — hide an active episode",
                             "!memory archive <id> — 隐藏一条有效的情景记忆"), mutating=True)
    async def archive(call: Call) -> Own: ...

`mutating=True` puts the subcommand under the shared-space admin rule (see `memory.py`);
`usage` (one text per language, `components/common/i18n.py`) is what `help` lists and what a usage
error shows. A handler returns `Own` text built from its module's catalogue
(`components/common/chat_text.py` says how it is marked up). The command's one table is built from
an explicit tuple of groups (`memory.REGISTRY`), in the order `help` lists them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langbot_plugin.api.entities.builtin.command.context import ExecuteContext

from components.commands.args import Args, parse_args
from components.common.chat_text import Own, lines
from components.common.declarations import Declarations
from components.common.i18n import Catalogue, localized
from ltm import MemoryScope, MemoryService

SAY = Catalogue({
    "registry.error": ("Error: {reason}.", "错误：{reason}。"),
    "registry.usage": ("Usage: {usage}", "用法：{usage}"),
    "registry.help_title": ("!memory commands (this chat only):", "!memory 命令（只作用于本聊天）："),
    "registry.help_statuses": ("list/search show active episodes unless --include-superseded, --include-archived "
                               "or --status is given.",
                               "list/search 只显示有效的情景记忆，除非给出 --include-superseded、--include-archived "
                               "或 --status。"),
})


@dataclass
class Call:
    """One parsed invocation: who, where, the text after the subcommand word, and the command's table."""

    ctx: ExecuteContext
    memory: MemoryService
    scope: MemoryScope
    topic: str
    rest: str
    is_admin: bool
    registry: Registry
    admin_only: bool = True  # the plugin setting command_admin_only_in_groups
    config: Mapping[str, Any] = field(default_factory=dict)  # the plugin's settings, as this call read them

    def may_change_shared(self) -> bool:
        """The rule of `mutating` subcommands, for a handler that decides per target: a group's memory is
        changed by bot admins only, unless the operator allows everyone."""
        return self.is_admin or not self.admin_only

    def args(self, *, switches: frozenset[str] = frozenset(), options: frozenset[str] = frozenset(),
             max_positional: int | None = None) -> Args:
        return parse_args(self.topic, self.rest, switches=switches, options=options, max_positional=max_positional)


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


def _usage(entry: Subcommand) -> Own:
    return localized(entry.usage, f"usage.{entry.name}")  # its id in the overlays of other languages


class Registry:
    """The command's table: every group's subcommands, in the order of `groups`."""

    def __init__(self, groups: tuple[Subcommands, ...]) -> None:
        self.groups = groups
        self.entries = Subcommands.table(groups)

    def find(self, word: str) -> Subcommand | None:
        return self.entries.get(word)

    def usage_of(self, topic: str) -> Own:
        entry = self.entries.get(topic)
        return _usage(entry or self.entries["help"])

    def usage_text(self, topic: str, reason: Own | None = None) -> Own:
        error = SAY("registry.error", reason=Own(reason.rstrip("。."))) if reason else None
        return lines(error, SAY("registry.usage", usage=self.usage_of(topic)))

    def help_text(self) -> Own:
        listed = list(dict.fromkeys(self.entries.values()))  # one line per subcommand, aliases included
        return lines(SAY("registry.help_title"), [_usage(entry) for entry in listed],
                     SAY("registry.help_statuses"))
