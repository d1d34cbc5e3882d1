"""Isolation (S4-S7): a memory space never reads, changes or reveals another space's records,
even when the vector index itself leaks."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from ltm import DeleteCriteria, Level, MemoryScope, MemoryService, NotFound, ValidationError
from ltm.episodes.model import EpisodeStatus
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import ident, memory_with_kb, remember, stored

Op = Callable[[MemoryService, MemoryScope, str], Awaitable[Any]]

FOREIGN_OPS: dict[str, Op] = {
    "get": lambda m, s, i: m.get_episode(s, i),
    "archive": lambda m, s, i: m.archive(s, i),
    "restore": lambda m, s, i: m.restore(s, i),
    "forget": lambda m, s, i: m.forget(s, i),
}


async def test_two_chats_do_not_see_each_others_episodes(memory: MemoryService, alice: MemoryScope,
                                                         stranger: MemoryScope) -> None:
    mine = await remember(memory, alice, "the garden party moves to Sunday")
    theirs = await remember(memory, stranger, "the garden party is cancelled")
    assert [h.episode.episode_id for h in await memory.recall(alice, "garden party")] == [mine.episode_id]
    assert [h.episode.episode_id for h in await memory.recall(stranger, "garden party")] == [theirs.episode_id]
    assert [e.episode_id for e in (await memory.list_episodes(stranger)).episodes] == [theirs.episode_id]
    exported = await memory.export_episodes(stranger, (EpisodeStatus.ACTIVE,))
    assert [e["id"] for e in exported["episodes"]] == [theirs.episode_id]


@pytest.mark.parametrize("op", FOREIGN_OPS, ids=list(FOREIGN_OPS))
async def test_foreign_id_is_not_found_exactly_like_a_missing_id(fake: InMemoryPorts, memory: MemoryService,
                                                                 alice: MemoryScope, stranger: MemoryScope,
                                                                 op: str) -> None:
    foreign = await remember(memory, alice, "a private note of the first chat")
    if op == "restore":
        await memory.archive(alice, foreign.episode_id)
    before = fake.state()
    with pytest.raises(NotFound) as refused_foreign:
        await FOREIGN_OPS[op](memory, stranger, foreign.episode_id)
    missing = str(uuid.uuid4())
    with pytest.raises(NotFound) as refused_missing:
        await FOREIGN_OPS[op](memory, stranger, missing)
    # No existence oracle: the answer for another space's id is the answer for an id nobody has.
    assert str(refused_foreign.value).replace(foreign.episode_id, "ID") == str(refused_missing.value).replace(
        missing, "ID")
    assert fake.state() == before


async def test_supersede_of_a_foreign_id_is_refused_like_a_missing_id_and_writes_nothing(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope, stranger: MemoryScope) -> None:
    foreign = await remember(memory, alice, "the meeting is at nine")
    before = fake.state()
    fake.calls.reset()
    with pytest.raises(ValidationError) as refused_foreign:
        await remember(memory, stranger, "the meeting is at ten", supersedes=[foreign.episode_id])
    missing = str(uuid.uuid4())
    with pytest.raises(ValidationError) as refused_missing:
        await remember(memory, stranger, "the meeting is at ten", supersedes=[missing])
    assert "not in this scope" in str(refused_foreign.value)
    assert str(refused_foreign.value).replace(foreign.episode_id, "ID") == str(refused_missing.value).replace(
        missing, "ID")
    assert fake.state() == before
    assert fake.calls.count("embedder.embed") == 0 and fake.calls.count("index.upsert") == 0
    assert (await memory.get_episode(alice, foreign.episode_id)).is_active


async def test_bot_isolation_shares_inside_one_bot_and_never_across_bots(fake: InMemoryPorts) -> None:
    memory = await memory_with_kb(fake, isolation="bot")
    group_one = await memory.scope_for(ident("g1", bot="bot-1", sender="alice"))
    group_two = await memory.scope_for(ident("g2", bot="bot-1", sender="bob"))
    other_bot = await memory.scope_for(ident("g1", bot="bot-2", sender="alice"))
    shared = await remember(memory, group_one, "the bot's favourite colour is teal")
    assert [h.episode.episode_id for h in await memory.recall(group_two, "favourite colour")] == [shared.episode_id]
    assert await memory.recall(other_bot, "favourite colour") == []
    with pytest.raises(NotFound):
        await memory.get_episode(other_bot, shared.episode_id)
    # L1 stays per chat even when L2 is shared by the bot.
    await memory.update_profile(group_one, "session", {"name": "Teal club"})
    assert (await memory.profiles(group_two)).session.is_empty


async def test_bot_isolation_without_a_bot_uuid_stays_inside_the_chat(fake: InMemoryPorts) -> None:
    memory = await memory_with_kb(fake, isolation="bot")
    chat_one = await memory.scope_for(ident("g1", bot="", sender="alice"))
    chat_two = await memory.scope_for(ident("g2", bot="", sender="alice"))
    await remember(memory, chat_one, "only this chat knows the spare key hint is a bird")
    assert chat_one.space_key != chat_two.space_key
    assert await memory.recall(chat_two, "spare key hint bird") == []


async def test_leaking_index_cannot_show_another_space_on_any_read(fake: InMemoryPorts, memory: MemoryService,
                                                                   alice: MemoryScope,
                                                                   stranger: MemoryScope) -> None:
    foreign = await remember(memory, alice, "the vault combination clue is the river")
    own = await remember(memory, stranger, "the river walk is on Friday")
    fake.index.ignore_space_filter = True  # the backend now returns every space's records
    assert [h.episode.episode_id for h in await memory.recall(stranger, "river clue")] == [own.episode_id]
    by_id = await memory.recall(stranger, foreign.episode_id)
    assert foreign.episode_id not in {h.episode.episode_id for h in by_id}
    listing = await memory.list_episodes(stranger)
    assert [e.episode_id for e in listing.episodes] == [own.episode_id] and listing.total == 1
    assert [e.episode_id for e in await memory.all_episodes(stranger)] == [own.episode_id]
    exported = await memory.export_episodes(stranger, (EpisodeStatus.ACTIVE,))
    assert [e["id"] for e in exported["episodes"]] == [own.episode_id]
    with pytest.raises(NotFound):
        await memory.get_episode(stranger, foreign.episode_id)


async def test_leaking_index_cannot_make_a_write_touch_another_space(fake: InMemoryPorts, memory: MemoryService,
                                                                     alice: MemoryScope,
                                                                     stranger: MemoryScope) -> None:
    foreign = await remember(memory, alice, "shared tag in the first chat", tags=["trip"])
    await remember(memory, stranger, "shared tag in the second chat", tags=["trip"])
    fake.index.ignore_space_filter = True
    for op in FOREIGN_OPS.values():
        with pytest.raises(NotFound):
            await op(memory, stranger, foreign.episode_id)
    with pytest.raises(ValidationError):
        await remember(memory, stranger, "a correction", supersedes=[foreign.episode_id])
    deleted = await memory.bulk_delete(stranger, DeleteCriteria(tag="trip"))
    assert len(deleted) == 1 and deleted[0].space_key == stranger.space_key
    assert list(stored(fake, alice)) == [foreign.episode_id]
    assert stored(fake, alice)[foreign.episode_id]["status"] == "active"


async def test_speaker_profiles_are_per_sender_and_session_profiles_per_chat(
        memory: MemoryService, alice: MemoryScope, bob: MemoryScope, stranger: MemoryScope) -> None:
    await memory.update_profile(alice, "speaker", {"name": "Alice", "traits": ["likes tea"]})
    await memory.update_profile(alice, "session", {"notes": "weekly planning chat"})
    assert (await memory.profiles(bob)).speaker is not None
    assert (await memory.profiles(bob)).speaker.is_empty  # type: ignore[union-attr]
    assert (await memory.profiles(bob)).session.notes == "weekly planning chat"
    assert (await memory.profiles(stranger)).session.is_empty
    exported = await memory.export_profiles(stranger)
    assert exported["speaker_profiles"] == {} and exported["scope_key"] == stranger.chat_key
    assert list((await memory.export_profiles(bob))["speaker_profiles"]) == ["alice"]


async def test_health_reports_a_leaking_index_red_and_an_isolated_one_green(fake: InMemoryPorts,
                                                                            memory: MemoryService,
                                                                            alice: MemoryScope) -> None:
    report = await memory.health(alice)
    assert {i.key: i.level for i in report.items}["isolation"] is Level.GREEN
    fake.index.ignore_space_filter = True
    report = await memory.health(alice)
    assert {i.key: i.level for i in report.items}["isolation"] is Level.RED
    assert report.level is Level.RED
