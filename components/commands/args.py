"""Argument parsing for `!memory`.

The host splits a command on single spaces, which breaks JSON and quoted values,
so the raw text after the command word is taken from `ctx.command_text` and
re-tokenized here: whitespace separates words, double quotes group
(`--speaker "Ann Lee"`), apostrophes are plain text. Values are validated by the
same `ltm.params` functions the tools and the console use, so the same bad value
gets the same message; here it comes back as a usage error of the subcommand.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from langbot_plugin.api.entities.builtin.command.context import ExecuteContext

from components.common.chat_text import Own, inert
from components.common.i18n import Catalogue
from ltm import EpisodeStatus, ValidationError, params, parse_statuses

T = TypeVar("T")
_WORD_SPLIT = re.compile(r"\s+")
MAX_COMMAND_CHARS = 8 * 1024 * 1024  # an `import l2` carries its JSON in the command text

SAY = Catalogue({
    "args.unbalanced_quote": ("unbalanced double quote", "双引号没有配对"),
    "args.needs_value": ("--{name} needs a value", "--{name} 需要一个值"),
    "args.unknown_option": ("unknown option {option}", "未知选项 {option}"),
    "args.unexpected": ("unexpected argument “{word}”", "多余的参数“{word}”"),
    "args.status_or_all": ("give --status or --all-statuses, not both", "请只给 --status 或 --all-statuses 其中之一"),
})


class UsageError(Exception):
    """Bad arguments for one subcommand: the reply is the reason plus that subcommand's usage."""

    def __init__(self, topic: str, reason: Own | None = None) -> None:
        super().__init__(reason or topic)
        self.topic = topic
        self.reason = reason


def unexpected(topic: str, word: str) -> UsageError:
    return UsageError(topic, SAY("args.unexpected", word=inert(word, 40)))


def status_or_all(topic: str) -> UsageError:
    """`--status` and `--all-statuses` together: one of them would be ignored, so neither is guessed."""
    return UsageError(topic, SAY("args.status_or_all"))


@dataclass
class Args:
    positional: list[str] = field(default_factory=list)
    switches: set[str] = field(default_factory=set)
    options: dict[str, list[str]] = field(default_factory=dict)

    def option(self, name: str) -> str:
        values = self.options.get(name) or []
        return values[-1] if values else ""


def command_rest(ctx: ExecuteContext) -> str:
    """The text after the command word, as typed (the host's single-space split loses nothing here)."""
    text = (ctx.command_text or "").lstrip()
    word = ctx.command or ""
    if word and text.startswith(word):
        return text[len(word):]
    # Re-joining the host's split on single spaces restores the text exactly.
    return " ".join(ctx.crt_params)


def typed_prefix(ctx: ExecuteContext) -> str:
    """The command prefix the user typed: what the host cut off the full text to get the command text
    (LangBot 4.11.2 cuts one character: `!`, `！`, or `/`, which 4.12 gives new bots); `!` when the
    context does not say."""
    full = (ctx.full_command_text or "").strip()
    text = (ctx.command_text or "").strip()
    prefix = full[: len(full) - len(text)] if text and full.endswith(text) else full[:1]
    return prefix if 0 < len(prefix) <= 3 and not any(c.isalnum() or c.isspace() for c in prefix) else "!"


def split_head(rest: str) -> tuple[str, str]:
    """The first word and the untouched remainder."""
    parts = _WORD_SPLIT.split(rest.strip(), maxsplit=1)
    head = parts[0] if parts else ""
    return head, parts[1] if len(parts) > 1 else ""


def split_words(text: str) -> list[str]:
    """Whitespace-separated words; double quotes group, apostrophes are ordinary characters."""
    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.whitespace += "\u3000"  # full-width space typed by CJK input methods
    lexer.quotes = '"'
    lexer.escape = ""
    lexer.commenters = ""
    return list(lexer)


def parse_args(topic: str, text: str, *, switches: frozenset[str] = frozenset(),
               options: frozenset[str] = frozenset(), max_positional: int | None = None) -> Args:
    try:
        words = split_words(text)
    except ValueError:
        raise UsageError(topic, SAY("args.unbalanced_quote")) from None
    args = Args()
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.startswith("--") or word == "--":
            args.positional.append(word)
            continue
        name, has_value, value = word[2:].partition("=")
        name = name.lower()
        if name in switches and not has_value:
            args.switches.add(name)
        elif name in options:
            if not has_value:
                if index >= len(words) or words[index].startswith("--"):
                    raise UsageError(topic, SAY("args.needs_value", name=inert(name, 40)))
                value = words[index]
                index += 1
            args.options.setdefault(name, []).append(value)
        else:
            raise UsageError(topic, SAY("args.unknown_option", option=inert(word.split("=")[0], 40)))
    if max_positional is not None and len(args.positional) > max_positional:
        raise unexpected(topic, args.positional[max_positional])
    return args


def as_usage(topic: str, parse: Callable[[], T]) -> T:
    """Values the shared validators check (status, time, number, JSON): a bad one is a usage error."""
    try:
        return parse()
    except ValidationError as exc:
        raise UsageError(topic, inert(exc.message)) from None


def page_of(topic: str, args: Args) -> int:
    raw: Any = args.positional[0] if args.positional else None
    return as_usage(topic, lambda: params.page(raw))


# The switches that widen a listing, as the official plugin spelled them: one status each, or all.
INCLUDE_SWITCHES = {"include-superseded": EpisodeStatus.SUPERSEDED, "include-archived": EpisodeStatus.ARCHIVED,
                    "include-deleted": EpisodeStatus.DELETED}
STATUS_SWITCHES = frozenset({*INCLUDE_SWITCHES, "all-statuses"})


def statuses_of(topic: str, args: Args, default: tuple[EpisodeStatus, ...] = (EpisodeStatus.ACTIVE,)
                ) -> tuple[EpisodeStatus, ...]:
    """`default` (active) unless `--status` replaces it; the include switches add to it; `--all-statuses`
    is every status, `deleted` included (the official plugin's meaning; see `DELETED_NOTE` in views.py)."""
    if "all-statuses" in args.switches:
        if args.options.get("status"):
            raise status_or_all(topic)
        return tuple(EpisodeStatus)
    chosen: list[EpisodeStatus] = []
    for value in args.options.get("status", []):
        chosen.extend(as_usage(topic, partial(parse_statuses, value, "status", default=())))
    if not chosen:
        chosen = list(default)
    chosen += [status for switch, status in INCLUDE_SWITCHES.items() if switch in args.switches]
    return tuple(dict.fromkeys(chosen))
