"""Truthful outcomes of multi-step writes: what is stored, what the caller is told and what the
audit says always agree (A1, F2, E4/E5, E10)."""

from __future__ import annotations

import pytest

from ltm import (
    DeleteCriteria,
    HostError,
    MemoryScope,
    MemoryService,
    OutcomeUnknown,
    PartialWrite,
    UnrecordedChange,
    parse_records,
)
from ltm._storage import document_key
from ltm.episodes.store import UPSERT_BATCH
from testhost.memory_ports import Call, InMemoryPorts
from tests.unit.support import KB, audit_ops, fenced, import_many, kv_json, l2, remember, stored


def _audit_writes(call: Call) -> bool:
    return str(call.args["key"]).startswith("v2/audit/")


def _items(n: int, **extra: object) -> list[dict[str, object]]:
    return [{"content": f"imported fact number {i}", **extra} for i in range(n)]


# --------------------------------------------------------------------------- supersede (E4, E5)
async def test_supersede_whose_second_step_is_refused_changes_nothing(fake: InMemoryPorts, memory: MemoryService,
                                                                      alice: MemoryScope) -> None:
    old = await remember(memory, alice, "the dentist is on Monday")
    index_before = fake.state().index
    fake.faults.fail("index.upsert", HostError("refused"), skip=1)  # the new record lands, the old one's update not
    with pytest.raises(HostError) as refused:
        await remember(memory, alice, "the dentist is on Tuesday", supersedes=[old.episode_id])
    assert "nothing changed" in str(refused.value)
    assert fake.state().index == index_before  # the new record was rolled back
    assert (await memory.get_episode(alice, old.episode_id)).is_active
    ops = await audit_ops(memory, alice)
    new_id = ops[-1][1]
    assert [op for op, _ in ops] == ["remember", "remember", "remember_rollback"]
    assert ops[-2] == ("remember", new_id) and new_id != old.episode_id
    assert await fenced(memory) == []


async def test_supersede_whose_rollback_is_refused_reports_exactly_the_record_left_behind(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope) -> None:
    old = await remember(memory, alice, "the dentist is on Monday")
    fake.faults.fail("index.upsert", HostError("refused"), skip=1)
    fake.faults.fail("index.delete", HostError("refused too"))
    with pytest.raises(PartialWrite) as partial:
        await remember(memory, alice, "the dentist is on Tuesday", supersedes=[old.episode_id])
    records = stored(fake, alice)
    (new_id,) = set(records) - {old.episode_id}
    # Told: the new record was applied. Stored: the new record, and the old one unchanged. Audited: the new one.
    assert partial.value.details["applied"] == [f"episode:{new_id}"]
    assert records[new_id]["status"] == "active" and records[old.episode_id]["status"] == "active"
    assert "superseded_by" not in records[old.episode_id]
    assert (await audit_ops(memory, alice))[1:] == [("remember", new_id)]
    assert await fenced(memory) == []


async def test_supersede_whose_rollback_is_lost_fences_and_names_the_record(fake: InMemoryPorts,
                                                                            memory: MemoryService,
                                                                            alice: MemoryScope) -> None:
    old = await remember(memory, alice, "the dentist is on Monday")
    fake.faults.fail("index.upsert", HostError("refused"), skip=1)
    fake.faults.fail("index.delete", OutcomeUnknown("no answer"))
    with pytest.raises(OutcomeUnknown) as lost:
        await remember(memory, alice, "the dentist is on Tuesday", supersedes=[old.episode_id])
    (new_id,) = set(stored(fake, alice)) - {old.episode_id}
    assert lost.value.details["applied"] == [f"episode:{new_id}"]
    assert await fenced(memory) == [l2(alice).key]
    assert (await audit_ops(memory, alice))[1:] == [("remember", new_id)]


async def test_an_embedding_timeout_in_a_correction_leaves_nothing_changed(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope) -> None:
    """Both steps of a correction are embedded in one call before any write, so an embedding timeout
    (no write dispatched, so no fence) leaves the old record active and stores nothing new."""
    old = await remember(memory, alice, "the dentist is on Monday")
    index_before = fake.state().index
    fake.faults.fail("embedder.embed", OutcomeUnknown("embedding timed out"))
    with pytest.raises(OutcomeUnknown):
        await remember(memory, alice, "the dentist is on Tuesday", supersedes=[old.episode_id])
    assert fake.state().index == index_before
    assert await fenced(memory) == []
    assert (await audit_ops(memory, alice))[1:] == []


# --------------------------------------------------------------------------- import batches
async def test_import_whose_second_batch_is_refused_names_exactly_the_first_batch(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope) -> None:
    fake.faults.fail("index.upsert", HostError("refused"), skip=1)
    with pytest.raises(PartialWrite) as partial:
        await import_many(memory, alice, _items(100))
    records = stored(fake, alice)
    assert len(records) == UPSERT_BATCH == 64
    assert sorted(partial.value.details["applied"]) == sorted(f"episode:{i}" for i in records)
    audited = [t for op, t in await audit_ops(memory, alice) if op == "import"]
    assert sorted(audited) == sorted(records)
    assert {r["content"] for r in records.values()} == {f"imported fact number {i}" for i in range(64)}
    assert await fenced(memory) == []


