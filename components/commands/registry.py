"""The `!memory` subcommands: each one declared once, next to its handler.

    @subcommand("archive", "!memory archive <id> — hide an active episode", mutating=True)
    async def archive(call: Call) -> str: ...

`mutating=True` puts the subcommand under the shared-space admin rule (see
`memory.py`); `usage` is what `help` lists and what a usage error shows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from langbot_plugin.api.entities.builtin.command.context import ExecuteContext

from components.commands.args import Args, parse_args
from ltm import MemoryScope, MemoryService


@dataclass
class Call:
    """One parsed invocation: who, where, and the text after the subcommand word."""

    ctx: ExecuteContext
    memory: MemoryService
    scope: MemoryScope
    topic: str
    rest: str
    is_admin: bool

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
    listed: bool = True  # shown by `help`


SUBCOMMANDS: dict[str, Subcommand] = {}


def subcommand(name: str, usage: str, *, mutating: bool = False, aliases: tuple[str, ...] = (),
               listed: bool = True) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        entry = Subcommand(name, usage, handler, mutating, listed)
        for word in (name, *aliases):
            if word in SUBCOMMANDS:
                raise RuntimeError(f"!memory {word} is declared twice")
            SUBCOMMANDS[word] = entry
        return handler

    return register


def usage_of(topic: str) -> str:
    entry = SUBCOMMANDS.get(topic)
    return entry.usage if entry else SUBCOMMANDS["help"].usage


def usage_text(topic: str, reason: str = "") -> str:
    lines = [f"Error: {reason.rstrip('.')}."] if reason else []
    lines.append("Usage: " + usage_of(topic))
    return "\n".join(lines)


def help_text() -> str:
    seen: list[Subcommand] = []
    for entry in SUBCOMMANDS.values():
        if entry.listed and entry not in seen:
            seen.append(entry)
    lines = ["!memory commands (this chat only):"]
    lines += [entry.usage for entry in seen]
    lines.append("list/search show active episodes unless --include-superseded, --include-archived "
                 "or --status is given.")
    return "\n".join(lines)
