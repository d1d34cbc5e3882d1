#!/usr/bin/env python3
"""LoCoMo evidence recall of the plugin on the exact in-memory ports, for tuning (issue 44).

`locomo_recall.py` runs the plugin on the fake LangBot host with its real Chroma, whose approximate
search moves a figure by a few questions between runs of the same code: too coarse to tell a .005
change from noise. This runs the same recall (`MemoryService` recall, asked as of each conversation's
last turn, the group scope without a sender, every turn one record `"<speaker>: <text>"` with its
session date) on the in-memory test ports, whose vector search is exact cosine, with the MiniLM
vectors of the bench cache: the same code gives the same figures every time, and every recipe of
one run shares one import and one index per conversation (a grid point costs seconds).

    .benchvenv/bin/python bench/recall_exact.py --split tuning --embedder minilm \\
        --recipe "" --recipe vector_window=100 --recipe session_weight=0.2

One line per recipe ("" = the shipped defaults): R@1/5/10, MRR, R@5 / R@10 per category (1-4) and by
the age of the newest evidence turn (0-30 d, 30-90 d, 90-180 d, over 180 d). Recipe overrides run on
the tuning split only, as in `locomo_recall.py`; held-out with the defaults is allowed (the exact
counterpart of the reported run, not a substitute for it). `--report-once` lets recipes run on
held-out for one purpose: issue 44 asks for the held-out figure of every idea tried, once, after it
was judged on tuning (bench/RESULTS.md, "Recall round"); never to choose a setting. `--json PATH`
writes every ranking.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pickle
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.embedders import make_embedder  # noqa: E402 - after the sys.path line above
from bench.locomo_data import SCORED_CATEGORIES, SPLITS, Conversation, load_split  # noqa: E402 - after the sys.path line above
from bench.locomo_recall import AGE_BUCKETS, DEPTH, Tally, as_of, parse_recipe  # noqa: E402 - after the sys.path line above
from bench.plugin_env import no_save_delay, quiet_logs, slug  # noqa: E402 - after the sys.path line above
from ltm import QUERY_RECALL, Identity, MemoryService, parse_records  # noqa: E402 - after the sys.path line above
from ltm.secrets import secret_kind  # noqa: E402 - after the sys.path line above
from ltm.timefields import parse_stored  # noqa: E402 - after the sys.path line above
from testhost.hooks import index_space, recall_at, top  # noqa: E402 - after the sys.path line above
from testhost.memory_ports import InMemoryPorts  # noqa: E402 - after the sys.path line above

MODEL = "emb-1"


async def conversation_rankings(conv: Conversation, embedder: Any, recipes: dict[str, dict[str, Any]],
                                cpu: dict[str, float], reads: dict[str, int] | None = None,
                                dump: dict[int, Any] | None = None) -> dict[str, list[list[str]]]:
    """Per recipe, the top DEPTH original ids of every question of `conv`; adds each recipe's process CPU
    seconds to `cpu` (the question's embedding is a cache look-up here: what remains is the plugin's recall,
    the in-memory ports and this loop) and, with `reads`, how many keyed reads (`index.get_many`) the same
    questions asked for the top 5 (automatic recall's default) made. With `dump`, the first recipe's whole
    ranking of every question with each record's scored parts goes there (recall_replica.py reads it)."""
    ports = InMemoryPorts(embedder=embedder, embedding_models=(MODEL,))
    memory = MemoryService(ports.ports)
    settings = await memory.register_kb("kb-1", {"embedding_model_uuid": MODEL})
    identity = Identity.build(launcher_type="group", launcher_id=f"locomo-{conv.conv_id}", bot_uuid="bench-bot")
    scope = await memory.scope_for(identity, "kb-1")
    items = [{"id": t.dia_id, "content": t.content, "timestamp": t.timestamp, "event_at": t.timestamp,
              "sender_id": slug(t.speaker), "sender_name": t.speaker}
             for t in conv.turns if not secret_kind(t.content)]
    embedder.vectors([i["content"] for i in items] + [qa.question for qa in conv.qas])
    await memory.import_episodes(scope, parse_records(items, source="import"))
    await index_space(memory, scope)
    moment = as_of(conv)
    base = top(DEPTH, QUERY_RECALL).resolved_for(settings)
    out: dict[str, list[list[str]]] = {}
    for name, overrides in recipes.items():
        recipe = replace(base, **overrides)
        started = time.process_time()
        out[name] = [[s.episode.original_id or "" for s in await recall_at(memory, scope, qa.question, recipe, moment)]
                     for qa in conv.qas]
        cpu[name] = cpu.get(name, 0.0) + time.process_time() - started
        if dump is not None and conv.conv_id not in dump:
            dump[conv.conv_id] = [{"q": qa.question, "cat": qa.category, "ev": list(qa.evidence), "rows": [
                (s.episode.original_id, s.score, s.vector, s.lexical, s.time_weight, s.bonus, s.context, s.session,
                 s.distance, s.episode.timestamp, s.episode.sender_name, s.episode.content)
                for s in await recall_at(memory, scope, qa.question, replace(recipe, top_k=10**6), moment)]}
                for qa in conv.qas]
        if reads is not None:
            ports.calls.reset()
            for qa in conv.qas:
                await recall_at(memory, scope, qa.question, replace(recipe, top_k=5), moment)
            reads[name] = reads.get(name, 0) + ports.calls.count("index.get_many")
    return out


def summarize(conversations: list[Conversation], rankings: dict[int, dict[str, list[list[str]]]], name: str
              ) -> dict[str, Any]:
    when = {(c.conv_id, t.dia_id): parse_stored(t.timestamp) for c in conversations for t in c.turns}
    tallies: dict[Any, Tally] = {key: Tally() for key in [*SCORED_CATEGORIES, "all", *(f"age{b}" for b in range(len(AGE_BUCKETS)))]}
    for conv in conversations:
        asked = as_of(conv)
        for qa, ranked in zip(conv.qas, rankings[conv.conv_id][name]):
            tallies["all"].add(ranked, qa.evidence)
            tallies[qa.category].add(ranked, qa.evidence)
            moments = [m for e in qa.evidence if (m := when.get((conv.conv_id, e))) is not None]
            if moments:
                age = (asked - max(moments)).days
                for band, (low, high) in enumerate(AGE_BUCKETS):
                    if low <= age < high:
                        tallies[f"age{band}"].add(ranked, qa.evidence)
    return {str(k): t.as_dict() for k, t in tallies.items()}


def line(name: str, figures: dict[str, Any], cpu_ms: float) -> str:
    whole = figures["all"]
    cells = [f"{whole['R@1']:.3f} {whole['R@5']:.3f} {whole['R@10']:.3f} {whole['MRR']:.3f}"]
    cells += [f"{figures[str(c)]['R@5']:.3f}/{figures[str(c)]['R@10']:.3f}" for c in SCORED_CATEGORIES]
    cells += [f"{figures[f'age{b}']['R@5']:.3f}/{figures[f'age{b}']['R@10']:.3f}" for b in range(len(AGE_BUCKETS))]
    return " | ".join(cells) + f" | {cpu_ms:.1f} | {name or '(defaults)'}"


async def main_async(args: argparse.Namespace) -> None:
    quiet_logs()
    no_save_delay()
    embedder = make_embedder(args.embedder)
    recipes = {text: parse_recipe(text) for text in args.recipe or [""]}
    if args.split != "tuning" and any(recipes.values()) and not args.report_once:
        raise SystemExit("recipe overrides are for the tuning split only (--report-once: see the docstring)")
    conversations = load_split(args.split, limit=args.limit_conversations)
    started = time.perf_counter()
    rankings = {}
    cpu: dict[str, float] = {}
    reads: dict[str, int] | None = {} if args.keyed_reads else None
    dump: dict[int, Any] | None = {} if args.dump_space else None
    for conv in conversations:
        rankings[conv.conv_id] = await conversation_rankings(conv, embedder, recipes, cpu, reads, dump)
        embedder.save()
    seconds = time.perf_counter() - started
    print(f"split {args.split}, {sum(len(c.qas) for c in conversations)} questions, exact in-memory ports, "
          f"{embedder.name}, {seconds:.0f} s for {len(recipes)} recipe(s)")
    questions = sum(len(c.qas) for c in conversations)
    print("R@1 R@5 R@10 MRR | cat 1 R@5/R@10 | cat 2 | cat 3 | cat 4 | 0-30 d | 30-90 d | 90-180 d | >180 d | "
          "CPU ms per question | recipe")
    payload = {}
    for name in recipes:
        figures = summarize(conversations, rankings, name)
        payload[name] = figures
        print(line(name, figures, 1000 * cpu[name] / max(1, questions)))
        if reads is not None:
            print(f"  keyed reads per recall of the top 5: {reads[name] / max(1, questions):.3f}")
    if args.dump_space:
        args.dump_space.write_bytes(pickle.dumps(dump))
    if args.json:
        args.json.write_text(json.dumps({"figures": payload, "rankings": {
            str(c.conv_id): {name: [{"qa": qa.index, "category": qa.category, "evidence": list(qa.evidence),
                                     "question": qa.question, "ranked": ranked}
                                    for qa, ranked in zip(c.qas, rankings[c.conv_id][name])] for name in recipes}
            for c in conversations}}, indent=0))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=list(SPLITS), default="tuning")
    parser.add_argument("--embedder", choices=["hashing", "minilm"], default="minilm")
    parser.add_argument("--recipe", action="append", metavar="FIELD=VALUE,...",
                        help="one recipe per flag (repeat it); an empty string is the shipped defaults")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--dump-space", type=Path, default=None, metavar="PATH",
                        help="write the first recipe's whole ranking with every record's scored parts (recall_replica.py)")
    parser.add_argument("--keyed-reads", action="store_true",
                        help="also count the keyed reads of the same questions asked for the top 5")
    parser.add_argument("--report-once", action="store_true",
                        help="allow recipes on held-out: the one held-out figure of an idea judged on tuning")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    asyncio.run(main_async(parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
