#!/usr/bin/env python3
"""Host calls and latency of one PromptPreProcessing injection, by scope size.

For each scope size (default 10, 100, 1000, 5000 episodes) a fresh fake LangBot host
(real Chroma or Qdrant backend) runs the real plugin through PluginHarness; the scope
is filled through the plugin's import path with synthetic episodes (deterministic,
seeded), half of them by the speaker of the measured turn, and gets a session and a
speaker profile. Then PromptPreProcessing is emitted through the SDK dispatch
(`PluginHarness.emit_event`) the way the host does (contract section 3.3): a live
query with the sender's variables and the memory KB in `_knowledge_base_uuids`.

Printed: host calls by action for one injection (they must not grow with the scope),
the bytes the host returned, and the median / p90 wall time of the injection over
--runs runs (after --warmup runs), with ratios against the smallest scope.

  .venv/bin/python bench/host_calls.py                      # 10,100,1000,5000 on chroma
  .venv/bin/python bench/host_calls.py --sizes 10,1000 --runs 10 --backend qdrant
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shlex
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from bench.plugin_env import quiet_logs  # noqa: E402 - after the sys.path line above
from ltm import parse_records  # noqa: E402 - after the sys.path line above
from ltm.identity import Identity  # noqa: E402 - after the sys.path line above
from testhost import FakeLangBotHost, PluginHarness, make_backend  # noqa: E402 - after the sys.path line above

BOT, GROUP = "bot-1", "g1"
SPEAKER, SPEAKER_NAME = "alice", "Alice"
OTHERS = [("bob", "Bob"), ("carol", "Carol"), ("dave", "Dave")]
QUESTION = "what did Alice say about the trip to Berlin and the new apartment?"
TOPIC_WORDS = ["trip", "Berlin", "apartment", "concert", "garden", "painting", "budget", "release", "meeting", "Friday", "coffee", "bike", "museum", "sister", "kids", "school", "project", "deadline", "recipe", "marathon", "camping", "guitar", "novel", "vacation", "interview", "promotion", "puppy", "dentist", "birthday", "wedding", "flight", "hotel", "beach", "mountain"]


class MeteredHost(FakeLangBotHost):
    """FakeLangBotHost that also measures the JSON size of every answer it gives."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.bytes_out: Counter[str] = Counter()
        self.seconds: Counter[str] = Counter()

    async def call_action(self, action: Any, data: dict[str, Any], timeout: float | None = 15.0,
                          **kw: Any) -> dict[str, Any]:
        start = time.perf_counter()
        result = await super().call_action(action, data, timeout, **kw)
        name = getattr(action, "value", str(action))
        label = name
        if name == "vector_search":  # which of the searches costs what
            label = f"{name} {data.get('search_type') or 'vector'} by {','.join(data.get('filters') or {}) or '-'}"
        self.seconds[label] += time.perf_counter() - start
        self.bytes_out[name] += len(json.dumps(result))
        return result

    def reset_counts(self) -> None:
        super().reset_counts()
        self.bytes_out.clear()
        self.seconds.clear()


