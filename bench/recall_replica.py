#!/usr/bin/env python3
"""Offline replica of recall's ranking over LoCoMo, to judge ranking ideas in seconds (issue 44).

`recall_exact.py --dump-space PATH` records, for every question, every record of the conversation
with the parts recall scored it by (its vector distance, its word score over the whole space, the
bonuses, the time weight, its timestamp, speaker and text): run it with a window covering the whole
space (`--recipe vector_window=2000,lexical_window=2000`, and `--report-once` on held-out). This
script rebuilds the recall window from that (the nearest `vector_window` by distance, the best
`lexical_window` by words) and ranks it the way `ranking.rank` does, then applies each idea below.
The replica gives the plugin's own figures: .723 / .794 against .721 / .795 on tuning with the
defaults before issue 44, .688 / .776 on held-out exactly.

    .benchvenv/bin/python bench/recall_exact.py --split tuning --recipe vector_window=2000,lexical_window=2000 \\
        --dump-space bench/.cache/results/space-tuning.pkl
    .benchvenv/bin/python bench/recall_replica.py bench/.cache/results/space-tuning.pkl

One line per idea: R@5 / R@10 overall, per category (1-4) and by the age of the newest evidence. The
ideas that were kept are in the plugin (`adjacent.py`, `RecallRecipe.context_reach`, the question of
time); the others are here only, as they were measured (bench/RESULTS.md, "Recall round (issue 44)").
"""

from __future__ import annotations

import argparse
import math
import pickle
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.locomo_recall import AGE_BUCKETS  # noqa: E402 - after the sys.path line above
from ltm.episodes.question import Question  # noqa: E402 - after the sys.path line above
from ltm.episodes.ranking import RecallRecipe  # noqa: E402 - after the sys.path line above
from ltm.episodes.terms import stem, tokenize, words  # noqa: E402 - after the sys.path line above

BANDS = AGE_BUCKETS
# The plugin's windows and constants, as shipped: the replica follows them if they change (the weights are
# each idea's knobs below, their defaults those before issue 44, which the replica was checked against).
SHIPPED = RecallRecipe()
Q = dict[str, Any]


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


