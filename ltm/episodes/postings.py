"""The packed BM25 posting of one word in a space index (`space_index.py`): the records that have it, as
one sorted `array` of `record number << 8 | term frequency`, or a plain int when one record has the word,
so a word in 50,000 records costs 200 KB rather than a dict of 50,000 entries."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable
from typing import TypeAlias

TF_BITS = 8
TF_MAX = (1 << TF_BITS) - 1
MAX_RECORDS = 1 << 24  # record numbers share 32 bits with the term frequency
Posting: TypeAlias = "int | array[int]"  # a string: array is not subscriptable at run time in 3.11


def entries(posting: Posting) -> Iterable[int]:
    """The packed entries of a posting (one, or the array's)."""
    return (posting,) if isinstance(posting, int) else posting


def term_frequency(posting: Posting, number: int) -> int:
    """How often the word occurs in record `number` (0: not at all), by bisection in an array."""
    if isinstance(posting, int):
        return posting & TF_MAX if posting >> TF_BITS == number else 0
    at = bisect_left(posting, number << TF_BITS)
    if at < len(posting) and posting[at] >> TF_BITS == number:
        return posting[at] & TF_MAX
    return 0
