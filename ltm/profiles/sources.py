"""What platform messages changed a profile, and how to take one message's change back (X1, X2).

A profile change made in a turn that answers a platform message (`update_profile`, an accepted
candidate) keeps a `ProfileSource`: the message (`MessageRef`), who said it, when, and what it changed,
field by field:
- `name`, `notes`: `[before, after]`;
- `traits`, `preferences`: `{"added": [...], "removed": [...]}` (items the message stated or that
  appeared, items that left the list);
- `facts`: `{list field: {fact key: [before, after]}}`, each a named fact's stored form or None.

A recalled message's change is taken back (`withdrawn`) only where it still stands: a name or notes
whose value is still the one the message set go back to the value before; an item it added leaves the
list unless another message the profile still keeps stated it too; an item it removed comes back; a
named fact still as the message left it goes back to what it was (value and history). A field changed
since (by another message or by an operator's edit) is kept as it is and reported.

The newest `MAX_SOURCES` sources are kept per profile (a recall on QQ comes within minutes; an admin's
recall of an older message finds nothing to take back once its source has left the list).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import params
from ..errors import ValidationError
from ..provenance import MessageRef
from ..timefields import normalize_time

MAX_SOURCES = 5
SCALARS = ("name", "notes")
LISTS = ("traits", "preferences")


@dataclass(frozen=True)
class ProfileSource:
    message: MessageRef
    sender_id: str
    at: str
    changes: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"message": self.message.to_dict(), "sender_id": self.sender_id, "at": self.at,
                "changes": self.changes}

    @classmethod
    def read(cls, raw: Any) -> ProfileSource | None:
        """Lenient read of what this plugin stored; None for an entry it cannot use."""
        if not isinstance(raw, dict):
            return None
        message = MessageRef.read(raw.get("message"))
        changes = raw.get("changes")
        if message is None or not isinstance(changes, dict):
            return None
        return cls(message, str(raw.get("sender_id") or ""), str(raw.get("at") or ""), changes)

    @classmethod
    def parse(cls, raw: Any, where: str) -> ProfileSource:
        """Strict read for an import."""
        if not isinstance(raw, dict):
            raise ValidationError(f"{where} must be an object")
        params.reject_unknown(raw, ("message", "sender_id", "at", "changes"))
        message = MessageRef.parse(raw.get("message"), f"{where}.message")
        changes = raw.get("changes")
        if message is None or not isinstance(changes, dict):
            raise ValidationError(f"{where} needs a message and its changes")
        params.reject_unknown(changes, (*SCALARS, *LISTS, "facts"))
        return cls(message, params.text(raw.get("sender_id"), f"{where}.sender_id", max_chars=240, required=False),
                   normalize_time(raw.get("at"), f"{where}.at") or "", changes)

    def texts(self) -> list[str]:
        """Every value this source holds (what a secret check reads)."""
        out: list[str] = []
        for name in SCALARS:
            out += [str(v) for v in self.changes.get(name) or [] if v]
        for name in LISTS:
            diff = self.changes.get(name) or {}
            out += [str(v) for key in ("added", "removed") for v in (diff.get(key) or [])]
        for group in (self.changes.get("facts") or {}).values():
            for pair in group.values():
                out += [str(f.get("value") or "") for f in pair or [] if isinstance(f, dict)]
        return [t for t in out if t]


def read_sources(raw: Any) -> list[ProfileSource]:
    return [s for s in map(ProfileSource.read, raw if isinstance(raw, list) else []) if s is not None][-MAX_SOURCES:]


def parse_sources(raw: Any, where: str) -> list[ProfileSource]:
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_SOURCES:
        raise ValidationError(f"{where} must be a list of at most {MAX_SOURCES} sources")
    return [ProfileSource.parse(item, f"{where}[{i}]") for i, item in enumerate(raw)]


def changes_between(before: dict[str, Any], after: dict[str, Any], stated: dict[str, list[str]]) -> dict[str, Any]:
    """What turned the profile `before` into `after` (both in their stored form); `stated`: the list items
    the change gave (a re-stated item counts as added by it too)."""
    changes: dict[str, Any] = {}
    for name in SCALARS:
        if before.get(name) != after.get(name):
            changes[name] = [before.get(name) or "", after.get(name) or ""]
    for name in LISTS:
        old, new = before.get(name) or [], after.get(name) or []
        present = {x.casefold() for x in new}
        added = [x for x in new if x.casefold() not in {o.casefold() for o in old}]
        added += [x for x in stated.get(name, []) if x.casefold() in present and x not in added]
        removed = [x for x in old if x.casefold() not in present]
        if added or removed:
            changes[name] = {"added": added, "removed": removed}
    facts: dict[str, Any] = {}
    old_facts, new_facts = before.get("facts") or {}, after.get("facts") or {}
    for name in LISTS:
        keys = set(old_facts.get(name) or {}) | set(new_facts.get(name) or {})
        moved = {k: [(old_facts.get(name) or {}).get(k), (new_facts.get(name) or {}).get(k)] for k in sorted(keys)
                 if (old_facts.get(name) or {}).get(k) != (new_facts.get(name) or {}).get(k)}
        if moved:
            facts[name] = moved
    if facts:
        changes["facts"] = facts
    return changes


@dataclass(frozen=True)
class Withdrawn:
    """One message's change taken back from one profile: the stored form after, which fields went back,
    which were kept because they changed since."""

    profile: dict[str, Any]
    restored: tuple[str, ...]
    kept: tuple[str, ...]


def withdrawn(stored: dict[str, Any], message: MessageRef) -> Withdrawn | None:
    """The profile (stored form) with `message`'s changes taken back where they still stand, and its
    sources without that message's; None when no source of the profile names the message."""
    sources = read_sources(stored.get("sources"))
    mine = [s for s in sources if s.message == message]
    if not mine:
        return None
    others = [s for s in sources if s.message != message]
    profile = dict(stored)
    restored: list[str] = []
    kept: list[str] = []
    for source in reversed(mine):  # newest first: each goes back to what it found
        for name, pair in source.changes.items():
            if name in SCALARS:
                _scalar(profile, name, pair, restored, kept)
            elif name in LISTS:
                _list(profile, name, pair, others, restored)
            elif name == "facts":
                _facts(profile, pair, restored, kept)
    profile["sources"] = [s.to_dict() for s in others]
    if not others:
        profile.pop("sources")
    return Withdrawn(profile, tuple(dict.fromkeys(restored)), tuple(dict.fromkeys(kept)))


