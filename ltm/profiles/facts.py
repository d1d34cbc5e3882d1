"""Named facts of a profile list: the per-fact history behind `traits` and `preferences`.

A trait or preference may be given a fact key ("coffee", "reply_language"). The list keeps showing
the fact's current value like any other item; the fact remembers what that value replaced, when,
and why, so a correction never loses the old value and two values of one fact are never current at
once. Items without a key stay plain list items with no history.

Stored shape (inside the profile's JSON, only when a list has named facts):

    "facts": {"preferences": {"coffee": {"value": "no coffee", "updated_at": "...",
                                          "history": [{"value": "likes coffee", "since": "...",
                                                       "until": "...", "status": "replaced",
                                                       "reason": "corrected"}],
                                          "confidence": null}}}

`history` is oldest first and keeps the newest `MAX_FACT_HISTORY` entries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .. import params
from ..errors import ValidationError
from ..guards import refuse_secrets
from ..timefields import normalize_time

FACT_FIELDS = ("traits", "preferences")
MAX_FACT_HISTORY = 8
MAX_FACT_KEY_CHARS = 64
MAX_REASON_CHARS = 40
MAX_ITEM_CHARS = 200
MAX_FACTS_PER_LIST = 200

REPLACED, REMOVED = "replaced", "removed"
PAST_STATUSES = (REPLACED, REMOVED)


def fact_key(value: Any, where: str = "fact_key") -> str:
    """A fact key as one lower-case word: "Coffee Preference" and "coffee_preference" name one fact.
    Checked for credentials as given ("password is x" would pass unnoticed as "password_is_x")."""
    text = params.text(value, where, max_chars=MAX_FACT_KEY_CHARS)
    refuse_secrets([(f"the {where}", text)])
    return "_".join(text.lower().split())


@dataclass(frozen=True)
class PastValue:
    """A value the fact held before: since when (None when unknown), until when, and why it ended."""

    value: str
    since: str | None
    until: str | None
    status: str  # REPLACED or REMOVED
    reason: str  # a short code: corrected, previous_value, removed, list_changed, imported reasons as given

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "since": self.since, "until": self.until, "status": self.status,
                "reason": self.reason}

    @classmethod
    def from_dict(cls, raw: Any) -> PastValue | None:
        """Lenient read of what this plugin stored; None for an entry it cannot use."""
        if not isinstance(raw, dict) or not str(raw.get("value") or "").strip():
            return None
        status = str(raw.get("status") or REPLACED)
        return cls(str(raw["value"]).strip(), raw.get("since") or None, raw.get("until") or None,
                   status if status in PAST_STATUSES else REPLACED, str(raw.get("reason") or ""))

    @classmethod
    def parse(cls, raw: Any, where: str) -> PastValue:
        """Strict read for an import: every field checked, the first problem named with `where`."""
        if not isinstance(raw, dict):
            raise ValidationError(f"{where} must be an object")
        params.reject_unknown(raw, ("value", "since", "until", "status", "reason"))
        return cls(item_text(raw.get("value"), f"{where}.value"),
                   normalize_time(raw.get("since"), f"{where}.since"),
                   normalize_time(raw.get("until"), f"{where}.until"),
                   params.choice(raw.get("status"), f"{where}.status", PAST_STATUSES, default=REPLACED),
                   params.text(raw.get("reason"), f"{where}.reason", max_chars=MAX_REASON_CHARS, required=False))


@dataclass
class ProfileFact:
    value: str = ""  # the current value, "" once the fact was removed
    updated_at: str | None = None
    history: list[PastValue] = field(default_factory=list)
    confidence: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "updated_at": self.updated_at,
                "history": [h.to_dict() for h in self.history], "confidence": self.confidence}

    @classmethod
    def from_dict(cls, raw: Any) -> ProfileFact | None:
        if not isinstance(raw, dict):
            return None
        history = [h for h in map(PastValue.from_dict, raw.get("history") or []) if h is not None]
        fact = cls(str(raw.get("value") or "").strip(), raw.get("updated_at") or None,
                   history[-MAX_FACT_HISTORY:], _confidence(raw.get("confidence")))
        return fact if fact.value or fact.history else None

    @classmethod
    def parse(cls, raw: Any, where: str) -> ProfileFact:
        if not isinstance(raw, dict):
            raise ValidationError(f"{where} must be an object")
        params.reject_unknown(raw, ("value", "updated_at", "history", "confidence"))
        history = raw.get("history") or []
        if not isinstance(history, list):
            raise ValidationError(f"{where}.history must be a list")
        if len(history) > MAX_FACT_HISTORY:
            raise ValidationError(f"{where}.history has {len(history)} entries, more than {MAX_FACT_HISTORY}")
        confidence = raw.get("confidence")
        if confidence is not None and _confidence(confidence) is None:
            raise ValidationError(f"{where}.confidence must be a number from 0 to 1")
        value = raw.get("value")
        return cls(item_text(value, f"{where}.value") if value else "",
                   normalize_time(raw.get("updated_at"), f"{where}.updated_at"),
                   [PastValue.parse(h, f"{where}.history[{i}]") for i, h in enumerate(history)],
                   _confidence(confidence))

    def texts(self) -> list[str]:
        return [self.value, *(h.value for h in self.history)]

    def ended(self, status: str, reason: str, at: str | None) -> None:
        """The current value stops being current (replaced or removed) and joins the history."""
        if self.value:
            self.remember(PastValue(self.value, self.updated_at, at, status, reason))
        self.value, self.updated_at = "", at

    def remember(self, past: PastValue) -> None:
        self.history = [*self.history, past][-MAX_FACT_HISTORY:]


Facts = dict[str, dict[str, ProfileFact]]  # list field ("traits" / "preferences") -> fact key -> fact


def facts_from_dict(raw: Any) -> Facts:
    """What a stored profile holds; a profile stored before facts existed has none."""
    result: Facts = {}
    if not isinstance(raw, dict):
        return result
    for list_field in FACT_FIELDS:
        group = raw.get(list_field)
        if not isinstance(group, dict):
            continue
        kept = {str(k): f for k, f in ((k, ProfileFact.from_dict(v)) for k, v in group.items()) if f is not None}
        if kept:
            result[list_field] = kept
    return result


def parse_facts(raw: Any, where: str) -> Facts:
    """Strict read of an import's `facts`."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValidationError(f"{where} must be an object")
    params.reject_unknown(raw, FACT_FIELDS, what="fact list")
    result: Facts = {}
    for list_field, group in raw.items():
        if not isinstance(group, dict):
            raise ValidationError(f"{where}.{list_field} must be an object {{fact key: fact}}")
        if len(group) > MAX_FACTS_PER_LIST:
            raise ValidationError(f"{where}.{list_field} has more than {MAX_FACTS_PER_LIST} facts")
        parsed = {fact_key(k, f"a fact key of {where}.{list_field}"): ProfileFact.parse(v, f"{where}.{list_field}.{k}")
                  for k, v in group.items()}
        kept = {k: f for k, f in parsed.items() if f.value or f.history}
        if kept:
            result[list_field] = kept
    return result


def facts_to_dict(facts: Facts) -> dict[str, Any]:
    return {f: {k: fact.to_dict() for k, fact in sorted(group.items())} for f, group in facts.items() if group}


def item_text(value: Any, where: str) -> str:
    """A list item as every profile list keeps it: one line, at most MAX_ITEM_CHARS, inner spaces collapsed."""
    return " ".join(params.text(value, where, max_chars=MAX_ITEM_CHARS).split())


def reconcile(facts: Facts, lists: dict[str, list[str]], at: str | None) -> None:
    """A fact whose current value is no longer in its list (removed, the list replaced, or cut by the
    list's bound) was removed: it says so in its history instead of showing a value nobody sees."""
    for list_field, group in facts.items():
        present = {item.casefold() for item in lists.get(list_field, [])}
        for fact in group.values():
            if fact.value and fact.value.casefold() not in present:
                fact.ended(REMOVED, "list_changed", at)
        if len(group) > MAX_FACTS_PER_LIST:  # old facts with no current value go first
            ended = sorted((k for k, f in group.items() if not f.value), key=lambda k: group[k].updated_at or "")
            for key in ended[:len(group) - MAX_FACTS_PER_LIST]:
                del group[key]


def _confidence(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None
