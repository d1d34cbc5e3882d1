"""Smoke run of bench/locomo_recall.py: a tiny made-up conversation (so LoCoMo itself is not
needed), the hashing embedder, no mem0; checks the JSON it writes has the reported shape and
sane values, so the benchmark cannot rot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import locomo_recall
from bench.locomo_data import QA, Conversation, Turn

LINES = [
    ("Ann", "I adopted a grey kitten called Pepper last week."),
    ("Ben", "Nice! I started learning the cello in March."),
    ("Ann", "We went hiking near the lake on Sunday."),
    ("Ben", "My sister moved to Lisbon for her new job."),
    ("Ann", "Pepper knocked my coffee off the table this morning."),
    ("Ben", "The cello teacher says I should practise scales daily."),
]


def tiny_conversation() -> Conversation:
    turns = [Turn(f"D{1 + i // 3}:{1 + i % 3}", 1 + i // 3, speaker, text,
                  f"2023-0{5 + i // 3}-0{1 + i % 3}T10:00:00Z") for i, (speaker, text) in enumerate(LINES)]
    qas = [QA(0, "What is the name of Ann's kitten?", 1, ("D1:1",)),
           QA(1, "Which instrument is Ben learning?", 2, ("D1:2", "D2:3")),
           QA(2, "Where did Ben's sister move?", 4, ("D2:1",))]
    return Conversation(99, "Ann", "Ben", turns, qas)


async def test_locomo_bench_smoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locomo_recall, "load_split", lambda split, limit=None: [tiny_conversation()])
    out = tmp_path / "locomo.json"
    args = locomo_recall.parse_args(["--split", "tuning", "--embedder", "hashing", "--json", str(out),
                                     "--systems", "plugin,plugin-nodecay,vector,plugin-bm25"])
    await locomo_recall.main_async(args)
    payload = json.loads(out.read_text())
    split = payload["splits"]["tuning"]
    assert split["conversations"][0]["as_of"].startswith("2023-06-03")
    for system in ("plugin", "plugin-nodecay", "vector", "plugin-bm25"):
        overall = split["figures"][system]["all"]
        assert overall["n"] == 3
        for metric in ("R@1", "R@5", "R@10", "MRR"):
            assert 0.0 <= overall[metric] <= 1.0
        assert overall["R@1"] <= overall["R@5"] <= overall["R@10"]
    # Six turns: every evidence turn is in everyone's top 10.
    assert split["figures"]["vector"]["all"]["R@10"] == 1.0
    # The kitten's name is a word match: the plugin finds it first with or without decay.
    first = {row["qa"]: row for row in split["questions"]}[0]
    assert first["plugin-nodecay"][0] == "D1:1"
    assert len(split["questions"]) == 3


def test_lexical_cost_bench_smoke(tmp_path: Path) -> None:
    from bench import lexical_cost

    out = tmp_path / "lexical.json"
    payload = lexical_cost.main(["--sizes", "50,200", "--runs", "2", "--json", str(out)])
    assert json.loads(out.read_text())["rows"] == payload["rows"]
    small, large = payload["rows"]
    assert (small["episodes"], large["episodes"]) == (50, 200)
    assert large["index_mb"] >= small["index_mb"] > 0
    assert all(row["lookup_ms[common words]"] >= 0 and row["picked[a rare word]"] >= 0 for row in payload["rows"])


def test_lexical_cost_resident_smoke() -> None:
    """`--resident` saves a space's index as pages and loads it back the way a restarted plugin does."""
    from bench import lexical_cost

    row = lexical_cost.main(["--resident", "300"])
    assert row["episodes"] == 300 and row["load_s"] >= 0 and row["saved_pages_mib"] > 0
    # Each figure is rounded on its own, so the difference of the rounded two may be 0.1 off.
    assert abs(row["index_rss_mib"] - (row["rss_after_mib"] - row["rss_before_mib"])) <= 0.1 + 1e-9


def test_recipe_overrides_are_typed_and_refused_when_unknown_or_on_held_out() -> None:
    args = locomo_recall.parse_args(["--split", "tuning", "--recipe", "vector_window=200,session_weight=0,"
                                     "strip_named_speakers=off"])
    assert args.recipe == {"vector_window": 200, "session_weight": 0.0, "strip_named_speakers": False}
    for bad in (["--split", "tuning", "--recipe", "window=3"], ["--split", "heldout", "--recipe", "top_k=3"],
                ["--systems", "engram"]):
        with pytest.raises(SystemExit):
            locomo_recall.parse_args(bad)


async def test_exact_recall_bench_and_its_replica_smoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """bench/recall_exact.py on the tiny conversation (exact in-memory ports, hashing embedder): the same
    figures twice, a held-out recipe only with --report-once, and a dump the replica reads and ranks."""
    from bench import recall_exact, recall_replica

    monkeypatch.setattr(recall_exact, "load_split", lambda split, limit=None: [tiny_conversation()])
    out, dump = tmp_path / "exact.json", tmp_path / "space.pkl"
    before = "adjacent_top=0,context_reach=1,context_decay=1.0,context_weight=0.5,time_cue_weight=0"
    argv = ["--embedder", "hashing", "--recipe", before, "--recipe", "", "--keyed-reads"]  # the dump: `before`
    await recall_exact.main_async(recall_exact.parse_args([*argv, "--json", str(out), "--dump-space", str(dump)]))
    first = json.loads(out.read_text())
    await recall_exact.main_async(recall_exact.parse_args([*argv, "--json", str(out)]))
    assert json.loads(out.read_text())["figures"] == first["figures"]  # exact search: the same every run
    overall = first["figures"][before]["all"]
    assert overall["n"] == 3 and 0.0 <= overall["R@1"] <= overall["R@5"] <= overall["R@10"] == 1.0
    assert first["figures"][""]["all"]["n"] == 3
    assert "keyed reads per recall of the top 5" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        await recall_exact.main_async(recall_exact.parse_args(["--split", "heldout", "--recipe", "adjacent_top=0"]))
    assert recall_replica.main([str(dump), "--no-vectors"]) == 0
    lines = capsys.readouterr().out.splitlines()
    replica = next(line for line in lines if line.endswith("replica of the defaults before issue 44"))
    assert replica.startswith(f"{overall['R@5']:.3f} / {overall['R@10']:.3f}")  # it ranks as that recipe did