def _scalar(profile: dict[str, Any], name: str, pair: Any, restored: list[str], kept: list[str]) -> None:
    before, after = (list(pair) + ["", ""])[:2] if isinstance(pair, list) else ("", "")
    if (profile.get(name) or "") == (after or ""):
        profile[name] = before or ""
        restored.append(name)
    else:
        kept.append(name)


def _list(profile: dict[str, Any], name: str, diff: Any, others: list[ProfileSource], restored: list[str]) -> None:
    if not isinstance(diff, dict):
        return
    items = list(profile.get(name) or [])
    also_stated = {str(x).casefold() for s in others for x in (s.changes.get(name) or {}).get("added") or []}
    gone = {str(x).casefold() for x in diff.get("added") or []} - also_stated
    back = [str(x) for x in diff.get("removed") or [] if str(x).casefold() not in {i.casefold() for i in items}]
    new = [i for i in items if i.casefold() not in gone] + back
    if new != items:
        profile[name] = new
        restored.append(name)


def _facts(profile: dict[str, Any], groups: Any, restored: list[str], kept: list[str]) -> None:
    facts = {k: dict(v) for k, v in (profile.get("facts") or {}).items()}
    for name, moved in (groups or {}).items():
        group = facts.setdefault(name, {})
        for key, pair in (moved or {}).items():
            before, after = (list(pair) + [None, None])[:2] if isinstance(pair, list) else (None, None)
            if group.get(key) != after:
                kept.append(f"{name}.{key}")
                continue
            if before is None:
                group.pop(key, None)
            else:
                group[key] = before
            restored.append(f"{name}.{key}")
    profile["facts"] = {k: v for k, v in facts.items() if v}
    if not profile["facts"]:
        profile.pop("facts")
