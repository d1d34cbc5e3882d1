"""The audit log (A1, A2): one entry per change, newest first in pages, cheap to append however long."""

from __future__ import annotations

import asyncio
import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ltm import MemoryScope, MemoryService, ValidationError, parse_records
from ltm._audit import ERASED_PERSON, AuditEntry, AuditLog, without_person
from ltm._bookkeeping import Bookkeeping
from ltm.timefields import format_utc
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import audit_ops, ident, memory_with_kb, remember


async def test_every_change_adds_one_entry_with_who_and_where(memory: MemoryService, alice: MemoryScope) -> None:
    episode = await remember(memory, alice, "remember me", tags=["t"])
    (entry,) = await memory.audit_export(alice)
    assert entry["operation"] == "remember" and entry["target_type"] == "episode"
    assert entry["target_id"] == episode.episode_id
    assert (entry["scope_key"], entry["user_key"]) == (alice.chat_key, alice.space_key)
    assert (entry["sender_id"], entry["sender_name"]) == ("alice", "Alice")
    assert entry["time"].endswith("Z") and "remember me" not in entry["summary"]


async def test_an_entry_holds_no_memory_text_not_even_its_tags(memory: MemoryService, alice: MemoryScope) -> None:
    """Issue 35, finding 4: a `remember` entry recorded the episode's tags, words of the memory that an
    erasure then left behind. Tags are memory text: no entry carries them."""
    await remember(memory, alice, "the zebracorn sleeps upstairs", tags=["quokka-den"])
    (entry,) = await memory.audit_export(alice)
    assert "quokka" not in json.dumps(entry) and "zebracorn" not in json.dumps(entry)


async def test_audit_pages_are_newest_first_and_export_is_oldest_first(memory: MemoryService,
                                                                       alice: MemoryScope) -> None:
    made = [(await memory.update_profile(alice, "session", {"notes": f"n{i}"})) for i in range(120)]
    assert len(made) == 120 and await memory.audit_count(alice) == 120
    first = await memory.audit_page(alice, 1, 50)
    assert first.pages == 3 and first.total == 120
    exported = await memory.audit_export(alice)
    assert first.entries == list(reversed(exported))[:50]
    last = await memory.audit_page(alice, 3, 50)
    assert last.entries == list(reversed(exported[:20]))
    with pytest.raises(ValidationError):
        await memory.audit_page(alice, 4, 50)


async def _storage_calls_of_one_append(size: int) -> dict[str, int]:
    fake = InMemoryPorts()
    memory = await memory_with_kb(fake)
    scope = await memory.scope_for(ident())
    for i in range(size):
        await memory.update_profile(scope, "session", {"notes": f"note {i}"})
    fake.calls.reset()
    await memory.update_profile(scope, "session", {"notes": "one more"})
    return {op: n for op, n in fake.calls.counts().items() if op.startswith("store.")}


async def test_appending_costs_the_same_for_a_short_and_a_long_log() -> None:
    # 7 and 157 entries before: both appends land inside a 50-entry chunk, so they cost the same.
    short, long = await _storage_calls_of_one_append(7), await _storage_calls_of_one_append(157)
    assert short == long
    # The write-ahead marker, the profile, the audit head and its last chunk are written once each and
    # the marker is deleted; the plugin keeps what it wrote, so none of them is read back from the host.
    assert long == {"store.set": 4, "store.delete": 1}


async def test_concurrent_changes_of_one_scope_lose_no_audit_entry(memory: MemoryService,
                                                                   alice: MemoryScope) -> None:
    writes = [remember(memory, alice, f"fact {i}") if i % 2 else
              memory.update_profile(alice, "session", {"notes": f"n{i}"}) for i in range(60)]
    await asyncio.wait_for(asyncio.gather(*writes), 30)
    ops = await audit_ops(memory, alice)
    assert len(ops) == 60
    assert sorted({op for op, _ in ops}) == ["remember", "update_profile"]
    assert len({t for op, t in ops if op == "remember"}) == 30


