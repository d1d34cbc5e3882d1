"""How a search row's score reads: every `IndexHit.distance` the adapter hands on is lower-is-better."""

from __future__ import annotations

from ..host_rows import Row


class Distance:
    """The store answers a distance (Chroma's squared L2, Qdrant's and pgvector's 1 - cosine)."""

    def __call__(self, row: Row) -> float:
        return float(row.get("distance") or 0.0)


class Similarity:
    """The store answers a similarity, higher is better (Milvus's raw cosine): turned into 1 - similarity."""

    def __call__(self, row: Row) -> float:
        return 1.0 - float(row.get("distance") or 0.0)
