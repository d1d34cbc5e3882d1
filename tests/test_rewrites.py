"""Rewriting a record on a store that inserts (a Milvus cluster as LangBot drives it: a second write of
an id adds a row). A change is delete-then-write inside one gated step: never a silent duplicate, and
a lost answer between the delete and the write never loses the record."""

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
        episode = await memory.remember(sc, {"content": "the plan"})
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


async def test_refused_write_after_the_delete_writes_the_old_row_back(insert_only):
    harness, kb = await start_with_kb(insert_only)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident("g1"))
        episode = await memory.remember(sc, {"content": "the plan"})
        refuse_upserts(insert_only, {1})
        with pytest.raises(HostError, match="written back"):
            await memory.archive(sc, episode.episode_id)
        assert (await memory.fences_of(sc))["l2"] is None  # a refusal: nothing changed
        stored = rows_of(await insert_only.dump_kb(kb), episode.episode_id)
        assert [r.fields["status"] for r in stored] == ["active"]
    finally:
        await harness.stop()


async def test_refused_write_and_refused_write_back_fence_the_space(insert_only):
    harness, kb = await start_with_kb(insert_only)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident("g1"))
        episode = await memory.remember(sc, {"content": "the plan"})
        refuse_upserts(insert_only, {1, 2})
        with pytest.raises(OutcomeUnknown, match="paused"):
            await memory.archive(sc, episode.episode_id)
        assert (await memory.fences_of(sc))["l2"] is not None
        assert rows_of(await insert_only.dump_kb(kb), episode.episode_id) == []  # what an admin must look at
    finally:
        await harness.stop()


async def test_a_refused_supersede_rolls_the_correction_back(insert_only):
    harness, kb = await start_with_kb(insert_only)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident("g1"))
        old = await memory.remember(sc, {"content": "the offsite is in Lisbon"})
        refuse_upserts(insert_only, {2})  # the new record is written, the supersede of the old one refused
        with pytest.raises(HostError, match="nothing changed"):
            await memory.remember(sc, {"content": "the offsite moved to Porto", "supersedes": [old.episode_id]})
        assert [(e.episode_id, e.status.value) for e in await memory.all_episodes(sc)] == [(old.episode_id, "active")]
        assert (await memory.fences_of(sc))["l2"] is None
    finally:
        await harness.stop()


@pytest.mark.parametrize("step", ["delete", "insert"])
async def test_a_rewrite_survives_a_lost_answer_between_its_steps(insert_only, step):
    """The old row is deleted first: if the rewrite stopped at a lost answer, the record would be gone.
    It goes on past an unanswered delete and sends an unanswered insert again (a second row of a record
    is harmless: reads keep the newest row, a delete removes every row)."""
    harness, kb = await start_with_kb(insert_only)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident("g1"))
        episode = await memory.remember(sc, {"content": "the plan"})
        if step == "delete":
            insert_only.fail_next(A.VECTOR_DELETE, ActionCallTimeoutError("timed out"), after_dispatch=True)
        else:
            insert_only.fail_next(A.VECTOR_UPSERT, ActionCallTimeoutError("timed out"), after_dispatch=False)
        archived = await memory.archive(sc, episode.episode_id)
        assert archived.status.value == "archived"
        assert (await memory.fences_of(sc))["l2"] is None
        assert [e.status.value for e in await memory.all_episodes(sc)] == ["archived"]
        assert [r.fields["status"] for r in rows_of(await insert_only.dump_kb(kb), episode.episode_id)] == ["archived"]
    finally:
        await harness.stop()


async def test_reads_keep_the_newest_of_two_rows(insert_only):
    harness, kb = await start_with_kb(insert_only)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident("g1"))
        episode = await memory.remember(sc, {"content": "the plan"})
        archived = episode.with_status(type(episode.status)("archived"))
        record = archived.to_record()
        vector = insert_only.embedding_models["emb-1"].embed([record.text])
        # A second row written behind the plugin's back (a store that kept both rows of a rewrite).
        await insert_only.call_action(A.VECTOR_UPSERT, {
            "collection_id": kb, "vectors": vector, "ids": [layout.host_id(record.space, record.record_id)],
            "metadata": [layout.to_metadata(record)], "documents": [record.text]})
        assert len(rows_of(await insert_only.dump_kb(kb), episode.episode_id)) == 2
        assert (await memory.get_episode(sc, episode.episode_id)).status.value == "archived"
        assert [e.status.value for e in await memory.all_episodes(sc)] == ["archived"]
        assert await memory.recall(sc, "the plan") == []  # the archived row wins in search too
    finally:
        await harness.stop()
