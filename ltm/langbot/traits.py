"""What the probe learned about a LangBot vector store (`Traits`, `store_probe.py`), and how the health
report says it. The policies that drive the store are chosen from these once (`policies/choose.py`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..ports import StoreProfile
from ..wording import Phrase, Said
from .policies.keyed_read import SCAN_LIMIT
from .policies.speaker import SPEAKER_OVERFETCH, SPEAKER_OVERFETCH_MAX


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
    # A store that counts every filtered list (its `total`) passes over the filter twice per list; its
    # keyed reads go through one search filtered on the keys instead, when that search honours them.
    keyed_by_search: bool = False

    @property
    def rewrite_deletes_first(self) -> bool:
        """A store that keeps only text/file_id/uuid (Milvus inserts; pgvector would not need it but
        cannot be told apart reliably) or that kept both rows of a rewrite."""
        return not self.keeps_metadata or not self.replaces

    def profile(self, problems: Sequence[str]) -> StoreProfile:
        if self.keeps_metadata and self.filters_metadata:
            kind = _SAYS["kind.metadata"]()
        elif self.keeps_metadata:
            kind = _SAYS["kind.file_id_filter"]()
        elif self.similarity:
            kind = _SAYS["kind.fixed_similarity"]()
        else:
            kind = _SAYS["kind.fixed_distance"]()
        can = [_SAYS["can.isolate"]()]
        cannot: list[Said] = []
        can.append(_SAYS["can.speaker_filter"]() if self.filters_metadata else
                   _SAYS["can.speaker_overfetch"](factor=SPEAKER_OVERFETCH, most=SPEAKER_OVERFETCH_MAX))
        if self.filters_uuid:
            can.append(_SAYS["can.open_by_key"]())
        else:
            cannot.append(_SAYS["cannot.open_by_key"](limit=f"{SCAN_LIMIT:,}"))
            if self.single_delete:
                can.append(_SAYS["can.delete_by_graveyard"]())
        if not self.single_delete:
            cannot.append(_SAYS["cannot.delete_one"]())
        can.append(_SAYS["can.full_text"]() if self.text_search else _SAYS["can.vector_only"]())
        if not self.rewrite_deletes_first:
            can.append(_SAYS["can.rewrite_one_write"]())
        elif self.filters_uuid:
            can.append(_SAYS["can.rewrite_second_key"]())
        else:
            can.append(_SAYS["can.rewrite_delete_first"]())
        return StoreProfile(kind, supported=not problems and self.single_delete, can=tuple(can),
                            cannot=tuple(cannot))


# What the health report says about a store, by code (ltm/wording.py).
_SAYS = {key: Phrase(f"store.{key}", english) for key, english in {
    "kind.metadata": "keeps and filters plugin metadata (like Chroma, Qdrant or SeekDB)",
    "kind.file_id_filter": "keeps plugin metadata but filters on file_id only (like Valkey Search)",
    "kind.fixed_similarity": "fixed schema (text, file_id, uuid), scores by similarity (like Milvus)",
    "kind.fixed_distance": "fixed schema (text, file_id, uuid), scores by distance (like pgvector)",
    "can.isolate": "isolates every memory space on file_id",
    "can.speaker_filter": "speaker-first recall by filter",
    "can.speaker_overfetch": "speaker-first recall from the space's best {factor}x matches (at most {most})",
    "can.open_by_key": "opens and deletes one memory by its key",
    "cannot.open_by_key": "open one memory by its key: it scans the memory's space (up to {limit} records), so "
                          "show/forget/archive slow down as a space grows",
    "can.delete_by_graveyard": "deletes one memory by moving it to its space's graveyard, then deleting that "
                               "(two writes)",
    "cannot.delete_one": "delete one memory: forget and single deletes are refused; deleting a whole scope and "
                         "archiving still work",
    "can.full_text": "widens recall with the store's full-text matches",
    "can.vector_only": "recalls by vector similarity (the store has no full-text search)",
    "can.rewrite_one_write": "changes a memory in one write",
    "can.rewrite_second_key": "changes a memory by writing the new row under its second key, then deleting the "
                              "old row (a failure in between leaves two rows; reads keep the newer)",
    "can.rewrite_delete_first": "changes a memory by deleting the old row, then writing the new one (a lost "
                                "answer in between pauses the space until an admin checks it)",
}.items()}
