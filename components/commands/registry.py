"""The `!memory` subcommands: each one declared once, next to its handler, in its feature's group.

    SUBCOMMANDS = Subcommands()

    @SUBCOMMANDS("archive", "!memory archive <id> — hide an active episode", mutating=True)
    async def archive(call: Call) -> str: ...

`mutating=True` puts the subcommand under the shared-space admin rule (see `memory.py`);
`usage` is what `help` lists and what a usage error shows. The command's one table is built from
an explicit tuple of groups (`memory.REGISTRY`), in the order `help` lists them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langbot_plugin.api.entities.builtin.command.context import ExecuteContext

from components.commands.args import Args, parse_args
from components.common.declarations import Declarations
from ltm import MemoryScope, MemoryService


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


Handler = Callable[[Call], Awaitable[str]]


@dataclass(frozen=True)
class Subcommand:
    name: str
    usage: str
    handler: Handler
    mutating: bool = False


class Subcommands(Declarations[Subcommand]):
    """One feature module's subcommands."""

    def __init__(self) -> None:
        super().__init__("!memory subcommand")

    def __call__(self, name: str, usage: str, *, mutating: bool = False,
                 aliases: tuple[str, ...] = ()) -> Callable[[Handler], Handler]:
        return self.decorator((name, *aliases), lambda handler: Subcommand(name, usage, handler, mutating))


class Registry:
    """The command's table: every group's subcommands, in the order of `groups`."""

    def __init__(self, groups: tuple[Subcommands, ...]) -> None:
        self.groups = groups
        self.entries = Subcommands.table(groups)

    def find(self, word: str) -> Subcommand | None:
        return self.entries.get(word)

    def usage_of(self, topic: str) -> str:
        entry = self.entries.get(topic)
        return entry.usage if entry else self.entries["help"].usage

    def usage_text(self, topic: str, reason: str = "") -> str:
        lines = [f"Error: {reason.rstrip('.')}."] if reason else []
        lines.append("Usage: " + self.usage_of(topic))
        return "\n".join(lines)

    def help_text(self) -> str:
        listed = list(dict.fromkeys(self.entries.values()))  # one line per subcommand, aliases included
        lines = ["!memory commands (this chat only):"]
        lines += [entry.usage for entry in listed]
        lines.append("list/search show active episodes unless --include-superseded, --include-archived "
                     "or --status is given.")
        return "\n".join(lines)
