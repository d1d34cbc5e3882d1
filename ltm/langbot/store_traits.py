"""What a vector store can do, as the adapter's probe saw it (docs/HOST-FACTS.md 12), and what
health says about it. The probe itself is `HostVectorIndex._probe` (vector_index.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..ports import StoreProfile

SCAN_LIMIT = 20_000  # a scan of one space for a record (stores without a uuid filter) stops here
SPEAKER_OVERFETCH = 25  # speaker search without a speaker filter: the space's best top_k x this ...
SPEAKER_OVERFETCH_MAX = 500  # ... but never more than this many rows


@dataclasses.dataclass(frozen=True)
class Traits:
    keeps_metadata: bool
    filters_metadata: bool
    filters_uuid: bool
    similarity: bool
    replaces: bool
    single_delete: bool
    dimension: int
    text_search: bool = False

    @property
    def rewrite_deletes_first(self) -> bool:
        """A store that keeps only text/file_id/uuid (Milvus inserts; pgvector would not need it but
        cannot be told apart reliably) or that kept both rows of a rewrite."""
        return not self.keeps_metadata or not self.replaces

    def profile(self, problems: Sequence[str]) -> StoreProfile:
        if self.keeps_metadata and self.filters_metadata:
            kind = "keeps and filters plugin metadata (like Chroma, Qdrant or SeekDB)"
        elif self.keeps_metadata:
            kind = "keeps plugin metadata but filters on file_id only (like Valkey Search)"
        elif self.similarity:
            kind = "fixed schema (text, file_id, uuid), scores by similarity (like Milvus)"
        else:
            kind = "fixed schema (text, file_id, uuid), scores by distance (like pgvector)"
        can = ["isolates every memory space on file_id"]
        cannot: list[str] = []
        can.append("speaker-first recall by filter" if self.filters_metadata else
                   f"speaker-first recall from the space's best {SPEAKER_OVERFETCH}x matches (at most "
                   f"{SPEAKER_OVERFETCH_MAX})")
        if self.filters_uuid:
            can.append("opens and deletes one memory by its key")
        else:
            cannot.append(f"open one memory by its key: it scans the memory's space (up to {SCAN_LIMIT:,} "
                          "records), so show/forget/archive slow down as a space grows")
            if self.single_delete:
                can.append("deletes one memory by moving it to its space's graveyard, then deleting that "
                           "(two writes)")
        if not self.single_delete:
            cannot.append("delete one memory: forget and single deletes are refused; deleting a whole "
                          "scope and archiving still work")
        can.append("widens recall with the store's full-text matches" if self.text_search else
                   "recalls by vector similarity (the store has no full-text search)")
        if not self.rewrite_deletes_first:
            can.append("changes a memory in one write")
        elif self.filters_uuid:
            can.append("changes a memory by writing the new row under its second key, then deleting the "
                       "old row (a failure in between leaves two rows; reads keep the newer)")
        else:
            can.append("changes a memory by deleting the old row, then writing the new one (a lost answer "
                       "in between pauses the space until an admin checks it)")
        return StoreProfile(kind, supported=not problems and self.single_delete, can=tuple(can),
                            cannot=tuple(cannot))


def unit_vector(dimension: int) -> list[float]:
    return [1.0] + [0.0] * (dimension - 1)
