"""Smoke runs of the cost benchmarks (bench/turn_cost.py, bench/installation.py) on tiny inputs.

They check that each script still runs end to end on the real test host and writes JSON of the
expected shape with sane values; the figures themselves are in bench/RESULTS.md (timings are
printed by the benchmarks, never asserted here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import installation, turn_cost


async def test_turn_cost_smoke(tmp_path: Path) -> None:
    out = tmp_path / "turn_cost.json"
    result = await turn_cost.run(["--sizes", "20,80", "--backends", "chroma", "--runs", "3", "--warmup", "1",
                                  "--json", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    rows = result["rows"]
    assert [r["size"] for r in rows] == [20, 80]
    for row in rows:
        assert row["errors"] == []
        assert row["episodes_injected"] == row["top_k"] == 5
        assert row["host_calls_besides_keyed_read_constant"] is True
        assert 0 < row["host_calls_total"] == sum(row["host_calls"].values()) <= row["host_calls_max_total"] <= 6
        assert row["host_calls_max_besides_keyed_read"] <= min(5, row["host_calls_max_total"])
        assert row["host_calls_after_reply"] == 1  # the snapshot's write: the injection does not wait for it
        assert "set_plugin_storage" not in row["host_calls"]
        assert row["host_calls"]["invoke_embedding"] == 1  # one embedding per turn, whatever the scope holds
        assert row["floor_rows"] == row["top_k"]
        assert row["turn_ms"]["n"] == row["floor_ms"]["n"] == 3
        # The figures' arithmetic, never their speed (issue 44: no wall-clock assertion in a test).
        assert row["ratio_median"] == pytest.approx(row["turn_ms"]["median"] / row["floor_ms"]["median"], rel=0.01)
        assert 0 <= row["plugin_cpu_ms"]["median"] <= row["process_cpu_ms"]["median"]
        assert row["plugin_cpu_without_wire_ms"]["median"] <= row["plugin_cpu_ms"]["median"]
        assert row["cold_turn"]["host_calls_total"] >= row["host_calls_total"]
    # The host calls of a turn do not depend on the scope's size (besides the keyed read of word-only winners).
    assert result["goals"]["chroma"]["host_calls_le_5_besides_keyed_read"] is True
    assert result["goals"]["chroma"]["host_calls_same_at_every_size"] is True
    assert result["environment"]["versions"]["chromadb"] != "-"


async def test_installation_smoke(tmp_path: Path) -> None:
    out = tmp_path / "installation.json"
    result = await installation.run([
        "--episodes", "60", "--spaces", "6", "--biggest", "20", "--huge", "90", "--runs", "2", "--warmup", "0",
        "--import-batch", "70", "--audit-small", "10", "--audit-big", "120", "--json", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    (row,) = result["rows"]
    built = row["installation"]
    assert built["episodes"] == 60 + 90 and built["spaces"] == 7
    assert built["zipf_sizes"]["biggest"] >= built["zipf_sizes"]["median"] >= built["zipf_sizes"]["smallest"] >= 1
    assert [i["space"] for i in row["injection"]] == ["smallest", "median", "biggest Zipf", "huge"]
    for inj in row["injection"]:
        assert inj["errors"] == [] and inj["episodes_injected"] >= 1
        assert inj["turn_ms"]["n"] == inj["floor_ms"]["n"] == 2  # timed, as many runs as asked (not how fast)
        assert inj["cold_turn"] is not None and inj["cold_turn"]["host_calls_total"] >= inj["host_calls_total"]
    assert max(inj["host_calls_total"] for inj in row["injection"]) <= 6  # whatever the space holds; the snapshot after
    for writes in row["writes"]:
        for op in ("remember", "forget", "update_profile"):
            assert writes[op]["ms"]["n"] == 2 and writes[op]["host_calls_total"] >= 1
    imported = row["import_l2"]
    assert imported["batch"] == 70 and imported["episodes_per_s"] > 0
    assert imported["embedded_texts_per_1000"] == 1000.0  # each episode embedded exactly once
    assert imported["embedding_calls_per_1000"] > 0
    small, big = row["audit"]
    assert small["entries"] == 10 + 2 and big["entries"] == 120 + 2  # filled, then one append per run
    assert big["last_page"] >= 12 and big["append_ms"]["n"] == 2
    listed = row["list"]
    assert listed["listed_total"] + listed["archived_total"] >= 90 and listed["deepest_page_rows"] >= 1
    assert listed["truncated"] is False and listed["archived_total"] >= 1
    for page in listed["command"].values():
        assert page["host_calls_total"] <= 2 and page["reply_lines"] >= 2, page  # the page's keyed read
    assert row["peak_rss_mb"] > 0
