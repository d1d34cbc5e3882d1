"""Reading the official LongTermMemory plugin's L1 export (its `!memory export`), as it is:

    {"version": 1, "exported_at": "...",
     "profiles": [{"type": "session" | "speaker", "scope_key": "...", "sender_id"?: "...",
                   "profile": {"name", "traits", "preferences", "notes", "updated_at",
                               "profile_slots": {"traits": {<fact key>: {"value", "updated_at",
                                                 "history": [{"value", "timestamp", "status", "reason"}],
                                                 "confidence"}}, "preferences": {...}},
                               "freeform_traits", "freeform_preferences"}}]}

How it maps onto a `Profile`:
- The official `traits` list is derived: the current values of the trait slots plus the
  `freeform_traits` items, cut to its limit. So the list is rebuilt from the slots and the freeform
  items (freeform first, then slot values oldest first: this plugin keeps the newest item last),
  and `traits` itself is read only when a profile has no `freeform_traits` (profiles written before
  slots existed). Nothing is counted twice. The same holds for preferences.
- Each slot becomes a named fact (`facts.py`) with its value, time, history and confidence. A
  history entry's `timestamp` is when that value was noted: `since`, except for a value the caller
  gave as the previous one, whose timestamp is when it was replaced (`until`). Statuses
  `superseded` and `removed` become `replaced` and `removed`; reasons are kept as given.
- Anything this plugin cannot store (a bad type, over a limit, a credential) is skipped and
  reported by its place in the JSON (a JSON Pointer, e.g. /profiles/1/profile/freeform_traits/0)
  with the reason; the rest is imported. A list longer than
  `max_profile_traits` / `max_profile_preferences` keeps its newest items; the older ones are reported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .. import params
from ..errors import ValidationError
from ..guards import refuse_secrets, said_safely
from ..identity import clean_id
from ..profiles.facts import (
    FACT_FIELDS,
    MAX_FACT_HISTORY,
    MAX_REASON_CHARS,
    REMOVED,
    REPLACED,
    PastValue,
    ProfileFact,
    fact_key,
    item_text,
    reconcile,
)
from ..profiles.model import MAX_NAME_CHARS, Profile, ProfileLimits, ProfileTarget
from ..profiles.transfer import MAX_IMPORT_PROFILES, MAX_SENDER_ID_CHARS, ProfileImport, parse_import
from ..skipped import SkippedRecord
from ..timefields import normalize_time

T = TypeVar("T")
KNOWN_VERSION = 1


def read_l1_file(payload: Any, limits: ProfileLimits) -> ProfileImport:
    """An L1 import in either form: the official plugin's export, or this plugin's own (`export`)."""
    return parse_official_export(payload, limits) if is_official_export(payload) else parse_import(payload, limits)


def is_official_export(payload: Any) -> bool:
    return isinstance(payload, dict) and "profiles" in payload


class _Reader:
    def __init__(self, limits: ProfileLimits) -> None:
        self.limits = limits
        self.skipped: list[SkippedRecord[str]] = []

    def take(self, where: str, read: Callable[..., T], *args: Any) -> T | None:
        """`read(*args)`, or None with the place and reason noted when it cannot be stored."""
        try:
            return read(*args)
        except ValidationError as exc:
            self.skipped.append(SkippedRecord(where, said_safely(exc.message)))
            return None

    def skip(self, where: str, reason: str) -> None:
        self.skipped.append(SkippedRecord(where, said_safely(reason)))


def parse_official_export(payload: dict[str, Any], limits: ProfileLimits) -> ProfileImport:
    params.known_version(payload.get("version", KNOWN_VERSION), KNOWN_VERSION, "the official L1 export")
    entries = payload["profiles"]
    if not isinstance(entries, list):
        raise ValidationError("profiles must be a list; nothing was imported")
    if len(entries) > MAX_IMPORT_PROFILES:
        raise ValidationError(f"at most {MAX_IMPORT_PROFILES} profiles per import; nothing was imported")
    reader = _Reader(limits)
    found: dict[tuple[ProfileTarget, str], Profile] = {}
    chat_key, empty = "", 0
    for index, entry in enumerate(entries):
        where = f"/profiles/{index}"
        named = _entry(reader, entry, where)
        if named is None:
            continue
        target, speaker, from_key, raw_profile = named
        if (target, speaker) in found:
            reader.skip(where, f"a second {target.value} profile{' of ' + speaker if speaker else ''}; "
                             "the first is kept")
            continue
        profile = _profile(reader, raw_profile, f"{where}/profile", payload.get("exported_at"))
        chat_key = chat_key or from_key
        if profile.is_empty:
            empty += 1
            continue
        found[(target, speaker)] = profile
    return ProfileImport(chat_key, [(t, s, p) for (t, s), p in found.items()], empty, tuple(reader.skipped))


def _entry(reader: _Reader, entry: Any, where: str) -> tuple[ProfileTarget, str, str, dict[str, Any]] | None:
    """(target, sender id, the scope key it names, its profile) of one entry, or None (skipped)."""
    if not isinstance(entry, dict):
        reader.skip(where, "must be an object")
        return None
    kind = reader.take(f"{where}/type", lambda: params.choice(entry.get("type"), "type", ("session", "speaker")))
    from_key = reader.take(f"{where}/scope_key", lambda: _chat_key(entry.get("scope_key")))
    if kind is None or from_key is None:
        return None
    target, speaker = ProfileTarget(kind), ""
    if target is ProfileTarget.SPEAKER:
        found = reader.take(f"{where}/sender_id", lambda: _speaker_id(entry.get("sender_id")))
        if found is None:
            return None
        speaker = found
    raw = entry.get("profile")
    if not isinstance(raw, dict):
        reader.skip(f"{where}/profile", "must be an object")
        return None
    return target, speaker, from_key, raw


def _chat_key(value: Any) -> str:
    key = params.text(value, "scope_key", max_chars=512, required=False)
    refuse_secrets([("the scope_key", key)])
    return key


def _speaker_id(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    speaker = clean_id(params.text(value, "sender_id", max_chars=MAX_SENDER_ID_CHARS))
    if not speaker:
        raise ValidationError("sender_id is required for a speaker profile")
    refuse_secrets([("the sender_id", speaker)])
    return speaker


def _stored(text: str, name: str) -> str:
    refuse_secrets([(name, text)])
    return text


def _stored_key(value: Any) -> str:
    return fact_key(value, "fact key")


def _stored_item(value: Any) -> str:
    return _stored(item_text(value, "an item"), "the item")


def _profile(reader: _Reader, raw: dict[str, Any], where: str, exported_at: Any) -> Profile:
    limits = reader.limits
    name = reader.take(f"{where}/name", lambda: _stored(
        " ".join(params.text(raw.get("name"), "name", max_chars=MAX_NAME_CHARS, required=False).split()), "the name"))
    notes = reader.take(f"{where}/notes", lambda: _stored(
        params.text(raw.get("notes"), "notes", max_chars=limits.max_notes_chars, required=False, multiline=True),
        "the notes"))
    updated_at = reader.take(f"{where}/updated_at", lambda: normalize_time(raw.get("updated_at"), "updated_at"))
    # Facts that drop out of a list are dated by the export, not by this import, so a second import of
    # the same file builds the same profile; a file that gives no time at all leaves those times unknown.
    at = updated_at or reader.take("/exported_at", lambda: normalize_time(exported_at, "exported_at"))
    slots = raw.get("profile_slots") or {}
    if not isinstance(slots, dict):
        reader.skip(f"{where}/profile_slots", "must be an object")
        slots = {}
    profile = Profile(name=name or "", notes=notes or "", updated_at=updated_at or at)
    for list_field in FACT_FIELDS:
        group = _facts(reader, slots.get(list_field), f"{where}/profile_slots/{list_field}")
        items = _list(reader, raw, list_field, group, where)
        limit = limits.max_traits if list_field == "traits" else limits.max_preferences
        for path, _ in items[:-limit] if len(items) > limit else []:
            reader.skip(path, f"over max_profile_{list_field} ({limit}); the newest {limit} are kept")
        setattr(profile, list_field, [item for _, item in items[-limit:]])
        if group:
            profile.facts[list_field] = {key: fact for key, (_, fact) in group.items()}
    reconcile(profile.facts, {"traits": profile.traits, "preferences": profile.preferences}, at)
    return profile


def _facts(reader: _Reader, raw: Any, where: str) -> dict[str, tuple[str, ProfileFact]]:
    """fact key -> (its place in the JSON, the fact) for one slot group."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        reader.skip(where, "must be an object")
        return {}
    group: dict[str, tuple[str, ProfileFact]] = {}
    for raw_key, slot in raw.items():
        path = f"{where}/{_pointer_step(raw_key)}"
        key = reader.take(path, _stored_key, raw_key)
        fact = reader.take(path, _fact, reader, slot, path) if key is not None else None
        if key is None or fact is None:
            continue
        if key in group:
            reader.skip(path, f"a second slot named {key!r}; the first is kept")
            continue
        if fact.value or fact.history:
            group[key] = (path, fact)
    return group


