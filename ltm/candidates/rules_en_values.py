"""What an English rule keeps of a clause: the value phrase, cut where a detail or a connective starts.

A value is the phrase as typed, cut at the first connective ("I like tea because ..." -> "tea"),
list commas kept, at most `MAX_VALUE_CHARS`; one that starts like a clause ("to think", "how")
or holds a pronoun ("it", "that", "you") needs the chat around it and is not kept.
"""

from __future__ import annotations

import re
from typing import Final

from .kinds import ProfileField
from .rule_language import Claim
from .sentences import NEW_CLAUSE_AFTER_COMMA, Span, strip_tail

MAX_VALUE_CHARS: Final = 60
TRAITS, PREFERENCES, NAME = ProfileField.TRAITS, ProfileField.PREFERENCES, ProfileField.NAME

_EN_VALUE_STOP = re.compile(
    r"\s+(?:but|because|cause|cuz|since|though|although|when|whenever|so|and\s+(?:i|i'm|im|my|we)|lol|lmao|"
    r"haha+|btw|too|as\s+well|a\s+lot|very\s+much|so\s+much|at\s+all|now|these\s+days|anyway|tbh|honestly|"
    r"just\s+so\s+you\s+know|fyi|please|pls|plz|thanks|thank\s+you|"
    r"for\s+(?:years|ages|decades|a\s+while|a\s+long\s+time|\d+\s+\w+))\b|\s*[;:(]|\s+-\s|[!.?]",
    re.IGNORECASE,
)
_EN_PRONOUN = re.compile(
    r"\b(?:you|your|yours|u|ur|it|its|this(?!\s+(?:group|chat|channel))|that|these|those|him|her|them|he|she|they)\b",
    re.IGNORECASE,
)
_EN_BAD_VALUE_START = re.compile(
    r"(?:to\s+think|to\s+believe|how|when|what|where|why|if|whether|the\s+way|not|being|it|a\s+little|"
    r"a\s+bit|a\s+lot|kind\s+of|sort\s+of)\b",
    re.IGNORECASE,
)


def en_value(folded: str, text: str, start: int, end: int, *, max_words: int = 8) -> str | None:
    """The English phrase at [start, end): cut at the first connective, list commas kept."""
    stop = _EN_VALUE_STOP.search(folded, start, end)
    if stop:
        end = stop.start()
    pieces = text[start:end].split(",")
    kept = [pieces[0]]
    for piece in pieces[1:]:
        words = piece.split()
        if not words or len(words) > 3 or NEW_CLAUSE_AFTER_COMMA.match(piece):
            break
        kept.append(piece)
    value = " ".join(",".join(kept).split())
    value = strip_tail(value)
    if not value or len(value) > MAX_VALUE_CHARS or len(value.split()) > max_words:
        return None
    if _EN_BAD_VALUE_START.match(value) or _EN_PRONOUN.search(value):
        return None
    return value


def value_at(span: Span, start: int, max_words: int = 8) -> str | None:
    """`en_value` from `start` to the end of the clause."""
    return en_value(span.folded, span.text, start, span.end, max_words=max_words)


def trait(value: str | None) -> Claim:
    return Claim(TRAITS, value, "en.trait")


# Where a role or a place ends and a detail about it begins: "a nurse | on the night shift",
# "Leeds | with my partner"; a workplace stays ("engineer at a startup").
_EN_DETAIL = re.compile(r"\s+(?:on|with|near|who|that|since|because)\s", re.IGNORECASE)


def head(value: str | None) -> str | None:
    return value and _EN_DETAIL.split(value, 1)[0]


# A home is a name ("Leeds") or a described place ("a small town"); "I live in fear" is an idiom.
# In a message typed all in lower case ("i live in toronto") one or two words name the place too.
_EN_PLACE_START = re.compile(r"(?-i:[A-Z])|(?:a|an|the|my|our)\s", re.IGNORECASE)
_EN_NOT_A_PLACE = frozenset("fear hope denial sin peace misery chaos terror dread comfort luxury poverty pajamas "
                            "pyjamas sweatpants hoodies heels shorts flip-flops".split())


def place_start(value: str, typed: str) -> bool:
    """`value` names a place; `typed` is the clause as typed (its case tells the chat style)."""
    if _EN_PLACE_START.match(value):
        return True
    words = value.casefold().split()
    return typed == typed.casefold() and len(words) <= 2 and words[0] not in _EN_NOT_A_PLACE
