"""Management listings of one L2 space (the surfaces' episode lists): newest-first
pages filtered by status (C, M), and the whole space, oldest first.

A page is served from the plugin's index of the space (`space_index.py`), which knows every
record's status and time: the order and the page come from there and only the page's records are
read from the store, in one keyed call, whatever the space holds. A record the store no longer has
(the index was wrong) is left out and the index corrected (`EpisodeStore.get_many`). While a big
space's index is still being made, the page comes from an enumeration of the space instead (up to
`store.MAX_ENUMERATED` records; a larger space says so, `truncated`), in the same order: newest
first, then by id. The whole space is always an enumeration (export, the admin page), never a turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import params
from ..identity import MemoryScope
from .model import Episode, EpisodeStatus
from .store import EpisodeStore


@dataclass(frozen=True)
class EpisodePage:
    episodes: list[Episode]
    page: int
    pages: int
    total: int
    truncated: bool = False


def _pages(total: int, page: int, page_size: int) -> int:
    pages = max(1, -(-total // page_size))
    params.check_page(page, pages)
    return pages


class EpisodeListing:
    def __init__(self, store: EpisodeStore) -> None:
        self._store = store

    async def page(self, scope: MemoryScope, statuses: tuple[EpisodeStatus, ...], page: int,
                   page_size: int) -> EpisodePage:
        """Newest first (by time, then id), with a correct total."""
        space = scope.l2
        index = await self._store.word_index(space)
        start = (page - 1) * page_size
        for _ in range(2):
            if index is None:
                break
            ids, total = index.listing(statuses, start, page_size)
            pages = _pages(total, page, page_size)
            found = await self._store.get_many(space, ids)
            episodes = [found[i] for i in ids if i in found and found[i].status in statuses]
            if len(episodes) == len(ids):
                return EpisodePage(episodes, page, pages, total)
            index = await self._store.word_index(space)  # corrected by get_many: ask it again, once
        listing = await self._store.enumerate(space)
        chosen = sorted((e for e in listing.episodes if e.status in statuses),
                        key=lambda e: (e.timestamp, e.episode_id), reverse=True)
        pages = _pages(len(chosen), page, page_size)
        return EpisodePage(chosen[start : start + page_size], page, pages, len(chosen), listing.truncated)

    async def every(self, scope: MemoryScope) -> list[Episode]:
        """Every record of the space, oldest first."""
        listing = await self._store.enumerate(scope.l2)
        return sorted(listing.episodes, key=lambda e: e.timestamp)
