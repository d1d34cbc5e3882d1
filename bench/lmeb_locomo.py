#!/usr/bin/env python3
"""LMEB's LoCoMo retrieval task, measured the way it is published: plain MiniLM vector search against the
published all-MiniLM-L6-v2 row, and the shipped plugin on the same protocol.

LMEB (Long-horizon Memory Embedding Benchmark) is packaged in MTEB as the task `LoCoMo`; what it does, as
its metadata, its dataset card and its published result file describe it (sources: docs/BENCHMARK-DATA.md):

- the corpus is one document per dialogue turn (5,882 = every turn of the ten conversations), and each
  question is ranked against its own conversation's turns only (the task lists, for every question, the
  documents it may rank: its conversation's turns);
- the scored subsets are LoCoMo categories: single_hop = 4, multi_hop = 1, temporal_reasoning = 2,
  open_domain = 3 (the published question counts 840 / 280 / 321 / 89 fit this mapping and no other);
  adversarial (5) has no answer in the conversation and is not scored here;
- recall@k is MTEB's (pytrec_eval's `recall`): per question |gold ∩ top k| / |gold|, averaged over the
  subset's questions. LMEB also reports R_cap@k, the same divided by min(|gold|, k); both are printed.

Systems:
  minilm[DOC]  exact cosine over the conversation's turns, the document text chosen by --docs (no plugin;
               named hashing[DOC] with --embedder hashing, and then not compared with the published row):
               turn = "speaker: text"; dated = the session's date, a space, then that; caption = the turn
               plus " [image: <BLIP caption>]" when it shared a photo; dated-caption = both; dated2 and
               dated2-caption = the date twice (a title and a text that both carry it)
  plugin       the real plugin on the fake host (bench/plugin_env.py, as bench/locomo_recall.py runs it):
               every turn imported as an episode "speaker: text" with its session date, then
               MemoryService.recall with the shipped defaults, asked as of the conversation's last turn

  .venv/bin/python bench/lmeb_locomo.py                          # MiniLM from .embvenv, both systems
  .venv/bin/python bench/lmeb_locomo.py --systems minilm --docs turn,dated,caption,dated-caption
Five of the ten conversations (26, 30, 41, 42, 43) were used to tune the plugin's defaults; the table
gives all ten and the held-out five (44, 47, 48, 49, 50) separately.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import sys
import time
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.embedders import CachedEmbedder, make_embedder  # noqa: E402 - after the sys.path line above
from bench.locomo_data import DEFAULT_ZIP, INNER_DIR, SPLITS, Conversation, load_conversation  # noqa: E402 - after the sys.path line above
from bench.locomo_recall import RESULTS_DIR, as_of, tree_state  # noqa: E402 - after the sys.path line above
from bench.plugin_env import ConversationEnv, quiet_logs  # noqa: E402 - after the sys.path line above

SUBSETS = (("single_hop", 4), ("multi_hop", 1), ("temporal_reasoning", 2), ("open_domain", 3))
# The published all-MiniLM-L6-v2 result (MTEB 2.3.0, dataset revision 02e2c3d): questions, recall@5, recall@10.
PUBLISHED = {"single_hop": (840, 0.43294, 0.53889), "multi_hop": (280, 0.2115, 0.2896),
             "temporal_reasoning": (321, 0.43536, 0.5148), "open_domain": (89, 0.18352, 0.31086)}
KS = (5, 10)
DEPTH = 50  # ranks kept per question (the plugin is asked for this many, as in bench/locomo_recall.py)
DOCS = ("turn", "dated", "caption", "dated-caption", "dated2", "dated2-caption")
EVIDENCE = ("normalized", "raw", "raw-named")
SPLIT_VIEWS = (("all ten", "all"), ("held-out five", "heldout"), ("tuning five", "tuning"))


# ---------------------------------------------------------------------- metric
def recall_at(ranked: list[str], gold: tuple[str, ...], k: int) -> float:
    """MTEB's recall@k for one question: the share of its gold turns found in the top k."""
    return len(set(gold) & set(ranked[:k])) / len(set(gold))


