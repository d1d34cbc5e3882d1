"""What one rule language provides to the engine (`engine.py`): its rules, as ordered tables.

Each table is tried in order at one position of a clause; the first rule whose pattern matches
decides. A profile rule's `build` reads the match and returns a `Claim`, whose value may be None
(the rule matched, and what it found is not worth keeping: nothing is proposed and no later rule
of that table is tried), or returns None itself (not this rule after all: the next one is tried).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .kinds import SPEAKER, ProfileField
from .sentences import Span


@dataclass(frozen=True)
class Claim:
    field: ProfileField
    value: str | None
    rule: str
    target: str = SPEAKER


@dataclass(frozen=True)
class ProfileRule:
    pattern: re.Pattern[str]
    build: Callable[[re.Match[str], Span], Claim | None]


def first_claim(rules: tuple[ProfileRule, ...], span: Span, pos: int) -> Claim | None:
    for rule in rules:
        match = rule.pattern.match(span.folded, pos, span.end)
        if match:
            claim = rule.build(match, span)
            if claim is not None:
                return claim
    return None


def always(match: re.Match[str], span: Span, body: int, has_time: bool) -> bool:
    return True


def with_time(match: re.Match[str], span: Span, body: int, has_time: bool) -> bool:
    """A plan: the clause names a day-level or later time."""
    return has_time


@dataclass(frozen=True)
class EpisodeRule:
    """`done`: the rule reads a completed change, so its content keeps a closing "了" ("我换工作了";
    without it the clause reads as a plan or a habit)."""

    pattern: re.Pattern[str]
    rule: str
    applies: Callable[[re.Match[str], Span, int, bool], bool] = always
    done: bool = False


@dataclass(frozen=True)
class RuleLanguage:
    """`subject` is the first-person word a language leaves out of later clauses ("我是程序员，喜欢
    爬山"): once a clause started with it, the profile rules of the next clauses run as if it were
    there. None for a language whose rules include their subject ("I'm ...", "my ...") or may
    leave it out everywhere (Japanese).

    `remember` matches a request to remember at the start of a sentence ("remember that ...",
    "记住...", "覚えておいて、..."); `remember_after` one that ends it, searched in the sentence
    and matching up to its end ("...って覚えておいてね"): what comes before it is the fact."""

    name: str
    names: tuple[ProfileRule, ...]
    sessions: tuple[ProfileRule, ...]
    profile: tuple[ProfileRule, ...]
    episodes: tuple[EpisodeRule, ...]
    remember: re.Pattern[str]
    subject: re.Pattern[str] | None = None
    remember_after: re.Pattern[str] | None = None
