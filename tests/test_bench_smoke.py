"""Smoke runs of benchmarks on tiny inputs, so they cannot rot: the older cost benchmarks
(bench/host_calls.py, bench/backend_cost.py) and the load benchmark (bench/load.py) run end to end on
the real test host, the extraction quality benchmark (bench/extraction_quality.py, also reached through
bench/candidate_rules.py --set) on a slice of each labelled set; each writes JSON of the expected shape.
Timings and quality figures are printed by the benchmarks, never asserted here; the load run asserts its
correctness counters."""

from __future__ import annotations

import json
from pathlib import Path

from bench import backend_cost, candidate_rules, extraction_quality, host_calls, load


async def test_host_calls_smoke(tmp_path: Path) -> None:
    out = tmp_path / "host_calls.json"
    assert await host_calls.main_async(host_calls.parse_args(
        ["--sizes", "10,60", "--runs", "2", "--warmup", "1", "--json", str(out)])) == 0
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 2
    small, large = rows
    # Host calls of one injection do not grow with the scope, and every injection found memories.
    assert small["calls"] == large["calls"] and sum(small["calls"].values()) <= 8, rows
    assert all(r["episodes_injected"] > 0 and not r["errors"] for r in rows), rows


async def test_backend_cost_smoke(tmp_path: Path) -> None:
    out = tmp_path / "backend_cost.json"
    assert await backend_cost.main_async(backend_cost.parse_args(
        ["--sizes", "30", "--backends", "chroma,qdrant", "--runs", "2", "--warmup", "1", "--json", str(out)])) == 0
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 2
    assert all(r["injected"] > 0 and not r["errors"] for r in rows), rows


async def test_load_smoke_loses_nothing_and_reads_only_its_own_chat(tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    argv = ["--chats", "6", "--turns", "5", "--soak-seconds", "3", "--soak-rate", "8", "--soak-keep", "3",
            "--sample-seconds", "1", "--json", str(out)]
    result = await load.main_async(load.parse_args(argv), argv)
    assert json.loads(out.read_text())["correctness"] == result["correctness"]
    # 0 failed operations, 0 lost or unaudited changes, 0 cross-space reads, no fence, on both stores.
    assert set(result["correctness"].values()) == {0}, result["correctness"]
    assert [row["backend"] for row in result["rows"]] == ["chroma", "qdrant"]
    for row in result["rows"]:
        assert row["burst"]["latency_ms"]["injection"]["n"] == 6 * 5
        assert {"remember", "recall_memory", "update_profile"} <= set(row["burst"]["latency_ms"])
        assert row["soak"]["turns"] > 0 and len(row["soak"]["samples"]) >= 2
        assert all(s["plugin_heap_mib"] > 0 for s in row["soak"]["samples"])


def test_extraction_quality_smoke(tmp_path: Path) -> None:
    out = tmp_path / "extraction_quality.json"
    assert extraction_quality.main(["--set", "both", "--limit", "3", "--json", str(out)]) == 0
    sets = json.loads(out.read_text(encoding="utf-8"))["sets"]
    assert set(sets) == {"tuning", "heldout"}
    for figures in sets.values():
        assert figures["messages"] == {"en": 3, "zh": 3, "ja": 3}
        assert figures["languages"]["all"]["messages"] == 9
        assert figures["languages"]["all"]["expected"] >= 9  # the slice starts with positives
        assert set(figures["goal"]) == {"en", "zh", "ja", "met"}


def test_candidate_rules_delegates_a_labelled_set_to_the_quality_benchmark(tmp_path: Path) -> None:
    out = tmp_path / "heldout.json"
    assert candidate_rules.main(["--set", "heldout", "--lang", "ja", "--limit", "2", "--json", str(out)]) == 0
    figures = json.loads(out.read_text(encoding="utf-8"))["sets"]["heldout"]
    assert figures["messages"] == {"ja": 2} and figures["languages"]["ja"]["messages"] == 2
