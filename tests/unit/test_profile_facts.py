"""Named facts of a profile (ltm/profiles/facts.py) and the field/action form of an update
(ltm/profiles/field_action.py), on the in-memory ports."""

from __future__ import annotations

import pytest

from ltm import MemoryScope, MemoryService, Profile, ValidationError
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import audit_ops


def fact_history(profile: Profile, list_field: str, key: str) -> list[tuple[str, str, str]]:
    return [(p.value, p.status, p.reason) for p in profile.facts[list_field][key].history]


async def test_each_new_value_of_a_fact_pushes_the_old_one_into_a_bounded_history(memory: MemoryService,
                                                                                  alice: MemoryScope) -> None:
    for year in range(2015, 2026):
        profile = await memory.update_profile(alice, None, {"field": "traits", "action": "set",
                                                            "value": f"lives in city {year}", "fact_key": "home"})
    assert profile.traits == ["lives in city 2025"]
    history = fact_history(profile, "traits", "home")
    assert [v for v, _, _ in history] == [f"lives in city {y}" for y in range(2017, 2025)]  # the newest 8
    assert {(s, r) for _, s, r in history} == {("replaced", "corrected")}
    fact = profile.facts["traits"]["home"]
    assert all(p.until and p.since for p in fact.history) and fact.history[-1].until == fact.updated_at


async def test_previous_value_is_history_only_when_the_fact_held_nothing(memory: MemoryService,
                                                                         alice: MemoryScope) -> None:
    await memory.update_profile(alice, "speaker", {"preferences": ["likes coffee", "short answers"]})
    profile = await memory.update_profile(alice, None, {"field": "preferences", "action": "set", "value": "no coffee",
                                                        "fact_key": "coffee", "previous_value": "Likes coffee"})
    assert profile.preferences == ["short answers", "no coffee"]  # the plain item it corrects left the list
    assert fact_history(profile, "preferences", "coffee") == [("Likes coffee", "replaced", "previous_value")]
    profile = await memory.update_profile(alice, None, {"field": "preferences", "action": "set", "value": "decaf",
                                                        "fact_key": "coffee", "previous_value": "something else"})
    assert fact_history(profile, "preferences", "coffee")[-1] == ("no coffee", "replaced", "corrected")
    assert "something else" not in [v for v, _, _ in fact_history(profile, "preferences", "coffee")]


async def test_a_fact_value_that_leaves_its_list_by_any_path_is_recorded_as_removed(memory: MemoryService,
                                                                                    alice: MemoryScope) -> None:
    await memory.update_profile(alice, None, {"field": "traits", "action": "add", "value": "nurse", "fact_key": "job"})
    profile = await memory.update_profile(alice, "speaker", {"traits": ["Nurse"], "mode": "remove"})
    assert profile.traits == [] and profile.facts["traits"]["job"].value == ""
    assert fact_history(profile, "traits", "job") == [("nurse", "removed", "list_changed")]
    await memory.update_profile(alice, None, {"field": "traits", "action": "add", "value": "pilot", "fact_key": "job"})
    profile = await memory.update_profile(alice, None, {"field": "traits", "action": "set", "value": "calm"})
    assert profile.traits == ["calm"]  # set without a key makes it the only item
    assert fact_history(profile, "traits", "job")[-1] == ("pilot", "removed", "list_changed")


async def test_removing_a_fact_that_holds_nothing_changes_nothing(fake: InMemoryPorts, memory: MemoryService,
                                                                  alice: MemoryScope) -> None:
    await memory.update_profile(alice, None, {"field": "traits", "action": "add", "value": "nurse", "fact_key": "job"})
    await memory.update_profile(alice, None, {"field": "traits", "action": "remove", "fact_key": "job"})
    before = fake.state()
    with pytest.raises(ValidationError, match="nothing of that to remove"):
        await memory.update_profile(alice, None, {"field": "traits", "action": "remove", "fact_key": "JOB"})
    assert fake.state() == before


async def test_name_and_notes_actions_and_the_inferred_scope(memory: MemoryService, alice: MemoryScope) -> None:
    await memory.update_profile(alice, None, {"field": "name", "action": "set", "value": "Ali"})
    await memory.update_profile(alice, None, {"field": "notes", "action": "set", "value": "book club"})
    await memory.update_profile(alice, None, {"field": "notes", "action": "add", "value": "meets monthly"})
    profiles = await memory.profiles(alice)
    assert profiles.speaker is not None and profiles.speaker.name == "Ali" and profiles.speaker.notes == ""
    assert profiles.session.notes == "book club; meets monthly" and profiles.session.name == ""
    await memory.update_profile(alice, None, {"field": "name", "action": "remove"})
    await memory.update_profile(alice, "session", {"field": "notes", "action": "remove"})
    profiles = await memory.profiles(alice)
    assert profiles.speaker is not None and profiles.speaker.name == "" and profiles.session.notes == ""
    assert await audit_ops(memory, alice) == [("update_profile", "alice"), ("update_profile", "session"),
                                              ("update_profile", "session"), ("update_profile", "alice"),
                                              ("update_profile", "session")]


@pytest.mark.parametrize("change, message", [
    ({"field": "traits", "action": "set", "value": "x", "fact_key": "password is hunter2"}, "fact_key looks like"),
    ({"field": "traits", "action": "set", "value": "x", "fact_key": "k" * 65}, "longer than 64"),
    ({"field": "notes", "action": "add", "value": "x", "mode": "merge"}, "not both"),
    ({"field": "traits", "action": "set", "value": "a\nb"}, "single line"),
])
async def test_bad_field_action_calls_write_nothing(fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope,
                                                    change: dict[str, str], message: str) -> None:
    before = fake.state()
    with pytest.raises(ValidationError, match=message):
        await memory.update_profile(alice, None, change)
    assert fake.state() == before


def test_a_profile_stored_before_facts_existed_reads_and_stores_unchanged() -> None:
    old = {"name": "Ann", "traits": ["calm"], "preferences": ["tea"], "notes": "n", "updated_at": "2026-01-01T00:00:00Z"}
    profile = Profile.from_dict(old)
    assert profile.facts == {} and profile.to_dict() == old
    assert Profile.from_dict({**old, "facts": "junk"}).to_dict() == old  # a broken facts entry is not fatal
