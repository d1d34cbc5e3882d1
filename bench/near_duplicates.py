"""How well the near-duplicate rule (ltm/episodes/sameness.py) tells a copy from a changed fact.

Scores the rule on the labelled pairs of `bench/duplicates/` (tuning and held-out; en, zh, ja):
a pair labelled `near` should be found, a pair labelled `different` (another or a changed fact
that shares words) should not. Precision matters most: a candidate judged a near duplicate is
not proposed, so a false "near" hides a change from the reviewer.

    .venv/bin/python bench/near_duplicates.py                      # hashing embedder (the test host's)
    .benchvenv/bin/python bench/near_duplicates.py --embedder minilm
    .benchvenv/bin/python bench/near_duplicates.py --embedder minilm --grid   # tuning set only

`--grid` prints precision / recall over word-overlap and cosine thresholds on the tuning set
(the thresholds are chosen there; the held-out set is only reported).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.embedders import make_embedder  # noqa: E402 - after the sys.path line above
from ltm.episodes import sameness  # noqa: E402 - after the sys.path line above

SETS = ROOT / "bench" / "duplicates"


def load(name: str) -> list[dict[str, Any]]:
    pairs: list[dict[str, Any]] = json.loads((SETS / f"{name}.json").read_text(encoding="utf-8"))["pairs"]
    for pair in pairs:
        if pair["label"] not in ("near", "different") or pair["lang"] not in ("en", "zh", "ja"):
            raise SystemExit(f"bad pair in {name}: {pair}")
    return pairs


def features(pairs: list[dict[str, Any]], embedder: Any) -> list[dict[str, Any]]:
    vectors = embedder.vectors([p["a"] for p in pairs] + [p["b"] for p in pairs])
    out = []
    for i, pair in enumerate(pairs):
        a, b = pair["a"], pair["b"]
        out.append({**pair, "same": sameness.same_fact(a, b), "overlap": sameness.word_overlap(a, b),
                    "guards": sameness.guards_pass(a, b) and _contained(a, b), "cosine": sameness.cosine(vectors[i], vectors[len(pairs) + i])})
    return out


def _contained(a: str, b: str) -> bool:
    terms_a, terms_b = sameness.content_terms(a), sameness.content_terms(b)
    return bool(terms_a and terms_b) and (terms_a <= terms_b or terms_b <= terms_a)


def judged_near(row: dict[str, Any], overlap: float, cos: float) -> bool:
    return row["same"] or (row["guards"] and row["overlap"] >= overlap and row["cosine"] >= cos)


def score(rows: list[dict[str, Any]], overlap: float, cos: float) -> tuple[int, int, int, int]:
    tp = sum(1 for r in rows if r["label"] == "near" and judged_near(r, overlap, cos))
    fp = sum(1 for r in rows if r["label"] == "different" and judged_near(r, overlap, cos))
    fn = sum(1 for r in rows if r["label"] == "near" and not judged_near(r, overlap, cos))
    return tp, fp, fn, len(rows)


def fmt(tp: int, fp: int, fn: int) -> str:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return f"P {p:.2f}  R {r:.2f}  (tp {tp}, fp {fp}, fn {fn})"


def report(name: str, rows: list[dict[str, Any]], overlap: float, cos: float, verbose: bool) -> None:
    by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_lang[row["lang"]].append(row)
    tp, fp, fn, n = score(rows, overlap, cos)
    print(f"{name} ({n} pairs): {fmt(tp, fp, fn)}")
    for lang in ("en", "zh", "ja"):
        if by_lang[lang]:
            ltp, lfp, lfn, ln = score(by_lang[lang], overlap, cos)
            print(f"  {lang} ({ln}): {fmt(ltp, lfp, lfn)}")
    if verbose:
        for row in rows:
            got = judged_near(row, overlap, cos)
            if got != (row["label"] == "near"):
                kind = "false near" if got else "missed"
                print(f"    {kind}: {row['a']!r} / {row['b']!r} overlap {row['overlap']:.2f} "
                      f"cosine {row['cosine']:.2f} guards {'pass' if row['guards'] else 'stop'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="hashing", choices=["hashing", "minilm"])
    parser.add_argument("--grid", action="store_true", help="thresholds grid on the tuning set")
    parser.add_argument("--verbose", action="store_true", help="list every wrong pair")
    args = parser.parse_args()
    embedder = make_embedder(args.embedder)
    tuning, heldout = features(load("tuning"), embedder), features(load("heldout"), embedder)
    embedder.save()
    overlap, cos = sameness.NEAR_WORD_OVERLAP, sameness.NEAR_COSINE
    print(f"near-duplicate rule, embedder {embedder.description}")
    print(f"thresholds: word overlap >= {overlap}, cosine >= {cos} (ltm/episodes/sameness.py)")
    report("tuning", tuning, overlap, cos, args.verbose)
    report("held-out", heldout, overlap, cos, args.verbose)
    if args.grid:
        print("\ntuning grid (precision / recall):")
        cosines = (0.0, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)
        print("overlap \\ cosine " + " ".join(f"{c:>11}" for c in cosines))
        for ov in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
            cells = []
            for c in cosines:
                tp, fp, fn, _ = score(tuning, ov, c)
                p = tp / (tp + fp) if tp + fp else 1.0
                r = tp / (tp + fn) if tp + fn else 1.0
                cells.append(f"{p:.2f} / {r:.2f}")
            print(f"{ov:>15} " + " ".join(f"{cell:>11}" for cell in cells))
    print(f"\ncommand: {Path(sys.executable).name} bench/near_duplicates.py --embedder {args.embedder}"
          + (" --grid" if args.grid else ""))


if __name__ == "__main__":
    main()