def capped_recall_at(ranked: list[str], gold: tuple[str, ...], k: int) -> float:
    """LMEB's R_cap@k for one question: gold turns in the top k over min(|gold|, k)."""
    return len(set(gold) & set(ranked[:k])) / min(len(set(gold)), k)


def score(rankings: list[tuple[list[str], tuple[str, ...]]]) -> dict[str, float]:
    """Averages over (at least one) questions: n, R@k and Rcap@k for every k of KS."""
    out: dict[str, float] = {"n": len(rankings)}
    for k in KS:
        out[f"R@{k}"] = float(np.mean([recall_at(r, g, k) for r, g in rankings]))
        out[f"Rcap@{k}"] = float(np.mean([capped_recall_at(r, g, k) for r, g in rankings]))
    return out


# ---------------------------------------------------------------------- data
@dataclass
class Question:
    conv: int
    index: int
    subset: str
    text: str
    gold: tuple[str, ...]
    ranked: dict[str, list[str]] = field(default_factory=dict)


def load_raw(conv_id: int, zip_path: Path = DEFAULT_ZIP) -> tuple[Conversation, dict[str, Any]]:
    """Our loader's conversation (normalized evidence, bench/locomo_data.py) and the raw JSON beside it
    (session dates, image captions, evidence as written)."""
    with zipfile.ZipFile(zip_path) as archive:
        return load_conversation(archive, conv_id), json.loads(archive.read(f"{INNER_DIR}/{conv_id}.json"))


def load_all(limit: int | None = None) -> list[tuple[Conversation, dict[str, Any]]]:
    if not DEFAULT_ZIP.exists():
        raise SystemExit(f"LoCoMo not found at {DEFAULT_ZIP}: see docs/BENCHMARK-DATA.md")
    return [load_raw(c) for c in SPLITS["all"][:limit]]


def questions(conv: Conversation, raw: dict[str, Any], evidence: str) -> list[Question]:
    """normalized: our loader's evidence (ids normalized, ids naming no turn dropped, questions left without
    any skipped); raw: the evidence strings as written, a question without any skipped, and an id naming no
    turn kept as gold that no ranking can find (LMEB's published recall@1000 below 1 shows such ids);
    raw-named: raw, but a question none of whose ids names a turn is skipped."""
    subset_of = {category: name for name, category in SUBSETS}
    out: list[Question] = []
    if evidence == "normalized":
        for qa in conv.qas:
            if qa.category in subset_of:
                out.append(Question(conv.conv_id, qa.index, subset_of[qa.category], qa.question, qa.evidence))
        return out
    known = {t.dia_id for t in conv.turns}
    for index, qa in enumerate(raw.get("qa", [])):
        gold = tuple(dict.fromkeys(s for e in qa.get("evidence") or [] if (s := str(e).strip())))
        if evidence == "raw-named" and not known & set(gold):
            continue
        if int(qa["category"]) in subset_of and gold:
            out.append(Question(conv.conv_id, index, subset_of[int(qa["category"])], str(qa["question"]).strip(),
                                gold))
    return out


def documents(conv: Conversation, raw: dict[str, Any], doc: str) -> list[str]:
    extras: dict[str, tuple[str, str]] = {}
    for turn in conv.turns:
        session = raw.get(f"session_{turn.session}", [])
        caption = next((str(t.get("blip_caption") or "") for t in session if t.get("dia_id") == turn.dia_id), "")
        extras[turn.dia_id] = (" ".join(str(raw.get(f"session_{turn.session}_date_time", "")).split()), caption)
    out = []
    for turn in conv.turns:
        date, caption = extras[turn.dia_id]
        text = turn.content
        if "caption" in doc and caption:
            text = f"{text} [image: {caption}]"
        if "dated" in doc and date:
            text = f"{date} {date} {text}" if "dated2" in doc else f"{date} {text}"
        out.append(text)
    return out


