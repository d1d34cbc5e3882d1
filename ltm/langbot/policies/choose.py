"""The policies of one store, chosen once from its probed traits: the only place a trait picks a behaviour."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ...ports import IndexHit, Vector
from ..host_rows import HostRows, Row
from ..traits import Traits
from .delete import ByGraveyard, ByKey, ByKeyThenCheck, Delete
from .keyed_read import ByKeyList, ByKeySearch, ByScan, KeyedRead
from .rewrite import DeleteFirst, InPlace, Rewrite, SecondKey
from .scores import Distance, Similarity
from .speaker import ByOverfetch, BySpeakerFilter
from .text_search import FullText, VectorOnly


class SpeakerSearch(Protocol):
    def ask(self, space: str, speaker: str, top_k: int) -> tuple[dict[str, Any], int]: ...


class TextSearch(Protocol):
    async def search(self, collection: str, space: str, text: str, vector: Vector, top_k: int
                     ) -> list[IndexHit] | None: ...


@dataclass(frozen=True)
class Policies:
    score: Callable[[Row], float]
    speaker: SpeakerSearch
    text: TextSearch
    read: KeyedRead
    delete: Delete
    rewrite: Rewrite


def choose(traits: Traits, rows: HostRows) -> Policies:
    score = Similarity() if traits.similarity else Distance()
    read: KeyedRead
    if not traits.filters_uuid:
        read = ByScan(rows)
    elif traits.keyed_by_search:
        read = ByKeySearch(rows, traits.dimension)
    else:
        read = ByKeyList(rows)
    delete = ByKey() if traits.filters_uuid else ByGraveyard(traits.dimension)
    rewrite: Rewrite
    if not traits.rewrite_deletes_first:
        rewrite = InPlace()
    elif traits.filters_uuid:
        rewrite = SecondKey(rows)
    else:
        rewrite = DeleteFirst(read, delete)
    # A store that scores by similarity is kept to vectors, whatever its full-text answers looked like.
    text = FullText(rows, score) if traits.text_search and not traits.similarity else VectorOnly()
    speaker = BySpeakerFilter() if traits.filters_metadata else ByOverfetch()
    return Policies(score, speaker, text, read, delete, rewrite)


def unprobed(rows: HostRows) -> Policies:
    """A collection not probed yet in this process (no vector seen): only reads by key and deletes
    happen then, since a search or a write probes first; every choice is the cautious one."""
    read = ByKeyList(rows)
    delete = ByKeyThenCheck(rows)
    return Policies(Distance(), ByOverfetch(), VectorOnly(), read, delete, DeleteFirst(read, delete))
