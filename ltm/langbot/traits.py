"""What the probe learned about a LangBot vector store (`Traits`, `store_probe.py`), and the kind of store
the health report names. The policies that drive the store are chosen from these once, and the rest of
the report is theirs (`policies/choose.py`)."""

from __future__ import annotations

import dataclasses

from ..wording import Phrase, Said


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

    @property
    def kind(self) -> Said:
        """What sort of store it is, as the health report names it (what it does: `store_profile`)."""
        if self.keeps_metadata and self.filters_metadata:
            return _KINDS["kind.metadata"]()
        if self.keeps_metadata:
            return _KINDS["kind.file_id_filter"]()
        return _KINDS["kind.fixed_similarity"]() if self.similarity else _KINDS["kind.fixed_distance"]()


# The kinds of store the health report names, by code (ltm/wording.py).
_KINDS = {key: Phrase(f"store.{key}", english) for key, english in {
    "kind.metadata": "keeps and filters plugin metadata (like Chroma, Qdrant or SeekDB)",
    "kind.file_id_filter": "keeps plugin metadata but filters on file_id only (like Valkey Search)",
    "kind.fixed_similarity": "fixed schema (text, file_id, uuid), scores by similarity (like Milvus)",
    "kind.fixed_distance": "fixed schema (text, file_id, uuid), scores by distance (like pgvector)",
}.items()}