class Space:
    """Okapi BM25 over one conversation's records (the space index's formula), with weighted queries."""

    def __init__(self, docs: list[list[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.tf = [Counter(d) for d in docs]
        self.df: Counter[str] = Counter()
        for doc in docs:
            self.df.update(set(doc))
        self.n, self.avg = len(docs), sum(map(len, docs)) / max(1, len(docs))
        self.length = np.array([len(d) for d in docs])
        self.k1, self.b = k1, b
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, counts in enumerate(self.tf):
            for term, f in counts.items():
                self.postings[term].append((i, f))

    def idf(self, term: str) -> float:
        df = self.df.get(term, 0)
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def score(self, weights: dict[str, float], k1: float | None = None) -> np.ndarray:
        k1 = self.k1 if k1 is None else k1
        out = np.zeros(self.n)
        for term, weight in weights.items():
            idf = self.idf(term)
            for i, f in self.postings.get(term, ()):
                out[i] += weight * idf * f * (k1 + 1) / (f + k1 * (1 - self.b + self.b * self.length[i] / self.avg))
        return out


def load(path: Path, fold: Callable[[str], list[str]] = tokenize) -> dict[int, list[Q]]:
    data: dict[int, list[Q]] = pickle.loads(path.read_bytes())
    for questions in data.values():
        first = questions[0]
        order = sorted(range(len(first["rows"])), key=lambda i: first["rows"][i][0])
        space = Space([fold(first["rows"][i][11] + " " + first["rows"][i][10]) for i in order])
        position = {first["rows"][i][0]: k for k, i in enumerate(order)}
        for q in questions:
            rows = q["rows"]
            q["ids"] = [r[0] for r in rows]
            q["dist"] = np.array([r[8] for r in rows], dtype=float)
            q["lex"] = np.array([r[3] for r in rows])
            q["tw"], q["bonus"] = np.array([r[4] for r in rows]), np.array([r[5] for r in rows])
            q["t"] = np.array([_seconds(r[9]) for r in rows])
            q["sender"], q["content"] = [r[10] for r in rows], [r[11] for r in rows]
            q["space"], q["map"] = space, np.array([position[i] for i in q["ids"]])
            q["terms"] = Counter(fold(q["q"]))
    return data


def normalized(values: np.ndarray) -> np.ndarray:
    return values / values.max() if values.max() > 0 else values


def neighbour(t: np.ndarray, rel: np.ndarray, seconds: float, reach: int = 1, decay: float = 1.0) -> np.ndarray:
    order, out = np.argsort(t, kind="stable"), np.zeros(len(rel))
    for p, i in enumerate(order):
        best, share = 0.0, 1.0
        for step in range(1, reach + 1):
            for j in (p - step, p + step):
                if 0 <= j < len(order) and abs(t[order[j]] - t[i]) <= seconds:
                    best = max(best, share * rel[order[j]])
            share *= decay
        out[i] = best
    return out


def session(t: np.ndarray, rel: np.ndarray, gap: float, mode: str = "max") -> np.ndarray:
    order, out, start = np.argsort(t, kind="stable"), np.zeros(len(rel)), 0
    for end in range(1, len(order) + 1):
        if end == len(order) or t[order[end]] - t[order[end - 1]] > gap:
            burst = order[start:end]
            best = np.sort(rel[burst])[::-1]
            out[burst] = best[0] if mode == "max" else (best[:2].mean() if len(best) > 1 else best[0] / 2)
            start = end
    return out


def ranker(vw: float = .4, cw: float = .5, sw: float = .3, reach: int = 1, decay: float = 1.0, adjacent: int = 0,
           lexical: Callable[[Q], np.ndarray] | None = None, vector: str = "minmax", session_mode: str = "max",
           extra: Callable[[Q, np.ndarray], np.ndarray] | None = None, diversity: float = 0.0,
           dist: str = "dist") -> Callable[[Q], list[str]]:
    """The ranking of `ranking.rank` over the rebuilt window (`vector_window`, `lexical_window`), with the
    idea's knobs: weights, the context's reach, adjacent records (the `adjacent` most relevant entries,
    two either side), another word score, vector normalization, session aggregation, an extra term, and
    session diversity (a second pick from one burst loses `diversity`, over the first ten)."""
    def parts(q: Q, idx: np.ndarray, vin: np.ndarray, lex: np.ndarray) -> np.ndarray:
        d = q[dist][idx]
        lo, hi = d[vin].min(), d[vin].max()
        if vector == "z":
            cos = 1 - d
            z = (cos - cos[vin].mean()) / (cos[vin].std() + 1e-9)
            vec = np.where(vin, z - z[vin].min(), 0.0) * .2
        else:
            vec = np.where(vin, (hi - d) / (hi - lo) if hi > lo else 1.0, 0.0)
        return vw * vec + (1 - vw) * normalized(lex[idx])

    def rank(q: Q) -> list[str]:
        if not q["ids"]:
            return []
        lex = lexical(q) if lexical is not None else q["lex"]
        vector_hits = np.argsort(q[dist], kind="stable")[:SHIPPED.vector_window]
        inside = np.zeros(len(q["ids"]), bool)
        inside[vector_hits] = True
        idx = list(vector_hits) + [i for i in np.argsort(-lex, kind="stable")[:SHIPPED.lexical_window]
                                   if lex[i] > 0 and not inside[i]]
        if adjacent:
            rel = parts(q, np.array(idx), inside[idx], lex)
            by_time = np.argsort(q["t"], kind="stable")
            at = {i: p for p, i in enumerate(by_time)}
            have = set(idx)
            for anchor in [idx[i] for i in np.argsort(-rel, kind="stable")[:adjacent]]:
                side = SHIPPED.adjacent_reach
                for j in range(at[anchor] - side, at[anchor] + side + 1):
                    if 0 <= j < len(by_time) and by_time[j] not in have \
                            and abs(q["t"][by_time[j]] - q["t"][anchor]) <= SHIPPED.context_seconds:
                        have.add(by_time[j])
                        idx.append(by_time[j])
        window = np.array(idx)
        rel = parts(q, window, inside[window], lex)
        t = q["t"][window]
        score = (rel + cw * neighbour(t, rel, SHIPPED.context_seconds, reach, decay)
                 + sw * session(t, rel, SHIPPED.session_gap_seconds, session_mode))
        score = score + q["bonus"][window] + SHIPPED.recency_weight * q["tw"][window]
        if extra is not None:
            score = score + extra(q, window)
        order = sorted(range(len(window)), key=lambda i: t[i], reverse=True)
        order.sort(key=lambda i: -score[i])
        if diversity:
            burst = session(t, np.arange(len(t), dtype=float), SHIPPED.session_gap_seconds)  # one value per burst
            chosen: list[int] = []
            used: Counter[float] = Counter()
            while order and len(chosen) < 10:
                best = max(order, key=lambda i: score[i] - diversity * min(used[burst[i]], 1))
                chosen.append(best)
                order.remove(best)
                used[burst[best]] += 1
            order = chosen + order
        return [q["ids"][window[i]] for i in order]
    return rank


def feedback(top: int, terms: int, weight: float, first: Callable[[Q], list[str]]) -> Callable[[Q], np.ndarray]:
    """BM25 of the question's words plus the `terms` words weighing most in the `top` first-ranked records."""
    def lexical(q: Q) -> np.ndarray:
        space, gathered = q["space"], Counter()
        position = dict(zip(q["ids"], q["map"]))
        for record in first(q)[:top]:
            counts = space.tf[position[record]]
            length = sum(counts.values()) or 1
            for term, f in counts.items():
                if term not in q["terms"] and space.df[term] > 1:
                    gathered[term] += f / length * space.idf(term)
        best = dict(gathered.most_common(terms))
        total = sum(best.values()) or 1.0
        query = {t: 1.0 for t in q["terms"]}
        query.update({t: weight * len(q["terms"]) * w / total for t, w in best.items()})
        return normalized(space.score(query)[q["map"]])
    return lexical


def bm25(k1: float = 1.2, drop: tuple[str, ...] = ()) -> Callable[[Q], np.ndarray]:
    left = {stem(w) for w in drop}
    return lambda q: normalized(q["space"].score({t: c for t, c in q["terms"].items() if t not in left} or q["terms"],
                                                 k1)[q["map"]])


def first_named_only(q: Q, window: np.ndarray) -> np.ndarray | float:
    question = Question.of(q["q"])
    named = [s for s in sorted(set(q["sender"])) if question.names(s)]
    if len(named) < 2:
        return 0.0
    first = min(named, key=lambda s: q["q"].lower().find(s.lower()))
    return np.array([0.0 if q["sender"][i] == first else -.3 for i in window])


def length_prior(q: Q, window: np.ndarray) -> np.ndarray:
    return .02 * np.log1p([len(q["content"][i].split()) for i in window]) / np.log1p(60)


def folded_more(text: str) -> list[str]:
    """The plugin's terms, then one more suffix off (-ation, -ition, -ion, -ment, -ness, -ful, -ly, -ity)."""
    out = []
    for term in (stem(w) for w in words(text)):
        for suffix in ("ation", "ition", "ion", "ment", "ness", "ful", "ly", "ity"):
            if term.endswith(suffix) and len(term) - len(suffix) >= 4:
                term = term[: -len(suffix)]
                break
        out.append(term)
    return out


_FRAME = re.compile(r"^\s*(what|when|where|who|whom|whose|which|why|how)\b(\s+(long|many|much|often|old|did|does|do|is|"
                    r"are|was|were|has|have|had|kind of|type of|sort of|might|would|could|will|can))*\s*", re.I)


def question_vectors(data: dict[int, list[Q]]) -> None:
    """Distances of other texts of each question (MiniLM from the bench cache; `.benchvenv`)."""
    from bench.embedders import make_embedder

    embedder = make_embedder("minilm")
    for questions in data.values():
        vectors = dict(zip(questions[0]["ids"], embedder.vectors(questions[0]["content"])))
        for q in questions:
            matrix = np.stack([vectors[i] for i in q["ids"]])
            speakers = sorted(set(q["sender"]))
            question = Question.of(q["q"])
            asked = question.without_speakers(speakers)
            named = [s for s in speakers if question.names(s)]
            prefixed = f"{named[0]}: {asked}" if len(named) == 1 else asked
            plain, named_first, frameless, whole = embedder.vectors(
                [asked, prefixed, _FRAME.sub("", asked).rstrip(" ?？") or asked, q["q"]])
            q["d_frameless"] = 1 - matrix @ frameless
            q["d_mixed"] = .7 * q["dist"] + .3 * (1 - matrix @ whole)
            q["d_prefixed"] = 1 - matrix @ named_first
            q["d_mean"] = 1 - matrix @ ((plain + named_first) / np.linalg.norm(plain + named_first))
    embedder.save()


def evaluate(data: dict[int, list[Q]], rank: Callable[[Q], list[str]], label: str) -> None:
    sums: dict[Any, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for questions in data.values():
        asked = max(_seconds(r[9]) for r in questions[0]["rows"])
        for q in questions:
            order, evidence = rank(q), set(q["ev"])
            when = dict(zip(q["ids"], q["t"]))
            keys: list[Any] = [q["cat"], "all"]
            moments = [when[e] for e in evidence if e in when]
            if moments:
                age = int((asked - max(moments)) // 86400)
                keys += [f"b{b}" for b, (low, high) in enumerate(BANDS) if low <= age < high]
            for key in keys:
                s = sums[key]
                s[0] += 1
                s[1] += len(evidence & set(order[:5])) / len(evidence)
                s[2] += len(evidence & set(order[:10])) / len(evidence)

    def cell(key: Any) -> str:
        n, r5, r10 = sums[key]
        return f"{r5 / n:.3f} / {r10 / n:.3f}" if n else "n/a"
    print(" | ".join([cell("all"), *(cell(c) for c in (1, 2, 3, 4)), *(cell(f"b{b}") for b in range(4)), label]),
          flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump", type=Path, help="the file `recall_exact.py --dump-space` wrote")
    parser.add_argument("--no-vectors", action="store_true", help="leave out the ideas that embed other texts")
    args = parser.parse_args(argv)
    data = load(args.dump)
    combined: dict[str, Any] = dict(cw=.4, reach=2, decay=.7, adjacent=5)
    print("R@5 / R@10 | cat 1 | cat 2 | cat 3 | cat 4 | 0-30 d | 30-90 d | 90-180 d | >180 d | idea")
    ideas: list[tuple[str, Callable[[Q], list[str]]]] = [
        ("replica of the defaults before issue 44", ranker()),
        ("session diversity .1 (a second pick from one burst loses .1)", ranker(diversity=.1)),
        ("weights re-tuned at window 50 (session .4)", ranker(sw=.4)),
        ("words from the best records (top 5, 5 words, .1)", ranker(lexical=feedback(5, 5, .1, ranker()))),
        ("vector score z-normalized in the window (x .2) instead of min-max", ranker(vector="z")),
        ("BM25 k1 1.6", ranker(lexical=bm25(1.6))),
        ("record length prior .02", ranker(extra=length_prior)),
        ("question-frame words out of BM25 (kind, type, sort, thing(s))",
         ranker(lexical=bm25(drop=("kind", "type", "sort", "thing", "things")))),
        ("two speakers named: the other's records -.3", ranker(extra=first_named_only)),
        ("adjacent records + the context's reach (kept)", ranker(**combined)),
        ("  + session diversity .05", ranker(**combined, diversity=.05)),
        ("  + words from the best records (top 5, 10 words, .3)",
         ranker(**combined, lexical=feedback(5, 10, .3, ranker(**combined)))),
        ("  + session context = mean of its best two (x .2)", ranker(**{**combined, "sw": .2}, session_mode="top2")),
    ]
    for label, rank in ideas:
        evaluate(data, rank, label)
    folded = load(args.dump, folded_more)
    evaluate(folded, ranker(**combined, lexical=lambda q: normalized(q["space"].score(q["terms"])[q["map"]])),
             "  + one more suffix folded (-ation, -ion, -ment, -ness, -ful, -ly, -ity)")
    if not args.no_vectors:
        question_vectors(data)
        for key, label in (("d_frameless", "question embedded without its frame ('When did', '?')"),
                           ("d_mixed", "distance mixed .7 / .3 with the question's own vector (names kept)"),
                           ("d_prefixed", "the one named speaker as a prefix ('Melanie: ...'), as records are"),
                           ("d_mean", "mean of the plain and the prefixed question vectors")):
            evaluate(data, ranker(dist=key), label)
    return 0


if __name__ == "__main__":
    sys.exit(main())
