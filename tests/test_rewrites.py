"""Rewriting a record on a store that inserts (a Milvus cluster as LangBot drives it: a second write of
an id adds a row). A change is one gated step: the new row is written under the record's other key before the old row is deleted, so a refusal, a
lost answer or a cancellation between the two steps never loses the record."""

from __future__ import annotations

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.entities.io.errors import ActionCallError, ActionCallTimeoutError

from ltm.errors import HostError, OutcomeUnknown
from ltm.langbot import layout
from testhost import FakeLangBotHost, make_backend
from tests.service_helpers import ident, scope, start_with_kb


@pytest.fixture
async def insert_only() -> FakeLangBotHost:
    host = FakeLangBotHost(make_backend("milvus-insert"))
    host.add_embedding_model("emb-1")
    yield host
    await host.close()


def rows_of(rows: list[dict], episode_id: str) -> list[layout.IndexRecord]:
    return [r for row in rows if (r := layout.parse(row["metadata"])) is not None and r.record_id == episode_id]


async def test_a_change_leaves_exactly_one_row(insert_only):
    harness, kb = await start_with_kb(insert_only)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident("g1"))
        episode = (await memory.remember(sc, {"content": "the plan"})).episode
        await memory.archive(sc, episode.episode_id)
        await memory.restore(sc, episode.episode_id)
        stored = rows_of(await insert_only.dump_kb(kb), episode.episode_id)
        assert [r.fields["status"] for r in stored] == ["active"]
    finally:
        await harness.stop()


def refuse_upserts(host: FakeLangBotHost, which: set[int]) -> None:
    """Refuse the n-th vector upserts (counted from now) with an error answer of the host."""
    seen = {"n": 0}
    original = host._routes[A.VECTOR_UPSERT.value]

    async def route(data: dict) -> dict:
        seen["n"] += 1
        if seen["n"] in which:
            raise ActionCallError("[VectorStoreError/X] refused")
        return await original(data)

    host._routes[A.VECTOR_UPSERT.value] = route


async def test_a_refused_new_row_leaves_the_old_one_as_it_was(insert_only):
    harness, kb = await start_with_kb(insert_only)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident("g1"))
        episode = (await memory.remember(sc, {"content": "the plan"})).episode
        refuse_upserts(insert_only, {1})
        with pytest.raises(HostError, match="refused"):
            await memory.archive(sc, episode.episode_id)
        assert (await memory.fences_of(sc))["l2"] is None  # a refusal: nothing changed
        stored = rows_of(await insert_only.dump_kb(kb), episode.episode_id)
        assert [r.fields["status"] for r in stored] == ["active"]
    finally:
        await harness.stop()


async def test_an_unanswered_new_row_fences_and_keeps_the_old_one(insert_only):
    harness, kb = await start_with_kb(insert_only)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident("g1"))
        episode = (await memory.remember(sc, {"content": "the plan"})).episode
        insert_only.fail_next(A.VECTOR_UPSERT, ActionCallTimeoutError("timed out"), after_dispatch=False)
        with pytest.raises(OutcomeUnknown, match="paused"):
            await memory.archive(sc, episode.episode_id)
        assert (await memory.fences_of(sc))["l2"] is not None
        stored = rows_of(await insert_only.dump_kb(kb), episode.episode_id)
        assert [r.fields["status"] for r in stored] == ["active"]  # never lost
    finally:
        await harness.stop()


async def test_a_refused_supersede_rolls_the_correction_back(insert_only):
    harness, kb = await start_with_kb(insert_only)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident("g1"))
        old = (await memory.remember(sc, {"content": "the offsite is in Lisbon"})).episode
        refuse_upserts(insert_only, {2})  # the new record is written, the supersede of the old one refused
        with pytest.raises(HostError, match="nothing changed"):
            await memory.remember(sc, {"content": "the offsite moved to Porto", "supersedes": [old.episode_id]})
        assert [(e.episode_id, e.status.value) for e in await memory.all_episodes(sc)] == [(old.episode_id, "active")]
        assert (await memory.fences_of(sc))["l2"] is None
    finally:
        await harness.stop()


@pytest.mark.parametrize("kind", ["timeout", "refusal"])
async def test_a_rewrite_survives_a_failed_delete_of_the_old_row(insert_only, kind):
    """The new row is written under the record's other key before the old row is deleted: a lost or
    refused delete leaves two rows, and every read keeps the newer; the next change tidies up."""
    harness, kb = await start_with_kb(insert_only)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident("g1"))
        episode = (await memory.remember(sc, {"content": "the plan"})).episode
        failure = ActionCallTimeoutError("timed out") if kind == "timeout" else ActionCallError("[X] refused")
        insert_only.fail_next(A.VECTOR_DELETE, failure, after_dispatch=False)
        archived = await memory.archive(sc, episode.episode_id)
        assert archived.status.value == "archived"
        assert (await memory.fences_of(sc))["l2"] is None
        assert [e.status.value for e in await memory.all_episodes(sc)] == ["archived"]
        assert await memory.recall(sc, "the plan") == []
        assert sorted(r.fields["status"] for r in rows_of(await insert_only.dump_kb(kb), episode.episode_id)) == [
            "active", "archived"]
        await memory.restore(sc, episode.episode_id)  # both old rows go, one new row stays
        assert [r.fields["status"] for r in rows_of(await insert_only.dump_kb(kb), episode.episode_id)] == ["active"]
        await memory.forget(sc, episode.episode_id)
        assert rows_of(await insert_only.dump_kb(kb), episode.episode_id) == []
    finally:
        await harness.stop()


async def test_reads_keep_the_newest_of_two_rows(insert_only):
    harness, kb = await start_with_kb(insert_only)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident("g1"))
        episode = (await memory.remember(sc, {"content": "the plan"})).episode
        archived = episode.with_status(type(episode.status)("archived"))
        record = archived.to_record()
        vector = insert_only.embedding_models["emb-1"].embed([record.text])
        # A second row written behind the plugin's back (a store that kept both rows of a rewrite).
        await insert_only.call_action(A.VECTOR_UPSERT, {
            "collection_id": kb, "vectors": vector, "ids": [layout.host_id(record.space_key, record.record_id)],
            "metadata": [layout.to_metadata(record)], "documents": [record.text]})
        assert len(rows_of(await insert_only.dump_kb(kb), episode.episode_id)) == 2
        assert (await memory.get_episode(sc, episode.episode_id)).status.value == "archived"
        assert [e.status.value for e in await memory.all_episodes(sc)] == ["archived"]
        assert await memory.recall(sc, "the plan") == []  # the archived row wins in search too
    finally:
        await harness.stop()