# ---------------------------------------------------------------------- systems
def rank_cosine(embedder: CachedEmbedder, ids: list[str], texts: list[str], qs: list[Question], name: str) -> None:
    matrix = embedder.vectors(texts)
    queries = embedder.vectors([q.text for q in qs])
    for q, vector in zip(qs, queries):
        order = np.argsort(-(matrix @ vector), kind="stable")[:DEPTH]
        q.ranked[name] = [ids[i] for i in order]


async def rank_plugin(conv: Conversation, embedder: CachedEmbedder, qs: list[Question]) -> dict[str, Any]:
    env = await ConversationEnv(conv, embedder).open()
    moment = as_of(conv)
    try:
        for q in qs:
            q.ranked["plugin"] = list(await env.plugin(q.text, DEPTH, None, now=moment))
    finally:
        await env.close()
    return {"as_of": moment.isoformat(), "skipped_turns": env.skipped_turns}


# ---------------------------------------------------------------------- output
def figures(qs: list[Question], systems: list[str]) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """view -> system -> subset -> scores."""
    out: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for _, view in SPLIT_VIEWS:
        chosen = [q for q in qs if q.conv in SPLITS[view]]
        if not chosen:
            continue
        out[view] = {}
        for system in systems:
            by_subset: dict[str, list[tuple[list[str], tuple[str, ...]]]] = defaultdict(list)
            for q in chosen:
                if system in q.ranked:
                    by_subset[q.subset].append((q.ranked[system], q.gold))
            out[view][system] = {name: score(by_subset[name]) for name, _ in SUBSETS if by_subset[name]}
    return out


def f3(x: float) -> str:
    return f"{x:.3f}".lstrip("0") if x < 1 else f"{x:.2f}"


def cells_text(cells: dict[str, dict[str, float]], metric: str) -> str:
    """One metric over the four subsets, `a / b / c / d` (n/a for a subset without questions)."""
    return " / ".join(f3(cells[n][metric]) if n in cells else "n/a" for n, _ in SUBSETS)


def print_tables(table: dict[str, Any], systems: list[str]) -> None:
    names = [name for name, _ in SUBSETS]
    published = {n: {"n": PUBLISHED[n][0], "R@5": PUBLISHED[n][1], "R@10": PUBLISHED[n][2]} for n in names}
    print("R@5 and R@10 per subset: single_hop / multi_hop / temporal_reasoning / open_domain")
    for label, view in SPLIT_VIEWS:
        if view not in table:
            continue
        print(f"\n== {label} (conversations {', '.join(str(c) for c in SPLITS[view])})")
        print(f"{'system':<24}{'questions':>16}  {'R@5':<28}{'R@10':<28}{'Rcap@5':<28}Rcap@10")
        rows = [("published MiniLM", published)] if view == "all" else []
        for system in systems:
            rows.append((system, table[view][system]))
        for name, cells in rows:
            counts = "/".join(str(int(cells[n]["n"])) if n in cells else "0" for n in names)
            line = f"{name:<24}{counts:>16}  "
            for metric in ("R@5", "R@10", "Rcap@5", "Rcap@10"):
                if name != "published MiniLM" or metric in ("R@5", "R@10"):
                    line += f"{cells_text(cells, metric):<28}"
            print(line.rstrip())
    compared = [system for system in systems if system.startswith("minilm[")]  # MiniLM's own rows only
    if "all" in table and compared:
        print("\ngap to the published row, all ten (ours minus published), R@5 | R@10:")
        for system in compared:
            cells = table["all"][system]
            gaps = [" / ".join(f"{cells[n][m] - published[n][m]:+.3f}" if n in cells else "n/a" for n in names)
                    for m in ("R@5", "R@10")]
            print(f"  {system:<22}{gaps[0]} | {gaps[1]}")


