"""The space index's word candidates (space_index.py, E6/S6) are exactly the best records its filters
take, in the order a whole sort of the scores gives, for the space's best and the speaker's own alike,
however far down the accepted ones lie (the order is built once per recall and sorted only as far as
read: best_first.py). Checked against a plain sort on a fixed, seeded fixture with many equal scores."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from ltm.episodes.best_first import BestFirst
from ltm.episodes.model import Episode, EpisodeStatus
from ltm.episodes.space_index import SpaceIndex
from ltm.episodes.terms import tokenize

WORDS = ["garden", "tomato", "harbor", "violin", "lantern", "pebble", "orchid", "canyon", "meadow", "tunnel"]
SPEAKERS = [("alice", "Alice"), ("bob", "Bob"), ("carol", "Carol")]


def fixture(records: int, seed: int) -> SpaceIndex:
    rng = random.Random(seed)
    index = SpaceIndex("space")
    for n in range(records):
        sender_id, sender_name = SPEAKERS[rng.randrange(len(SPEAKERS))]
        content = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))  # few words: many ties
        status = EpisodeStatus.ACTIVE if rng.random() < 0.7 else EpisodeStatus.ARCHIVED
        index.add(Episode(f"e{n:04d}", "space", content, f"2026-01-{1 + n % 28:02d}T10:00:00+00:00",
                          importance=rng.randint(0, 4), status=status, sender_id=sender_id, sender_name=sender_name))
    return index


def best_accepted(index: SpaceIndex, scores: dict[str, float], limit: int,
                  accept: Callable[[Episode], bool]) -> list[str]:
    order = sorted(scores, key=scores.__getitem__, reverse=True)  # stable: ties keep the scores' order
    return [i for i in order if (e := index.episode(i)) is not None and accept(e)][:limit]


@pytest.mark.parametrize(("limit", "speaker_limit"), [(5, 3), (40, 20), (300, 300)])
def test_word_candidates_are_the_best_accepted_in_whole_sort_order(limit: int, speaker_limit: int) -> None:
    index = fixture(600, seed=19)
    for query in ["tomato harbor", "violin lantern pebble", "orchid", "garden garden meadow tunnel"]:
        tokens = tokenize(query)
        scores = index.scores(tokens)  # every word is selective in 600 records: the selection score itself

        def active(e: Episode) -> bool:
            return e.status is EpisodeStatus.ACTIVE

        def bobs(e: Episode) -> bool:
            return e.sender_id == "bob" and active(e)

        hits, exact = index.search(tokens, limit, active, also=["e0001"], speaker=(speaker_limit, bobs))
        best = best_accepted(index, scores, limit, active)
        own = [i for i in best_accepted(index, scores, speaker_limit, bobs) if i not in set(best)]
        assert [h.episode.episode_id for h in hits] == best + own
        assert all(exact[h.episode.episode_id] == pytest.approx(scores[h.episode.episode_id]) for h in hits)


def test_best_first_reads_like_a_whole_sort_past_its_head() -> None:
    rng = random.Random(7)
    scores = {n: float(rng.randint(0, 9)) for n in range(200)}  # ties everywhere
    whole = sorted(scores, key=scores.__getitem__, reverse=True)
    for head in (0, 1, 10, 199, 200, 500):
        order = BestFirst(scores, head)
        assert list(order) == whole
        assert list(order) == whole  # read again, after it sorted the whole
