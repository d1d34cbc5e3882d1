from dataclasses import replace
from datetime import timedelta

from ltm import RecallFilters, parse_records
from ltm.episodes.model import Episode, EpisodeStatus
from ltm.episodes.question import Question
from ltm.episodes.ranking import RecallRecipe, WindowEntry, rank, time_weight
from ltm.episodes.terms import tokenize, words
from ltm.timefields import format_utc, utc_now
from testhost.hooks import top
from tests.service_helpers import ident


def _ep(eid, content, days_old=0.0, **kw):
    stamp = format_utc(utc_now() - timedelta(days=days_old))
    return Episode(episode_id=eid, space_key="u", content=content, timestamp=stamp, **kw)


def test_time_weight_is_half_at_half_life_and_never_zero():
    assert time_weight(0, 30) == 1.0
    assert abs(time_weight(30, 30) - 0.5) < 1e-9
    assert time_weight(3650, 30) > 0


def test_recent_beats_old_at_equal_similarity():
    old = WindowEntry(_ep("old", "meeting on friday", days_old=90), 0.4)
    new = WindowEntry(_ep("new", "meeting on friday", days_old=1), 0.4)
    ranked = rank([old, new], Question.of("meeting"), RecallRecipe(top_k=2), utc_now())
    assert [r.episode.episode_id for r in ranked] == ["new", "old"]


def test_whole_window_is_ranked_before_top_k_is_cut():
    # The verbatim match sits at the far end of the backend's window.
    window = [WindowEntry(_ep(f"e{i}", f"unrelated note number {i} about gardening"), 0.1 + i * 0.01) for i in range(40)]
    window.append(WindowEntry(_ep("target", "the blue bicycle is locked at the station"), 0.9))
    ranked = rank(window, Question.of("blue bicycle"), RecallRecipe(top_k=3), utc_now())
    assert ranked[0].episode.episode_id == "target"


def test_vector_strategy_has_no_lexical_part_but_keeps_exact_id_match():
    recipe = RecallRecipe(top_k=1, vector_weight=1.0, lexical_weight=0.0)
    a = WindowEntry(_ep("11111111-1111-4111-8111-111111111111", "alpha"), 0.1)
    b = WindowEntry(_ep("22222222-2222-4222-8222-222222222222", "beta"), 0.2)
    ranked = rank([a, b], Question.of("22222222-2222-4222-8222-222222222222"), recipe, utc_now())
    assert ranked[0].episode.episode_id.startswith("2222")


def test_exact_match_boost_can_be_switched_off():
    filler = [WindowEntry(_ep(f"f{i}", f"filler {i}"), 0.5 + i * 0.05) for i in range(10)]
    a = WindowEntry(_ep("a", "tag match"), 0.30)
    b = WindowEntry(_ep("b", "something", tags=("travel",)), 0.32)
    vector_only = dict(top_k=1, lexical_weight=0.0, vector_weight=1.0)
    on = rank([a, b, *filler], Question.of("travel"), RecallRecipe(**vector_only), utc_now())
    off = rank([a, b, *filler], Question.of("travel"), RecallRecipe(**vector_only, exact_match_boost=False), utc_now())
    assert on[0].episode.episode_id == "b" and off[0].episode.episode_id == "a"


def test_tokenize_drops_stopwords_folds_inflections_and_splits_cjk():
    assert tokenize("What did Bob plan for the trip?") == ["bob", "plan", "trip"]
    assert "周五" in tokenize("我们周五开会")
    assert tokenize("exercises exercised exercising exercise") == ["exercis"] * 4
    assert tokenize("planned planning classes studies Caroline's") == ["plan", "plan", "class", "study", "carolin"]
    assert words("What did Caroline's sister say?") == ["caroline", "sister", "say"]  # exact matches: no folding


def test_at_the_half_life_the_time_weight_is_half_and_relevance_is_never_divided_by_age():
    """E6: the time weight is 0.5 at `recency_half_life_days` (0.25 at two); it is added to the score with
    recency_weight, so identical memories differ by exactly that term and old ones are never dropped."""
    recipe = RecallRecipe(top_k=10, half_life_days=30)
    now = utc_now()
    same = [WindowEntry(_ep(name, "the boat trip is on saturday", days_old=age), 0.5)
            for name, age in (("fresh", 0), ("one", 30), ("two", 60), ("ancient", 3650))]
    filler = WindowEntry(_ep("filler", "a note about gardening", days_old=0), 1.5)
    scored = {s.episode.episode_id: s for s in rank([*same, filler], Question.of("boat trip"), recipe, now)}
    assert set(scored) == {"fresh", "one", "two", "ancient", "filler"}  # old memories are ranked, never dropped
    assert abs(scored["one"].time_weight - 0.5) < 0.01 and abs(scored["two"].time_weight - 0.25) < 0.01
    relevance = {name: s.score - recipe.recency_weight * s.time_weight for name, s in scored.items()}
    assert max(relevance[n] for n in ("fresh", "one", "two", "ancient")) - min(
        relevance[n] for n in ("fresh", "one", "two", "ancient")) < 1e-9
    assert scored["fresh"].score > scored["one"].score > scored["two"].score > scored["ancient"].score > 0
    # The whole difference between a fresh memory and one ten years old is the recency term.
    assert scored["fresh"].score - scored["ancient"].score <= recipe.recency_weight + 1e-9


