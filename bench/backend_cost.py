#!/usr/bin/env python3
"""Per-turn cost of one injection on each vector store of the test host, by scope size.

Same turn as `bench/host_calls.py` (its synthetic episodes, its metered fake host and its
PromptPreProcessing event), on real Chroma, real local-mode Qdrant and real Milvus Lite
(record layout 2: the space in `file_id`, the record in `text`), with the scope filled
through the plugin's own import path in batches of 5,000. Printed per store and size:
host calls of one injection, median / p90 wall time, the time spent inside the store, and
how long the fill took.

  .venv/bin/python bench/backend_cost.py                              # 1000,10000 on all three
  .venv/bin/python bench/backend_cost.py --sizes 1000,10000,100000 --direct-fill --runs 5
  .venv/bin/python bench/backend_cost.py --speaker-recall --sizes 1000,10000   # over-fetch vs filter

`--speaker-recall` measures the speaker search of stores that cannot filter on the speaker
(Milvus, pgvector, Valkey Search): on real Chroma, which can, the speaker's exact top 20 (a
`speaker_key` filter) is compared with what the over-fetch finds (the space's best
`SPEAKER_OVERFETCH` x 20, kept when the speaker matches), for 30 queries.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from bench.host_calls import (  # noqa: E402 - after the sys.path line above
    BOT,
    GROUP,
    QUESTION,
    SPEAKER,
    SPEAKER_NAME,
    TOPIC_WORDS,
    MeteredHost,
    speaker_scope,
    synthetic_episodes,
)
from bench.plugin_env import quiet_logs  # noqa: E402 - after the sys.path line above
from ltm import parse_records  # noqa: E402 - after the sys.path line above
from ltm.identity import Identity  # noqa: E402 - after the sys.path line above
from testhost import PluginHarness, make_backend  # noqa: E402 - after the sys.path line above

IMPORT_BATCH = 5000


async def direct_fill(host: MeteredHost, kb: str, space_key: str, items: list[dict[str, Any]]) -> None:
    """The same episodes in record layout 2, written straight into the store in batches of 2,000 (the
    plugin's import writes 64 per call, and LangBot's Milvus adapter loads the collection after every
    insert: filling 100,000 that way takes hours on Milvus Lite, and the fill is not what is measured)."""
    from ltm.episodes.model import Episode
    from ltm.langbot import layout

    embedder = host.embedding_models["emb-1"]
    collection = host.collection_name(kb)
    for start in range(0, len(items), 2000):
        batch = items[start:start + 2000]
        records = [Episode(episode_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench/{start + i}")), space_key=space_key,
                           content=item["content"], timestamp=item["timestamp"], importance=item["importance"],
                           sender_id=item["sender_id"], sender_name=item["sender_name"], source="import").to_record()
                   for i, item in enumerate(batch)]
        await host.backend.upsert(
            collection, [layout.host_id(r.space_key, r.record_id) for r in records], embedder.embed([r.text for r in records]),
            [{**layout.to_metadata(r), **host._host_metadata(kb)} for r in records], [r.text for r in records])


async def measure(backend: str, size: int, runs: int, warmup: int, direct: bool = False) -> dict[str, Any]:
    host = MeteredHost(make_backend(backend))
    host.add_embedding_model("emb-1")
    harness, memory, scope = await speaker_scope(host)
    kb = scope.kb_id
    try:
        items = synthetic_episodes(size)
        t0 = time.perf_counter()
        if direct:
            await direct_fill(host, kb, scope.space_key, items)
        else:
            for start in range(0, size, IMPORT_BATCH):
                await memory.import_episodes(scope, parse_records(items[start:start + IMPORT_BATCH]))
        fill_s = time.perf_counter() - t0
        query_ids = iter(range(1000, 10**6))

        async def inject() -> float:
            qid = next(query_ids)
            host.open_query(qid, bot_uuid=BOT, launcher_type="group", launcher_id=GROUP, sender_id=SPEAKER,
                            sender_name=SPEAKER_NAME, message_text=QUESTION, pipeline_kbs=[kb])
            event = {"session_name": f"group_{GROUP}",
                     "default_prompt": [{"role": "system", "content": "You are a helpful bot."}],
                     "prompt": [{"role": "user", "content": QUESTION}]}
            start = time.perf_counter()
            await harness.emit_event("PromptPreProcessing", event, query_id=qid)
            elapsed = time.perf_counter() - start
            host.close_query(qid)
            return elapsed

        for _ in range(warmup):
            await inject()
        times: list[float] = []
        inside: list[float] = []
        calls: Counter[str] = Counter()
        for _ in range(runs):
            host.reset_counts()
            times.append(await inject())
            inside.append(sum(host.seconds.values()))
            calls = Counter(name for name, _ in host.calls)
        snapshot = await memory.snapshot(scope) or {}
        return {"backend": backend, "size": size, "fill_s": fill_s, "times": times, "inside": inside,
                "calls": calls, "injected": len(snapshot.get("episodes") or []),
                "errors": snapshot.get("errors") or []}
    finally:
        await harness.stop()
        await host.close()


async def speaker_recall(size: int, queries: int = 30, window: int = 20, cap: int = 0) -> dict[str, Any]:
    import dataclasses
    import random

    from ltm.langbot.policies import speaker as speaker_search
    from ltm.langbot.vector_index import HostVectorIndex

    if cap:  # try another bound than the plugin's
        speaker_search.SPEAKER_OVERFETCH, speaker_search.SPEAKER_OVERFETCH_MAX = cap // window, cap
    SPEAKER_OVERFETCH, SPEAKER_OVERFETCH_MAX = speaker_search.SPEAKER_OVERFETCH, speaker_search.SPEAKER_OVERFETCH_MAX

    host = MeteredHost(make_backend("chroma"))
    host.add_embedding_model("emb-1")
    harness = PluginHarness(host)
    await harness.start({})
    quiet_logs()
    try:
        kb = await harness.kb_create(config={"embedding_model_uuid": "emb-1"})
        memory = harness.plugin.memory
        identity = Identity.build(launcher_type="group", launcher_id=GROUP, bot_uuid=BOT,
                                  sender_id=SPEAKER, sender_name=SPEAKER_NAME)
        scope = await memory.scope_for(identity, kb)
        # The speaker wrote 1 in 10 of the space's episodes: a crowded group.
        items = synthetic_episodes(size)
        for i, item in enumerate(items):
            if i % 10:
                item["sender_id"], item["sender_name"] = "bob", "Bob"
        for start in range(0, size, IMPORT_BATCH):
            await memory.import_episodes(scope, parse_records(items[start:start + IMPORT_BATCH]))
        exact = HostVectorIndex(harness.plugin)
        over = HostVectorIndex(harness.plugin)
        embedder = host.embedding_models["emb-1"]
        rng = random.Random(11)
        found = total = 0
        for _ in range(queries):
            vector = embedder.embed([" ".join(rng.choice(TOPIC_WORDS) for _ in range(5))])[0]
            truth = await exact.search(scope.l2, vector, window, speaker=SPEAKER)
            traits = exact.traits(kb)  # learned by the first search
            assert traits is not None
            over.adopt(kb, dataclasses.replace(traits, filters_metadata=False))  # over-fetch on Chroma too
            got = await over.search(scope.l2, vector, window, speaker=SPEAKER)
            want = {h.record.record_id for h in truth}
            found += len(want & {h.record.record_id for h in got})
            total += len(want)
        return {"size": size, "recall": found / total if total else 1.0,
                "asked": min(window * SPEAKER_OVERFETCH, SPEAKER_OVERFETCH_MAX)}
    finally:
        await harness.stop()
        await host.close()


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    command = f".venv/bin/python bench/backend_cost.py {shlex.join(sys.argv[1:])}".rstrip()
    print(f"command: {command}")
    print(f"turn: group {GROUP}, sender {SPEAKER}, memory KB attached; testhost.HashingEmbedder(256); "
          f"{args.runs} timed runs after {args.warmup} warm-up run(s); one process, 2 shared cores")
    print()
    print("| store | episodes | host calls / turn | median ms | p90 ms | in the store, median ms | fill s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        times = sorted(r["times"])
        p90 = times[max(0, int(len(times) * 0.9) - 1)] * 1000
        calls = ", ".join(f"{k} {v}" for k, v in sorted(r["calls"].items()))
        print(f"| {r['backend']} | {r['size']:,} | {sum(r['calls'].values())} ({calls}) | "
              f"{statistics.median(times) * 1000:.1f} | {p90:.1f} | {statistics.median(r['inside']) * 1000:.1f} | "
              f"{r['fill_s']:.0f} |")
    errors = [(r["backend"], r["size"], r["errors"]) for r in rows if r["errors"]]
    if errors:
        print(f"\ninjection errors: {errors}")


async def main_async(args: argparse.Namespace) -> int:
    quiet_logs()
    if args.speaker_recall:
        print("| episodes in the space (speaker wrote 1 in 10) | rows asked | speaker top-20 recall of the over-fetch |")
        print("|---:|---:|---:|")
        for size in args.sizes:
            print(f"  measuring speaker recall with {size} episodes ...", file=sys.stderr, flush=True)
            r = await speaker_recall(size, cap=args.overfetch)
            print(f"| {size:,} | {r['asked']} | {r['recall']:.2f} |", flush=True)
        return 0
    rows = []
    for backend in args.backends:
        for size in args.sizes:
            print(f"  measuring {backend} with {size} episodes ...", file=sys.stderr, flush=True)
            rows.append(await measure(backend, size, args.runs, args.warmup, args.direct_fill))
    report(rows, args)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"command": "bench/backend_cost.py " + " ".join(sys.argv[1:]), "rows": rows},
                                    indent=1, default=str))
    print(f"  JSON: {args.json}")
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated scope sizes")
    parser.add_argument("--backends", default="chroma,qdrant,milvus")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--speaker-recall", action="store_true")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / ".cache" / "results" / "backend_cost.json")
    parser.add_argument("--direct-fill", action="store_true",
                        help="write the episodes straight into the store (fast) instead of through the import")
    parser.add_argument("--overfetch", type=int, default=0, help="rows asked by the over-fetch (default: the plugin's)")
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    args.backends = [b for b in args.backends.split(",") if b.strip()]
    return args


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(main_async(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
