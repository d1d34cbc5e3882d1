"""One parameter layer for every surface (tools, the command, the admin page API, KB settings).

Each validator takes a raw value as a surface received it (JSON value, command
word, form field) and either returns a clean value or raises `ValidationError`
with one message that names the field and the rule. Because all surfaces call
these same functions, the same bad input gets the same answer everywhere.

Sizes are checked before any per-item work, so an oversized request is refused
in constant time (docs/ARCHITECTURE.md, "Limits").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from .errors import ValidationError, quoted
from .timefields import parse_aware, parse_naive_as_utc

_ASCII_INT = re.compile(r"[+-]?[0-9]{1,18}")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
WORDS = re.compile(r"[\s,，、]+")  # ids, statuses: commas or spaces
PHRASES = re.compile(r"\s*[,，、]\s*")  # tags: commas only, a tag may contain spaces

TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "off"})
MAX_LIST_ITEMS = 1000
MAX_ID_CHARS = 100  # an episode, candidate or proposal id in a request


def unknown_fields(given: Iterable[str], allowed: Iterable[str]) -> list[str]:
    return sorted(set(given) - set(allowed))


def reject_unknown(given: Mapping[str, Any], allowed: Iterable[str], *, what: str = "field") -> None:
    allowed = set(allowed)
    unknown = unknown_fields(given, allowed)
    if unknown:
        shown = ", ".join(u[:40] for u in unknown[:10])
        raise ValidationError(f"unknown {what}(s): {shown}; allowed: {', '.join(sorted(allowed)) or 'none'}")


def is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def text(value: Any, field: str, *, max_chars: int, required: bool = True, multiline: bool = False,
         default: str = "") -> str:
    """A string: stripped, bounded, no control characters (newlines and tabs only when `multiline`),
    no lone UTF-16 surrogates (they cannot be stored or audited)."""
    if is_blank(value):
        if required:
            raise ValidationError(f"{field} is required")
        return default
    if not isinstance(value, str):
        raise ValidationError(f"{field} must be a string")
    if len(value) > max_chars * 4 + 64:  # refuse absurd sizes before scanning them
        raise ValidationError(f"{field} is longer than {max_chars} characters")
    cleaned = value.strip()
    if len(cleaned) > max_chars:
        raise ValidationError(f"{field} is longer than {max_chars} characters ({len(cleaned)})")
    if _SURROGATE.search(cleaned):
        raise ValidationError(f"{field} contains an invalid character (a lone UTF-16 surrogate)")
    if not multiline and ("\n" in cleaned or "\r" in cleaned or "\t" in cleaned):
        raise ValidationError(f"{field} must be a single line")
    if _CONTROL.search(cleaned):
        raise ValidationError(f"{field} must not contain control characters")
    return cleaned


def bounded_int(value: Any, field: str, *, low: int, high: int, default: int | None = None) -> int:
    """A whole number in [low, high]. Accepts an int, an integral float, or a string of ASCII digits;
    refuses booleans and look-alike digits such as '²' or '٣'."""
    if is_blank(value):
        if default is None:
            raise ValidationError(f"{field} is required: a whole number from {low} to {high}")
        return default
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _ASCII_INT.fullmatch(value.strip()):
        number = int(value.strip())
    if number is None or not low <= number <= high:
        raise ValidationError(f"{field} must be a whole number from {low} to {high}")
    return number


def number(value: Any, field: str, *, low: float, high: float, default: float) -> float:
    if is_blank(value):
        return default
    if isinstance(value, bool):
        raise ValidationError(f"{field} must be a number from {low:g} to {high:g}")
    try:
        result = float(value) if isinstance(value, (int, float)) else float(str(value).strip())
    except (TypeError, ValueError):
        raise ValidationError(f"{field} must be a number from {low:g} to {high:g}") from None
    if result != result or not low <= result <= high:  # NaN fails too
        raise ValidationError(f"{field} must be a number from {low:g} to {high:g}")
    return result


def flag(value: Any, field: str, *, default: bool = False) -> bool:
    """true/false; also the words true/false/yes/no/on/off/1/0 that forms and chat commands send."""
    if is_blank(value):
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, int)):
        word = str(value).strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    raise ValidationError(f"{field} must be true or false")


def choice(value: Any, field: str, options: Iterable[str], *, default: str | None = None) -> str:
    options = list(options)
    if is_blank(value):
        if default is None:
            raise ValidationError(f"{field} is required: one of {', '.join(options)}")
        return default
    word = str(value).strip().lower() if isinstance(value, str) else None
    if word not in options:
        raise ValidationError(f"{field} must be one of: {', '.join(options)} (got {quoted(value)})")
    return word


def word_list(value: Any, field: str, *, max_items: int, item_chars: int,
              separators: re.Pattern[str] = WORDS) -> list[str]:
    """A list of short strings: a JSON list, or one string split by `separators`.
    Duplicates are dropped, order kept. The size is checked before any item is looked at."""
    if is_blank(value) or value == []:
        return []
    if isinstance(value, str):
        if len(value) > max_items * (item_chars + 2) + 64:
            raise ValidationError(f"{field} has more than {max_items} items")
        items: list[Any] = [part for part in separators.split(value) if part.strip()]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise ValidationError(f"{field} must be a list of strings")
    if len(items) > max_items:
        raise ValidationError(f"{field} has more than {max_items} items")
    result: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ValidationError(f"{field} must be a list of strings")
        cleaned = text(item, f"an item of {field}", max_chars=item_chars, required=False)
        if cleaned and cleaned not in result:
            result.append(cleaned)
    return result


def record_id(value: Any, field: str) -> str:
    """The id of one stored record (episode, candidate, proposal) as a caller sent it."""
    return text(value, field, max_chars=MAX_ID_CHARS)


def page(value: Any, field: str = "page") -> int:
    return bounded_int(value, field, low=1, high=1_000_000, default=1)


def check_page(page: int, pages: int) -> None:
    """A page past the end of a listing is refused (page 1 of an empty listing is not)."""
    if page > pages:
        raise ValidationError(f"page {page} is past the end (last page is {pages})")


def aware_time(value: Any, field: str) -> datetime | None:
    """An ISO-8601 time with an explicit zone, as aware UTC; blank means 'not given'."""
    if is_blank(value):
        return None
    return parse_aware(value, field)


def utc_time(value: Any, field: str) -> datetime | None:
    """An ISO-8601 time; one without a zone is read as UTC (the official plugin's time parameters)."""
    if is_blank(value):
        return None
    return parse_naive_as_utc(value, field)


def time_range(since: Any, until: Any, *, since_field: str = "since", until_field: str = "until"
               ) -> tuple[datetime | None, datetime | None]:
    start, end = aware_time(since, since_field), aware_time(until, until_field)
    if start and end and start >= end:
        raise ValidationError(f"{since_field} must be earlier than {until_field}")
    return start, end


def known_version(value: Any, known: int, what: str) -> None:
    """Refuse a document whose `version` is not the one this plugin reads; the value is quoted escaped
    (a lone surrogate or a control character cannot reach a reply or a log)."""
    if value != known or isinstance(value, bool):
        raise ValidationError(f"this is version {quoted(value)} of {what}; only version {known} is known; nothing "
                              "was imported")
