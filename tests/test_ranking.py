from datetime import timedelta

from ltm.episodes.model import Episode
from ltm.episodes.ranking import RecallRecipe, WindowEntry, rank, time_weight, tokenize
from ltm.timefields import format_utc, utc_now


def _ep(eid, content, days_old=0.0, **kw):
    stamp = format_utc(utc_now() - timedelta(days=days_old))
    return Episode(episode_id=eid, user_key="u", content=content, timestamp=stamp, **kw)


def test_time_weight_is_half_at_half_life_and_never_zero():
    assert time_weight(0, 30) == 1.0
    assert abs(time_weight(30, 30) - 0.5) < 1e-9
    assert time_weight(3650, 30) > 0


def test_recent_beats_old_at_equal_similarity():
    old = WindowEntry(_ep("old", "meeting on friday", days_old=90), 0.4)
    new = WindowEntry(_ep("new", "meeting on friday", days_old=1), 0.4)
    ranked = rank([old, new], "meeting", RecallRecipe(top_k=2), utc_now())
    assert [r.episode.episode_id for r in ranked] == ["new", "old"]


def test_whole_window_is_ranked_before_top_k_is_cut():
    # The verbatim match sits at the far end of the backend's window.
    window = [WindowEntry(_ep(f"e{i}", f"unrelated note number {i} about gardening"), 0.1 + i * 0.01) for i in range(40)]
    window.append(WindowEntry(_ep("target", "the blue bicycle is locked at the station"), 0.9))
    ranked = rank(window, "blue bicycle", RecallRecipe(top_k=3), utc_now())
    assert ranked[0].episode.episode_id == "target"


def test_vector_strategy_has_no_lexical_part_but_keeps_exact_id_match():
    recipe = RecallRecipe(top_k=1, vector_weight=1.0, lexical_weight=0.0)
    a = WindowEntry(_ep("11111111-1111-4111-8111-111111111111", "alpha"), 0.1)
    b = WindowEntry(_ep("22222222-2222-4222-8222-222222222222", "beta"), 0.2)
    ranked = rank([a, b], "22222222-2222-4222-8222-222222222222", recipe, utc_now())
    assert ranked[0].episode.episode_id.startswith("2222")


def test_exact_match_boost_can_be_switched_off():
    filler = [WindowEntry(_ep(f"f{i}", f"filler {i}"), 0.5 + i * 0.05) for i in range(10)]
    a = WindowEntry(_ep("a", "tag match"), 0.30)
    b = WindowEntry(_ep("b", "something", tags=("travel",)), 0.32)
    vector_only = dict(top_k=1, lexical_weight=0.0, vector_weight=1.0)
    on = rank([a, b, *filler], "travel", RecallRecipe(**vector_only), utc_now())
    off = rank([a, b, *filler], "travel", RecallRecipe(**vector_only, exact_match_boost=False), utc_now())
    assert on[0].episode.episode_id == "b" and off[0].episode.episode_id == "a"


def test_tokenize_drops_stopwords_and_splits_cjk():
    assert tokenize("What did Alice plan for the trip?") == ["alice", "plan", "trip"]
    assert "周五" in tokenize("我们周五开会")


def test_at_one_and_two_half_lives_an_identical_memory_scores_a_half_and_a_quarter():
    """Documented decay: at `recency_half_life_days` an otherwise identical memory scores about half of
    a fresh one; decay never removes it from the ranking."""
    recipe = RecallRecipe(top_k=10, half_life_days=30)
    now = utc_now()
    fresh, one, two = (WindowEntry(_ep(name, "the boat trip is on saturday", days_old=age), 0.5)
                       for name, age in (("fresh", 0), ("one", 30), ("two", 60)))
    filler = WindowEntry(_ep("filler", "a note about gardening", days_old=0), 1.5)
    scores = {s.episode.episode_id: s.score for s in rank([fresh, one, two, filler], "boat trip", recipe, now)}
    assert abs(scores["one"] / scores["fresh"] - 0.5) < 0.01
    assert abs(scores["two"] / scores["fresh"] - 0.25) < 0.01
    assert set(scores) == {"fresh", "one", "two", "filler"}  # old memories are ranked, never dropped
    ancient = WindowEntry(_ep("ancient", "the boat trip is on saturday", days_old=3650), 0.5)
    assert rank([ancient], "boat trip", recipe, now)[0].score > 0


def _at(eid, content, stamp, **kw):
    return Episode(episode_id=eid, user_key="u", content=content, timestamp=stamp, **kw)


def test_the_other_half_of_an_exchange_rides_on_its_relevant_neighbour():
    base = utc_now() - timedelta(days=2)
    asked = _at("asked", "did you go to the pottery fair in town", format_utc(base))
    reply = _at("reply", "yes, on sunday, and I bought two bowls", format_utc(base + timedelta(seconds=1)))
    # Equally distant fillers written hours away: no neighbour within context_seconds.
    fillers = [_at(f"f{i}", f"note {i} about the garden hose", format_utc(base + timedelta(hours=3 + i)))
               for i in range(4)]
    window = [WindowEntry(asked, 0.2), WindowEntry(reply, 0.9)] + [WindowEntry(f, 0.9) for f in fillers]
    recipe = RecallRecipe(top_k=2, recency_weight=0.0)
    query = "when was the pottery fair"
    assert [s.episode.episode_id for s in rank(window, query, recipe, utc_now())] == ["asked", "reply"]
    without = rank(window, query, RecallRecipe(top_k=2, recency_weight=0.0, context_weight=0.0), utc_now())
    assert "reply" not in [s.episode.episode_id for s in without]


def test_a_candidate_found_by_words_only_scores_zero_on_the_vector_side():
    near = WindowEntry(_ep("near", "apples and pears"), 0.1)
    far = WindowEntry(_ep("far", "apples and pears"), 0.5)
    words_only = WindowEntry(_ep("words", "zebracorn"), None)
    scored = {s.episode.episode_id: s for s in rank([near, far, words_only], "zebracorn", RecallRecipe(top_k=3),
                                                    utc_now(), lexical_scores={"words": 3.0})}
    assert scored["near"].vector == 1.0 and scored["far"].vector == 0.0 and scored["words"].vector == 0.0
    assert scored["words"].lexical == 1.0
