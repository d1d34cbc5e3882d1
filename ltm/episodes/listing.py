"""Management listings of one space (`!memory list`, the console's Episodes page): newest first,
filtered by status, one page at a time (C, M).

Served from the plugin's index of the space (`space_index.py`), which knows every record's status
and time: the order and the page come from there and only the page's records are read from the
store, in one keyed call, whatever the space holds. A record the store no longer has (the index
was wrong) is left out and the index corrected (`EpisodeStore.get_many`). While a big space's
index is still being made, the page comes from an enumeration of the space instead (bounded by
`MAX_ENUMERATED`, and then marked `truncated`), in the same order: newest first, then by id.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ValidationError
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
    if page > pages:
        raise ValidationError(f"page {page} is past the end (last page is {pages})")
    return pages


async def list_page(store: EpisodeStore, kb_id: str, user_key: str, statuses: tuple[EpisodeStatus, ...],
                    page: int, page_size: int) -> EpisodePage:
    index = await store.space_index(kb_id, user_key)
    start = (page - 1) * page_size
    for _ in range(2):
        if index is None:
            break
        ids, total = index.listing(statuses, start, page_size)
        pages = _pages(total, page, page_size)
        found = await store.get_many(kb_id, user_key, ids)
        episodes = [found[i] for i in ids if i in found and found[i].status in statuses]
        if len(episodes) == len(ids):
            return EpisodePage(episodes, page, pages, total)
        index = await store.space_index(kb_id, user_key)  # corrected by get_many: ask it again, once
    listing = await store.enumerate(kb_id, user_key)
    chosen = sorted((e for e in listing.episodes if e.status in statuses), key=lambda e: (e.timestamp, e.episode_id),
                    reverse=True)
    pages = _pages(len(chosen), page, page_size)
    return EpisodePage(chosen[start : start + page_size], page, pages, len(chosen), listing.truncated)
