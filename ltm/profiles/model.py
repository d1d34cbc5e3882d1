"""L1 profiles (P1-P3 in docs/REQUIREMENTS.md): small, stable facts kept as JSON in plugin storage.

A session profile belongs to the conversation; a speaker profile belongs to one
`sender_id` inside that conversation (S7). Updates are bounded and de-duplicated,
and a correction replaces instead of appending a contradiction.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import params
from ..errors import ValidationError
from ..timefields import now_iso
from ..wording import Phrase

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

    @property
    def is_empty(self) -> bool:
        return not (self.name or self.traits or self.preferences or self.notes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

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
        )

    def texts(self) -> list[str]:
        return [self.name, self.notes, *self.traits, *self.preferences]


@dataclass(frozen=True)
class ProfileChange:
    """Validated fields of one update_profile call (None = not given)."""

    name: str | None = None
    traits: list[str] | None = None
    preferences: list[str] | None = None
    notes: str | None = None
    mode: UpdateMode = UpdateMode.MERGE

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

    def apply(self, profile: Profile, limits: ProfileLimits) -> Profile:
        result = Profile.from_dict(profile.to_dict())
        if self.mode is UpdateMode.REMOVE:
            if self.name is not None:
                result.name = ""
            if self.notes is not None:
                result.notes = ""
            if self.traits:
                result.traits = _without(result.traits, self.traits)
            if self.preferences:
                result.preferences = _without(result.preferences, self.preferences)
        else:
            if self.name is not None:
                result.name = self.name
            if self.notes is not None:
                result.notes = self.notes
            replace_lists = self.mode is UpdateMode.REPLACE
            if self.traits is not None:
                result.traits = _merged(result.traits, self.traits, replace_lists)
            if self.preferences is not None:
                result.preferences = _merged(result.preferences, self.preferences, replace_lists)
        if len(result.notes) > limits.max_notes_chars:
            raise ValidationError(f"notes are longer than {limits.max_notes_chars} characters")
        # Bounded lists keep the newest items: an old trait gives way to a new one.
        result.traits = result.traits[-limits.max_traits:]
        result.preferences = result.preferences[-limits.max_preferences:]
        result.updated_at = now_iso()
        return result


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