def _at(eid, content, stamp, **kw):
    return Episode(episode_id=eid, space_key="u", content=content, timestamp=stamp, **kw)


def test_the_other_half_of_an_exchange_rides_on_its_relevant_neighbour():
    base = utc_now() - timedelta(days=2)
    asked = _at("asked", "did you go to the pottery fair in town", format_utc(base))
    reply = _at("reply", "yes, on sunday, and I bought two bowls", format_utc(base + timedelta(seconds=1)))
    # Equally distant fillers written hours away: no neighbour within context_seconds.
    fillers = [_at(f"f{i}", f"note {i} about the garden hose", format_utc(base + timedelta(hours=3 + i)))
               for i in range(4)]
    window = [WindowEntry(asked, 0.2), WindowEntry(reply, 0.9)] + [WindowEntry(f, 0.9) for f in fillers]
    recipe = RecallRecipe(top_k=2, recency_weight=0.0, session_weight=0.0)  # the neighbour alone
    query = "when was the pottery fair"
    assert [s.episode.episode_id for s in rank(window, Question.of(query), recipe, utc_now())] == ["asked", "reply"]
    without = rank(window, Question.of(query), replace(recipe, context_weight=0.0), utc_now())
    assert "reply" not in [s.episode.episode_id for s in without]


def test_a_candidate_found_by_words_only_scores_zero_on_the_vector_side():
    near = WindowEntry(_ep("near", "apples and pears"), 0.1)
    far = WindowEntry(_ep("far", "apples and pears"), 0.5)
    words_only = WindowEntry(_ep("words", "zebracorn"), None)
    scored = {s.episode.episode_id: s for s in rank([near, far, words_only], Question.of("zebracorn"), RecallRecipe(top_k=3),
                                                    utc_now(), lexical_scores={"words": 3.0})}
    assert scored["near"].vector == 1.0 and scored["far"].vector == 0.0 and scored["words"].vector == 0.0
    assert scored["words"].lexical == 1.0


def test_a_named_speaker_and_a_named_date_lift_their_records_and_a_question_loses_to_a_statement():
    when = utc_now() - timedelta(days=200)
    said = [
        _at("ann", "Ann: I went to the pottery fair", format_utc(when), sender_id="ann", sender_name="Ann"),
        _at("ben", "Ben: I went to the pottery fair", format_utc(when + timedelta(days=40)), sender_id="ben",
            sender_name="Ben"),
        _at("asks", "Ben: did you go to the pottery fair?", format_utc(when + timedelta(days=80)), sender_id="ben",
            sender_name="Ben"),
    ]
    window = [WindowEntry(e, 0.3) for e in said] + [WindowEntry(_ep(f"f{i}", f"filler {i}"), 0.9) for i in range(5)]
    # Vector side only, all at one distance: whatever separates the three is a cue.
    recipe = RecallRecipe(top_k=3, recency_weight=0.0, vector_weight=1.0, lexical_weight=0.0)
    day = f"{when.day} {when.strftime('%B')}, {when.year}"
    assert rank(window, Question.of("Who went to the pottery fair, Ben?"), recipe, utc_now())[0].episode.episode_id == "ben"
    assert rank(window, Question.of("Did Ann go to the pottery fair?"), recipe, utc_now())[0].episode.episode_id == "ann"
    assert rank(window, Question.of(f"Who went to the pottery fair on {day}?"), recipe, utc_now())[0].episode.episode_id == "ann"
    order = [s.episode.episode_id for s in rank(window, Question.of("pottery fair"), recipe, utc_now())]
    assert order.index("asks") > max(order.index("ann"), order.index("ben"))
    plain = replace(recipe, named_speaker_bonus=0.0, date_weight=0.0, question_penalty=0.0)
    ties = {s.episode.episode_id: s.score for s in rank(window, Question.of(f"Did Ann go on {day}?"), plain, utc_now())}
    assert ties["ann"] == ties["ben"] == ties["asks"]


