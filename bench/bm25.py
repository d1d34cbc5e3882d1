"""Plain Okapi BM25 over a whole conversation (the benchmark's baseline).

Same formula and defaults as the plugin's in-window BM25 (`ltm.episodes.ranking._bm25_scores`:
idf = ln(1 + (N - df + 0.5) / (df + 0.5)), k1 = 1.2, b = 0.75) and the plugin's
tokenizer (`ltm.episodes.terms.tokenize`), but the statistics and the ranking cover every
document, not a vector-search window.
"""

from __future__ import annotations

import math
from collections import Counter

from ltm.episodes.terms import tokenize


class BM25:
    def __init__(self, documents: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.docs = [Counter(tokenize(d)) for d in documents]
        self.lengths = [sum(c.values()) for c in self.docs]
        self.avg_len = (sum(self.lengths) / len(self.docs)) if self.docs else 1.0
        self.avg_len = self.avg_len or 1.0
        df: Counter[str] = Counter()
        for counts in self.docs:
            df.update(counts.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: str) -> list[float]:
        terms = tokenize(query)
        out = []
        for counts, length in zip(self.docs, self.lengths):
            norm = self.k1 * (1 - self.b + self.b * length / self.avg_len)
            score = 0.0
            for term in terms:
                tf = counts.get(term, 0)
                if tf:
                    score += self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
            out.append(score)
        return out

    def top(self, query: str, k: int) -> list[int]:
        """Indices of the k best documents; ties keep document order."""
        scores = self.scores(query)
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        return order[:k]
