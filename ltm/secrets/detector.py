"""The one secret detector: every rule set, scanned in one pass per kind of anchor.

How it stays fast and linear-time on long or hostile input: every rule has literal anchors
(lowercase substrings such as "sk_live_", "password", "验证码"). `str.find` locates them and the
rule's expression is matched only *at* those positions; every repetition is bounded. Whole-text
checks (unlabelled card and identity numbers) start with a digit class.

Anchors of all rule sets are scanned together, cased ones first, then lowercase ones, then
Chinese ones, then the whole-text checks; where two sets share an anchor, their handlers run in
the order of `RULE_SETS`.
"""

from __future__ import annotations

import re

from .cards import CARD_NUMBERS
from .codes import PINS_AND_CODES
from .identity_numbers import IDENTITY_NUMBERS
from .rules import Anchored, Handler, RuleSet, WholeTextCheck
from .statements import STATED_CREDENTIALS
from .tokens import VENDOR_TOKENS

RULE_SETS: tuple[RuleSet, ...] = (
    VENDOR_TOKENS, PINS_AND_CODES, CARD_NUMBERS, STATED_CREDENTIALS, IDENTITY_NUMBERS)
REDACTED = "<redacted>"


def _merged(groups: list[tuple[Anchored, ...]]) -> tuple[Anchored, ...]:
    """One entry per anchor, in order of first appearance; handlers of a shared anchor concatenated."""
    handlers: dict[str, list[Handler]] = {}
    for group in groups:
        for anchor, found in group:
            handlers.setdefault(anchor, []).extend(found)
    return tuple((anchor, tuple(found)) for anchor, found in handlers.items())


_CASED = _merged([s.cased for s in RULE_SETS])
_LOWER = _merged([s.lower for s in RULE_SETS])
_CJK = _merged([s.cjk for s in RULE_SETS])
_WHOLE_TEXT: tuple[WholeTextCheck, ...] = tuple(check for s in RULE_SETS for check in s.whole_text)

# Full-width letters and digits (typed with a Chinese IME, or to dodge a filter) and zero-width
# characters are folded first. Full-width punctuation alone is common in Chinese and is matched
# as it is, which saves a pass over every Chinese text.
_NEEDS_FOLDING = re.compile("[０-９Ａ-Ｚａ-ｚ\u200b-\u200d\u2060\ufeff\u00ad]")
_FOLD: dict[int, int | None] = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_FOLD.update({0x3000: 0x20, 0x200B: None, 0x200C: None, 0x200D: None, 0x2060: None, 0xFEFF: None, 0x00AD: None})


def _prepare(text: str) -> tuple[str, str]:
    """The text to match (full-width ASCII folded) and a lowercase copy of the same length."""
    if not text.isascii() and _NEEDS_FOLDING.search(text):
        text = text.translate(_FOLD)
    low = text.lower()
    if len(low) != len(text):  # a few characters (such as "İ") lowercase to two
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return text, low


def _scan(haystack: str, text: str, rules: tuple[Anchored, ...]) -> str | None:
    for anchor, handlers in rules:
        pos = haystack.find(anchor)
        while pos != -1:
            for handler in handlers:
                kind = handler(text, pos)
                if kind:
                    return kind
            pos = haystack.find(anchor, pos + 1)
    return None


def secret_kind(text: str) -> str | None:
    """The kind of secret the text seems to contain ("an API key", "a password", ...), or None."""
    if not text:
        return None
    text, low = _prepare(text)
    kind = _scan(text, text, _CASED) or _scan(low, text, _LOWER)
    if not kind and not text.isascii():
        kind = _scan(text, text, _CJK)
    for check in _WHOLE_TEXT:
        if kind:
            break
        kind = check(text, low)
    return kind


_WHITESPACE = re.compile(r"\s+")


def redact_for_log(text: str, limit: int = 40) -> str:
    """What a log line may quote of user text: "<redacted>" if the text looks like a secret,
    otherwise its first `limit` characters on one line (control characters become spaces)."""
    text = text or ""
    if secret_kind(text):
        return REDACTED
    line = "".join(c if c.isprintable() else " " for c in text)
    line = _WHITESPACE.sub(" ", line).strip()[: max(limit, 0)].rstrip()
    return REDACTED if secret_kind(line) else line
