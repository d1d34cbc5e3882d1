"""The per-space word index recall uses (ltm/episodes/lexical.py, E6/E7, S5): built once per space,
kept current by the service's own writes, dropped when in doubt, never crossing spaces, and
finding a word match anywhere in a large space without a host call per turn."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from ltm import MemoryScope, MemoryService, RecallFilters
from ltm.episodes.lexical import BUILD_PAGE, LexicalIndexes
from ltm.episodes.lifecycle import DeleteCriteria
from ltm.episodes.model import Episode, EpisodeStatus
from ltm.episodes.space_index import SpaceIndex
from ltm.episodes.terms import tokenize
from ltm.errors import HostError, OutcomeUnknown
from testhost.hooks import top
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import KB, MODEL, import_many, remember


def ids(hits: list[Any]) -> list[str]:
    return [h.episode.episode_id for h in hits]


def lexical(memory: MemoryService) -> LexicalIndexes:
    return memory.parts.episodes._lexical  # the service's one index registry (white-box on purpose)


def held(memory: MemoryService, scope: MemoryScope) -> dict[str, EpisodeStatus]:
    index = lexical(memory).loaded(scope.l2)
    assert index is not None, "the space's index is not loaded"
    return {eid: ep.status for eid in index.ids() if (ep := index.episode(eid)) is not None}


async def test_a_word_match_deep_in_a_big_space_is_recalled(fake: InMemoryPorts, memory: MemoryService,
                                                            alice: MemoryScope) -> None:
    crowd = [{"content": f"where is the meeting room number {n}", "sender_id": "bob", "sender_name": "Bob"}
             for n in range(400)]
    await import_many(memory, alice, crowd)
    (target,) = await import_many(memory, alice, [{
        "content": "bought zebracorn stickers at the autumn craft fair, the weather was lovely and mild",
        "sender_id": "bob", "sender_name": "Bob"}])
    query = "where is the zebracorn"
    vector = (await fake.embedder.embed(MODEL, [query]))[0]
    window = await fake.index.search(alice.l2, vector, 200)
    assert target.episode_id not in {h.record.record_id for h in window}  # beyond the vector window
    # The imports' duplicate check built the space's index; a process that has not read the space yet:
    lexical(memory).drop_space(alice.l2)
    builds = lexical(memory).builds
    # A space bigger than one page is indexed in the background: the first recall does not wait for it.
    building = fake.faults.pause("index.page", where=lambda call: call.args["limit"] == BUILD_PAGE)
    await memory.recall(alice, query, recipe=top(1))
    assert lexical(memory).loaded(alice.l2) is None
    building.release()
    await lexical(memory).settled()
    assert ids(await memory.recall(alice, query, recipe=top(1))) == [target.episode_id]
    # Built once: the next recall pages nothing and asks for no full-text search.
    fake.calls.reset()
    assert ids(await memory.recall(alice, query, recipe=top(1))) == [target.episode_id]
    assert fake.calls.count("index.page") == 0 and fake.calls.count("index.search_text") == 0
    assert lexical(memory).builds == builds + 1


async def test_the_index_follows_every_write_without_a_rebuild(memory: MemoryService, alice: MemoryScope) -> None:
    first = await remember(memory, alice, "the kayak is stored in the red shed")
    await memory.recall(alice, "kayak")  # builds the index
    assert held(memory, alice) == {first.episode_id: EpisodeStatus.ACTIVE}

    second = await remember(memory, alice, "the kayak paddle is broken")
    imported = await import_many(memory, alice, [{"content": "kayak trip booked for june", "tags": ["trip"]},
                                                 {"content": "kayak club fees paid", "tags": ["fees"]}])
    assert set(held(memory, alice)) == {first.episode_id, second.episode_id, *(e.episode_id for e in imported)}

    await memory.archive(alice, second.episode_id)
    assert held(memory, alice)[second.episode_id] is EpisodeStatus.ARCHIVED
    assert second.episode_id not in ids(await memory.recall(alice, "kayak paddle", recipe=top(10)))
    archived_only = RecallFilters(statuses=(EpisodeStatus.ARCHIVED,))
    assert ids(await memory.recall(alice, "kayak paddle", recipe=top(10), filters=archived_only)) == [second.episode_id]

    newer = await remember(memory, alice, "the kayak is stored in the garage now", supersedes=[first.episode_id])
    assert held(memory, alice)[first.episode_id] is EpisodeStatus.SUPERSEDED
    assert held(memory, alice)[newer.episode_id] is EpisodeStatus.ACTIVE
    assert first.episode_id not in ids(await memory.recall(alice, "kayak stored", recipe=top(10)))

    await memory.forget(alice, imported[0].episode_id)
    assert imported[0].episode_id not in held(memory, alice)
    await memory.bulk_delete(alice, DeleteCriteria(tag="fees"))
    assert imported[1].episode_id not in held(memory, alice)
    assert lexical(memory).builds == 1  # every change above was applied in place


@pytest.mark.parametrize("after_apply", [False, True])
async def test_an_unknown_write_outcome_drops_the_index_and_the_rebuild_matches_the_host(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope, after_apply: bool) -> None:
    await remember(memory, alice, "the lighthouse tour starts at nine")
    await memory.recall(alice, "lighthouse")
    fake.faults.fail("index.upsert", OutcomeUnknown("no answer"), after_apply=after_apply)
    with pytest.raises(OutcomeUnknown):
        await remember(memory, alice, "the lighthouse tour was moved to ten")
    assert lexical(memory).loaded(alice.l2) is None  # in doubt: dropped
    await memory.clear_fences(alice)
    hits = await memory.recall(alice, "lighthouse tour moved", recipe=top(5))
    assert lexical(memory).builds == 2
    # The rebuilt index holds exactly what the host holds.
    on_host = {r.record_id for r in fake.index.records(alice.kb_id, alice.space_key)}
    assert set(held(memory, alice)) == on_host
    assert len(on_host) == (2 if after_apply else 1)
    assert {h.episode.episode_id for h in hits} <= on_host


async def test_a_refused_delete_drops_the_index(fake: InMemoryPorts, memory: MemoryService,
                                                alice: MemoryScope) -> None:
    episode = await remember(memory, alice, "the spare tyre is in the boot")
    await memory.recall(alice, "tyre")
    fake.faults.fail("index.delete", HostError("refused"))
    with pytest.raises(HostError):
        await memory.forget(alice, episode.episode_id)
    assert lexical(memory).loaded(alice.l2) is None
    assert ids(await memory.recall(alice, "spare tyre")) == [episode.episode_id]  # still on the host


async def test_two_spaces_with_the_same_words_never_meet(memory: MemoryService, alice: MemoryScope,
                                                         stranger: MemoryScope) -> None:
    mine = [await remember(memory, alice, f"the orchid greenhouse code is {n}") for n in range(5)]
    theirs = [await remember(memory, stranger, f"the orchid greenhouse code is {n}") for n in range(5)]
    for scope, own in ((alice, mine), (stranger, theirs)):
        got = await memory.recall(scope, "orchid greenhouse code", recipe=top(20))
        assert {h.episode.episode_id for h in got} == {e.episode_id for e in own}
        assert set(held(memory, scope)) == {e.episode_id for e in own}
        assert {h.episode.space_key for h in got} == {scope.space_key}


def test_a_space_index_refuses_a_record_of_another_space() -> None:
    index = SpaceIndex("space-a")
    index.add(Episode("e1", "space-b", "orchid code", "2026-01-01T00:00:00Z"))
    index.add(Episode("e2", "space-a", "orchid code", "2026-01-01T00:00:00Z"))
    assert "e1" not in index and "e2" in index
    assert set(index.scores(["orchid"])) == {"e2"}


def test_a_kept_partial_record_follows_every_change_of_its_record() -> None:
    """The index keeps the partial records it built for recall; a status change, new words, a new speaker,
    a removal and a new record taking a freed number each show at once."""
    index = SpaceIndex("s")
    index.add(Episode("e1", "s", "orchid code", "2026-01-01T00:00:00Z", sender_id="u1", sender_name="Ann"))
    first = index.episode("e1")
    assert first is index.episode("e1")  # kept: built once
    index.add(replace(first, status=EpisodeStatus.ARCHIVED))
    assert index.episode("e1").status is EpisodeStatus.ARCHIVED
    index.add(Episode("e1", "s", "tulip code", "2026-01-02T00:00:00Z", importance=5, sender_id="u2",
                      sender_name="Bo", tags=("garden",)))
    changed = index.episode("e1")
    assert (changed.content, changed.timestamp, changed.importance, changed.sender_name, changed.tags) == (
        "tulip code", "2026-01-02T00:00:00Z", 5, "Bo", ("garden",))
    index.remove("e1")
    assert index.episode("e1") is None
    index.add(Episode("e2", "s", "rose code", "2026-01-03T00:00:00Z"))  # takes e1's freed number
    assert index.episode("e2").content == "rose code" and index.episode("e2").episode_id == "e2"
    hits, _ = index.search(tokenize("rose"), 5, lambda e: True)
    assert [h.episode.content for h in hits] == ["rose code"]


async def test_removing_the_kb_drops_its_indexes(memory: MemoryService, alice: MemoryScope) -> None:
    await remember(memory, alice, "the canoe club meets on sundays")
    await memory.recall(alice, "canoe")
    assert lexical(memory).loaded(alice.l2) is not None
    await memory.unregister_kb(KB)
    assert lexical(memory).loaded(alice.l2) is None


async def test_a_write_during_a_build_is_not_lost(fake: InMemoryPorts, memory: MemoryService,
                                                  alice: MemoryScope) -> None:
    await remember(memory, alice, "the violin lesson is on monday")
    # The write's duplicate check built the space's index; a process that has not read the space yet:
    lexical(memory).drop_space(alice.l2)
    builds = lexical(memory).builds
    pause = fake.faults.pause("index.page")
    recall = asyncio.create_task(memory.recall(alice, "violin lesson", recipe=top(5)))
    await pause.wait_reached()  # the build is reading the space
    # The write does not wait for that read (its duplicate check searches by vector instead) ...
    added = await asyncio.wait_for(remember(memory, alice, "the violin lesson moved to tuesday"), 10)
    pause.release()
    await recall
    assert lexical(memory).builds == builds + 2  # ... and the first read was stale and not kept
    assert added.episode_id in held(memory, alice)


def test_selection_is_bounded_and_scores_are_exact() -> None:
    index = SpaceIndex("s")
    for n in range(1500):
        index.add(Episode(f"c{n}", "s", f"common words number {n}", "2026-01-01T00:00:00Z"))
    index.add(Episode("rare", "s", "common words and one quokka", "2026-01-01T00:00:00Z"))
    full = index.scores(["common", "quokka"])
    hits, exact = index.search(["common", "quokka"], 5, lambda e: True, also=["c7", "gone"])
    assert [h.episode.episode_id for h in hits] == ["rare"]  # "common" is in 1,501 records: it scores, it does not pick
    assert exact == {"rare": full["rare"], "c7": full["c7"]}  # exact BM25 with every query word
    hits, exact = index.search(["common"], 5, lambda e: True, also=["c7"])
    assert hits == [] and exact == {"c7": full["c7"]} and exact["c7"] > 0
