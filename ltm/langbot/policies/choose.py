"""The policies of one store, chosen once from its probed traits: the only place a trait picks a behaviour.
The store's health report is read off the chosen policies (`store_profile`), each stating its own line."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ...ports import IndexHit, StoreProfile, Vector
from ..host_rows import HostRows, Row
from ..traits import Traits
from .delete import ByGraveyard, ByKey, ByKeyThenCheck, Delete
from .health import Line, line
from .keyed_read import ByKeyList, ByKeySearch, ByScan, KeyedRead
from .rewrite import DeleteFirst, InPlace, Rewrite, SecondKey
from .scores import Distance, Similarity
from .speaker import ByOverfetch, BySpeakerFilter
from .text_search import FullText, VectorOnly


class SpeakerSearch(Protocol):
    @property
    def health(self) -> Line | None: ...

    def ask(self, space: str, speaker: str, top_k: int) -> tuple[dict[str, Any], int]: ...


class TextSearch(Protocol):
    @property
    def health(self) -> Line | None: ...

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


# What every store does whatever its policies (isolation is checked by the probe), and what a store
# whose single delete the probe saw fail cannot do (then its delete policy's line is not said).
ISOLATES = line("can.isolate", "isolates every memory space on file_id")
NO_SINGLE_DELETE = line("cannot.delete_one", "delete one memory: forget and single deletes are refused; deleting a "
                        "whole scope and archiving still work")


def store_profile(traits: Traits, policies: Policies, problems: Sequence[str]) -> StoreProfile:
    """The health report of a store driven by `policies`: its kind, and each chosen policy's own line."""
    delete = policies.delete.health if traits.single_delete else NO_SINGLE_DELETE
    lines = [entry for entry in (ISOLATES, policies.speaker.health, policies.read.health, delete,
                                 policies.text.health, policies.rewrite.health) if entry is not None]
    return StoreProfile(traits.kind, supported=not problems and traits.single_delete,
                        can=tuple(entry.said for entry in lines if entry.can),
                        cannot=tuple(entry.said for entry in lines if not entry.can))