def synthetic_episodes(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items = []
    for i in range(n):
        sender, name = (SPEAKER, SPEAKER_NAME) if i % 2 == 0 else OTHERS[i % len(OTHERS)]
        words = " ".join(rng.choice(TOPIC_WORDS) for _ in range(rng.randint(6, 16)))
        day = 1 + i % 28
        items.append({
            "id": f"e{i}", "content": f"{name} said: {words} (note {i})",
            "timestamp": f"2025-{1 + i % 12:02d}-{day:02d}T10:00:00Z",
            "sender_id": sender, "sender_name": name, "importance": 1 + i % 5,
        })
    return items


async def speaker_scope(host: FakeLangBotHost) -> tuple[PluginHarness, Any, Any]:
    """The real plugin on `host` with a new memory KB, and the scope of the measured speaker's group
    chat: (harness, memory service, scope). The caller stops the harness."""
    harness = PluginHarness(host)
    await harness.start({})
    quiet_logs()
    try:
        kb = await harness.kb_create(config={"embedding_model_uuid": "emb-1"})
        memory = harness.plugin.memory
        identity = Identity.build(launcher_type="group", launcher_id=GROUP, bot_uuid=BOT,
                                  sender_id=SPEAKER, sender_name=SPEAKER_NAME)
        return harness, memory, await memory.scope_for(identity, kb)
    except BaseException:
        await harness.stop()
        raise


async def measure(size: int, args: argparse.Namespace) -> dict[str, Any]:
    host = MeteredHost(make_backend(args.backend))
    host.add_embedding_model("emb-1")
    harness, memory, scope = await speaker_scope(host)
    kb = scope.kb_id
    try:
        t0 = time.perf_counter()
        await memory.import_episodes(scope, parse_records(synthetic_episodes(size)))
        fill_s = time.perf_counter() - t0
        await memory.update_profile(scope, "session", {"preferences": ["answer in English"]})
        await memory.update_profile(scope, "speaker", {"name": "Ally", "traits": ["likes travel"]})

        query_ids = iter(range(1000, 10**6))

        async def inject() -> tuple[float, dict[str, Any]]:
            qid = next(query_ids)
            host.open_query(qid, bot_uuid=BOT, launcher_type="group", launcher_id=GROUP, sender_id=SPEAKER,
                            sender_name=SPEAKER_NAME, message_text=QUESTION, pipeline_kbs=["docs-kb", kb])
            event = {"session_name": f"group_{GROUP}",
                     "default_prompt": [{"role": "system", "content": "You are a helpful bot."}],
                     "prompt": [{"role": "user", "content": QUESTION}]}
            start = time.perf_counter()
            ctx = await harness.emit_event("PromptPreProcessing", event, query_id=qid)
            elapsed = time.perf_counter() - start
            await memory.parts.store.writes_landed()  # the snapshot's write, due after the reply: counted, not timed
            host.close_query(qid)
            return elapsed, ctx

        for _ in range(args.warmup):
            await inject()
        host.reset_counts()
        _, ctx = await inject()
        calls = Counter(name for name, _ in host.calls)
        bytes_out = dict(host.bytes_out)
        injected = [m for m in ctx["event"]["default_prompt"] if m["role"] == "system"][1:]
        snapshot = await memory.snapshot(scope) or {}
        counts_stable = True
        times = []
        host_seconds: Counter[str] = Counter()
        for _ in range(args.runs):
            host.reset_counts()
            elapsed, _ = await inject()
            times.append(elapsed)
            host_seconds.update(host.seconds)
            counts_stable &= Counter(name for name, _ in host.calls) == calls
        return {
            "size": size, "fill_s": fill_s, "calls": calls, "bytes": bytes_out, "times": times,
            "host_ms": {a: v * 1000 / args.runs for a, v in host_seconds.items()},
            "stable": counts_stable, "injected": bool(injected),
            "episodes_injected": len(snapshot.get("episodes") or []), "errors": snapshot.get("errors") or [],
        }
    finally:
        await harness.stop()
        await host.close()


def report(rows: list[dict[str, Any]], args: argparse.Namespace, command: str) -> None:
    sizes = [r["size"] for r in rows]
    actions = sorted({a for r in rows for a in r["calls"]})
    width = 12
    print(f"command: {command}")
    print(f"backend: fake LangBot host, {args.backend}; embedder testhost.HashingEmbedder(256); "
          f"{args.runs} timed runs after {args.warmup} warm-up run(s) per size")
    print(f"turn:    group {GROUP}, sender {SPEAKER}, memory KB attached to the pipeline, query {QUESTION!r}")
    print()
    print("Host calls for ONE PromptPreProcessing injection (set_plugin_storage: the snapshot, written after the reply)")
    print(f"{'action':<28}" + "".join(f"{s:>{width}}" for s in sizes))
    for action in actions:
        print(f"{action:<28}" + "".join(f"{r['calls'].get(action, 0):>{width}}" for r in rows))
    print(f"{'total':<28}" + "".join(f"{sum(r['calls'].values()):>{width}}" for r in rows))
    print(f"{'same counts on every run':<28}" + "".join(f"{r['stable']!s:>{width}}" for r in rows))
    print()
    print("Bytes returned by the host for one injection (JSON)")
    for action in actions:
        print(f"{action:<28}" + "".join(f"{r['bytes'].get(action, 0):>{width}}" for r in rows))
    print(f"{'total':<28}" + "".join(f"{sum(r['bytes'].values()):>{width}}" for r in rows))
    print()
    print("Mean time spent inside the fake host per injection, ms (backend work; the rest is plugin + SDK)")
    labels = sorted({a for r in rows for a in r["host_ms"]})
    for label in labels:
        print(f"{label:<36}" + "".join(f"{r['host_ms'].get(label, 0):>{width}.2f}" for r in rows))
    print(f"{'total':<36}" + "".join(f"{sum(r['host_ms'].values()):>{width}.2f}" for r in rows))
    print()
    base = statistics.median(rows[0]["times"])
    print("Injection wall time (PluginHarness.emit_event, in-process fake host)")
    print(f"{'episodes in scope':<28}" + "".join(f"{s:>{width}}" for s in sizes))
    print(f"{'median ms':<28}" + "".join(f"{statistics.median(r['times']) * 1000:>{width}.1f}" for r in rows))
    p90 = [sorted(r["times"])[max(0, int(len(r["times"]) * 0.9) - 1)] * 1000 for r in rows]
    print(f"{'p90 ms':<28}" + "".join(f"{p:>{width}.1f}" for p in p90))
    print(f"{'median / first size':<28}" + "".join(
        f"{statistics.median(r['times']) / base:>{width}.2f}" for r in rows))
    total_base = sum(rows[0]["calls"].values()) or 1
    print(f"{'host calls / first size':<28}" + "".join(
        f"{sum(r['calls'].values()) / total_base:>{width}.2f}" for r in rows))
    print(f"{'episodes injected':<28}" + "".join(f"{r['episodes_injected']:>{width}}" for r in rows))
    print(f"{'scope fill (import) s':<28}" + "".join(f"{r['fill_s']:>{width}.1f}" for r in rows))
    errors = [(r["size"], r["errors"]) for r in rows if r["errors"]]
    if errors:
        print(f"injection errors: {errors}")


async def main_async(args: argparse.Namespace) -> int:
    quiet_logs()
    rows = []
    for size in args.sizes:
        print(f"  measuring {size} episodes ...", file=sys.stderr, flush=True)
        rows.append(await measure(size, args))
    command = f"cd {ROOT} && .venv/bin/python bench/host_calls.py {shlex.join(sys.argv[1:])}".rstrip()
    report(rows, args, command)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"command": command, "backend": args.backend, "rows": rows}, indent=1))
    print(f"  JSON: {args.json}")
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000,5000", help="comma-separated scope sizes (max 5000)")
    parser.add_argument("--runs", type=int, default=20, help="timed injections per size (median reported)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--backend", choices=["chroma", "qdrant"], default="chroma")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / ".cache" / "results" / "host_calls.json")
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if not args.sizes or min(args.sizes) < 1 or max(args.sizes) > 5000:
        parser.error("sizes must be from 1 to 5000 (one import batch holds at most 5000 episodes)")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(main_async(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
