"""Recall (E3, E6-E8, S6): the whole window is ranked before top_k, filters hold, the host-call
budget of one recall does not grow with the space."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from ltm import QUERY_RECALL, MemoryScope, MemoryService, RecallFilters
from ltm.episodes.model import EpisodeStatus
from testhost.hooks import index_space, top
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import MODEL, ident, import_many, memory_with_kb, remember


def ids(hits: list[Any]) -> list[str]:
    return [h.episode.episode_id for h in hits]


async def test_whole_window_is_ranked_before_top_k(fake: InMemoryPorts, memory: MemoryService,
                                                   alice: MemoryScope) -> None:
    for n in range(8):
        await remember(memory, alice, f"the gardening plan for the spring, part {n}")
    target = await remember(memory, alice, "a receipt for bicycle repairs")
    query = f"gardening plan {target.episode_id} spring"
    vector = (await fake.embedder.embed(MODEL, [query]))[0]
    first_by_index = await fake.index.search(alice.l2, vector, 1)
    assert first_by_index[0].record.record_id != target.episode_id  # the backend alone would not pick it
    assert ids(await memory.recall(alice, query, recipe=top(1))) == [target.episode_id]


async def test_a_query_that_is_an_episode_id_returns_it_without_embedding(fake: InMemoryPorts,
                                                                          memory: MemoryService,
                                                                          alice: MemoryScope) -> None:
    target = await remember(memory, alice, "the spare key is under the blue pot")
    await remember(memory, alice, "something else entirely")
    fake.calls.reset()
    assert ids(await memory.recall(alice, f"  {target.episode_id} ", recipe=top(5))) == [target.episode_id]
    assert fake.calls.count("embedder.embed") == 0
    assert fake.calls.count("index.search") == 0 and fake.calls.count("index.get") == 1


async def test_an_id_query_for_an_inactive_record_does_not_return_it(fake: InMemoryPorts, memory: MemoryService,
                                                                     alice: MemoryScope) -> None:
    target = await remember(memory, alice, "an archived memory")
    await memory.archive(alice, target.episode_id)
    assert target.episode_id not in ids(await memory.recall(alice, target.episode_id))


async def test_only_active_records_are_recalled_unless_a_status_filter_asks(memory: MemoryService,
                                                                            alice: MemoryScope) -> None:
    old = await remember(memory, alice, "the band rehearses on Monday")
    new = await remember(memory, alice, "the band rehearses on Wednesday", supersedes=[old.episode_id])
    archived = await remember(memory, alice, "the band rehearsed in the old hall")
    await memory.archive(alice, archived.episode_id)
    assert ids(await memory.recall(alice, "band rehearses")) == [new.episode_id]
    wide = RecallFilters(statuses=(EpisodeStatus.ACTIVE, EpisodeStatus.SUPERSEDED, EpisodeStatus.ARCHIVED))
    assert set(ids(await memory.recall(alice, "band rehearses", filters=wide))) == {
        old.episode_id, new.episode_id, archived.episode_id}


async def test_speaker_filter_matches_the_sender_id_or_name(memory: MemoryService, alice: MemoryScope,
                                                            bob: MemoryScope) -> None:
    mine = await remember(memory, alice, "the picnic needs lemonade")
    theirs = await remember(memory, bob, "the picnic needs sandwiches")
    assert ids(await memory.recall(alice, "picnic", filters=RecallFilters(speaker="bob"))) == [theirs.episode_id]
    assert ids(await memory.recall(alice, "picnic", filters=RecallFilters(speaker="ALICE"))) == [mine.episode_id]
    assert await memory.recall(alice, "picnic", filters=RecallFilters(speaker="carol")) == []


async def test_tag_filter_keeps_records_with_any_of_the_tags(memory: MemoryService, alice: MemoryScope) -> None:
    trip = await remember(memory, alice, "book the ferry", tags=["trip"])
    work = await remember(memory, alice, "book the meeting room", tags=["work", "rooms"])
    await remember(memory, alice, "book a table")
    assert ids(await memory.recall(alice, "book", filters=RecallFilters(tags=("trip",)))) == [trip.episode_id]
    assert set(ids(await memory.recall(alice, "book", filters=RecallFilters(tags=("trip", "rooms"))))) == {
        trip.episode_id, work.episode_id}


async def test_time_filters_apply_to_timestamp_or_event_time(memory: MemoryService, alice: MemoryScope) -> None:
    january, march = await import_many(memory, alice, [
        {"content": "ski trip notes", "timestamp": "2025-01-10T10:00:00Z", "event_at": "2025-03-01T00:00:00+01:00"},
        {"content": "ski trip photos", "timestamp": "2025-03-10T10:00:00Z"},
    ])
    feb = datetime(2025, 2, 1, tzinfo=UTC)
    assert ids(await memory.recall(alice, "ski trip", filters=RecallFilters(since=feb))) == [march.episode_id]
    assert ids(await memory.recall(alice, "ski trip", filters=RecallFilters(until=feb))) == [january.episode_id]
    by_event = RecallFilters(since=feb, time_field="event_at")
    assert ids(await memory.recall(alice, "ski trip", filters=by_event)) == [january.episode_id]  # no event_at: out


async def test_automatic_recall_takes_top_k_from_the_kb_setting(fake: InMemoryPorts) -> None:
    memory = await memory_with_kb(fake, auto_recall_top_k=2)
    scope = await memory.scope_for(ident())
    for n in range(6):
        await remember(memory, scope, f"holiday idea number {n}")
    assert len(await memory.recall(scope, "holiday idea")) == 2
    assert len(await memory.recall(scope, "holiday idea", recipe=QUERY_RECALL)) == QUERY_RECALL.top_k
    assert len(await memory.recall(scope, "holiday idea", recipe=top(4))) == 4


async def test_automatic_recall_with_top_k_zero_asks_the_host_nothing(fake: InMemoryPorts) -> None:
    memory = await memory_with_kb(fake, auto_recall_top_k=0)
    scope = await memory.scope_for(ident())
    await remember(memory, scope, "holiday idea")
    fake.calls.reset()
    assert await memory.recall(scope, "holiday idea") == []
    assert fake.calls.count("embedder.*") == 0 and fake.calls.count("index.*") == 0


async def _recall_calls(size: int) -> dict[str, int]:
    fake = InMemoryPorts(dim=32)
    memory = await memory_with_kb(fake)
    scope = await memory.scope_for(ident())
    items = [{"content": f"note {n} about the quarterly budget", "sender_id": "alice" if n % 3 else "bob",
              "sender_name": "Alice" if n % 3 else "Bob"} for n in range(size)]
    await import_many(memory, scope, items)
    await memory.recall(scope, "quarterly budget")  # the first recall of a space builds its word index
    await index_space(memory, scope)  # (a big space in the background)
    fake.calls.reset()
    hits = await memory.recall(scope, "quarterly budget", recipe=top(5))
    assert len(hits) == 5
    return dict(fake.calls.counts())


async def test_host_calls_of_one_recall_do_not_grow_with_the_space() -> None:
    small, large = await _recall_calls(10), await _recall_calls(2000)
    # One embedding and one vector search of the space (the speaker's own records come from the same
    # window and the space's index), at most one keyed read of records found by words alone: no paging,
    # no full-text search (auto).
    for calls in (small, large):
        assert calls.pop("index.get_many", 0) <= 1
    assert small == large == {"embedder.embed": 1, "index.search": 1}


async def test_speaker_search_finds_the_speakers_own_record_in_a_crowded_space(fake: InMemoryPorts,
                                                                               memory: MemoryService,
                                                                               alice: MemoryScope) -> None:
    crowd = [{"content": "weekly plan notes", "sender_id": "bob", "sender_name": "Bob"} for _ in range(250)]
    await import_many(memory, alice, crowd)
    own = await remember(memory, alice, "weekly plan notes from alice herself")
    only_alice = RecallFilters(speaker="alice")
    assert ids(await memory.recall(alice, "weekly plan notes", filters=only_alice)) == [own.episode_id]
    # A third party has no speaker search for alice and the crowd fills the vector window; the word
    # index of the whole space still finds her record under the speaker filter.
    carol = await memory.scope_for(ident("g1", sender="carol"))
    assert ids(await memory.recall(carol, "weekly plan notes", filters=only_alice)) == [own.episode_id]


async def _literal_match_setup(fake: InMemoryPorts, **settings: Any) -> tuple[MemoryService, MemoryScope, str]:
    memory = await memory_with_kb(fake, **settings)
    scope = await memory.scope_for(ident())
    # 250 speakers (one speaker's repeats of a stored fact are not written again), one name.
    await import_many(memory, scope, [{"content": "zq 77", "sender_id": f"bob-{i}", "sender_name": "Bob"}
                                             for i in range(250)])
    (target,) = await import_many(memory, scope, [
        {"content": "a longer note that mentions zq-77 among many other words", "sender_id": "bob",
         "sender_name": "Bob"}])
    return memory, scope, target.episode_id


async def test_hybrid_text_search_widens_the_window_with_literal_matches() -> None:
    # The whole ranked window comes back (top_k above its size): is the literal match a candidate at all? (No
    # adjacent records here: the target is written right after the notes, so it can join as one of those.)
    whole = replace(top(1000), adjacent_top=0)
    memory, scope, target = await _literal_match_setup(InMemoryPorts(), retrieval_strategy="hybrid")
    assert target in ids(await memory.recall(scope, "zq-77", recipe=whole))
    without = InMemoryPorts(text_search=False)
    memory, scope, target = await _literal_match_setup(without, retrieval_strategy="hybrid")
    # Neither in the vector window nor among the best word matches (250 shorter "zq 77" notes score higher).
    assert target not in ids(await memory.recall(scope, "zq-77", recipe=whole))


# `auto` no longer asks the store's full-text search (a substring match of the whole message on
# LangBot's Chroma): the plugin's own word index of the whole space gives the lexical candidates.
@pytest.mark.parametrize(("strategy", "asked"), [("auto", 0), ("hybrid", 3), ("vector", 0)])
async def test_text_search_is_asked_by_strategy_and_auto_stops_where_there_is_none(strategy: str,
                                                                                   asked: int) -> None:
    fake = InMemoryPorts(text_search=False)
    memory = await memory_with_kb(fake, retrieval_strategy=strategy)
    scope = await memory.scope_for(ident())
    await remember(memory, scope, "a fact")
    for _ in range(3):
        await memory.recall(scope, "a fact")
    assert fake.calls.count("index.search_text") == asked
