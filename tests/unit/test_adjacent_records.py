"""Adjacent records, the wider neighbouring context and the question of time (issue 44's recall round)."""

from dataclasses import replace
from datetime import timedelta

from ltm import MemoryService, RecallFilters, parse_records
from ltm.episodes.model import Episode
from ltm.episodes.question import Question
from ltm.episodes.question_cues import asks_when, tells_when
from ltm.episodes.ranking import RecallRecipe, WindowEntry, rank
from ltm.episodes.space_index import SpaceIndex
from ltm.episodes.terms import tokenize
from ltm.episodes.time_order import TimeOrder
from ltm.timefields import format_utc, utc_now
from testhost.hooks import index_space, recall_at, top
from testhost.memory_ports import InMemoryPorts
from tests.service_helpers import ident

BASE = utc_now() - timedelta(days=3)


def _at(eid: str, content: str, seconds: float) -> Episode:
    return Episode(episode_id=eid, space_key="u", content=content, timestamp=format_utc(BASE + timedelta(seconds=seconds)))


def test_time_order_follows_the_timestamps_not_the_order_records_arrived_in():
    stamps = ["2024-01-01T00:00:05Z", "2024-01-01T00:00:01Z", "2024-01-01T00:00:03Z", "2024-01-01T00:00:02Z"]
    order = TimeOrder(stamps)
    assert order.around(0, 2) == []  # not built: nothing to say, and nothing was sorted
    order.build([0, 1, 2, 3])  # by time: 1, 3, 2, 0
    assert order.around(2, 1) == [3, 0] and order.around(2, 2) == [3, 0, 1]
    assert order.around(1, 2) == [3, 2]  # the first record has only followers
    stamps.append("2024-01-01T00:00:04Z")
    order.add(4)  # between 2 and 0
    assert order.around(4, 1) == [2, 0]
    order.remove(2)
    assert order.around(4, 1) == [3, 0]
    order.remove(4)
    stamps[4] = "2024-01-01T00:00:00Z"  # a changed time: removed under the old one, placed by the new one
    order.add(4)
    assert order.around(4, 1) == [1]


def test_the_space_index_gives_the_records_written_around_one_and_their_exact_word_scores():
    index = SpaceIndex("u")
    for number, seconds in enumerate((0, 1, 2, 3, 4)):
        index.add(_at(f"e{number}", f"turn {number} about kites", seconds))
    assert [e.episode_id for e in index.adjacent("e2", 1)] == ["e1", "e3"]
    assert [e.episode_id for e in index.adjacent("e2", 2)] == ["e1", "e3", "e0", "e4"]
    index.add(_at("late", "written long after", 3600))
    index.remove("e3")  # kept current once built
    assert [e.episode_id for e in index.adjacent("e4", 1)] == ["e2", "late"]
    scores = index.scores_of(tokenize("kites"), ["e0", "late", "unknown"])
    assert set(scores) == {"e0", "late"} and scores["e0"] > 0 and scores["late"] == 0


def test_the_entry_two_away_counts_at_the_context_decay_when_the_context_reaches_two():
    asked = _at("asked", "what did you paint for the art show", 0)
    between = _at("between", "oh nice, tell me", 1)
    answer = _at("answer", "a sunset over the lake", 2)
    window = [WindowEntry(asked, 0.1), WindowEntry(between, 0.9), WindowEntry(answer, 0.9)]
    window += [WindowEntry(_at(f"f{i}", f"filler {i}", 7200 * (i + 1)), 0.9) for i in range(3)]
    recipe = RecallRecipe(top_k=6, recency_weight=0.0, session_weight=0.0, question_penalty=0.0, context_reach=1)
    question = Question.of("art show painting")
    one = {s.episode.episode_id: s for s in rank(window, question, recipe, utc_now())}
    two = {s.episode.episode_id: s for s in rank(window, question, replace(recipe, context_reach=2, context_decay=0.7),
                                                 utc_now())}
    relevance_of_asked = one["between"].context  # `between`, `answer` and the fillers have relevance 0 here
    assert relevance_of_asked > 0 and one["answer"].context == 0.0
    assert abs(two["answer"].context - 0.7 * relevance_of_asked) < 1e-9
    assert two["between"].context == relevance_of_asked  # the nearer neighbour counts in full


