"""Ranking, fact-time validation, fences and audit cost of the memory service (issue 2)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.entities.io.errors import ActionCallError, ActionCallTimeoutError, ConnectionClosedError

from ltm import DeleteCriteria, parse_records
from ltm._audit import AuditEntry
from ltm.episodes.lifecycle import STORED
from ltm.episodes.model import EpisodeStatus
from ltm.errors import (
    FencedError,
    HostError,
    NoKnowledgeBase,
    NotFound,
    OutcomeUnknown,
    UnrecordedChange,
    ValidationError,
)
from ltm.spaces import Space
from ltm.timefields import format_utc, utc_now
from testhost import PluginHarness
from testhost.hooks import top
from tests.service_helpers import ident, scope, start_with_kb


@pytest.fixture
async def plugin(supported_host):
    harness, kb_id = await start_with_kb(supported_host)
    yield harness, kb_id
    await harness.stop()


async def test_recent_beats_old_at_equal_similarity(plugin):
    harness, _ = plugin
    memory = harness.plugin.memory
    sc = await scope(memory, ident())
    old_stamp = format_utc(utc_now() - timedelta(days=120))
    # Two other speakers with one name, so the records differ by time only (one speaker's repeat of a
    # stored fact is not written again).
    old, new = (await memory.import_episodes(sc, parse_records([
        {"content": "team dinner on friday", "timestamp": old_stamp, "sender_id": "bob", "sender_name": "Sam"},
        {"content": "team dinner on friday", "sender_id": "carol", "sender_name": "Sam"},
    ]))).episodes
    hits = await memory.recall(sc, "team dinner", recipe=top(2))
    assert [h.episode.episode_id for h in hits] == [new.episode_id, old.episode_id]


async def test_exact_id_query_returns_that_episode_without_embedding(plugin):
    harness, _ = plugin
    memory = harness.plugin.memory
    sc = await scope(memory, ident())
    target = (await memory.remember(sc, {"content": "the locker code changed to the blue key"})).episode
    for i in range(30):
        await memory.remember(sc, {"content": f"filler note {i} about weather"})
    harness.host.reset_counts()
    hits = await memory.recall(sc, target.episode_id, recipe=top(3))
    assert hits[0].episode.episode_id == target.episode_id
    assert harness.host.count(A.INVOKE_EMBEDDING) == 0


async def test_exact_snippet_beyond_the_first_top_k_still_wins(plugin):
    harness, _ = plugin
    memory = harness.plugin.memory
    sc = await scope(memory, ident())
    for i in range(40):
        await memory.remember(sc, {"content": f"meeting notes about the quarterly budget review part {i}"})
    target = (await memory.remember(sc, {"content": "budget owner is the orange team lead"})).episode
    hits = await memory.recall(sc, "orange team lead", recipe=top(3))
    assert hits[0].episode.episode_id == target.episode_id


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"event_at": "2026-05-01T09:00:00"}, "timezone"),
        ({"valid_from": "2026-05-02T00:00:00Z", "valid_until": "2026-05-01T00:00:00Z"}, "earlier"),
        ({"valid_until": "next week"}, "ISO-8601"),
        ({"importance": 9}, "importance"),
        ({"content": "  "}, "content is required"),
        ({"content": "my password: hunter2hunter2"}, "secret"),
    ],
)
async def test_bad_time_fields_and_content_write_nothing(plugin, fields, message):
    harness, _ = plugin
    memory = harness.plugin.memory
    sc = await scope(memory, ident())
    harness.host.reset_counts()
    with pytest.raises(ValidationError, match=message):
        await memory.remember(sc, {"content": "a plan", **fields})
    assert harness.host.count(A.VECTOR_UPSERT) == 0
    assert await memory.parts.fences.all() == []


async def test_fact_time_is_normalized_to_utc_and_kept(plugin):
    harness, _ = plugin
    memory = harness.plugin.memory
    sc = await scope(memory, ident())
    ep = (await memory.remember(sc, {"content": "flight to Oslo", "event_at": "2026-07-01T08:30:00.250+02:00",
                                    "valid_from": "2026-06-01T00:00:00Z", "claim_type": "user_statement",
                                    "source_ref": "chat:42"})).episode
    back = await memory.get_episode(sc, ep.episode_id)
    assert back.fact.event_at == "2026-07-01T06:30:00.250000Z"
    assert (back.fact.valid_from, back.fact.source_ref, back.fact.claim_type.value) == (
        "2026-06-01T00:00:00Z", "chat:42", "user_statement")


@pytest.mark.parametrize("failure", [ActionCallTimeoutError, ConnectionClosedError])
async def test_unknown_outcome_fences_exactly_one_scope_and_survives_restart(plugin, failure):
    harness, kb_id = plugin
    host = harness.host
    memory = harness.plugin.memory
    a, b = await scope(memory, ident("g1")), await scope(memory, ident("g2"))
    kept = (await memory.remember(a, {"content": "plan before the outage"})).episode
    host.fail_next(A.VECTOR_UPSERT, failure, after_dispatch=True)
    with pytest.raises(OutcomeUnknown):
        await memory.remember(a, {"content": "plan during the outage"})
    assert [f.space for f in await memory.parts.fences.all()] == [Space.l2(a.l2)]
    with pytest.raises(FencedError):
        await memory.remember(a, {"content": "plan after the outage"})
    await memory.remember(b, {"content": "other scope keeps writing"})
    # Reads keep working in the fenced scope.
    assert kept.episode_id in {h.episode.episode_id for h in await memory.recall(a, "plan", recipe=top(5))}
    assert (await memory.list_episodes(a)).total == 2

    # A new plugin instance (new service, empty caches) on the same storage. Modules are kept so
    # this test's error classes stay the plugin's error classes.
    await harness.restart(fresh_modules=False)
    memory = harness.plugin.memory
    a = await scope(memory, ident("g1"))
    with pytest.raises(FencedError):
        await memory.archive(a, kept.episode_id)
    with pytest.raises(FencedError):
        await memory.forget(a, kept.episode_id)
    assert (await memory.get_episode(a, kept.episode_id)).is_active
    assert await memory.clear_fences(a) == [Space.l2(a.l2).key]
    await memory.remember(a, {"content": "writes resume after the admin clears the fence"})
    entries = (await memory.audit_page(a, 1)).entries
    assert entries[1]["operation"] == "fence_clear"


async def test_deterministic_failures_never_fence(plugin):
    harness, _ = plugin
    host = harness.host
    memory = harness.plugin.memory
    sc = await scope(memory, ident())
    with pytest.raises(ValidationError):
        await memory.remember(sc, {"content": ""})
    host.fail_next(A.VECTOR_UPSERT, ActionCallError("[VectorStoreError/X] refused"), after_dispatch=False)
    with pytest.raises(HostError):
        await memory.remember(sc, {"content": "host says no"})
    host.fail_next(A.INVOKE_EMBEDDING, ActionCallTimeoutError, after_dispatch=False)
    with pytest.raises(OutcomeUnknown):
        await memory.remember(sc, {"content": "embedding timed out before any write"})
    assert await memory.parts.fences.all() == []
    await memory.remember(sc, {"content": "still writable"})


async def test_cancellation_before_dispatch_does_not_fence(plugin):
    harness, _ = plugin
    memory = harness.plugin.memory
    sc = await scope(memory, ident())
    space = Space.l2(sc.l2)
    async with memory.parts.gate.hold(space):  # a write in progress holds the scope
        waiting = asyncio.create_task(memory.remember(sc, {"content": "queued write"}))
        await asyncio.sleep(0.05)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    assert await memory.parts.fences.all() == []
    assert (await memory.list_episodes(sc)).total == 0


async def test_audit_append_cost_does_not_grow_with_log_length(plugin):
    harness, _ = plugin
    host = harness.host
    audit = harness.plugin.memory.parts.audit

    def entry(i: int) -> AuditEntry:
        return AuditEntry(operation="remember", target_type="episode", target_id=f"id-{i:05d}", chat_key="s",
                          summary=STORED(chars=20, importance=2))

    async def bytes_for_one_append() -> int:
        before = host.storage_bytes_written
        await audit.append_many("s", [entry(0)])
        return host.storage_bytes_written - before

    await audit.append_many("s", [entry(i) for i in range(10)])
    small = await bytes_for_one_append()
    await audit.append_many("s", [entry(i) for i in range(9_989)])
    assert await audit.count("s") == 10_000
    large = await bytes_for_one_append()
    assert large <= small * 1.2 + 64, (small, large)
    page = await audit.page("s", 1, 10)
    assert page.total == 10_001 and page.pages == 1001 and len(page.entries) == 10


async def test_spaces_larger_than_one_enumeration_are_never_passed_off_as_complete(plugin, monkeypatch):
    import ltm.episodes.store as store

    harness, _ = plugin
    memory = harness.plugin.memory
    sc = await scope(memory, ident())
    await memory.import_episodes(sc, parse_records([{"content": f"note {i}", "tags": ["old"]} for i in range(7)]))
    monkeypatch.setattr(store, "LIST_BATCH", 2)
    monkeypatch.setattr(store, "MAX_ENUMERATED", 4)
    export = await memory.export_episodes(sc, (EpisodeStatus.ACTIVE,))
    assert export["truncated"] is True and len(export["episodes"]) == 4
    # Listings come from the space's own index, which holds every record: complete, not cut.
    listed = await memory.list_episodes(sc)
    assert (listed.truncated, listed.total) == (False, 7)
    deleted = await memory.bulk_delete(sc, DeleteCriteria(tag="old"))
    assert len(deleted) == 7  # in rounds, nothing left behind
    monkeypatch.setattr(store, "MAX_ENUMERATED", 20_000)
    assert (await memory.list_episodes(sc)).total == 0


@pytest.mark.parametrize("step", ["head read", "chunk write"])
async def test_a_change_whose_audit_entry_is_lost_fences_its_space(plugin, step):
    """(The plugin keeps the records it wrote, so the audit head is read from the host only when its
    last write had an unknown outcome; "head read" forces that case.)"""
    """An unrecorded change must not look recorded: the caller is told, the space is fenced."""
    harness, kb_id = plugin
    host, memory = harness.host, harness.plugin.memory
    sc = await scope(memory, ident())
    other = await scope(memory, ident("g2"))
    if step == "head read":
        # An earlier audit head write of this space was lost, so the store must ask the host next time...
        await memory.remember(sc, {"content": "an earlier change"})
        store = memory.parts.audit._store
        store._uncertain.update(k for k in list(store._known or []) if k.endswith("/head"))
        store._values.clear()
        # ...and that read is not answered either.
        host.fail_next(A.GET_PLUGIN_STORAGE, ActionCallTimeoutError, after_dispatch=False)
    else:
        # The first storage write is the write-ahead marker; the second, the audit chunk.
        host.fail_next(A.SET_PLUGIN_STORAGE, ActionCallError("[StorageError] disk full"), after_dispatch=False,
                       skip=1)
    with pytest.raises(UnrecordedChange) as raised:
        await memory.remember(sc, {"content": "stored but not audited"})
    [applied] = raised.value.details["applied"]
    assert [f.space.key for f in await memory.parts.fences.all()] == [Space.l2(sc.l2).key]
    stored = [e for e in await memory.all_episodes(sc) if e.content == "stored but not audited"]
    assert len(stored) == 1 and applied.endswith(stored[0].episode_id)  # the truth: it is stored
    assert applied.split(":")[-1] not in {e["target_id"] for e in await memory.audit_export(sc)}
    with pytest.raises(FencedError):
        await memory.remember(sc, {"content": "refused until checked"})
    await memory.remember(other, {"content": "another space keeps writing"})


async def test_one_busy_scope_never_blocks_another_and_same_scope_writes_queue(plugin):
    harness, _ = plugin
    memory = harness.plugin.memory
    a, b = await scope(memory, ident("g1")), await scope(memory, ident("g2"))
    async with memory.parts.gate.hold(Space.l2(a.l2)):  # scope A is mid-write
        queued = asyncio.create_task(memory.remember(a, {"content": "waits for A's lock"}))
        await asyncio.wait_for(memory.remember(b, {"content": "B is not blocked"}), timeout=5)
        assert (await memory.list_episodes(a)).total == 0  # reads of A do not wait either
        assert not queued.done()
    await asyncio.wait_for(queued, timeout=5)
    many = await asyncio.gather(*[memory.remember(a, {"content": f"parallel {i}"}) for i in range(8)])
    assert len({r.episode.episode_id for r in many}) == 8
    assert (await memory.list_episodes(a, page_size=50)).total == 9
    assert len(await memory.audit_export(a)) == 9


async def test_kb_registration_is_serialized_on_the_installation_scope(supported_host):
    harness = PluginHarness(supported_host)
    await harness.start()
    try:
        memory = harness.plugin.memory
        first, second = supported_host.create_kb(), supported_host.create_kb()
        results = await asyncio.gather(
            memory.register_kb(first, {"embedding_model_uuid": "emb-1"}),
            memory.register_kb(second, {"embedding_model_uuid": "emb-1"}),
            return_exceptions=True,
        )
        assert sum(isinstance(r, ValidationError) for r in results) == 1
        winner = first if not isinstance(results[0], Exception) else second
        assert (await memory.memory_kb())[0] == winner
    finally:
        await harness.stop()


async def test_kb_deletion_waits_for_a_write_in_flight_and_refuses_later_ones(plugin, monkeypatch):
    """An upsert in flight while the KB is deleted must not land in the deleted collection (issue 11.4)."""
    harness, kb_id = plugin
    host, memory = harness.host, harness.plugin.memory
    sc = await scope(memory, ident())
    released = asyncio.Event()
    entered = asyncio.Event()
    original = host.backend.upsert

    async def slow_upsert(*args, **kwargs):
        entered.set()
        await released.wait()
        return await original(*args, **kwargs)

    monkeypatch.setattr(host.backend, "upsert", slow_upsert)
    writing = asyncio.create_task(memory.remember(sc, {"content": "written while the KB is removed"}))
    await asyncio.wait_for(entered.wait(), timeout=5)
    removing = asyncio.create_task(harness.kb_delete(kb_id))
    await asyncio.sleep(0.05)
    assert not removing.done()  # the removal waits for the write in flight
    released.set()
    await asyncio.wait_for(writing, timeout=5)
    await asyncio.wait_for(removing, timeout=5)
    assert await host.dump_kb(kb_id) == []  # the record did not survive the removal
    with pytest.raises((NoKnowledgeBase, NotFound, ValidationError)):
        await memory.remember(sc, {"content": "after the removal"})
