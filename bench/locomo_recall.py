#!/usr/bin/env python3
"""Recall@k of LongTermMemory's retrieval on LoCoMo, against BM25 and plain vector search.

Every dialogue turn of a conversation becomes one episode ("<speaker>: <text>"),
imported through the plugin's own import path with its session date as timestamp.
For every question of categories 1-4 each system ranks the turns; a question is a
hit@k for "any" if at least one evidence turn is in the top k, for "all" if every
evidence turn is. Reported per category and overall, per split.

Systems (all in one process, same embedder, same data):
  bm25           Okapi BM25 over all turns of the conversation (ltm.ranking.tokenize)
  vector         host VECTOR_SEARCH (Chroma backend of the fake host), top k
  plugin         MemoryService.recall through the real plugin (PluginHarness), default recipe
  plugin-vector  the same with retrieval_strategy "vector"
  union          bench-only experiment: ltm.ranking.rank over (vector window U BM25 window
                 of the whole conversation); not what the plugin does today

Run from the repository root, e.g.
  .venv/bin/python bench/locomo_recall.py --split tuning --embedder hashing
See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from bench.bm25 import BM25  # noqa: E402
from bench.embedders import make_embedder  # noqa: E402
from bench.locomo_data import SCORED_CATEGORIES, SPLITS, Conversation, load_split  # noqa: E402
from bench.plugin_env import ConversationEnv, quiet_logs  # noqa: E402
from ltm.episodes.ranking import ScoredEpisode, SearchRecipe  # noqa: E402
from ltm.kb_settings import RetrievalStrategy  # noqa: E402

ALL_SYSTEMS = ("bm25", "vector", "plugin", "plugin-vector", "union")
DEFAULT_SYSTEMS = ("bm25", "vector", "plugin", "plugin-vector")
KS = (5, 10)
WHOLE_WINDOW = 10**6  # recall(top_k=...) that returns the whole ranked candidate window

# --sweep grid (tuning split only). Window 0 = every turn of the conversation.
SWEEP_WINDOWS = (20, 60, 100, 150, 200, 300, 0)
SWEEP_WEIGHTS = ((1.0, 0.0), (0.7, 0.3), (0.5, 0.5), (0.3, 0.7), (0.2, 0.8), (0.1, 0.9), (0.0, 1.0))


# ---------------------------------------------------------------------- scoring
@dataclass
class Tally:
    n: int = 0
    hits: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, ranked: list[str], evidence: tuple[str, ...], window: list[str] | None = None) -> None:
        self.n += 1
        wanted = set(evidence)
        for k in KS:
            top = set(ranked[:k])
            self.hits[f"any@{k}"] += bool(wanted & top)
            self.hits[f"all@{k}"] += wanted <= top
        if window is not None:
            pool = set(window)
            self.hits["win_any"] += bool(wanted & pool)
            self.hits["win_all"] += wanted <= pool
            self.hits["win_size"] += len(window)

    def rate(self, key: str) -> float:
        return self.hits[key] / self.n if self.n else float("nan")


class Results:
    def __init__(self) -> None:
        self.tallies: dict[str, dict[Any, Tally]] = defaultdict(lambda: defaultdict(Tally))
        self.seconds: dict[str, float] = defaultdict(float)

    def add(self, system: str, category: int, ranked: list[str], evidence: tuple[str, ...],
            window: list[str] | None = None) -> None:
        self.tallies[system][category].add(ranked, evidence, window)
        self.tallies[system]["all"].add(ranked, evidence, window)


# ---------------------------------------------------------------------- recipes
def recipe_overrides(args: argparse.Namespace) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if args.window is not None:
        changes["candidate_window"] = args.window
    if args.vector_weight is not None:
        changes["vector_weight"] = args.vector_weight
    if args.lexical_weight is not None:
        changes["lexical_weight"] = args.lexical_weight
    return changes


def describe_recipe(recipe: SearchRecipe) -> str:
    fields = ["candidate_window", "full_text_window", "speaker_window", "vector_weight", "lexical_weight",
              "recency_weight", "half_life_days", "importance_weight", "exact_match_boost", "sender_bonus"]
    parts = [f"strategy={recipe.strategy.value}"]
    parts += [f"{f}={getattr(recipe, f)}" for f in fields if hasattr(recipe, f)]
    return " ".join(parts)


def rescore(ranked: list[ScoredEpisode], recipe: SearchRecipe, vector_weight: float, lexical_weight: float,
            boost: bool = True) -> list[str]:
    """Re-rank a recall's whole window for other weights, from the score parts `rank` reported.

    score = (vw * vector + lw * lexical) * time_factor * importance_factor + bonus, and the
    same tie order as ltm.ranking.rank (newest first among equal scores).
    """
    rows = []
    for s in ranked:
        importance = 1 + recipe.importance_weight * (s.episode.importance - 2)
        score = (vector_weight * s.vector + lexical_weight * s.lexical) * s.time_factor * importance
        rows.append((score + (s.bonus if boost else 0.0), s.episode))
    rows.sort(key=lambda r: r[1].timestamp, reverse=True)
    rows.sort(key=lambda r: -r[0])
    return [e.original_id or "" for _, e in rows]


# ---------------------------------------------------------------------- run
async def run_conversation(conv: Conversation, args: argparse.Namespace, embedder: Any, results: Results,
                           sweep: dict[tuple, Results] | None, per_question: list[dict[str, Any]]) -> dict[str, Any]:
    systems = args.systems
    info: dict[str, Any] = {"conv": conv.conv_id, "turns": len(conv.turns), "questions": len(conv.qas)}
    ids = [t.dia_id for t in conv.turns]
    bm25 = BM25([t.content for t in conv.turns])
    # Questions are embedded in one batch up front (cache warm-up).
    embedder.vectors([qa.question for qa in conv.qas])
    need_env = any(s != "bm25" for s in systems) or sweep is not None
    env = await ConversationEnv(conv, embedder).open() if need_env else None
    info["skipped_turns"] = env.skipped_turns if env else []
    try:
        overrides = recipe_overrides(args)
        plugin_recipe = None
        base_recipe = None
        if env is not None:
            base_recipe = await env.default_recipe()
            if overrides:
                plugin_recipe = replace(base_recipe, **overrides)
            vector_recipe = replace(await env.default_recipe(RetrievalStrategy.VECTOR),
                                    **{k: v for k, v in overrides.items() if k == "candidate_window"})
            info["plugin_recipe"] = describe_recipe(plugin_recipe or base_recipe)
            info["plugin_vector_recipe"] = describe_recipe(vector_recipe)
        for qa in conv.qas:
            row: dict[str, Any] = {"conv": conv.conv_id, "qa": qa.index, "category": qa.category,
                                   "evidence": list(qa.evidence)}
            bm25_ranked: list[str] | None = None
            if "bm25" in systems or "union" in systems:
                t0 = time.perf_counter()
                bm25_ranked = [ids[i] for i in bm25.top(qa.question, max(KS))]
                results.seconds["bm25"] += time.perf_counter() - t0
            if "bm25" in systems:
                results.add("bm25", qa.category, bm25_ranked, qa.evidence)
                row["bm25"] = bm25_ranked
            if env is None:
                per_question.append(row)
                continue
            if "vector" in systems:
                t0 = time.perf_counter()
                ranked = await env.vector(qa.question, max(KS))
                results.seconds["vector"] += time.perf_counter() - t0
                results.add("vector", qa.category, ranked, qa.evidence)
                row["vector"] = ranked
            if "plugin" in systems:
                t0 = time.perf_counter()
                window = await env.plugin(qa.question, WHOLE_WINDOW, plugin_recipe)
                results.seconds["plugin"] += time.perf_counter() - t0
                results.add("plugin", qa.category, window[: max(KS)], qa.evidence, window)
                row["plugin"] = window[: max(KS)]
            if "plugin-vector" in systems:
                t0 = time.perf_counter()
                window = await env.plugin(qa.question, WHOLE_WINDOW, vector_recipe)
                results.seconds["plugin-vector"] += time.perf_counter() - t0
                results.add("plugin-vector", qa.category, window[: max(KS)], qa.evidence, window)
                row["plugin-vector"] = window[: max(KS)]
            if "union" in systems:
                recipe = plugin_recipe or base_recipe
                t0 = time.perf_counter()
                vec_window = await env.vector(qa.question, recipe.candidate_window)
                lex_window = [ids[i] for i in bm25.top(qa.question, recipe.candidate_window)]
                ranked = env.union(qa.question, vec_window, lex_window, recipe)
                results.seconds["union"] += time.perf_counter() - t0
                results.add("union", qa.category, ranked[: max(KS)], qa.evidence, ranked)
                row["union"] = ranked[: max(KS)]
            if sweep is not None:
                for window_size in SWEEP_WINDOWS:
                    size = window_size or len(conv.turns)
                    recipe = replace(base_recipe, candidate_window=size)
                    scored = await env.memory.recall(env.scope, qa.question, top_k=WHOLE_WINDOW, recipe=recipe)
                    pool = [s.episode.original_id or "" for s in scored]
                    for vw, lw in SWEEP_WEIGHTS:
                        for boost in (True, False):
                            ranked = rescore(scored, recipe, vw, lw, boost)
                            sweep[(window_size, vw, lw, boost)].add(
                                "plugin", qa.category, ranked[: max(KS)], qa.evidence, pool)
            per_question.append(row)
    finally:
        if env is not None:
            await env.close()
        embedder.save()
    return info


# ---------------------------------------------------------------------- output
def fmt(x: float) -> str:
    return "  n/a" if x != x else f"{x:.3f}"


def ratio(a: float, b: float) -> str:
    if a != a or b != b or b == 0:
        return "  n/a"
    return f"{a / b:.2f}"


def print_table(results: Results, systems: list[str]) -> None:
    metrics = [f"{m}@{k}" for m in ("any", "all") for k in KS]
    base = results.tallies.get("bm25")
    header = f"{'system':<14}{'cat':>4}{'n':>6}" + "".join(f"{m:>8}" for m in metrics)
    if base:
        header += "".join(f"{m + '/bm25':>13}" for m in metrics)
    print(header)
    print("-" * len(header))
    for system in systems:
        tallies = results.tallies[system]
        for cat in [*SCORED_CATEGORIES, "all"]:
            t = tallies.get(cat)
            if t is None or t.n == 0:
                continue
            line = f"{system:<14}{cat!s:>4}{t.n:>6}" + "".join(f"{fmt(t.rate(m)):>8}" for m in metrics)
            if base:
                b = base[cat]
                line += "".join(f"{ratio(t.rate(m), b.rate(m)):>13}" for m in metrics)
            print(line)
        print()


def print_windows(results: Results, systems: list[str]) -> None:
    rows = [s for s in systems if results.tallies[s]["all"].hits.get("win_size")]
    if not rows:
        return
    print("Candidate window of the ranked systems (could the ranking have found the evidence at all?)")
    print(f"{'system':<14}{'mean size':>10}{'any in window':>15}{'all in window':>15}")
    for s in rows:
        t = results.tallies[s]["all"]
        print(f"{s:<14}{t.hits['win_size'] / t.n:>10.1f}{fmt(t.rate('win_any')):>15}{fmt(t.rate('win_all')):>15}")
    print()


def print_sweep(sweep: dict[tuple, Results]) -> list[tuple[tuple, dict[str, float]]]:
    summary = []
    for key, res in sweep.items():
        t = res.tallies["plugin"]["all"]
        summary.append((key, {m: t.rate(m) for m in ("any@5", "any@10", "all@5", "all@10", "win_any", "win_all")}))
    for metric in ("any@5", "any@10"):
        print(f"Sweep (plugin recall, default recipe otherwise, exact-match bonus on): {metric}")
        print(f"{'window':>8}{'in-win':>8}" + "".join(f"{f'v{vw:g}/l{lw:g}':>10}" for vw, lw in SWEEP_WEIGHTS))
        for w in SWEEP_WINDOWS:
            cov = dict(summary)[(w, 1.0, 0.0, True)]["win_any"]
            line = f"{(w or 'all')!s:>8}{fmt(cov):>8}"
            for vw, lw in SWEEP_WEIGHTS:
                line += f"{fmt(dict(summary)[(w, vw, lw, True)][metric]):>10}"
            print(line)
        print()
    best = sorted(summary, key=lambda kv: (-kv[1]["any@5"], -kv[1]["any@10"], -kv[1]["all@10"]))[:10]
    print("Top 10 recipes by any@5 (then any@10, all@10); window 0 = all turns")
    print(f"{'window':>8}{'vector':>8}{'lexical':>8}{'bonus':>7}{'any@5':>8}{'any@10':>8}{'all@5':>8}{'all@10':>8}")
    for (w, vw, lw, boost), m in best:
        print(f"{(w or 'all')!s:>8}{vw:>8g}{lw:>8g}{('on' if boost else 'off'):>7}"
              + "".join(f"{fmt(m[k]):>8}" for k in ("any@5", "any@10", "all@5", "all@10")))
    print()
    return summary


def tree_state() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "ltm", "components", "main.py"],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", ""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "ltm").glob("*.py")):
        digest.update(path.read_bytes())
    return f"git {commit}{' + uncommitted changes' if dirty else ''}; ltm/*.py sha256 {digest.hexdigest()[:12]}"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=list(SPLITS), default="tuning")
    parser.add_argument("--embedder", choices=["hashing", "minilm"], default="hashing")
    parser.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS),
                        help=f"comma-separated, from {','.join(ALL_SYSTEMS)} (default {','.join(DEFAULT_SYSTEMS)})")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N",
                        help="only the first N conversations of the split (quick run)")
    tuning = parser.add_argument_group("recipe overrides for plugin/union (tuning split only)")
    tuning.add_argument("--window", type=int, default=None, help="SearchRecipe.candidate_window")
    tuning.add_argument("--vector-weight", type=float, default=None)
    tuning.add_argument("--lexical-weight", type=float, default=None)
    tuning.add_argument("--sweep", action="store_true",
                        help="also grid-search window x weights x exact-match bonus for plugin (tuning only)")
    parser.add_argument("--json", type=Path, default=None, help="write per-question rankings and figures here")
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in args.systems if s not in ALL_SYSTEMS]
    if unknown:
        parser.error(f"unknown system(s) {unknown}; choose from {ALL_SYSTEMS}")
    if (recipe_overrides(args) or args.sweep) and args.split != "tuning":
        parser.error("recipe overrides and --sweep are for the tuning split only; "
                     "report the held-out split with the recipe chosen on tuning")
    if args.window is not None and args.window < 1:
        parser.error("--window must be at least 1")
    return args


async def main_async(args: argparse.Namespace) -> int:
    quiet_logs()
    started = time.perf_counter()
    conversations = load_split(args.split, limit=args.limit_conversations)
    embedder = make_embedder(args.embedder)
    results = Results()
    sweep: dict[tuple, Results] | None = defaultdict(Results) if args.sweep else None
    per_question: list[dict[str, Any]] = []
    infos = []
    for conv in conversations:
        t0 = time.perf_counter()
        info = await run_conversation(conv, args, embedder, results, sweep, per_question)
        info["seconds"] = round(time.perf_counter() - t0, 1)
        infos.append(info)
        print(f"  conversation {conv.conv_id}: {info['turns']} turns, {info['questions']} questions, "
              f"{info['seconds']}s", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started

    command = f"cd {ROOT} && .venv/bin/python bench/locomo_recall.py {shlex.join(sys.argv[1:])}".rstrip()
    n_q = sum(len(c.qas) for c in conversations)
    skipped = sum(c.skipped_qas for c in conversations)
    dropped = sum(len(qa.dropped_evidence) for c in conversations for qa in c.qas)
    sys.stderr.flush()
    print()
    print(f"LoCoMo retrieval recall, split {args.split}: conversations "
          f"{','.join(str(c.conv_id) for c in conversations)}")
    print(f"command:   {command}")
    print(f"embedder:  {embedder.description}")
    print(f"code:      {tree_state()}")
    print("backend:   fake LangBot host, Chroma (squared L2), one fresh host + plugin per conversation")
    print(f"episodes:  {sum(len(c.turns) for c in conversations)} turns as '<speaker>: <text>', imported with "
          "timestamp = session date (all years old: time factor equal for every episode)")
    print(f"questions: {n_q} of categories 1-4 ({skipped} skipped: no valid evidence id; "
          f"{dropped} invalid evidence ids dropped)")
    skipped_turns = [t for i in infos for t in i.get("skipped_turns", [])]
    if skipped_turns:
        print(f"note:      {len(skipped_turns)} turns refused by the secrets filter and not stored: {skipped_turns}")
    if infos and "plugin_recipe" in infos[0]:
        print(f"plugin recipe:        {infos[0]['plugin_recipe']}")
        if "plugin-vector" in args.systems:
            print(f"plugin-vector recipe: {infos[0]['plugin_vector_recipe']}")
    print("hit@k: any = at least one evidence turn in the top k; all = every evidence turn in the top k")
    print()
    print_table(results, args.systems)
    print_windows(results, args.systems)
    timing = ", ".join(f"{s} {results.seconds[s] / max(1, n_q) * 1000:.1f} ms/q" for s in args.systems
                       if s in results.seconds)
    print(f"time: {elapsed:.0f}s total; per question: {timing}; embeddings computed {embedder.computed}, "
          f"cache hits {embedder.cache_hits} (cache {embedder._path})")
    summary = None
    if sweep is not None:
        print()
        summary = print_sweep(sweep)
    if args.json:
        payload = {
            "command": command, "split": args.split, "embedder": embedder.description, "code": tree_state(),
            "conversations": infos,
            "figures": {s: {str(c): {"n": t.n, **{m: t.rate(m) for m in t.hits}} for c, t in cats.items()}
                        for s, cats in results.tallies.items()},
            "sweep": [{"window": k[0], "vector_weight": k[1], "lexical_weight": k[2], "exact_bonus": k[3], **m}
                      for k, m in (summary or [])],
            "questions": per_question,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=1))
        print(f"per-question results written to {args.json}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(main_async(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
