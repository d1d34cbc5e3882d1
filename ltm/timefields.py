"""ISO-8601 handling for fact time and provenance (E9 in docs/REQUIREMENTS.md).

Times must carry an explicit timezone and are stored as UTC strings that keep
sub-second precision. Naive times are rejected rather than guessed: a memory
plugin must never invent the zone (or the date) of a fact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TypeVar

from dateutil import parser as _dateparser

from .errors import ValidationError, quoted

T = TypeVar("T")


def system_clock() -> datetime:
    return datetime.now(UTC)


# Where every reading of the time comes from (`utc_now`, `now_iso`): one seam, so a test lets time pass
# (a fact's `valid_until` goes by) for every module at once by replacing it.
clock: Callable[[], datetime] = system_clock


def utc_now() -> datetime:
    return clock()


def format_utc(moment: datetime) -> str:
    """UTC ISO-8601 with a `Z` suffix; microseconds kept when present."""
    moment = moment.astimezone(UTC)
    text = moment.isoformat(timespec="microseconds" if moment.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def now_iso() -> str:
    return format_utc(utc_now())


def parse_aware(value: object, field: str) -> datetime:
    """Parse an ISO-8601 string with an explicit timezone into an aware UTC datetime."""
    if isinstance(value, datetime):
        moment = value
    else:
        if not isinstance(value, str) or not value.strip():
            raise ValidationError(f"{field} must be an ISO-8601 time with a timezone, e.g. 2026-05-01T09:00:00+08:00")
        text = value.strip()
        try:
            moment = _dateparser.isoparse(text)
        except (ValueError, OverflowError):
            raise ValidationError(
                f"{field} is not an ISO-8601 time: {quoted(text)} (relative dates like 'tomorrow' are not accepted)"
            ) from None
    if moment.tzinfo is None or moment.tzinfo.utcoffset(moment) is None:
        raise ValidationError(f"{field} has no timezone: add one, e.g. 'Z' or '+08:00'")
    try:
        return moment.astimezone(UTC)
    except (OverflowError, ValueError):
        raise ValidationError(f"{field} is out of range: it falls outside years 1-9999 in UTC") from None


def parse_naive_as_utc(value: object, field: str) -> datetime:
    """Like `parse_aware`, but a time without a zone is read as UTC. Only for the official plugin's
    parameter names, which always meant that (an old prompt relies on it); our own names keep refusing
    a naive time."""
    if isinstance(value, str) and value.strip():
        try:
            moment = _dateparser.isoparse(value.strip())
        except (ValueError, OverflowError):
            moment = None
        if moment is not None and (moment.tzinfo is None or moment.tzinfo.utcoffset(moment) is None):
            value = moment.replace(tzinfo=UTC)
    return parse_aware(value, field)


def normalize_time(value: object, field: str) -> str | None:
    """None/'' stay unknown; anything else must be an aware ISO-8601 time."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return format_utc(parse_aware(value, field))


def parse_stored(value: object) -> datetime | None:
    """Read a time this plugin stored; tolerate junk from old records (returns None)."""
    if not value:
        return None
    if isinstance(value, str):
        # What this plugin writes (`format_utc`) parses in C here; ranking reads a few hundred per recall.
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if moment.tzinfo is not None and moment.utcoffset() is not None:
                try:
                    return moment.astimezone(UTC)
                except (OverflowError, ValueError):
                    return None
    try:
        return parse_aware(value, "time")
    except ValidationError:
        return None


def newest_per_id(items: Iterable[T], id_of: Callable[[T], str], changed_at: Callable[[T], str]) -> list[T]:
    """One item per id, the most recently changed (an insert-only store can hold two rows of one record
    for a while, on different listing pages); the order of first appearance is kept. `changed_at` gives
    stored UTC strings, which sort as their moments do."""
    chosen: dict[str, T] = {}
    for item in items:
        kept = chosen.get(id_of(item))
        if kept is None or changed_at(item) > changed_at(kept):
            chosen[id_of(item)] = item
    return list(chosen.values())
