"""A profile change by a platform message, and taking one message's change back (ltm/profiles/sources.py):
only where it still stands, never another message's part."""

from __future__ import annotations

from typing import Any

from ltm.profiles.field_action import parse_field_action
from ltm.profiles.model import Profile, ProfileChange, ProfileLimits
from ltm.profiles.sources import ProfileSource, changes_between, withdrawn
from ltm.provenance import MessageRef

CHAT = "bot-1:group_g1"
LIMITS = ProfileLimits()


def said(profile: Profile, message_id: str, **change: Any) -> Profile:
    """`profile` after `change`, with the source a turn of `message_id` records (as ProfileBook does)."""
    parsed = ProfileChange.parse(change) if "fact_key" not in change else _fact_change(change)
    after = parsed.apply(profile, LIMITS)
    stated = {f: list(getattr(parsed, f) or []) for f in ("traits", "preferences")}
    diff = changes_between(profile.to_dict(), after.to_dict(), stated)
    after.sources = [*after.sources, ProfileSource(MessageRef(message_id, CHAT), "u1", "2026-01-01T00:00:00Z", diff)]
    return after


def _fact_change(change: dict[str, Any]) -> ProfileChange:
    return parse_field_action(change)


def back(profile: Profile, message_id: str) -> tuple[Profile, tuple[str, ...], tuple[str, ...]]:
    result = withdrawn(profile.to_dict(), MessageRef(message_id, CHAT))
    assert result is not None
    return Profile.from_dict(result.profile), result.restored, result.kept


def test_a_name_and_a_trait_go_back_and_the_message_leaves_the_sources() -> None:
    first = said(Profile(), "1", name="Ali", traits=["early riser"])
    second = said(first, "2", name="Ali the gardener", traits=["gardener"])
    restored, names, kept = back(second, "2")
    assert (restored.name, restored.traits, kept) == ("Ali", ["early riser"], ())
    assert set(names) == {"name", "traits"}
    assert [s.message.message_id for s in restored.sources] == ["1"]


def test_what_changed_since_stays() -> None:
    first = said(Profile(), "1", name="Ali")
    edited = Profile.from_dict({**first.to_dict(), "name": "Alina"})  # an operator's edit since
    restored, _, kept = back(edited, "1")
    assert restored.name == "Alina" and kept == ("name",)


def test_an_item_another_message_stated_too_stays() -> None:
    first = said(Profile(), "1", traits=["gardener"])
    second = said(first, "2", traits=["gardener", "cyclist"])
    restored, _, _ = back(second, "1")
    assert restored.traits == ["gardener", "cyclist"]
    restored, _, _ = back(second, "2")
    assert restored.traits == ["gardener"]


def test_a_named_fact_gets_its_previous_value_and_history_back() -> None:
    first = said(Profile(), "1", field="preferences", action="set", fact_key="coffee", value="likes coffee")
    second = said(first, "2", field="preferences", action="set", fact_key="coffee", value="no coffee")
    restored, names, _ = back(second, "2")
    assert restored.preferences == ["likes coffee"] and "preferences.coffee" in names
    assert restored.facts["preferences"]["coffee"].to_dict() == first.facts["preferences"]["coffee"].to_dict()


def test_a_message_the_profile_does_not_name_changes_nothing() -> None:
    assert withdrawn(said(Profile(), "1", name="Ali").to_dict(), MessageRef("9", CHAT)) is None
    assert withdrawn(said(Profile(), "1", name="Ali").to_dict(), MessageRef("1", "bot-1:group_g2")) is None
