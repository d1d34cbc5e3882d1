"""One recall reads its question once (`ltm/episodes/question.py`) and never does the index's bookkeeping:
the store corrects its index of the space from the rows its reads return (`ltm/episodes/store.py`)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from ltm import MemoryScope, MemoryService
from ltm.episodes import question_cues, terms
from ltm.episodes.lexical import LexicalIndexes
from ltm.episodes.question import Question
from ltm.episodes.question_cues import DateCue
from ltm.ports import IndexRecord
from testhost.hooks import index_space, top
from testhost.memory_ports import InMemoryPorts, StoredVector
from tests.unit.support import import_many

ASKED = "What did Caroline research on 7 July, 2023?"
# Every function that reads a question's text. `named` is left out: ranking asks it of each speaker in the
# window, through `Question.names`.
PARSERS = {"words": terms.words, "tokenize": terms.tokenize, "terms_of": terms.terms_of,
           "date_cues": question_cues.date_cues, "named_speakers": question_cues.named_speakers,
           "without_speakers": question_cues.without_speakers}


def lexical(memory: MemoryService) -> LexicalIndexes:
    return memory.parts.episodes._lexical  # white-box on purpose: what the index holds, how often it was read


def test_the_question_holds_everything_a_recall_reads_of_it() -> None:
    question = Question.of("  Caroline's tags: pottery-class on 2023-05-03 (see 11111111-1111-4111-8111-111111111111)  ")
    assert question.text == "Caroline's tags: pottery-class on 2023-05-03 (see 11111111-1111-4111-8111-111111111111)"
    assert question.terms == tuple(terms.tokenize(question.text)) and "carolin" in question.terms
    assert question.words == frozenset(terms.words(question.text)) and "caroline" in question.words
    assert "pottery-class" in question.tag_words and "caroline" in question.tag_words
    assert question.ids == {"11111111-1111-4111-8111-111111111111"} and question.record_id == ""
    assert question.dates == (DateCue(5, 2023, 3),)
    assert question.names("Caroline") and not question.names("Carol")
    assert question.without_speakers(["Caroline", "Mel"]) == "tags: pottery-class on 2023-05-03 (see " \
                                                             "11111111-1111-4111-8111-111111111111)"
    asked_id = Question.of(" 11111111-1111-4111-8111-111111111111 ")
    assert asked_id.record_id == "11111111-1111-4111-8111-111111111111"
    # A question of nothing asks for the tag filter's tags, or for anything.
    assert Question.of("  ", ("drawer", "keys")).text == "drawer keys" and Question.of("").text == "*"


async def test_one_recall_parses_its_question_once(fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    await import_many(memory, alice, [
        {"content": "I researched adoption agencies", "sender_id": "caroline", "sender_name": "Caroline"},
        {"content": "Wow, Caroline, that is great", "sender_id": "mel", "sender_name": "Mel"},
        {"content": "We went camping in July", "sender_id": "mel", "sender_name": "Mel"},
    ])
    await index_space(memory, alice)
    asked: Counter[str] = Counter()

    def spy(name: str, parse: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(text: str, *args: Any) -> Any:
            asked[name] += text == ASKED
            return parse(text, *args)
        return wrapped

    for module in [m for name, m in sys.modules.items() if name.startswith("ltm.episodes.")]:
        for name, parse in PARSERS.items():
            if getattr(module, name, None) is parse:
                monkeypatch.setattr(module, name, spy(name, parse))
    hits = await memory.recall(alice, ASKED, recipe=top(3))
    assert hits[0].episode.content == "I researched adoption agencies"
    assert asked == {"words": 1, "terms_of": 1, "date_cues": 1, "named_speakers": 1, "without_speakers": 1}


def _behind_the_plugins_back(fake: InMemoryPorts, scope: MemoryScope, record_id: str, content: str) -> None:
    """A row the plugin never wrote (say, a store restored from a backup): its index does not know it."""
    rows = fake.index.kbs[scope.kb_id]
    model = next(iter(rows.values()))
    record = IndexRecord(record_id, model.record.space_key, "bob", content,
                         {**model.record.fields, "content": content, "episode_id": record_id})
    rows[record_id] = StoredVector(record, model.vector, model.norm)


async def test_rows_a_recall_finds_that_the_index_does_not_know_enter_it_without_recall_saying_so(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope) -> None:
    await import_many(memory, alice, [{"content": f"note {n} about the quarterly budget", "sender_id": "bob"}
                                      for n in range(6)])
    await index_space(memory, alice)
    index = lexical(memory).loaded(alice.l2)
    assert index is not None
    builds = lexical(memory).builds
    unknown = ["00000000-0000-4000-8000-0000000000a1", "00000000-0000-4000-8000-0000000000a2"]
    _behind_the_plugins_back(fake, alice, unknown[0], "the zebracorn stickers are in the top drawer")
    _behind_the_plugins_back(fake, alice, unknown[1], "a zebracorn badge is on the shelf")
    hits = await memory.recall(alice, "zebracorn", recipe=top(2))
    assert sorted(h.episode.episode_id for h in hits) == unknown
    # Both rows of the one read corrected the index the recall used (so its word search scored them) ...
    assert all(i in index for i in unknown)
    # ... and the space was read again once, in the background.
    await lexical(memory).settled()
    assert lexical(memory).builds == builds + 1
    rebuilt = lexical(memory).loaded(alice.l2)
    assert rebuilt is not None and rebuilt is not index and all(i in rebuilt for i in unknown)
