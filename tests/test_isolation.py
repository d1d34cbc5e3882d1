"""S1-S8 on real Chroma, Qdrant and Milvus Lite; the last test runs on every backend of the test host."""

from __future__ import annotations

import pytest

from ltm.errors import NotFound, ValidationError
from ltm.langbot import layout
from tests.service_helpers import contents, ident, scope, start_with_kb

# SeekDB and pgvector run this file in the default run too (tests/stores.py).
pytestmark = pytest.mark.stores_slice

SESSIONS = {
    "b1-group1": ident("g1", bot="b1"),
    "b1-group2": ident("g2", bot="b1"),
    "b2-group1": ident("g1", bot="b2"),
    "b1-private": ident("alice", bot="b1", kind="person"),
}


@pytest.fixture
async def session_mode(supported_host):
    harness, kb_id = await start_with_kb(supported_host)
    yield harness.plugin.memory, kb_id
    await harness.stop()


async def test_sessions_and_bots_never_see_each_others_memory(session_mode):
    memory, _ = session_mode
    for label, identity in SESSIONS.items():
        sc = await scope(memory, identity)
        await memory.remember(sc, {"content": f"plan of {label}"})
        await memory.update_profile(sc, "session", {"name": f"room {label}"})
        await memory.update_profile(sc, "speaker", {"traits": [f"trait {label}"]})
    for label, identity in SESSIONS.items():
        sc = await scope(memory, identity)
        assert await contents(memory, sc) == {f"plan of {label}"}
        profiles = await memory.profiles(sc)
        assert profiles.session.name == f"room {label}"
        assert profiles.speaker is not None and profiles.speaker.traits == [f"trait {label}"]
        assert [e.content for e in (await memory.list_episodes(sc)).episodes] == [f"plan of {label}"]


async def test_bot_mode_shares_l2_across_one_bots_sessions_only(supported_host):
    harness, _ = await start_with_kb(supported_host, isolation="bot")
    memory = harness.plugin.memory
    try:
        g1, g2, other_bot = [await scope(memory, SESSIONS[k]) for k in ("b1-group1", "b1-group2", "b2-group1")]
        assert g1.space_key == g2.space_key == "bot:b1" and g1.chat_key != g2.chat_key
        await memory.remember(g1, {"content": "plan shared by bot one"})
        await memory.remember(other_bot, {"content": "plan of bot two"})
        await memory.update_profile(g1, "session", {"name": "group one only"})
        assert await contents(memory, g2) == {"plan shared by bot one"}
        assert await contents(memory, other_bot) == {"plan of bot two"}
        # L1 stays per session even in bot mode (S3).
        assert (await memory.profiles(g2)).session.name == ""
    finally:
        await harness.stop()


async def test_an_id_from_another_scope_is_not_found_for_every_operation(session_mode):
    memory, _ = session_mode
    mine = await scope(memory, SESSIONS["b1-group1"])
    theirs = await scope(memory, SESSIONS["b1-group2"])
    foreign = (await memory.remember(theirs, {"content": "their private plan"})).episode
    with pytest.raises(NotFound):
        await memory.get_episode(mine, foreign.episode_id)
    with pytest.raises(NotFound):
        await memory.archive(mine, foreign.episode_id)
    with pytest.raises(NotFound):
        await memory.restore(mine, foreign.episode_id)
    with pytest.raises(NotFound):
        await memory.forget(mine, foreign.episode_id)
    with pytest.raises(ValidationError, match="not in this scope"):
        await memory.remember(mine, {"content": "correction", "supersedes": [foreign.episode_id]})
    # The exact-id shortcut of recall is scoped too.
    assert await memory.recall(mine, foreign.episode_id) == []
    still = await memory.get_episode(theirs, foreign.episode_id)
    assert still.is_active and still.content == "their private plan"


DROPS_METADATA_FILTERS = {"milvus", "fixed", "pgvector", "milvus-insert", "valkey"}


async def test_every_backend_isolates_on_file_id(host, backend_name):
    """Record layout 2 on every LangBot backend: the raw host filter on the space's `file_id` never
    returns another space's record, while the old `user_key` filter leaks wherever the store drops
    unknown filter keys; every service operation stays inside its scope."""
    harness, kb_id = await start_with_kb(host)
    memory = harness.plugin.memory
    try:
        a = await scope(memory, SESSIONS["b1-group1"])
        b = await scope(memory, SESSIONS["b1-group2"])
        mine = (await memory.remember(a, {"content": "plan alpha"})).episode
        theirs = (await memory.remember(b, {"content": "plan beta"})).episode
        vector = host.embedding_models["emb-1"].embed(["plan"])[0]
        by_file_id = await harness.plugin.vector_search(kb_id, vector, 10, layout.space_filter(a.space_key))
        assert {r["id"] for r in by_file_id} == {layout.host_id(a.space_key, mine.episode_id)}
        by_space_key = await harness.plugin.vector_search(kb_id, vector, 10, {"user_key": a.space_key})
        leaked = layout.host_id(b.space_key, theirs.episode_id) in {r["id"] for r in by_space_key}
        assert leaked is (backend_name in DROPS_METADATA_FILTERS)

        assert await contents(memory, a) == {"plan alpha"}
        assert await contents(memory, b) == {"plan beta"}
        assert [e.content for e in (await memory.list_episodes(a)).episodes] == ["plan alpha"]
        with pytest.raises(NotFound):
            await memory.get_episode(a, theirs.episode_id)
        with pytest.raises(NotFound):
            await memory.forget(a, theirs.episode_id)
        await memory.archive(a, mine.episode_id)
        assert (await memory.get_episode(a, mine.episode_id)).status.value == "archived"
        assert await contents(memory, a) == set()
        await memory.restore(a, mine.episode_id)
        assert await contents(memory, a) == {"plan alpha"}
        await memory.forget(a, mine.episode_id)
        assert (await memory.list_episodes(a)).total == 0
        still = await memory.get_episode(b, theirs.episode_id)
        assert still.is_active and still.content == "plan beta"
        assert [r for r in await host.dump_kb(kb_id)
                if r["metadata"].get("file_id") != layout.space_token(b.space_key)] == []
    finally:
        await harness.stop()
