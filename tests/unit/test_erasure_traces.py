"""What a deletion or a person's erasure leaves in the plugin's own diagnostics and audit (issue 35):
injection snapshots quoting a deleted memory, and audit entries naming an erased person."""

from __future__ import annotations

import json

from ltm import MemoryScope, MemoryService
from ltm._audit import ERASED_PERSON, without_person
from tests.unit.support import remember


def injected(scope: MemoryScope, *episodes: tuple[str, str]) -> dict[str, object]:
    """A snapshot as the injector writes it (`components/event_listener/memory_injector.py`)."""
    return {"query_id": 7, "scope_key": scope.chat_key, "user_key": scope.space_key, "kb_id": scope.kb_id,
            "speaker": {"id": "bob", "name": "Bob"}, "episodes": [{"id": i, "content": c} for i, c in episodes]}


async def test_forgetting_a_memory_deletes_the_snapshot_that_quotes_it(memory: MemoryService, alice: MemoryScope,
                                                                       bob: MemoryScope) -> None:
    episode = await remember(memory, alice, "the zebracorn sleeps upstairs")
    await memory.save_snapshot(bob, injected(bob, (episode.episode_id, episode.content)))
    await memory.forget(alice, episode.episode_id)
    assert await memory.snapshot(bob) is None
    entries = await memory.audit_export(alice)
    assert ("forget", "snapshot") in {(e["operation"], e["target_type"]) for e in entries}


async def test_a_turn_that_recalled_a_memory_just_before_its_deletion_saves_no_word_of_it(
        memory: MemoryService, alice: MemoryScope) -> None:
    gone = await remember(memory, alice, "the zebracorn sleeps upstairs")
    kept = await remember(memory, alice, "the kettle is in the cupboard")
    await memory.forget(alice, gone.episode_id)
    # The turn's recall ran before the forget; its snapshot is written after it.
    await memory.save_snapshot(alice, injected(alice, (gone.episode_id, gone.content), (kept.episode_id, kept.content)))
    snapshot = await memory.snapshot(alice)
    assert snapshot is not None and "zebracorn" not in json.dumps(snapshot)
    assert [e["id"] for e in snapshot["episodes"]] == [kept.episode_id]


def test_an_entry_naming_an_erased_person_names_them_no_more() -> None:
    acted = {"operation": "remember", "target_type": "episode", "target_id": "e1", "sender_id": "erin",
             "sender_name": "Erin Q", "meta": {"tags": ["kite"], "decided_by": "erin"}, "summary": "stored"}
    scrubbed = without_person(acted, "erin", {"e1"})
    assert (scrubbed["sender_id"], scrubbed["sender_name"]) == (ERASED_PERSON, "")
    assert scrubbed["meta"] == {"decided_by": ERASED_PERSON}
    target = {"operation": "profile_clear", "target_type": "speaker_profile", "target_id": "erin", "sender_id": "adm",
              "sender_name": "Admin", "meta": {}}
    assert without_person(target, "erin", set())["target_id"] == ERASED_PERSON
    other = {"operation": "remember", "target_type": "episode", "target_id": "e2", "sender_id": "erinx",
             "sender_name": "Erin X", "meta": {"tags": ["kite"]}}
    assert without_person(other, "erin", {"e1"}) is other  # another person, another record: untouched