def test_a_record_from_the_conversation_the_question_is_about_outranks_an_equal_one_from_another_day():
    day = utc_now() - timedelta(days=10)
    topic = [_at(f"t{i}", f"talk about the cello lessons, part {i}", format_utc(day + timedelta(minutes=i)))
             for i in range(3)]
    here = _at("here", "the teacher said twice a week", format_utc(day + timedelta(minutes=5)))
    elsewhere = _at("elsewhere", "the teacher said twice a week", format_utc(day + timedelta(days=3)))
    window = [WindowEntry(e, 0.1) for e in topic] + [WindowEntry(here, 0.5), WindowEntry(elsewhere, 0.5)]
    recipe = RecallRecipe(top_k=10, recency_weight=0.0, context_weight=0.0)
    scored = {s.episode.episode_id: s for s in rank(window, Question.of("cello lessons teacher"), recipe, utc_now())}
    assert scored["here"].score > scored["elsewhere"].score
    assert scored["here"].session > scored["elsewhere"].session
    off = {s.episode.episode_id: s.score for s in rank(window, Question.of("cello lessons teacher"),
                                                       replace(recipe, session_weight=0.0), utc_now())}
    assert off["here"] == off["elsewhere"]


# ---------------------------------------------------------------- through the real recall path
# The plugin on the test host (real Chroma, Qdrant and Milvus Lite), the shipped defaults, records
# imported with their own times, asked now.

async def _space(harness, kb, records: list[dict]):
    memory = harness.plugin.memory
    scope = await memory.scope_for(ident("g-time", sender="alice"), kb)
    fillers = [{"content": f"note {i}: the {topic} needs attention", "timestamp": _ago(3 + i)}
               for i, topic in enumerate(("garden hose", "bike chain", "kitchen tap", "printer", "car tyres",
                                          "window latch", "roof gutter", "fridge door"))]
    written = (await memory.import_episodes(scope, parse_records([*records, *fillers]))).episodes
    return memory, scope, {e.original_id: e.episode_id for e in written}


def _ago(days: float) -> str:
    return format_utc(utc_now() - timedelta(days=days))


async def test_of_two_equally_relevant_facts_a_year_apart_the_newer_comes_first(harness, kb):
    memory, scope, ids = await _space(harness, kb, [
        # Two speakers (one speaker's copy of a stored fact is not written again), the same name, so
        # the records differ by their time alone.
        {"id": "old", "content": "the band rehearses in the church hall", "timestamp": _ago(366),
         "sender_id": "bob", "sender_name": "Sam"},
        {"id": "new", "content": "the band rehearses in the church hall", "timestamp": _ago(1),
         "sender_id": "carol", "sender_name": "Sam"},
    ])
    hits = await memory.recall(scope, "where does the band rehearse", recipe=top(5))
    order = [h.episode.episode_id for h in hits]
    assert order[:2] == [ids["new"], ids["old"]]
    # Not a tie broken by the clock: the time weight alone separates them.
    assert hits[0].score > hits[1].score
    assert abs((hits[0].score - hits[1].score) - 0.05 * (hits[0].time_weight - hits[1].time_weight)) < 1e-9


async def test_a_superseding_correction_ranks_above_the_fact_it_corrects(harness, kb):
    memory, scope, ids = await _space(harness, kb, [
        {"id": "fact", "content": "the dentist appointment is on Tuesday at nine", "timestamp": _ago(40)},
    ])
    fix = (await memory.remember(scope, {"content": "correction: the dentist moved it to Thursday",
                                        "supersedes": [ids["fact"]]})).episode
    wide = RecallFilters(statuses=(EpisodeStatus.ACTIVE, EpisodeStatus.SUPERSEDED))
    # The question repeats the corrected fact's own words; the correction still comes first.
    order = [h.episode.episode_id for h in await memory.recall(scope, "is the dentist appointment on Tuesday",
                                                               recipe=top(5), filters=wide)]
    assert order.index(fix.episode_id) < order.index(ids["fact"])
    # As it is asked by default (active records only) the corrected fact is not offered at all.
    assert ids["fact"] not in [h.episode.episode_id for h in await memory.recall(
        scope, "when is the dentist appointment", recipe=top(5))]


async def test_an_unlinked_later_correction_ranks_above_the_older_statement(harness, kb):
    memory, scope, ids = await _space(harness, kb, [
        {"id": "before", "content": "the dentist appointment is on Tuesday at nine", "timestamp": _ago(40)},
        {"id": "after", "content": "the dentist appointment is on Thursday at nine", "timestamp": _ago(2)},
    ])
    order = [h.episode.episode_id for h in await memory.recall(scope, "when is the dentist appointment", recipe=top(5))]
    assert order.index(ids["after"]) < order.index(ids["before"])


async def test_a_strongly_relevant_two_year_old_fact_beats_a_weak_match_from_yesterday(harness, kb):
    memory, scope, ids = await _space(harness, kb, [
        {"id": "old", "content": "my sister moved to Lisbon for her new job at the museum", "timestamp": _ago(730)},
        {"id": "weak", "content": "my new job badge arrived today", "timestamp": _ago(1)},
    ])
    hits = await memory.recall(scope, "where did my sister move for her job", recipe=top(5))
    assert hits[0].episode.episode_id == ids["old"]
    assert hits[0].time_weight < 1e-6  # twenty-four half-lives old, and still first