async def test_imports_and_document_ingests_audit_each_record(memory: MemoryService, alice: MemoryScope) -> None:
    imported = (await memory.import_episodes(alice, parse_records([{"content": "a"}, {"content": "b"}]))).episodes
    ingested = (await memory.ingest_document(alice, parse_records([{"content": "c"}]), "doc-1")).episodes
    entries = await memory.audit_export(alice)
    assert [(e["operation"], e["target_id"]) for e in entries] == [
        ("import", imported[0].episode_id), ("import", imported[1].episode_id),
        ("document_import", ingested[0].episode_id)]
    assert entries[-1]["meta"]["document_id"] == "doc-1"


def _merged(logs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The documented order, the slow way: newest first by time, then by the order of the logs."""
    keyed = [(entry["time"], -rank, position, entry) for rank, entries in enumerate(logs)
             for position, entry in enumerate(entries)]
    return [k[3] for k in sorted(keyed, key=lambda k: k[:3], reverse=True)]


@pytest.mark.parametrize("sizes", [(0, 37), (1, 1), (5, 180), (180, 5), (73, 121)])
async def test_every_page_of_two_merged_logs_matches_the_full_merge(sizes: tuple[int, int]) -> None:
    fake = InMemoryPorts()
    audit = AuditLog(Bookkeeping(fake.store))
    rng = random.Random(sum(sizes))
    logs: list[list[dict[str, Any]]] = []
    for name, size in zip(("l1:x", "l2:x"), sizes):
        moment, entries = datetime(2026, 1, 1, tzinfo=UTC), []
        for n in range(size):
            moment += timedelta(seconds=rng.choice([0, 0, 1, 2]))  # many entries share a second with the other log
            entries.append(AuditEntry("remember", "episode", f"{name}-{n}", "x", time=format_utc(moment)))
        await audit.append_many(name, entries)
        logs.append([e.to_dict() for e in entries])
    expected = _merged(logs)
    for page_size in (1, 7, 50):
        for page in range(1, max(1, -(-len(expected) // page_size)) + 1):
            got = await audit.merged_page(["l1:x", "l2:x"], page, page_size)
            assert got.entries == expected[(page - 1) * page_size : page * page_size], (page_size, page)
            assert got.total == len(expected)


async def test_a_deep_page_of_two_long_logs_reads_few_chunks() -> None:
    fake = InMemoryPorts()
    store = Bookkeeping(fake.store)
    audit = AuditLog(store)
    for name, offset in (("l1:x", 0), ("l2:x", 1)):
        base = datetime(2026, 1, 1, tzinfo=UTC)
        await audit.append_many(name, [AuditEntry("remember", "episode", f"{name}-{n}", "x",
                                                  time=format_utc(base + timedelta(seconds=2 * n + offset)))
                                       for n in range(5000)])
    cold = AuditLog(Bookkeeping(fake.store))  # a new process: nothing cached
    fake.calls.reset()
    last = await cold.merged_page(["l1:x", "l2:x"], 1000, 10)
    assert [e["target_id"] for e in last.entries] == [f"l{2 - n % 2}:x-{4 - n // 2}" for n in range(10)]
    assert fake.calls.count("store.get") <= 40  # two heads and a bisection's chunks, not 10,000 entries


def test_an_erasure_renames_the_person_in_a_folds_speaker_list_and_nowhere_else() -> None:
    """A conversation fold's audit entry lists the speakers it took in (sender ids, `meta.speakers`): an
    erasure names the erased person `(erased)` there and keeps the others, and leaves alone an entry whose
    list does not hold them, and a list that holds a word equal to their id elsewhere."""
    fold = {"operation": "conversation_fold", "sender_id": "u3", "sender_name": "Carol",
            "meta": {"turns": 2, "how": "model", "speakers": ["erin", "u2"], "summary_chars": 90}}
    scrubbed = without_person(fold, "erin", ())
    assert scrubbed["meta"]["speakers"] == [ERASED_PERSON, "u2"]
    assert scrubbed["sender_id"] == "u3" and scrubbed["meta"]["turns"] == 2 and fold["meta"]["speakers"] == ["erin", "u2"]
    others = {**fold, "meta": {**fold["meta"], "speakers": ["u2"], "how": "erin"}}
    assert without_person(others, "erin", ()) is others
