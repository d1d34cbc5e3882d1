"""Management listings of one L2 space: newest-first pages and the whole space, oldest first.

A listing enumerates the space (up to `store.MAX_ENUMERATED` records; a larger space says so,
`truncated`), so it is for the command and the admin page, never for a turn.
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


class EpisodeListing:
    def __init__(self, store: EpisodeStore) -> None:
        self._store = store

    async def page(self, scope: MemoryScope, statuses: tuple[EpisodeStatus, ...], page: int,
                   page_size: int) -> EpisodePage:
        """Newest first, with a correct total."""
        listing = await self._store.enumerate(scope.kb_id, scope.user_key)
        chosen = sorted((e for e in listing.episodes if e.status in statuses), key=lambda e: e.timestamp, reverse=True)
        pages = max(1, -(-len(chosen) // page_size))
        params.check_page(page, pages)
        start = (page - 1) * page_size
        return EpisodePage(chosen[start : start + page_size], page, pages, len(chosen), listing.truncated)

    async def every(self, scope: MemoryScope) -> list[Episode]:
        """Every record of the space, oldest first."""
        listing = await self._store.enumerate(scope.kb_id, scope.user_key)
        return sorted(listing.episodes, key=lambda e: e.timestamp)
