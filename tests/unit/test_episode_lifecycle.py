"""Episode lifecycle (E1-E5, C): supersede links, archive, restore, forget, bulk delete, import attribution."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ltm import DeleteCriteria, MemoryScope, MemoryService, NotFound, ValidationError, parse_records
from ltm.episodes.model import EpisodeStatus
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import audit_ops, import_many, remember, stored


async def test_supersede_links_both_records_and_keeps_the_old_content(fake: InMemoryPorts, memory: MemoryService,
                                                                      alice: MemoryScope) -> None:
    old = await remember(memory, alice, "my sister lives in Lyon", importance=4)
    new = await remember(memory, alice, "my sister lives in Nantes", supersedes=[old.episode_id])
    assert new.supersedes == (old.episode_id,)
    replaced = await memory.get_episode(alice, old.episode_id)
    assert replaced.status is EpisodeStatus.SUPERSEDED and replaced.superseded_by == new.episode_id
    assert replaced.superseded_at and replaced.content == old.content and replaced.importance == 4
    assert (await audit_ops(memory, alice))[1:] == [("remember", new.episode_id), ("supersede", old.episode_id)]


async def test_restore_of_a_superseded_record_names_the_correction_that_is_still_active(
        memory: MemoryService, alice: MemoryScope) -> None:
    old = await remember(memory, alice, "the office is on floor 2")
    new = await remember(memory, alice, "the office is on floor 5", supersedes=[old.episode_id])
    result = await memory.restore(alice, old.episode_id)
    assert result.previous_status is EpisodeStatus.SUPERSEDED
    assert result.episode.is_active and result.episode.superseded_by == new.episode_id
    assert result.active_correction is not None and result.active_correction.episode_id == new.episode_id
    stored_again = await memory.get_episode(alice, old.episode_id)
    assert stored_again.is_active and stored_again.superseded_by == new.episode_id
    assert ("restore", old.episode_id) in await audit_ops(memory, alice)


async def test_restore_of_a_superseded_record_whose_correction_is_gone_names_none(memory: MemoryService,
                                                                                   alice: MemoryScope) -> None:
    old = await remember(memory, alice, "the office is on floor 2")
    new = await remember(memory, alice, "the office is on floor 5", supersedes=[old.episode_id])
    await memory.archive(alice, new.episode_id)
    assert (await memory.restore(alice, old.episode_id)).active_correction is None
    await memory.forget(alice, new.episode_id)
    await memory.archive(alice, old.episode_id)
    assert (await memory.restore(alice, old.episode_id)).active_correction is None


async def test_archive_and_restore_round_trip_with_audited_previous_status(memory: MemoryService,
                                                                           alice: MemoryScope) -> None:
    kept = await remember(memory, alice, "the bike lock is red")
    archived = await memory.archive(alice, kept.episode_id)
    assert archived.status is EpisodeStatus.ARCHIVED and archived.status_changed_at
    assert await memory.recall(alice, "bike lock") == []
    restored = await memory.restore(alice, kept.episode_id)
    assert restored.episode.is_active and restored.previous_status is EpisodeStatus.ARCHIVED
    assert [e["meta"].get("previous_status") for e in await memory.audit_export(alice)][1:] == ["active", "archived"]


@pytest.mark.parametrize("op", ["archive", "restore"])
async def test_status_change_from_the_wrong_status_is_refused_and_changes_nothing(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope, op: str) -> None:
    record = await remember(memory, alice, "a record")
    if op == "archive":
        await memory.archive(alice, record.episode_id)
    before = fake.state()
    with pytest.raises(ValidationError):
        await (memory.archive(alice, record.episode_id) if op == "archive"
               else memory.restore(alice, record.episode_id))
    assert fake.state() == before


async def test_forget_deletes_one_record_and_audits_it(fake: InMemoryPorts, memory: MemoryService,
                                                       alice: MemoryScope) -> None:
    gone = await remember(memory, alice, "forget this one")
    kept = await remember(memory, alice, "keep this one")
    assert (await memory.forget(alice, gone.episode_id)).episode_id == gone.episode_id
    assert list(stored(fake, alice)) == [kept.episode_id]
    assert ("forget", gone.episode_id) in await audit_ops(memory, alice)
    with pytest.raises(NotFound):
        await memory.forget(alice, gone.episode_id)


async def test_bulk_delete_removes_exactly_the_matches_of_every_filter(fake: InMemoryPorts, memory: MemoryService,
                                                                       alice: MemoryScope, bob: MemoryScope) -> None:
    early, late = await import_many(memory, alice, [
        {"content": "old trip note", "tags": ["trip"], "timestamp": "2024-01-01T00:00:00Z"},
        {"content": "new trip note", "tags": ["trip"], "timestamp": "2026-01-01T00:00:00Z"},
    ])
    bobs = await remember(memory, bob, "bob's trip note", tags=["trip"])
    other = await remember(memory, alice, "unrelated")
    deleted = await memory.bulk_delete(alice, DeleteCriteria(tag="TRIP", before=datetime(2025, 1, 1, tzinfo=UTC)))
    assert [e.episode_id for e in deleted] == [early.episode_id]
    deleted = await memory.bulk_delete(alice, DeleteCriteria(speaker="bob"))
    assert [e.episode_id for e in deleted] == [bobs.episode_id]
    assert set(stored(fake, alice)) == {late.episode_id, other.episode_id}
    with pytest.raises(ValidationError):
        DeleteCriteria()


async def test_import_carries_links_inside_the_batch_to_the_new_ids(memory: MemoryService,
                                                                     alice: MemoryScope) -> None:
    old, new = await import_many(memory, alice, [
        {"id": "x1", "content": "lives in Lyon", "status": "superseded", "superseded_by": "x2",
         "superseded_at": "2025-01-01T00:00:00Z"},
        {"id": "x2", "content": "lives in Nantes", "supersedes": ["x1", "not-in-batch"]},
    ])
    assert old.episode_id not in ("x1", "x2") and old.original_id == "x1"
    assert old.superseded_by == new.episode_id and new.supersedes == (old.episode_id,)
    assert old.space_key == alice.space_key and old.status is EpisodeStatus.SUPERSEDED


async def test_import_keeps_given_senders_or_attributes_everything_to_the_importer(memory: MemoryService,
                                                                                   alice: MemoryScope) -> None:
    items = [{"content": "said by bob", "sender_id": "bob", "sender_name": "Bob"}, {"content": "no sender"}]
    kept = (await memory.import_episodes(alice, parse_records(items))).episodes
    assert [(e.sender_id, e.sender_name) for e in kept] == [("bob", "Bob"), ("alice", "Alice")]
    mine = await memory.import_episodes(alice, parse_records(items), keep_speakers=False)
    assert [(e.sender_id, e.sender_name, e.content) for e in mine.episodes] == [("alice", "Alice", "said by bob")]
    # Attributed to alice, "no sender" repeats her record of the first import: not written again.
    assert [(d.position, d.existing_id) for d in mine.duplicates] == [(2, kept[1].episode_id)]


async def test_imported_record_with_only_a_sender_id_is_not_given_the_importers_name(
        memory: MemoryService, alice: MemoryScope) -> None:
    only_id, only_name = (await memory.import_episodes(alice, parse_records([
        {"content": "said by bob", "sender_id": "bob"}, {"content": "said by dan", "sender_name": "Dan"}]))).episodes
    assert only_id.sender_id == "bob" and only_id.sender_name != "Alice"
    assert only_name.sender_name == "Dan" and only_name.sender_id != "alice"
