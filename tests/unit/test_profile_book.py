"""L1 profiles (P1-P2, S7): merge, replace, remove; bounded lists keep the newest; a correction replaces."""

from __future__ import annotations

import pytest

from ltm import MemoryScope, MemoryService, ProfileLimits, ValidationError
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import KB, audit_ops, ident


async def test_merge_adds_list_items_once_and_moves_a_restated_item_to_the_newest_place(
        memory: MemoryService, alice: MemoryScope) -> None:
    await memory.update_profile(alice, "speaker", {"traits": ["patient", "curious"]})
    profile = await memory.update_profile(alice, "speaker", {"traits": ["Patient", "tidy"]})
    assert profile.traits == ["curious", "Patient", "tidy"]
    assert (await memory.profiles(alice)).speaker.traits == ["curious", "Patient", "tidy"]  # type: ignore[union-attr]


async def test_a_correction_replaces_the_old_value_instead_of_adding_one(memory: MemoryService,
                                                                          alice: MemoryScope) -> None:
    await memory.update_profile(alice, "speaker", {"name": "Alicia", "notes": "lives in Oslo"})
    profile = await memory.update_profile(alice, "speaker", {"name": "Alice", "notes": "lives in Bergen"})
    assert profile.name == "Alice" and profile.notes == "lives in Bergen"
    assert "Alicia" not in profile.texts() and "lives in Oslo" not in profile.texts()


async def test_replace_mode_replaces_whole_lists_and_leaves_other_fields(memory: MemoryService,
                                                                         alice: MemoryScope) -> None:
    await memory.update_profile(alice, "session", {"name": "Climbers", "preferences": ["tea", "early starts"]})
    profile = await memory.update_profile(alice, "session", {"preferences": ["coffee"], "mode": "replace"})
    assert profile.preferences == ["coffee"] and profile.name == "Climbers"


async def test_remove_mode_removes_items_case_insensitively_and_clears_named_text(memory: MemoryService,
                                                                                   alice: MemoryScope) -> None:
    await memory.update_profile(alice, "session", {"name": "Climbers", "notes": "n", "traits": ["loud", "kind"]})
    profile = await memory.update_profile(alice, "session", {"traits": ["LOUD", "absent"], "name": "",
                                                             "mode": "remove"})
    assert profile.traits == ["kind"] and profile.name == "" and profile.notes == "n"


async def test_bounded_lists_keep_the_newest_items(fake: InMemoryPorts) -> None:
    memory = MemoryService(fake.ports, limits=lambda: ProfileLimits(max_traits=3, max_preferences=2))
    await memory.register_kb(KB, {"embedding_model_uuid": "emb-1"})
    scope = await memory.scope_for(ident())
    await memory.update_profile(scope, "speaker", {"traits": ["a", "b", "c"], "preferences": ["p1"]})
    profile = await memory.update_profile(scope, "speaker", {"traits": ["d", "e"], "preferences": ["p2", "p3"]})
    assert profile.traits == ["c", "d", "e"]
    assert profile.preferences == ["p2", "p3"]


async def test_limits_are_read_on_every_call(fake: InMemoryPorts) -> None:
    limits = ProfileLimits(max_notes_chars=100)
    memory = MemoryService(fake.ports, limits=lambda: limits)
    scope = await memory.scope_for(ident())  # L1 works without a memory KB
    await memory.update_profile(scope, "session", {"notes": "x" * 100})
    limits = ProfileLimits(max_notes_chars=50)
    before = fake.state()
    with pytest.raises(ValidationError, match="longer than 50"):
        await memory.update_profile(scope, "session", {"notes": "y" * 60})
    assert fake.state() == before


async def test_each_profile_update_is_audited_with_its_fields_and_mode(memory: MemoryService,
                                                                       alice: MemoryScope) -> None:
    await memory.update_profile(alice, "speaker", {"name": "Alice", "traits": ["kind"]})
    await memory.update_profile(alice, "session", {"notes": "book club", "mode": "replace"})
    entries = await memory.audit_export(alice)
    assert await audit_ops(memory, alice) == [("update_profile", "alice"), ("update_profile", "session")]
    assert entries[0]["target_type"] == "speaker_profile" and entries[0]["meta"]["fields"] == ["name", "traits"]
    assert entries[1]["meta"]["mode"] == "replace" and entries[1]["sender_id"] == "alice"
    assert all("Alice" not in e["summary"] and "book club" not in e["summary"] for e in entries)


async def test_profiles_read_back_exactly_what_was_stored_after_a_restart(fake: InMemoryPorts,
                                                                          memory: MemoryService,
                                                                          alice: MemoryScope) -> None:
    await memory.update_profile(alice, "speaker", {"name": "Alice", "preferences": ["green tea"]})
    restarted = MemoryService(fake.ports)
    profiles = await restarted.profiles(await restarted.scope_for(ident("g1", sender="alice")))
    assert profiles.speaker is not None and profiles.speaker.name == "Alice"
    assert profiles.speaker.preferences == ["green tea"] and profiles.speaker.updated_at
    assert profiles.session.is_empty
