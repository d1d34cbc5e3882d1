"""Records best first, sorted only as far as a caller reads (space_index.py's word candidates).

One recall reads the same scores twice (its best word matches, then the speaker's own): both read
one order, built once, instead of a partial sort each.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

PARTIAL_SORT_SHARE = 20  # a partial sort only for a head under 1/20 of the scores


class BestFirst:
    """The keys of `scores` in exactly the order `sorted(scores, key=scores.__getitem__, reverse=True)`
    gives (equal scores keep their order in `scores`). Only the first `head` are found at first
    (`heapq.nlargest`, documented to equal that sort's first `head`); the whole is sorted once, when a
    reader gets past them."""

    def __init__(self, scores: dict[int, float], head: int) -> None:
        self._scores = scores
        # nlargest keeps a heap in Python: it beats sorting everything in C only when `head` is a small
        # share of the scores (measured: 400 of 1,000 costs 8x a whole sort, 400 of 10,000 0.8x).
        whole = head * PARTIAL_SORT_SHARE >= len(scores)
        self._order = sorted(scores, key=scores.__getitem__, reverse=True) if whole else \
            heapq.nlargest(head, scores, key=scores.__getitem__)
        self._whole = len(self._order) == len(scores)

    def __iter__(self) -> Iterator[int]:
        at = 0
        while True:
            while at < len(self._order):
                yield self._order[at]
                at += 1
            if self._whole:
                return
            self._order = sorted(self._scores, key=self._scores.__getitem__, reverse=True)
            self._whole = True
