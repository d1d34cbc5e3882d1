#!/usr/bin/env python3
"""Per-turn cost of the automatic injection against the floor, by scope size (issue 14, goal 3).

For each backend (real embedded Chroma, real local-mode Qdrant; `--backends` also takes seekdb and
pgvector) and each size N (default 100, 1,000, 10,000, 100,000 episodes in ONE scope) a fresh
in-process fake LangBot host runs the real plugin through `PluginHarness` (the SDK's own dispatch);
its store calls run in worker threads as LangBot's Chroma adapter runs them (`cost_env.ThreadedBackend`). One recall
builds the empty space's in-process indexes, then the scope is filled in record layout 2 by
`cost_env.direct_fill` (the import's record builder and the plugin's own episode store, in
batches of 2,000, which keeps those indexes current) and gets a session and a speaker profile.
Then:

- timed turns (after --warmup): PromptPreProcessing through `PluginHarness.emit_event`
  with a live query (sender `alice`, memory KB attached), one of 16 fixed questions per run;
- floor, measured in the same process alternately with the turns (same question): ONE
  embedding call (`invoke_embedding` of the question) + ONE bare filtered top-k query
  (`vector_search`, search_type vector, top_k = the KB's `auto_recall_top_k`, filtered on
  the space's `file_id`, the filter every plugin search carries), both straight to the
  fake host (its JSON wire included, no SDK, no plugin);
- ratio = injection median / floor median (and p95 / p95); goal (issue 44): <= 1.3, or at 1,000 episodes
  at most 5 ms above the floor (`added_ms`: injection median - floor median);
- host calls per turn by action that the injection waits for (goal: the same at every size, <= 5 where
  the store allows it; the keyed read of word-only winners comes on top), and the snapshot's write,
  due seconds after the injection answered (counted apart, `host_calls_after_reply`); each turn has it
  written, outside its timing, before the next;
- plugin-side CPU per turn = CPU time of the event-loop thread (`time.thread_time`) from the
  emit to its answer, minus that thread's CPU inside host routes that run on it (the
  embedder; the store too with --no-host-threads); store calls in worker threads never count.
  What remains is the SDK dispatch on both sides, the JSON wire of every call (also reported
  on its own), the host's trivial storage/query-variable handlers, and the plugin itself
  (goal <= 5 ms, flat from 100 to 100,000);
- cold turn: after the timed turns the plugin is restarted (a new plugin process on the same
  host) and the first turn is measured: it pays whatever the plugin builds lazily (store
  probe, the space's lexical index by paging the space); only up to --cold-max episodes.

The embedder is the fake host's deterministic `HashingEmbedder(256)` (pure Python, ~0.1 ms
per question): enough for cost, and its time is in the floor as well as in the turn.

  .venv/bin/python bench/turn_cost.py                                 # 100..100,000 on chroma and qdrant
  .venv/bin/python bench/turn_cost.py --sizes 100,1000 --backends chroma --runs 10
Writes JSON to bench/.cache/results/turn_cost.json (or --json PATH).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A  # noqa: E402 - after the sys.path line above

from bench.cost_env import (  # noqa: E402 - after the sys.path line above
    KEYED_READ,
    RESULTS,
    CostHost,
    command_line,
    direct_fill,
    environment,
    make_host,
    normalized_cpu,
    peak_rss_mb,
    reference_cpu_s,
    summary_ms,
    use_window,
    with_end_load,
    write_json,
)
from bench.host_calls import BOT, GROUP, SPEAKER, SPEAKER_NAME, TOPIC_WORDS, speaker_scope, synthetic_episodes  # noqa: E402 - after the sys.path line above
from bench.plugin_env import quiet_logs  # noqa: E402 - after the sys.path line above
from ltm.langbot import layout  # noqa: E402 - after the sys.path line above
from testhost import PluginHarness  # noqa: E402 - after the sys.path line above
from testhost.hooks import index_space  # noqa: E402 - after the sys.path line above

GOAL_RATIO, GOAL_CALLS, GOAL_CPU_MS = 1.3, 5, 5.0
GOAL_ADDED_MS, GOAL_ADDED_UP_TO = 5.0, 1000  # at 1,000 episodes, 5 ms above the floor also meets the goal
QUESTIONS = [f"what did Alice say about the {TOPIC_WORDS[i % len(TOPIC_WORDS)]} and the {TOPIC_WORDS[(7 * i + 3) % len(TOPIC_WORDS)]}?"
             for i in range(16)]


class Turns:
    """One filled scope on one host, with the plugin running: turns and floor queries."""

    def __init__(self, host: CostHost, harness: PluginHarness, kb: str, scope: Any, top_k: int,
                 group: str = GROUP) -> None:
        self.host, self.harness, self.kb, self.scope, self.top_k = host, harness, kb, scope, top_k
        self.group = group
        self._qid = 1000

    async def turn(self, question: str) -> dict[str, Any]:
        host = self.host
        self._qid += 1
        qid = self._qid
        host.open_query(qid, bot_uuid=BOT, launcher_type="group", launcher_id=self.group, sender_id=SPEAKER,
                        sender_name=SPEAKER_NAME, message_text=question, pipeline_kbs=[self.kb])
        event = {"session_name": f"group_{self.group}",
                 "default_prompt": [{"role": "system", "content": "You are a helpful bot."}],
                 "prompt": [{"role": "user", "content": question}]}
        host.reset_counts()
        store0 = host.store_thread_cpu()
        proc0, cpu0, wall0 = time.process_time(), time.thread_time(), time.perf_counter()
        await self.harness.emit_event("PromptPreProcessing", event, query_id=qid)
        wall, cpu, proc = time.perf_counter() - wall0, time.thread_time() - cpu0, time.process_time() - proc0
        # What the host metered while the turn was timed, read before the snapshot's write below adds its own.
        host_cpu, host_wall, wire_cpu = host.host_cpu, host.host_wall, host.wire_cpu
        store_cpu = host.store_thread_cpu() - store0
        await self.harness.plugin.memory.parts.store.writes_landed()  # the snapshot's write (due seconds after the
        # turn): the turn's, but not timed
        host.close_query(qid)
        reference = reference_cpu_s()  # the same fixed job right after every turn (see cost_env)
        return {"wall": wall, "reference_cpu": reference, "cpu": cpu, "process_cpu": proc, "store_thread_cpu": store_cpu,
                "host_cpu": host_cpu, "host_wall": host_wall,
                "plugin_cpu": max(0.0, cpu - host_cpu), "wire_cpu": wire_cpu,
                "code_cpu": max(0.0, cpu - host_cpu - wire_cpu), "calls": host.calls_by_action(),
                "after_reply": host.after_reply(),
                "labels": dict(host.by_label)}

    async def floor(self, question: str) -> dict[str, float]:
        host = self.host
        t0 = time.perf_counter()
        emb = await host.call_action(A.INVOKE_EMBEDDING, {"embedding_model_uuid": "emb-1", "texts": [question]})
        t1 = time.perf_counter()
        res = await host.call_action(A.VECTOR_SEARCH, {
            "collection_id": self.kb, "query_vector": emb["vectors"][0], "top_k": self.top_k,
            "filters": layout.space_filter(self.scope.space_key), "search_type": "vector"})
        t2 = time.perf_counter()
        return {"wall": t2 - t0, "embed": t1 - t0, "search": t2 - t1, "rows": len(res["results"])}


async def measure(backend: str, size: int, args: argparse.Namespace) -> dict[str, Any]:
    host = make_host(backend, args.host_threads)
    harness, memory, scope = await speaker_scope(host)
    kb = scope.kb_id
    try:
        t0 = time.perf_counter()
        await direct_fill(harness, host, [(scope, synthetic_episodes(size))])
        fill_s = time.perf_counter() - t0
        await memory.update_profile(scope, "session", {"preferences": ["answer in English"]})
        await memory.update_profile(scope, "speaker", {"name": "Ally", "traits": ["likes travel"]})
        found = await memory.memory_kb()
        assert found is not None and found[0] == kb
        top_k = found[1].auto_recall_top_k
        turns = Turns(host, harness, kb, scope, top_k)

        for i in range(args.warmup):
            await turns.turn(QUESTIONS[(i + 1) % len(QUESTIONS)])
            await turns.floor(QUESTIONS[(i + 1) % len(QUESTIONS)])
        runs: list[dict[str, Any]] = []
        floors: list[dict[str, float]] = []
        profiler = cProfile.Profile() if args.profile else None
        for i in range(args.runs):
            question = QUESTIONS[i % len(QUESTIONS)]
            if i % 2:  # alternate the order, so drift and cache effects fall on both alike
                floors.append(await turns.floor(question))
                runs.append(await turns.turn(question))
            else:
                runs.append(await turns.turn(question))
                floors.append(await turns.floor(question))
        if profiler is not None:  # after the timed turns, so the profiler's overhead is in none of them
            for i in range(args.runs):
                profiler.enable()  # cProfile follows the thread that enables it: the event loop's
                await turns.turn(QUESTIONS[i % len(QUESTIONS)])
                profiler.disable()
            write_profile(profiler, args.profile, backend, size, args.runs)
        snapshot = await harness.plugin.memory.snapshot(scope) or {}
        warm_ids = await recalled(harness, scope)
        cold: dict[str, Any] | None = None
        if size <= args.cold_max:
            restart0 = time.perf_counter()
            await harness.restart(fresh_modules=False)  # a new plugin process: nothing built yet
            quiet_logs()
            cold = await turns.turn(QUESTIONS[0])
            await index_space(harness.plugin.memory, scope)  # until the space's index is back (loaded or built)
            cold["ready_s"] = time.perf_counter() - restart0
            indexes = harness.plugin.memory.parts.episodes._lexical  # white-box: was it loaded or built?
            cold["index"] = {"loaded": indexes.loads, "built": indexes.builds}
            cold["same_recall_as_before_restart"] = await recalled(harness, scope) == warm_ids
        calls = runs[0]["calls"]
        labels = sorted({label for r in runs for label in r["labels"]})
        turn_med = statistics.median(r["wall"] for r in runs)
        floor_med = statistics.median(f["wall"] for f in floors)
        turn_ms, floor_ms = summary_ms([r["wall"] for r in runs]), summary_ms([f["wall"] for f in floors])
        return {
            "backend": backend, "size": size, "fill_s": round(fill_s, 1), "fill": "direct (cost_env.direct_fill)",
            "top_k": top_k,
            "window": recipe_window(),
            "cold_turn": None if cold is None else {
                "wall_ms": round(cold["wall"] * 1000, 2), "plugin_cpu_ms": round(cold["plugin_cpu"] * 1000, 2),
                "host_wall_ms": round(cold["host_wall"] * 1000, 2), "host_calls": cold["calls"],
                "host_calls_total": sum(cold["calls"].values()),
                "restart_to_full_recall_s": round(cold["ready_s"], 2), "index": cold["index"],
                "same_recall_as_before_restart": cold["same_recall_as_before_restart"]},
            "turn_ms": turn_ms,
            "floor_ms": floor_ms,
            "floor_parts_ms": {"embedding": summary_ms([f["embed"] for f in floors]),
                               "search": summary_ms([f["search"] for f in floors])},
            "floor_rows": floors[0]["rows"],
            "ratio_median": round(turn_med / floor_med, 3) if floor_med else None,
            "added_ms": round((turn_med - floor_med) * 1000, 2),
            "ratio_p95": round(turn_ms["p95"] / floor_ms["p95"], 3) if floor_ms["p95"] else None,
            "host_calls": calls, "host_calls_total": sum(calls.values()),
            "host_calls_constant": all(r["calls"] == calls for r in runs),
            "host_calls_max_total": max(sum(r["calls"].values()) for r in runs),
            "host_calls_max_besides_keyed_read": max(sum(r["calls"].values()) - r["calls"].get(KEYED_READ, 0)
                                                     for r in runs),
            "host_calls_after_reply": max(r["after_reply"] for r in runs),
            "host_calls_min_total": min(sum(r["calls"].values()) for r in runs),
            # the keyed read of records found by words alone, when one is among the results
            "keyed_reads_share": round(sum(1 for r in runs if r["calls"].get(KEYED_READ)) / len(runs), 3),
            "host_calls_besides_keyed_read_constant": len({tuple(sorted((k, v) for k, v in r["calls"].items()
                                                                        if k != KEYED_READ))
                                                           for r in runs}) == 1,
            "plugin_cpu_ms": summary_ms([r["plugin_cpu"] for r in runs]),
            "plugin_cpu_normalized": normalized_cpu([r["plugin_cpu"] for r in runs], [r["reference_cpu"] for r in runs]),
            "wire_cpu_ms": summary_ms([r["wire_cpu"] for r in runs]),
            "plugin_cpu_without_wire_ms": summary_ms([r["code_cpu"] for r in runs]),
            "loop_thread_cpu_ms": summary_ms([r["cpu"] for r in runs]),
            "process_cpu_ms": summary_ms([r["process_cpu"] for r in runs]),
            "store_thread_cpu_ms": summary_ms([r["store_thread_cpu"] for r in runs]),
            "host_work_ms": summary_ms([r["host_wall"] for r in runs]),
            "host_call_ms": {label: round(statistics.median(r["labels"].get(label, 0.0) for r in runs) * 1000, 3)
                             for label in labels},
            "episodes_injected": len(snapshot.get("episodes") or []),
            "errors": snapshot.get("errors") or [],
            "peak_rss_mb": peak_rss_mb(),
        }
    finally:
        await harness.stop()
        await host.close()


async def recalled(harness: PluginHarness, scope: Any) -> list[list[str]]:
    """The ids automatic recall gives for every question (the same before and after a restart, once the
    space's index is back)."""
    memory = harness.plugin.memory
    return [[s.episode.episode_id for s in await memory.recall(scope, q)] for q in QUESTIONS]


def write_profile(profiler: cProfile.Profile, path: Path, backend: str, size: int, turns: int) -> None:
    """The event-loop thread's profile of `turns` turns: a .prof file per row and the top of it printed."""
    out = path.with_name(f"{path.stem}-{backend}-{size}{path.suffix or '.prof'}")
    out.parent.mkdir(parents=True, exist_ok=True)
    profiler.dump_stats(out)
    print(f"profile of {turns} turns, {backend} {size:,}: {out}", file=sys.stderr)
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(40)


def recipe_window() -> int:
    from ltm import AUTO_RECALL
    from ltm.kb_settings import KBSettings

    return AUTO_RECALL.resolved_for(KBSettings.parse({"embedding_model_uuid": "emb-1"})).vector_window


def goals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for backend in dict.fromkeys(r["backend"] for r in rows):
        mine = [r for r in rows if r["backend"] == backend]
        calls = {r["size"]: r["host_calls"] for r in mine}
        cpu = [r["plugin_cpu_ms"]["median"] for r in mine]
        out[backend] = {
            "ratio_le_1_3": {str(r["size"]): r["ratio_median"] is not None and r["ratio_median"] <= GOAL_RATIO
                             for r in mine},
            "turn_goal": {str(r["size"]): (r["ratio_median"] is not None and r["ratio_median"] <= GOAL_RATIO)
                          or (r["size"] <= GOAL_ADDED_UP_TO and r["added_ms"] <= GOAL_ADDED_MS) for r in mine},
            "host_calls_same_at_every_size": len({tuple(sorted((k, v) for k, v in c.items() if k != KEYED_READ))
                                                  for c in calls.values()}) == 1
                                             and all(r["host_calls_besides_keyed_read_constant"] for r in mine),
            "host_calls_le_5": all(r["host_calls_max_total"] <= GOAL_CALLS for r in mine),
            "host_calls_le_5_besides_keyed_read": all(r["host_calls_max_besides_keyed_read"] <= GOAL_CALLS
                                                      for r in mine),
            "plugin_cpu_le_5ms": all(c <= GOAL_CPU_MS for c in cpu),
            "plugin_cpu_le_5ms_at_quiet_pace": all(r["plugin_cpu_normalized"]["plugin_cpu_at_quiet_pace_ms"]
                                                   <= GOAL_CPU_MS for r in mine),
            "plugin_cpu_largest_over_smallest": round(cpu[-1] / cpu[0], 2) if cpu and cpu[0] else None,
        }
    return out


def report(result: dict[str, Any]) -> None:
    print(f"command: {result['command']}")
    env = result["environment"]
    print(f"machine: {env['machine']['cpu']}, {env['machine']['cores']} cores; python {env['machine']['python']}; "
          f"{', '.join(f'{k} {v}' for k, v in env['versions'].items())}")
    print(f"code: {env['code']['branch']} {env['code']['commit'][:12]}"
          f"{' (uncommitted changes)' if env['code']['uncommitted_changes'] else ''}")
    print(f"embedder: {env['embedder']}")
    print(f"{result['runs']} timed turns per size after {result['warmup']} warm-up turn(s); times in ms; "
          f"vector window {result['rows'][0]['window'] if result['rows'] else '-'} rows")
    print()
    print("| store | episodes | turn median | turn p95 | floor median (embed + search) | floor p95 | ratio median | "
          "added ms | ratio p95 | plugin CPU median / p95 | host calls / turn (+ after the reply) | "
          "cold turn (plugin CPU) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for r in result["rows"]:
        calls = ", ".join(f"{k} {v}" for k, v in r["host_calls"].items())
        parts = r["floor_parts_ms"]
        print(f"| {r['backend']} | {r['size']:,} | {r['turn_ms']['median']:.1f} | {r['turn_ms']['p95']:.1f} | "
              f"{r['floor_ms']['median']:.1f} ({parts['embedding']['median']:.1f} + {parts['search']['median']:.1f}) | "
              f"{r['floor_ms']['p95']:.1f} | {r['ratio_median']:.2f}x | {r['added_ms']:.1f} | {r['ratio_p95']:.2f}x | "
              f"{r['plugin_cpu_ms']['median']:.2f} / {r['plugin_cpu_ms']['p95']:.2f} | "
              f"{r['host_calls_min_total']}-{r['host_calls_max_total']} ({calls}; keyed read in "
              f"{r['keyed_reads_share']:.0%} of turns; + {r['host_calls_after_reply']} after the reply) | "
              + (f"{r['cold_turn']['wall_ms']:.0f} ({r['cold_turn']['plugin_cpu_ms']:.0f}) |" if r["cold_turn"]
                 else "not measured (--cold-max) |"))
    print()
    print("Plugin CPU per turn, median ms: with the JSON wire / the wire alone / without the wire; against the "
          "reference job beside it: ratio, and at the pace of its quietest run (goal <= 5 ms)")
    for r in result["rows"]:
        norm = r["plugin_cpu_normalized"]
        print(f"  {r['backend']} {r['size']:,}: {r['plugin_cpu_ms']['median']:.2f} / {r['wire_cpu_ms']['median']:.2f} / "
              f"{r['plugin_cpu_without_wire_ms']['median']:.2f}; {norm['ratio_to_reference']:.2f}x the reference "
              f"(median {norm['reference_median_ms']:.2f} ms, quietest {norm['reference_quiet_ms']:.2f} ms) = "
              f"{norm['plugin_cpu_at_quiet_pace_ms']:.2f} ms at the quiet pace")
    print("Median ms per turn inside the host, by call:")
    for r in result["rows"]:
        print(f"  {r['backend']} {r['size']:,}: " + "; ".join(f"{k}: {v:.1f}" for k, v in r["host_call_ms"].items()))
    print("After a restart (cold turn, then until the space's index is back):")
    for r in result["rows"]:
        cold = r["cold_turn"]
        if cold:
            print(f"  {r['backend']} {r['size']:,}: first turn {cold['wall_ms']:.0f} ms ({cold['host_calls_total']} "
                  f"host calls); full recall after {cold['restart_to_full_recall_s']:.2f} s, index {cold['index']}, "
                  f"same recall as before: {cold['same_recall_as_before_restart']}")
    errors = [(r["backend"], r["size"], r["errors"]) for r in result["rows"] if r["errors"]]
    if errors:
        print(f"injection errors: {errors}")
    print(f"goals: {result['goals']}")
    print(f"JSON: {result['json']}")


async def run(argv: list[str]) -> dict[str, Any]:
    args = parse_args(argv)
    use_window(args.window)
    quiet_logs()
    env = environment()  # the code state measured: taken before the run
    rows = []
    for backend in args.backends:
        for size in args.sizes:
            print(f"  measuring {backend} with {size:,} episodes ...", file=sys.stderr, flush=True)
            rows.append(await measure(backend, size, args))
    result = {"benchmark": "turn_cost", "command": command_line("turn_cost.py", argv),
              "environment": with_end_load(env), "runs": args.runs, "warmup": args.warmup,
              "host_threads": args.host_threads,
              "definitions": {
                  "floor": "invoke_embedding(question) + vector_search(top_k=auto_recall_top_k, file_id filter of the "
                           "space), straight to the fake host, same process, alternating with the turns",
                  "plugin_cpu": "CPU time of the event-loop thread (time.thread_time) during the emit, minus that "
                                "thread's CPU inside host routes that run on it (the embedder; the store too with "
                                "--no-host-threads); store calls in worker threads never count; includes the SDK "
                                "dispatch on both sides, the host's storage/query-variable handlers and the JSON wire",
                  "host_threads": "store calls run in worker threads as LangBot's Chroma adapter does "
                                  "(asyncio.to_thread), so concurrent host calls overlap",
                  "wire_cpu": "CPU of the fake host's JSON round trip (dumps + loads) of every request and answer; "
                              "a real plugin pays the encoding of its requests and the decoding of the answers",
                  "plugin_cpu_without_wire": "plugin_cpu minus wire_cpu",
                  "plugin_cpu_normalized": "plugin_cpu over the CPU of a fixed reference job (cost_env.reference_cpu_s) "
                                           "run right after each turn; times the job's quietest run in this process",
                  "cold_turn": "first injection after a plugin restart on the filled scope (builds the store probe "
                               "and the space's lexical index by paging the space); the timed turns run before "
                               "it, on indexes the fill kept current",
              },
              "rows": rows, "goals": goals(rows), "json": str(args.json)}
    write_json(result, args.json)
    return result


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,10000,100000", help="comma-separated episodes in the scope")
    parser.add_argument("--backends", default="chroma,qdrant")
    parser.add_argument("--runs", type=int, default=30, help="timed turns (and floor queries) per size")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--json", type=Path, default=RESULTS / "turn_cost.json")
    parser.add_argument("--cold-max", type=int, default=100_000,
                        help="measure the cold turn (plugin restarted, everything rebuilt) only up to this size")
    parser.add_argument("--no-host-threads", dest="host_threads", action="store_false",
                        help="run store calls on the event loop (the test host's default) instead of in threads")
    parser.add_argument("--window", type=int, default=None,
                        help="vector window rows per recall (default: the shipped vector_window)")
    parser.add_argument("--profile", type=Path, default=None, metavar="PATH",
                        help="after the timed turns, profile as many more on the event-loop thread (cProfile) "
                             "and write PATH-<backend>-<size>.prof")
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    args.backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not args.sizes or min(args.sizes) < 1:
        parser.error("sizes must be positive")
    if not set(args.backends) <= {"chroma", "qdrant", "seekdb", "pgvector"}:
        parser.error("backends: chroma, qdrant, seekdb, pgvector")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    result = asyncio.run(run(list(sys.argv[1:] if argv is None else argv)))
    report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
