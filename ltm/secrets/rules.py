"""What a rule set is, and the small helpers every rule uses.

A rule is a handler called at each position where one of its anchors occurs; it returns the
kind of secret found there or None. Anchors are literals: cased ones are searched in the text,
lowercase ones in its lowercase copy, Chinese ones only when the text is not pure ASCII. A rule
set may also hold whole-text checks (for numbers that carry no label, found by their shape).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Handler = Callable[[str, int], "str | None"]
Anchored = tuple[str, tuple[Handler, ...]]
# (the folded text, its lowercase copy) -> a kind or None
WholeTextCheck = Callable[[str, str], "str | None"]

IGNORECASE, VERBOSE = re.IGNORECASE, re.VERBOSE
ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
IDENT_CHARS = ALNUM | frozenset("_.-")
DIGITS = frozenset("0123456789")


@dataclass(frozen=True)
class RuleSet:
    """One named family of rules (vendor tokens, stated credentials, ...)."""

    name: str
    cased: tuple[Anchored, ...] = ()
    lower: tuple[Anchored, ...] = ()
    cjk: tuple[Anchored, ...] = ()
    whole_text: tuple[WholeTextCheck, ...] = ()


def run_start(text: str, pos: int, chars: frozenset[str], limit: int) -> int:
    """Where the run of `chars` that ends at `pos` starts (looking back at most `limit` characters)."""
    start = pos
    while start > 0 and pos - start < limit and text[start - 1] in chars:
        start -= 1
    return start


def shape(pattern: str, kind: str, flags: int = 0) -> Handler:
    """A token shape that starts at the anchor."""
    compiled = re.compile(pattern, flags)
    return lambda text, pos: kind if compiled.match(text, pos) else None