async def test_import_whose_second_batch_is_lost_fences_and_names_the_first_batch(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope) -> None:
    fake.faults.fail("index.upsert", OutcomeUnknown("no answer"), skip=1, after_apply=True)
    with pytest.raises(OutcomeUnknown) as lost:
        await import_many(memory, alice, _items(100))
    assert len(lost.value.details["applied"]) == 64  # surely applied; the rest may be: the fence says so
    assert len(stored(fake, alice)) == 100
    assert len([op for op, _ in await audit_ops(memory, alice) if op == "import"]) == 64
    assert await fenced(memory) == [l2(alice).key]


# --------------------------------------------------------------------------- documents (E10)
async def test_document_ingest_stopped_part_way_can_still_be_deleted_completely(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope) -> None:
    fake.faults.fail("index.upsert", HostError("refused"), skip=1)
    with pytest.raises(PartialWrite) as partial:
        await memory.ingest_document(alice, parse_records(_items(100)), "doc-7")
    index = kv_json(fake, document_key(KB, "doc-7"))
    assert len(index["ids"]) == 100 and index["user_key"] == alice.space_key
    assert set(stored(fake, alice)) <= set(index["ids"]) and len(stored(fake, alice)) == 64
    assert len(partial.value.details["applied"]) == 64
    assert await memory.delete_document(KB, "doc-7") == 64
    assert stored(fake, alice) == {}
    assert kv_json(fake, document_key(KB, "doc-7")) is None
    deleted = [t for op, t in await audit_ops(memory, alice) if op == "document_delete"]
    assert len(deleted) == 64


async def test_document_ingest_whose_first_write_fails_leaves_an_index_that_deletes_cleanly(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope) -> None:
    fake.faults.fail("index.upsert", HostError("refused"))
    with pytest.raises(HostError):
        await memory.ingest_document(alice, parse_records(_items(3)), "doc-8")
    assert len(kv_json(fake, document_key(KB, "doc-8"))["ids"]) == 3
    assert stored(fake, alice) == {}
    assert await memory.delete_document(KB, "doc-8") == 0
    assert kv_json(fake, document_key(KB, "doc-8")) is None


async def test_document_delete_removes_only_that_documents_records(fake: InMemoryPorts, memory: MemoryService,
                                                                   alice: MemoryScope) -> None:
    await memory.ingest_document(alice, parse_records(_items(3)), "doc-a")
    other = (await memory.ingest_document(alice, parse_records(_items(2)), "doc-b")).episodes
    typed = await remember(memory, alice, "typed by hand")
    assert await memory.delete_document(KB, "doc-a") == 3
    assert set(stored(fake, alice)) == {e.episode_id for e in other} | {typed.episode_id}
    assert await memory.delete_document(KB, "doc-a") == 0


# --------------------------------------------------------------------------- bulk delete
async def test_bulk_delete_failing_part_way_names_exactly_what_was_deleted(fake: InMemoryPorts,
                                                                           memory: MemoryService,
                                                                           alice: MemoryScope) -> None:
    await import_many(memory, alice, _items(100, tags=["old"]))
    keep = await remember(memory, alice, "not matched by the filter", tags=["new"])
    before = set(stored(fake, alice))
    fake.faults.fail("index.delete", HostError("refused"), skip=1)
    with pytest.raises(PartialWrite) as partial:
        await memory.bulk_delete(alice, DeleteCriteria(tag="old"))
    gone = before - set(stored(fake, alice))
    assert len(gone) == 64 and keep.episode_id in stored(fake, alice)
    assert sorted(partial.value.details["applied"]) == sorted(f"episode:{i}" for i in gone)
    assert sorted(t for op, t in await audit_ops(memory, alice) if op == "bulk_delete") == sorted(gone)
    assert await fenced(memory) == []


# --------------------------------------------------------------------------- lost audit entries (A1)
@pytest.mark.parametrize("exc", [HostError("audit refused"), OutcomeUnknown("audit lost")],
                         ids=["refused", "lost"])
async def test_change_whose_audit_entry_is_not_written_fences_and_says_so(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope, exc: Exception) -> None:
    fake.faults.fail("store.set", exc, where=_audit_writes)
    with pytest.raises(UnrecordedChange) as unrecorded:
        await remember(memory, alice, "stored but not audited")
    (episode_id,) = stored(fake, alice)
    assert unrecorded.value.details["applied"] == [f"episode:{episode_id}"]
    assert await audit_ops(memory, alice) == []
    assert await fenced(memory) == [l2(alice).key]


async def test_profile_change_whose_audit_entry_is_not_written_fences_its_l1_space(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope) -> None:
    fake.faults.fail("store.set", HostError("audit refused"), where=_audit_writes)
    with pytest.raises(UnrecordedChange):
        await memory.update_profile(alice, "session", {"name": "Book club"})
    assert (await memory.profiles(alice)).session.name == "Book club"
    assert await fenced(memory) == [f"l1:{alice.chat_key}"]


async def test_lost_audit_after_a_failed_write_fences_and_keeps_the_original_error(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope) -> None:
    old = await remember(memory, alice, "the dentist is on Monday")
    fake.faults.fail("index.upsert", HostError("refused"), skip=1)
    fake.faults.fail("store.set", HostError("audit refused"), where=_audit_writes)
    with pytest.raises(HostError):
        await remember(memory, alice, "the dentist is on Tuesday", supersedes=[old.episode_id])
    assert list(stored(fake, alice)) == [old.episode_id]
    assert await fenced(memory) == [l2(alice).key]
