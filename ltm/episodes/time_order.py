"""The records of one space in the order they were written (space_index.py; recall's adjacent records).

A chat's records are its messages one after another: the record written just before or after a
relevant one is often the other half of the exchange. Record numbers cannot say which that is (a
space paged in from a store comes in the store's order, and numbers are reused), so the order is
kept by time: record numbers sorted by (timestamp, number), made with one sort of the space the
first time recall asks for it, then kept current by every add and remove (a bisect and one insert;
a new record usually goes at the end). A space no recall asks it of never pays for it.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, insort


class TimeOrder:
    """Record numbers of one space index sorted by their timestamps (ties by number)."""

    def __init__(self, timestamps: list[str]) -> None:
        self._timestamps = timestamps  # the space index's own list, by record number
        self._order: array[int] | None = None

    def _key(self, number: int) -> tuple[str, int]:
        return self._timestamps[number], number

    def build(self, numbers: list[int]) -> None:
        """Sorted once, from every record number the index holds (the first time it is asked for)."""
        self._order = array("I", sorted(numbers, key=self._key))

    @property
    def built(self) -> bool:
        return self._order is not None

    def add(self, number: int) -> None:
        """A record with its timestamp set (once built)."""
        if self._order is not None:
            insort(self._order, number, key=self._key)

    def remove(self, number: int) -> None:
        """A record leaving, or about to change its timestamp: called while its timestamp is the one it
        was sorted by."""
        if self._order is None:
            return
        at = self._position(number)
        if at is not None:
            del self._order[at]

    def around(self, number: int, reach: int) -> list[int]:
        """Up to `reach` record numbers written just before it and `reach` just after (nearest first)."""
        at = None if self._order is None else self._position(number)
        if self._order is None or at is None:
            return []
        before = self._order[max(0, at - reach):at][::-1]
        after = self._order[at + 1:at + 1 + reach]
        return [n for pair in _interleave(list(before), list(after)) for n in pair]

    def _position(self, number: int) -> int | None:
        assert self._order is not None
        at = bisect_left(self._order, self._key(number), key=self._key)
        return at if at < len(self._order) and self._order[at] == number else None


def _interleave(before: list[int], after: list[int]) -> list[list[int]]:
    """[[b1, a1], [b2, a2], ...]: the nearest on either side first."""
    return [before[i:i + 1] + after[i:i + 1] for i in range(max(len(before), len(after)))]
