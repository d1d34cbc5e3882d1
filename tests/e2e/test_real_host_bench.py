"""Smoke of bench/real_host.py on the e2e suite's real LangBot 4.11.2 (tiny counts).

The fixture's stack runs with the action log (devhost/sitecustomize/devhost_action_probe.py),
so the bench function can attribute host calls to LongTermMemory. This checks the JSON shape
that the "without" pipeline really has no plugin in its turns, and that the floor pipeline makes the
floor's two host calls through its own bench plugin; timings are not asserted.
"""

from __future__ import annotations

import json

from bench.real_host import install_floor, run_bench


def test_real_host_bench_shape(e2e):
    install_floor(e2e.info, e2e.stack.config.lbvenv, e2e.stack.data_dir)  # bound to its own pipeline only
    result = run_bench(e2e.info, action_log=e2e.stack.config.action_log, request_log=e2e.stack.request_log,
                       turns=2, warmup=1, episodes=30, default_kb=False, floor=True)
    json.dumps(result)  # serializable as written by main()
    for label in ("with", "without"):
        figures = result[label]
        assert figures["n"] == 2 and 0 < figures["p50_ms"] <= figures["p95_ms"], figures
    assert result["ratio_p50"] > 0 and result["fill"]["episodes"] == 30
    assert result["memory_lines_p50"] and result["memory_lines_p50"] >= 1, result  # recall found the imports

    with_calls, without_calls = result["host_calls"]["with"], result["host_calls"]["without"]
    assert with_calls["turns"] == without_calls["turns"] == 2
    # With the plugin bound: it is called (events) and calls the host (embedding + searches) every turn.
    assert with_calls["ltm_sdk_min_max"][0] >= 2 and with_calls["per_turn"]["host_to_ltm"] >= 1, with_calls
    assert {"invoke_embedding", "vector_search"} <= set(with_calls["by_action_per_turn"]["ltm_sdk"]), with_calls
    assert with_calls["embedding_requests_per_turn"] >= 1 and with_calls["chat_requests_per_turn"] >= 1
    assert 0 < with_calls["ltm_share_of_host_calls"] < 1
    # The injection waits for 5 calls (6 with a keyed read); its snapshot is written seconds after it answered.
    assert 4 <= with_calls["ltm_sdk_waited_min_max"][0] <= with_calls["ltm_sdk_waited_min_max"][1] <= 6, with_calls
    assert with_calls["ltm_sdk_after_reply_per_turn"] is not None, with_calls
    # Without it: the same Runner work, and no LongTermMemory action at all.
    assert without_calls["per_turn"]["ltm_sdk"] == 0 and without_calls["per_turn"]["host_to_ltm"] == 0, without_calls
    assert without_calls["embedding_requests_per_turn"] == 0 and without_calls["per_turn"]["runner_sdk"] >= 1
    assert without_calls["ltm_share_of_host_calls"] == 0
    # The floor pipeline: the floor plugin's embedding and one search, no LongTermMemory at all.
    floor_calls = result["host_calls"]["floor"]
    assert floor_calls["per_turn"]["ltm_sdk"] == 0 and floor_calls["per_turn"]["floor_sdk"] >= 2, floor_calls
    assert {"invoke_embedding", "vector_search"} <= set(floor_calls["by_action_per_turn"]["floor_sdk"]), floor_calls
    assert result["floor"]["floor_ms_p50"] > 0 and result["floor"]["added_over_floor"] is not None
    assert "added_over_floor_plugin" in result["floor"]