def _pointer_step(key: Any) -> str:
    """A slot's key as a step of the JSON Pointer that names it: as given when short ('/' and '~' escaped),
    else by its size, so a place shown never holds part of a long key (or a credential: `said_safely`)."""
    text = str(key)
    if len(text) > 40 or said_safely(text) != text:
        return f"(a key of {len(text)} characters)"
    return text.replace("~", "~0").replace("/", "~1")


def _fact(reader: _Reader, slot: Any, path: str) -> ProfileFact:
    if not isinstance(slot, dict):
        raise ValidationError("must be an object")
    value = slot.get("value")
    current = _stored(item_text(value, "value"), "the value") if not params.is_blank(value) else ""
    updated_at = normalize_time(slot.get("updated_at"), "updated_at")
    history_raw = slot.get("history") or []
    if not isinstance(history_raw, list):
        raise ValidationError("history must be a list")
    history: list[PastValue] = []
    for index, entry in enumerate(history_raw):
        where = f"{path}/history/{index}"
        if index < len(history_raw) - MAX_FACT_HISTORY:
            reader.skip(where, f"over {MAX_FACT_HISTORY} past values; the newest {MAX_FACT_HISTORY} are kept")
            continue
        past = reader.take(where, _past, entry)
        if past is not None:
            history.append(past)
    confidence = slot.get("confidence")
    fact = ProfileFact(current, updated_at, history)
    if confidence is not None:
        fact.confidence = reader.take(f"{path}/confidence", lambda: _confidence(confidence))
    return fact


