"""L1 profiles (P1-P3 in docs/REQUIREMENTS.md): small, stable facts kept as JSON in plugin storage.

A session profile belongs to the conversation; a speaker profile belongs to one
`sender_id` inside that conversation (S7). Updates are bounded and de-duplicated,
and a correction replaces instead of appending a contradiction.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from .. import params
from ..errors import ValidationError
from ..timefields import now_iso
from ..wording import Phrase
from .facts import REMOVED, REPLACED, Facts, PastValue, ProfileFact, facts_from_dict, facts_to_dict, reconcile
from .sources import ProfileSource, read_sources

MAX_NAME_CHARS = 100
MAX_ITEM_CHARS = 200
MAX_NOTES_CHARS = 20000  # the configurable notes limit (ProfileLimits) can never exceed this
MAX_LIST_ITEMS = 200


class ProfileTarget(str, enum.Enum):
    SESSION = "session"
    SPEAKER = "speaker"


class UpdateMode(str, enum.Enum):
    MERGE = "merge"  # add list items, replace name/notes that are given
    REPLACE = "replace"  # every given field replaces the old value entirely
    REMOVE = "remove"  # remove the given list items; clear name/notes if given


PROFILE_FIELDS = ("name", "traits", "preferences", "notes")
FIELD_LABEL = {f: Phrase(f"profile.field.{f}", f) for f in PROFILE_FIELDS}
TARGET_LABEL = {t: Phrase(f"profile.target.{t.value}", t.value) for t in ProfileTarget}
MODE_LABEL = {m: Phrase(f"profile.mode.{m.value}", m.value) for m in UpdateMode}
PROFILE_UPDATED = Phrase("audit.profile_updated", "{mode} {fields}")
PROFILE_CLEARED = Phrase("audit.profile_cleared", "{target} profile cleared")
PROFILE_IMPORTED = Phrase("audit.profile_imported", "{target} profile imported")
SPEAKER_PROFILE_ERASED = Phrase("audit.speaker_profile_erased", "speaker profile erased")


@dataclass(frozen=True)
class ProfileLimits:
    max_traits: int = 20
    max_preferences: int = 20
    max_notes_chars: int = 1000

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> ProfileLimits:
        def bounded(key: str, default: int, low: int, high: int) -> int:
            try:
                value = int(config.get(key, default))
            except (TypeError, ValueError):
                return default
            return min(high, max(low, value))

        return cls(
            max_traits=bounded("max_profile_traits", 20, 1, 200),
            max_preferences=bounded("max_profile_preferences", 20, 1, 200),
            max_notes_chars=bounded("max_profile_notes_chars", 1000, 50, 20000),
        )


@dataclass
class Profile:
    name: str = ""
    traits: list[str] = field(default_factory=list)
    preferences: list[str] = field(default_factory=list)
    notes: str = ""
    updated_at: str | None = None
    facts: Facts = field(default_factory=dict)  # named traits/preferences and their history (facts.py)
    sources: list[ProfileSource] = field(default_factory=list)  # the platform messages that changed it (sources.py)

    @property
    def is_empty(self) -> bool:
        return not (self.name or self.traits or self.preferences or self.notes)

    def to_dict(self) -> dict[str, Any]:
        """The stored and exported shape; `facts` only when a list has named facts and `sources` only when
        a platform message changed it, so a profile without them is stored exactly as before they existed."""
        data: dict[str, Any] = {"name": self.name, "traits": list(self.traits),
                                "preferences": list(self.preferences), "notes": self.notes,
                                "updated_at": self.updated_at}
        if any(self.facts.values()):
            data["facts"] = facts_to_dict(self.facts)
        if self.sources:
            data["sources"] = [s.to_dict() for s in self.sources]
        return data

    @classmethod
    def from_dict(cls, raw: Any) -> Profile:
        if not isinstance(raw, dict):
            return cls()
        return cls(
            name=str(raw.get("name") or ""),
            traits=[str(t) for t in raw.get("traits") or [] if str(t).strip()],
            preferences=[str(p) for p in raw.get("preferences") or [] if str(p).strip()],
            notes=str(raw.get("notes") or ""),
            updated_at=raw.get("updated_at") or None,
            facts=facts_from_dict(raw.get("facts")),
            sources=read_sources(raw.get("sources")),
        )

    def texts(self) -> list[str]:
        return [self.name, self.notes, *self.traits, *self.preferences]

    def fact_texts(self) -> list[tuple[str, str]]:
        """(where, text) of every named fact's key, value and past values: what a secret check reads."""
        return [(f"the {list_field} fact {key!r}", text) for list_field, group in self.facts.items()
                for key, fact in group.items() for text in (key, *fact.texts()) if text]


