"""bench/lmeb_locomo.py: the metric on cases worked out by hand, and a smoke run of the whole benchmark on
a made-up conversation (LoCoMo itself is not needed) with the hashing embedder, cosine and plugin alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import lmeb_locomo
from bench.lmeb_locomo import capped_recall_at, documents, questions, recall_at, score
from bench.locomo_data import QA, Conversation
from tests.test_bench_locomo import tiny_conversation

RANKED = ["D1:4", "D2:1", "D1:1", "D3:2", "D1:2", "D2:7", "D3:1", "D1:9", "D2:2", "D3:3", "D4:4"]


def test_recall_counts_gold_turns_in_the_top_k_over_all_gold_turns() -> None:
    # Two gold turns, one of them (D1:1, rank 3) in the top 5, the other (D4:4) at rank 11.
    assert recall_at(RANKED, ("D1:1", "D4:4"), 5) == 0.5
    assert recall_at(RANKED, ("D1:1", "D4:4"), 10) == 0.5
    assert recall_at(RANKED, ("D1:1", "D4:4"), 11) == 1.0
    # One gold turn below the cut: nothing found.
    assert recall_at(RANKED, ("D4:4",), 10) == 0.0
    # A gold id no turn has (LoCoMo has a few) still counts in the denominator.
    assert recall_at(RANKED, ("D1:4", "D:99"), 5) == 0.5


def test_capped_recall_divides_by_the_smaller_of_gold_and_k() -> None:
    # Two gold turns, the top 1 holds one of them: recall 1/2, capped 1/min(2, 1) = 1.
    assert recall_at(RANKED, ("D1:4", "D2:1"), 1) == 0.5
    assert capped_recall_at(RANKED, ("D1:4", "D2:1"), 1) == 1.0
    # Six gold turns, four of them in the top 5: recall 4/6, capped 4/5.
    gold = ("D1:4", "D2:1", "D1:1", "D3:2", "D4:4", "D9:9")
    assert recall_at(RANKED, gold, 5) == pytest.approx(4 / 6)
    assert capped_recall_at(RANKED, gold, 5) == pytest.approx(4 / 5)


def test_score_averages_over_questions() -> None:
    figures = score([(RANKED, ("D1:1", "D4:4")), (RANKED, ("D2:1",)), (RANKED, ("D4:4",))])
    assert figures["n"] == 3
    assert figures["R@5"] == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    assert figures["R@10"] == pytest.approx((0.5 + 1.0 + 0.0) / 3)


def tiny() -> tuple[Conversation, dict[str, Any]]:
    turns = tiny_conversation().turns  # six turns D1:1-D2:3 of Ann and Ben
    qas = [QA(0, "What is the name of Ann's kitten?", 4, ("D1:1",)),
           QA(1, "Which instrument is Ben learning?", 1, ("D1:2", "D2:3")),
           QA(2, "When did Ben's sister move?", 2, ("D2:1",)),
           QA(3, "Is this made up?", 5, ("D1:3",))]
    raw = {"session_1_date_time": "10:00 am on 1 May, 2023", "session_2_date_time": "10:00 am on 1 June, 2023",
           "session_1": [{"dia_id": "D1:1", "blip_caption": "a photo of a grey kitten"}],
           "qa": [{"question": "Where did Ben's sister move?", "category": 4, "evidence": ["D2:1", "D:7"]},
                  {"question": "Nothing", "category": 3, "evidence": []}]}
    # The conversation id is one of the held-out five, so both views of the table are filled.
    return Conversation(44, "Ann", "Ben", turns, qas), raw


def test_questions_and_documents_follow_the_chosen_variant() -> None:
    conv, raw = tiny()
    normalized = questions(conv, raw, "normalized")
    assert [(q.subset, q.gold) for q in normalized] == [
        ("single_hop", ("D1:1",)), ("multi_hop", ("D1:2", "D2:3")), ("temporal_reasoning", ("D2:1",))]
    assert [(q.subset, q.gold) for q in questions(conv, raw, "raw")] == [("single_hop", ("D2:1", "D:7"))]
    docs = documents(conv, raw, "dated-caption")
    assert docs[0] == "10:00 am on 1 May, 2023 Ann: I adopted a grey kitten called Pepper last week. [image: a photo " \
                      "of a grey kitten]"
    assert documents(conv, raw, "turn")[3] == "Ben: My sister moved to Lisbon for her new job."


async def test_lmeb_bench_smoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(lmeb_locomo, "load_all", lambda limit=None: [tiny()])
    out = tmp_path / "lmeb.json"
    payload = await lmeb_locomo.main_async(lmeb_locomo.parse_args(
        ["--embedder", "hashing", "--systems", "minilm,plugin", "--docs", "turn,dated", "--json", str(out)]))
    assert json.loads(out.read_text())["figures"] == payload["figures"]
    for view in ("all", "heldout"):
        for system in ("hashing[turn]", "hashing[dated]", "plugin"):  # named after the embedder, not MiniLM
            cells = payload["figures"][view][system]
            assert [cells[s]["n"] for s in ("single_hop", "multi_hop", "temporal_reasoning")] == [1, 1, 1]
            # Six turns: every gold turn is in everyone's top 10.
            assert all(cells[s]["R@10"] == 1.0 for s in ("single_hop", "multi_hop", "temporal_reasoning"))
    assert "tuning" not in payload["figures"]
    assert "gap to the published row" not in capsys.readouterr().out  # a hashing row is not MiniLM's
    # The kitten's name is a word match: the plugin ranks that turn first.
    first = next(q for q in payload["questions"] if q["qa"] == 0)
    assert first["plugin"][0] == "D1:1"
