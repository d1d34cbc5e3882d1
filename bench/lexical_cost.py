#!/usr/bin/env python3
"""Plugin-side cost of the per-space word index (ltm/episodes/lexical.py), by space size.

For each size: seeded synthetic episodes (8-30 words from a Zipf-like vocabulary of 20,000 words,
15% of words from ten very common topic words), the index built in memory (what the first recall
of a space does after paging the records in), its memory (tracemalloc, the postings and lengths,
not the episodes themselves), and the median time of one recall's word lookup
(`SpaceIndex.search`: pick the best 50 + exact BM25 of 220 vector candidates) for a question of
common words (in more than 1,000 records from 10,000 up: they score but pick nothing) and for one
with a rare word (one episode in 500). No host, no Chroma: this is the plugin's CPU only.

  .venv/bin/python bench/lexical_cost.py                    # 1,000 / 10,000 / 100,000
  .venv/bin/python bench/lexical_cost.py --sizes 100,1000 --runs 5
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
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ltm.episodes.model import Episode  # noqa: E402 - after the sys.path line above
from ltm.episodes.space_index import SpaceIndex  # noqa: E402 - after the sys.path line above
from ltm.episodes.terms import tokenize  # noqa: E402 - after the sys.path line above

COMMON = ["trip", "berlin", "apartment", "concert", "garden", "budget", "meeting", "friday", "coffee", "bike"]
QUESTIONS = {"common words": "what did Alice say about the trip to Berlin and the new apartment?",
             "a rare word": "when did we talk about the quokka and the concert?"}
RARE_EVERY = 500  # one episode in 500 mentions the quokka


def episodes(n: int, seed: int = 7) -> list[Episode]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(20000)]

    def word() -> str:
        if rng.random() < 0.15:
            return rng.choice(COMMON)
        return vocab[min(19999, int(rng.paretovariate(1.1) * 50) - 50)]

    return [Episode(f"e{i:07d}", "space", " ".join(word() for _ in range(rng.randint(8, 30)))
                    + (" quokka" if i % RARE_EVERY == 0 else ""), "2026-01-01T00:00:00Z") for i in range(n)]


def measure(n: int, runs: int) -> dict[str, Any]:
    eps = episodes(n)
    tracemalloc.start()
    t0 = time.perf_counter()
    index = SpaceIndex("space")
    for e in eps:
        index.add(e)
    build = time.perf_counter() - t0
    memory = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    rng = random.Random(1)
    also = [eps[i].episode_id for i in rng.sample(range(n), min(n, 220))]
    row: dict[str, Any] = {"episodes": n, "build_s": round(build, 3), "index_mb": round(memory / 1e6, 3)}
    for label, question in QUESTIONS.items():
        tokens = tokenize(question)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            hits, scored = index.search(tokens, 50, lambda e: True, also)
            times.append(time.perf_counter() - t0)
        row[f"lookup_ms[{label}]"] = round(statistics.median(times) * 1000, 3)
        row[f"picked[{label}]"] = len(hits)
    return row


def _rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


async def _resident(n: int) -> dict[str, Any]:
    """In this (fresh) process: the plugin's modules loaded, a space of `n` of `bench/host_calls.py`'s
    synthetic episodes saved as index pages in an in-memory plugin storage (outside the measurement),
    then loaded the way a restarted plugin loads them (`IndexPages.load`). Resident memory before and
    after the load = what the space's index adds to the plugin process."""
    import ctypes
    import gc

    from bench.host_calls import synthetic_episodes
    from ltm._bookkeeping import Bookkeeping
    from ltm.episodes.index_pages import IndexPages, rows_of
    from ltm.episodes.transfer import materialize, parse_records
    from ltm.identity import Identity, MemoryScope
    from ltm.spaces import L2Space
    from testhost.memory_ports import InMemoryPorts

    identity = Identity.build(launcher_type="group", launcher_id="g1", bot_uuid="bot-1", sender_id="alice",
                              sender_name="Alice")
    scope = MemoryScope.for_identity(identity, identity_isolation(), "kb")
    built = SpaceIndex(scope.space_key)
    items = synthetic_episodes(n)
    for part in range(0, n, 5000):
        for episode in materialize(scope, parse_records(items[part:part + 5000]), None, True):
            built.add(episode)
    del items
    fake = InMemoryPorts()
    pages = IndexPages(Bookkeeping(fake.store))
    space = L2Space("kb", scope.space_key)
    await pages.save(space, list(rows_of(built)), lambda: True, asyncio.Lock())
    del built
    gc.collect()
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc_trim(0)
    before = _rss_mib()
    t0 = time.perf_counter()
    loaded = await pages.load(space)
    load_s = time.perf_counter() - t0
    gc.collect()
    libc.malloc_trim(0)
    after = _rss_mib()
    assert loaded is not None and len(loaded) == n
    saved_mib = sum(len(v) for v in fake.store.data.values()) / 2**20
    return {"episodes": n, "rss_before_mib": round(before, 1), "rss_after_mib": round(after, 1),
            "index_rss_mib": round(after - before, 1), "load_s": round(load_s, 2), "saved_pages_mib": round(saved_mib, 1)}


def identity_isolation() -> Any:
    from ltm.identity import Isolation

    return Isolation.SESSION


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / ".cache" / "results" / "lexical-cost.json")
    parser.add_argument("--resident", type=int, default=0, metavar="N",
                        help="only: resident memory a loaded index of N synthetic episodes adds (own process)")
    args = parser.parse_args(argv)
    if args.resident:
        row = asyncio.run(_resident(args.resident))
        print(json.dumps(row))
        return row
    command = f"cd {ROOT} && .venv/bin/python bench/lexical_cost.py {shlex.join(sys.argv[1:] if argv is None else argv)}"
    rows = [measure(int(s), args.runs) for s in args.sizes.split(",")]
    print(f"command: {command.rstrip()}")
    keys = list(rows[0])
    for key in keys:
        print(f"{key:<28}" + "".join(f"{row[key]!s:>12}" for row in rows))
    base = rows[0][f"lookup_ms[{next(iter(QUESTIONS))}]"] or 1e-9
    print("lookup (common words) / smallest size: "
          + ", ".join(f"{r[f'lookup_ms[{next(iter(QUESTIONS))}]'] / base:.2f}" for r in rows))
    payload = {"command": command, "python": sys.version.split()[0], "rows": rows}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=1))
    return payload


if __name__ == "__main__":
    main()
    sys.exit(0)
