"""Record layout 1 -> 2 on every backend of the test host.

The store is written the way the current release (record layout 1) writes it: `legacy_metadata`
below is that release's `to_metadata`, unchanged, and the records go through the host's
`vector_upsert` with the episode id as the record id and the content as the document. Then a
new plugin process starts on the same host and storage, and its first use of the knowledge base
migrates them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.entities.io.errors import ActionCallTimeoutError

from ltm._storage import layout_marker_key as marker_key
from ltm.episodes.model import Episode
from ltm.langbot import layout
from ltm.ports import IndexRecord
from testhost import FakeLangBotHost, PluginHarness
from testhost.hooks import installation_audit, migrate_layout, top
from tests.service_helpers import ident, scope

# SeekDB and pgvector run this file in the default run too (tests/stores.py).
pytestmark = pytest.mark.stores_slice

KEEPS_METADATA = {"chroma", "qdrant", "seekdb", "valkey"}


def legacy_metadata(record: IndexRecord) -> dict[str, Any]:
    """Layout 1, as the current release writes it."""
    meta = dict(record.fields)
    meta.update(user_key=record.space_key, speaker_key=f"{record.space_key}|{record.speaker}",
                file_id=f"{record.space_key}#{record.record_id}", uuid=record.record_id, text=record.text)
    return meta


def legacy_episode(space_key: str, n: int, sender: str) -> Episode:
    return Episode(episode_id=f"00000000-0000-4000-8000-{n:012d}", space_key=space_key,
                   content=f"old plan number {n} for {space_key}", timestamp=f"2026-01-{1 + n % 28:02d}T10:00:00+00:00",
                   importance=1 + n % 5, tags=(f"tag{n % 3}",), sender_id=sender, sender_name=sender.title(),
                   source="tool")


async def write_legacy(host: FakeLangBotHost, kb_id: str, episodes: list[Episode]) -> None:
    records = [e.to_record() for e in episodes]
    vectors = host.embedding_models["emb-1"].embed([r.text for r in records])
    await host.call_action(A.VECTOR_UPSERT, {
        "collection_id": kb_id, "vectors": vectors, "ids": [r.record_id for r in records],
        "metadata": [legacy_metadata(r) for r in records], "documents": [r.text for r in records]})


async def old_release_store(host: FakeLangBotHost) -> tuple[str, dict[str, list[Episode]]]:
    """A memory KB whose records were written in layout 1 (no migration marker: the old release)."""
    first = PluginHarness(host)
    await first.start()
    kb_id = await first.create_memory_kb()
    await first.stop()
    del host.storage[marker_key(kb_id)]
    spaces = {"b1:group_g1": "alice", "b1:group_g2": "bob"}
    written = {key: [legacy_episode(key, n + 10 * i, sender) for n in range(7)]
               for i, (key, sender) in enumerate(spaces.items())}
    for episodes in written.values():
        await write_legacy(host, kb_id, episodes)
    return kb_id, written


async def migration_audit(memory: Any) -> list[dict[str, Any]]:
    """Audit entries of the migration, wherever this version files them (the installation log, or
    the log of each memory space)."""
    found: list[dict[str, Any]] = []
    for launcher, sender in (("g1", "alice"), ("g2", "bob")):
        found += await memory.audit_export(await scope(memory, ident(launcher, bot="b1", sender=sender)))
    installation = await installation_audit(memory)
    found += installation if isinstance(installation, list) else installation.entries
    unique = {json.dumps(e, sort_keys=True): e for e in found if e.get("operation") == "migration"}
    return list(unique.values())


def legacy_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if layout.legacy_record(r["metadata"]) is not None]


def layout2_rows(rows: list[dict[str, Any]]) -> list[IndexRecord]:
    return [rec for r in rows if (rec := layout.parse(r["metadata"])) is not None]


async def check_all_there(memory: Any, written: dict[str, list[Episode]], backend_name: str) -> None:
    for key, episodes in written.items():
        launcher = key.split("_", 1)[1]
        sc = await scope(memory, ident(launcher, bot="b1", sender=episodes[0].sender_id))
        assert sc.space_key == key
        stored = {e.episode_id: e for e in await memory.all_episodes(sc)}
        assert set(stored) == {e.episode_id for e in episodes}
        for old in episodes:
            new = stored[old.episode_id]
            assert new.content == old.content and new.space_key == key
            if backend_name in KEEPS_METADATA:  # every field came along
                assert new.to_public() == old.to_public()


async def test_first_use_migrates_a_store_written_by_the_current_release(host, backend_name):
    kb_id, written = await old_release_store(host)
    assert len(legacy_rows(await host.dump_kb(kb_id))) == 14
    plugin = PluginHarness(host)
    await plugin.start()
    try:
        memory = plugin.plugin.memory
        await check_all_there(memory, written, backend_name)  # the first use migrated the knowledge base
        rows = await host.dump_kb(kb_id)
        assert legacy_rows(rows) == []
        assert sorted(r.record_id for r in layout2_rows(rows)) == sorted(
            e.episode_id for episodes in written.values() for e in episodes)
        assert json.loads(host.storage[marker_key(kb_id)])["rewritten"] == 14
        audit = await migration_audit(memory)
        assert {e["target_id"] for e in audit} == set(written)
        assert sum(int(e["summary"].rsplit(": ", 1)[1]) for e in audit if "rewritten" in e["summary"]) == 14
        # Recall works on the migrated records, scoped.
        sc = await scope(memory, ident("g1", bot="b1", sender="alice"))
        hits = await memory.recall(sc, "old plan number 3", recipe=top(3))
        assert hits and all(h.episode.space_key == "b1:group_g1" for h in hits)
        # Idempotent: asked again, nothing is left to do.
        again = await migrate_layout(memory, kb_id)
        assert again.done and again.rewritten == 0 and again.removed == 0
    finally:
        await plugin.stop()


async def interrupted_migration(host: FakeLangBotHost, memory: Any, kb_id: str) -> None:
    """The delete of the old rows of the first space gets no answer: that space is fenced."""
    assert (await memory.health(None)).level.value == "green"  # probe the store now, so the fault hits the migration
    host.fail_next(A.VECTOR_DELETE, ActionCallTimeoutError("vector_delete timed out"), after_dispatch=False)
    report = await migrate_layout(memory, kb_id)
    assert not report.done and report.error.startswith("outcome_unknown")


async def test_migration_resumes_after_an_unknown_outcome_without_loss(supported_host, supported_backend_name):
    host = supported_host
    kb_id, written = await old_release_store(host)
    first_space, second_space = written
    plugin = PluginHarness(host)
    await plugin.start()
    try:
        memory = plugin.plugin.memory
        await interrupted_migration(host, memory, kb_id)
        # Written in layout 2 and read back, but the old rows were not removed: nothing is lost,
        # and the space whose delete had an unknown outcome is fenced.
        rows = await host.dump_kb(kb_id)
        assert len(legacy_rows(rows)) == 14 and len(layout2_rows(rows)) == 7
        assert [f.space.space_key for f in await memory.list_fences()] == [first_space]
        blocked = await migrate_layout(memory, kb_id)
        assert not blocked.done and blocked.fenced == [first_space] and blocked.rewritten == 7
        await memory.clear_fences(await scope(memory, ident("g1", bot="b1", sender="alice")))
        done = await migrate_layout(memory, kb_id)
        # The first space's copies were already there: only its old rows are removed now.
        assert done.done and done.rewritten == 0 and done.removed == 7
        rows = await host.dump_kb(kb_id)
        assert legacy_rows(rows) == [] and len(layout2_rows(rows)) == 14
        await check_all_there(memory, written, supported_backend_name)
        assert second_space in {e["target_id"] for e in await migration_audit(memory)}
    finally:
        await plugin.stop()


async def test_a_record_changed_after_its_copy_was_written_is_not_overwritten(supported_host):
    host = supported_host
    kb_id, written = await old_release_store(host)
    plugin = PluginHarness(host)
    await plugin.start()
    try:
        memory = plugin.plugin.memory
        await interrupted_migration(host, memory, kb_id)
        # The first use in this process tries again, skips the fenced space and is not repeated.
        assert len((await memory.list_episodes(await scope(memory, ident("g2", bot="b1", sender="bob")))).episodes)
        sc = await scope(memory, ident("g1", bot="b1", sender="alice"))
        await memory.clear_fences(sc)
        target = written["b1:group_g1"][0]
        await memory.archive(sc, target.episode_id)  # changes the layout-2 copy; the old row is still there
        assert len(legacy_rows(await host.dump_kb(kb_id))) == 7
        done = await migrate_layout(memory, kb_id)
        assert done.done and done.rewritten == 0 and done.removed == 7
        assert (await memory.get_episode(sc, target.episode_id)).status.value == "archived"
    finally:
        await plugin.stop()