def _past(entry: Any) -> PastValue:
    if not isinstance(entry, dict):
        raise ValidationError("must be an object")
    value = _stored(item_text(entry.get("value"), "value"), "the value")
    noted = normalize_time(entry.get("timestamp"), "timestamp")
    reason = _stored(params.text(entry.get("reason"), "reason", max_chars=MAX_REASON_CHARS, required=False),
                     "the reason")
    status = REMOVED if entry.get("status") == "removed" else REPLACED
    if reason == "provided_previous_value":  # noted when it was replaced, not when it was set
        return PastValue(value, None, noted, status, reason)
    return PastValue(value, noted, None, status, reason)


def _confidence(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValidationError("confidence must be a number from 0 to 1")
    return float(value)


def _list(reader: _Reader, raw: dict[str, Any], list_field: str, group: dict[str, tuple[str, ProfileFact]],
          where: str) -> list[tuple[str, str]]:
    """(place, item) of one list, oldest first, de-duplicated: freeform items, then slot values."""
    source = f"freeform_{list_field}" if raw.get(f"freeform_{list_field}") is not None else list_field
    loose = raw.get(source) or []
    if not isinstance(loose, list):
        reader.skip(f"{where}/{source}", "must be a list of strings")
        loose = []
    slot_values = {fact.value.casefold() for _, fact in group.values() if fact.value}
    candidates: list[tuple[str, str]] = []
    for index, item in enumerate(loose):
        path = f"{where}/{source}/{index}"
        text = reader.take(path, _stored_item, item)
        if text is not None and text.casefold() not in slot_values:  # a slot value comes with its slot below
            candidates.append((path, text))
    by_age = sorted(group.values(), key=lambda pair: pair[1].updated_at or "")
    candidates += [(f"{path}/value", fact.value) for path, fact in by_age if fact.value]
    kept: list[tuple[str, str]] = []
    for path, text in candidates:  # a restated item keeps its newest place
        kept = [(p, t) for p, t in kept if t.casefold() != text.casefold()] + [(path, text)]
    return kept