# ---------------------------------------------------------------------- run
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm",
                        help="minilm: computed in .embvenv (bench/embvenv_minilm.py); hashing: smoke runs")
    parser.add_argument("--systems", default="minilm,plugin", help="comma-separated: minilm, plugin")
    parser.add_argument("--docs", default="turn", help=f"document texts for minilm, comma-separated from {DOCS}")
    parser.add_argument("--evidence", choices=EVIDENCE, default="normalized")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N")
    parser.add_argument("--json", type=Path, default=None,
                        help="output (default bench/.cache/results/lmeb-locomo-<embedder>.json)")
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    args.docs = [d.strip() for d in args.docs.split(",") if d.strip()]
    if not set(args.systems) <= {"minilm", "plugin"} or not set(args.docs) <= set(DOCS):
        parser.error(f"--systems from minilm,plugin; --docs from {','.join(DOCS)}")
    return args


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    quiet_logs()
    started, load_before = time.perf_counter(), os.getloadavg()
    worker = None
    if args.embedder == "minilm":
        from bench.embvenv_minilm import make_minilm

        embedder, worker = make_minilm()
    else:
        embedder = make_embedder("hashing")
    python = os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(str(ROOT)) else sys.executable
    command = f"cd {ROOT} && {python} bench/lmeb_locomo.py {shlex.join(sys.argv[1:])}".rstrip()
    # The cosine rows are named after the embedder that made them: only MiniLM's compare with the published row.
    systems = [f"{args.embedder}[{d}]" for d in args.docs if "minilm" in args.systems] + (
        ["plugin"] if "plugin" in args.systems else [])
    print(f"command:  {command}\nembedder: {embedder.description}\ncode:     {tree_state()}\n"
          f"evidence: {args.evidence}; plugin asked as of each conversation's last turn, shipped defaults")
    all_qs: list[Question] = []
    infos = []
    seconds: dict[str, float] = defaultdict(float)
    try:
        for conv, raw in load_all(args.limit_conversations):
            t0 = time.perf_counter()
            qs = questions(conv, raw, args.evidence)
            ids = [t.dia_id for t in conv.turns]
            info: dict[str, Any] = {"conv": conv.conv_id, "turns": len(ids), "questions": len(qs)}
            for doc in args.docs if "minilm" in args.systems else []:
                t1 = time.perf_counter()
                rank_cosine(embedder, ids, documents(conv, raw, doc), qs, f"{args.embedder}[{doc}]")
                seconds[f"{args.embedder}[{doc}]"] += time.perf_counter() - t1
            if "plugin" in args.systems:
                t1 = time.perf_counter()
                info.update(await rank_plugin(conv, embedder, qs))
                seconds["plugin"] += time.perf_counter() - t1
            embedder.save()
            info["seconds"] = round(time.perf_counter() - t0, 1)
            infos.append(info)
            all_qs.extend(qs)
            print(f"  conversation {conv.conv_id}: {len(ids)} turns, {len(qs)} questions, {info['seconds']} s",
                  file=sys.stderr, flush=True)
    finally:
        if worker is not None:
            worker.close()
    table = figures(all_qs, systems)
    print()
    print_tables(table, systems)
    total = round(time.perf_counter() - started, 1)
    load_after = os.getloadavg()
    print(f"\ntime: {total} s in all ({', '.join(f'{s} {v:.1f} s' for s, v in seconds.items())}); "
          f"load average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end")
    payload = {"command": command, "embedder": embedder.description, "code": tree_state(),
               "evidence": args.evidence, "systems": systems, "published_minilm": PUBLISHED, "figures": table,
               "conversations": infos, "seconds": total, "seconds_by_system": dict(seconds),
               "load_average": [load_before[0], load_after[0]],
               "questions": [{"conv": q.conv, "qa": q.index, "subset": q.subset, "gold": list(q.gold),
                              **{s: r[:10] for s, r in q.ranked.items()}} for q in all_qs]}
    out = args.json or RESULTS_DIR / f"lmeb-locomo-{args.embedder}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1))
    print(f"JSON written to {out}")
    return payload


def main(argv: list[str] | None = None) -> int:
    asyncio.run(main_async(parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