@dataclass(frozen=True)
class ProfileChange:
    """Validated fields of one update_profile call (None = not given)."""

    name: str | None = None
    traits: list[str] | None = None
    preferences: list[str] | None = None
    notes: str | None = None
    mode: UpdateMode = UpdateMode.MERGE
    fact_key: str | None = None  # names the one traits/preferences item given: it keeps a history
    previous_value: str | None = None  # the item the given one replaces (a correction)
    append_notes: bool = False  # notes are added to the old notes instead of replacing them

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> ProfileChange:
        mode = UpdateMode(params.choice(raw.get("mode"), "mode", [m.value for m in UpdateMode],
                                        default=UpdateMode.MERGE.value))
        name = _clean_text(raw.get("name"), "name", MAX_NAME_CHARS)
        notes = _clean_text(raw.get("notes"), "notes", MAX_NOTES_CHARS)
        traits = _clean_list(raw.get("traits"), "traits")
        preferences = _clean_list(raw.get("preferences"), "preferences")
        change = cls(name, traits, preferences, notes, mode)
        if name is None and notes is None and traits is None and preferences is None:
            raise ValidationError("give at least one of: name, traits, preferences, notes")
        return change

    @property
    def list_field(self) -> str | None:
        """The one list a fact key or a previous value refers to."""
        return "traits" if self.traits is not None else "preferences" if self.preferences is not None else None

    def apply(self, profile: Profile, limits: ProfileLimits) -> Profile:
        result = Profile.from_dict(profile.to_dict())
        now = now_iso()
        if self.mode is UpdateMode.REMOVE:
            if self.name is not None:
                result.name = ""
            if self.notes is not None:
                result.notes = ""
            if self.traits:
                result.traits = _without(result.traits, self.traits)
            if self.preferences:
                result.preferences = _without(result.preferences, self.preferences)
            if self.fact_key and self.list_field:  # the fact's current value leaves the list, whatever it is
                fact = result.facts.get(self.list_field, {}).get(self.fact_key)
                if fact is not None and fact.value:
                    setattr(result, self.list_field, _without(getattr(result, self.list_field), [fact.value]))
                    fact.ended(REMOVED, "removed", now)
        else:
            if self.name is not None:
                result.name = self.name
            if self.notes is not None:
                result.notes = f"{result.notes}; {self.notes}" if self.append_notes and result.notes else self.notes
            replace_lists = self.mode is UpdateMode.REPLACE
            for list_field in ("traits", "preferences"):
                given = getattr(self, list_field)
                if given is None:
                    continue
                old = getattr(result, list_field)
                if list_field == self.list_field:  # a correction: what the new item replaces leaves the list
                    old = _without(old, self._replaced_values(result))
                setattr(result, list_field, _merged(old, given, replace_lists))
            if self.fact_key and self.list_field and getattr(self, self.list_field):
                self._record_fact(result, getattr(self, self.list_field)[-1], now)
        if len(result.notes) > limits.max_notes_chars:
            raise ValidationError(f"notes are longer than {limits.max_notes_chars} characters")
        # Bounded lists keep the newest items: an old trait gives way to a new one.
        result.traits = result.traits[-limits.max_traits:]
        result.preferences = result.preferences[-limits.max_preferences:]
        reconcile(result.facts, {"traits": result.traits, "preferences": result.preferences}, now)
        result.updated_at = now
        return result

    def _replaced_values(self, profile: Profile) -> list[str]:
        fact = profile.facts.get(self.list_field or "", {}).get(self.fact_key or "")
        return [v for v in (self.previous_value, fact.value if fact else None) if v]

    def _record_fact(self, profile: Profile, value: str, now: str) -> None:
        """The named fact now holds `value`; what it held before (or the given previous value, when it
        held nothing) joins its history."""
        group = profile.facts.setdefault(self.list_field or "", {})
        fact = group.get(self.fact_key or "") or ProfileFact()
        if fact.value and fact.value.casefold() != value.casefold():
            fact.ended(REPLACED, "corrected", now)
        elif not fact.value and self.previous_value and self.previous_value.casefold() != value.casefold():
            fact.remember(PastValue(self.previous_value, None, now, REPLACED, "previous_value"))
        if fact.value != value:
            fact.value, fact.updated_at = value, now
        group[self.fact_key or ""] = fact


def _clean_text(value: Any, field_name: str, limit: int) -> str | None:
    if value is None:
        return None
    text = params.text(value, field_name, max_chars=limit, required=False, multiline=field_name == "notes")
    return " ".join(text.split()) if field_name == "name" else text


def _clean_list(value: Any, field_name: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ValidationError(f"{field_name} must be a list of strings")
    if len(value) > MAX_LIST_ITEMS:
        raise ValidationError(f"{field_name} has more than {MAX_LIST_ITEMS} items")
    items: list[str] = []
    for item in value:
        text = params.text(item, f"an item of {field_name}", max_chars=MAX_ITEM_CHARS, required=False)
        if params.PHRASES.sub("", text).strip():  # blanks and bare separators ("，", "、") are no item
            items.append(" ".join(text.split()))
    if value and not items:
        # Items were sent but none says anything: taking that as an empty list would wipe the field in
        # every replace. Emptying a field is asked for explicitly (an empty list, remove, clear).
        raise ValidationError(f"{field_name} has no item with text (only empty values or separators); nothing "
                              f"was changed. To empty {field_name}, remove the field or clear the profile")
    return items


def _merged(old: list[str], new: list[str], replace_all: bool) -> list[str]:
    """De-duplicate case-insensitively; a re-stated item moves to the newest position."""
    base = [] if replace_all else list(old)
    for item in new:
        base = [x for x in base if x.casefold() != item.casefold()]
        base.append(item)
    return base


def _without(old: list[str], remove: list[str]) -> list[str]:
    gone = {x.casefold() for x in remove}
    return [x for x in old if x.casefold() not in gone]