def test_a_question_of_time_lifts_the_records_that_say_when():
    assert asks_when("When did Ann go to the fair?") and asks_when("How long has Bob had his turtles?")
    assert not asks_when("What did Ann buy at the fair?")
    assert tells_when("I went to the fair last week!") and tells_when("we moved two years ago")
    assert not tells_when("the fair was fun")
    said = [_at("says", "Ann: I went to the fair last Friday", 0), _at("plain", "Ann: the fair was lovely", 1)]
    window = [WindowEntry(e, 0.5) for e in said] + [WindowEntry(_at(f"f{i}", f"filler {i}", 9000 * (i + 1)), 0.9)
                                                    for i in range(3)]
    recipe = RecallRecipe(top_k=5, recency_weight=0.0, vector_weight=1.0, lexical_weight=0.0, context_weight=0.0,
                          session_weight=0.0, time_cue_weight=0.2)  # the shipped weight
    when = {s.episode.episode_id: s.bonus for s in rank(window, Question.of("When did Ann go to the fair?"), recipe,
                                                         utc_now())}
    what = {s.episode.episode_id: s.bonus for s in rank(window, Question.of("What did Ann do at the fair?"), recipe,
                                                         utc_now())}
    assert when["says"] - when["plain"] == 0.2 and what["says"] == what["plain"]


async def test_recall_adds_the_records_around_the_best_match_from_the_space_index_without_a_host_call():
    """The answer says nothing the question would find (no shared word, far in vector space); it is two
    records after the one that matched. With adjacent records it joins the window and is recalled."""
    ports = InMemoryPorts()
    memory = MemoryService(ports.ports)
    await memory.register_kb("kb-1", {"embedding_model_uuid": "emb-1"})
    scope = await memory.scope_for(ident(), "kb-1")
    lines = ["Check out my painting for the art show!", "Wow! What inspired it?",
             "I did it after a visit to the harbour at dawn."]
    lines += [f"Unrelated chat line {i} about groceries and the weather" for i in range(30)]
    items = [{"id": f"t{i}", "content": text, "timestamp": format_utc(BASE + timedelta(seconds=i))}
             for i, text in enumerate(lines)]
    await memory.import_episodes(scope, parse_records(items, source="import"))
    await index_space(memory, scope)
    plain = replace(top(5), vector_window=2, lexical_window=2, adjacent_top=0, context_reach=1)
    question = "What inspired the painting for the art show?"
    before = await recall_at(memory, scope, question, plain, utc_now(), RecallFilters())
    assert "t2" not in [s.episode.original_id for s in before]
    ports.calls.reset()
    after = await recall_at(memory, scope, question, replace(plain, adjacent_top=1, adjacent_reach=2, context_reach=2,
                                                             context_decay=0.7), utc_now(), RecallFilters())
    found = {s.episode.original_id: s for s in after}
    assert "t2" in found and found["t2"].distance is None  # joined by adjacency: no vector distance
    assert found["t2"].episode.content.startswith("I did it")  # read whole, as any record handed on
    assert ports.calls.count("index.search") == 1 and ports.calls.count("embedder.embed") == 1
    assert ports.calls.count("index.get_many") <= 1  # the one keyed read of records found without a vector


async def test_words_from_the_best_records_find_a_record_that_shares_none_with_the_question():
    """Feedback (off by default): the words that weigh most in the first-ranked records join the question's, so
    a record sharing only those words (not the question's) joins the window by a second word search."""
    ports = InMemoryPorts()
    memory = MemoryService(ports.ports)
    await memory.register_kb("kb-1", {"embedding_model_uuid": "emb-1"})
    scope = await memory.scope_for(ident(), "kb-1")
    lines = ["our family camping trip to the lake with marshmallows", "the campfire marshmallows were the best part",
             "we roasted marshmallows by the campfire again tonight"]
    lines += [f"filler line {i} about taxes and the office printer" for i in range(30)]
    items = [{"id": f"t{i}", "content": text, "timestamp": format_utc(BASE + timedelta(hours=2 * i))}
             for i, text in enumerate(lines)]
    await memory.import_episodes(scope, parse_records(items, source="import"))
    await index_space(memory, scope)
    plain = replace(top(5), vector_window=1, lexical_window=1, adjacent_top=0, feedback_top=1, feedback_weight=1.0)
    question = "what did the family do on the camping trip?"
    before = [s.episode.original_id for s in await recall_at(memory, scope, question, plain, utc_now(), RecallFilters())]
    assert "t2" not in before  # it shares no word with the question, and the vector window is one row
    ports.calls.reset()
    after = await recall_at(memory, scope, question, replace(plain, feedback_terms=3), utc_now(), RecallFilters())
    assert "t2" in [s.episode.original_id for s in after]
    assert ports.calls.count("index.search") == 1 and ports.calls.count("embedder.embed") == 1  # no host call more
