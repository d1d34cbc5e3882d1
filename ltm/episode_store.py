"""Scoped access to L2 records in the host vector store (SPEC S5, E1-E3).

Every filter sent to the host has exactly one top-level key with one operator,
the only form that works on both Chroma and Qdrant through LangBot. Every record
that comes back is re-checked against the caller's `user_key` before it leaves
this module, so a backend that drops filters (Milvus, pgvector) fails closed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from .episodes import Episode, scoped_record_id, speaker_key
from .host_port import HostPort

log = logging.getLogger("LongTermMemory")

LIST_BATCH = 200
MAX_ENUMERATED = 20000  # management listings stop here and say so
EMBED_BATCH = 32
UPSERT_BATCH = 64


@dataclass(frozen=True)
class Hit:
    episode: Episode
    distance: float


@dataclass(frozen=True)
class Enumeration:
    episodes: list[Episode]
    truncated: bool


def _in_scope(meta: Any, user_key: str) -> bool:
    return isinstance(meta, dict) and meta.get("user_key") == user_key


class EpisodeStore:
    def __init__(self, port: HostPort):
        self._port = port

    async def embed(self, model_uuid: str, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), EMBED_BATCH):
            batch = texts[start : start + EMBED_BATCH]
            got = await self._port.embed(model_uuid, batch)
            if len(got) != len(batch):
                raise ValueError("embedding model returned a different number of vectors")
            vectors.extend(got)
        return vectors

    async def get(self, kb_id: str, user_key: str, episode_id: str) -> Episode | None:
        listing = await self._port.vector_list(
            kb_id, {"file_id": scoped_record_id(user_key, episode_id)}, limit=2, offset=0
        )
        for item in listing.get("items") or []:
            meta = item.get("metadata")
            if _in_scope(meta, user_key) and meta.get("episode_id") == episode_id:
                return Episode.from_metadata(meta)
        return None

    async def search(
        self, kb_id: str, user_key: str, vector: list[float], *, top_k: int,
        sender_id: str = "", search_type: str = "vector", query_text: str = "",
    ) -> list[Hit]:
        """One host search on the whole space, or on one speaker inside it."""
        filters = {"speaker_key": speaker_key(user_key, sender_id)} if sender_id else {"user_key": user_key}
        rows = await self._port.vector_search(
            kb_id, vector, top_k, filters, search_type=search_type, query_text=query_text
        )
        hits: list[Hit] = []
        dropped = 0
        for row in rows or []:
            meta = row.get("metadata")
            if not _in_scope(meta, user_key):
                dropped += 1
                continue
            hits.append(Hit(Episode.from_metadata(meta), float(row.get("distance") or 0.0)))
        if dropped:
            log.warning(
                "[LongTermMemory] vector search returned %d record(s) outside the scope; dropped (backend filter leak?)",
                dropped,
            )
        log.info(
            "[LongTermMemory] vector search kb=%s filter=%s type=%s results=%d",
            kb_id, next(iter(filters)), search_type, len(hits),
        )
        return hits

    async def enumerate(self, kb_id: str, user_key: str, limit: int | None = None) -> Enumeration:
        """Every record of one space (management paths only, never per turn), up to `limit`."""
        limit = limit or MAX_ENUMERATED
        episodes: list[Episode] = []
        offset = 0
        while len(episodes) < limit:
            batch = LIST_BATCH
            listing = await self._port.vector_list(kb_id, {"user_key": user_key}, limit=batch, offset=offset)
            items = listing.get("items") or []
            for item in items:
                meta = item.get("metadata")
                if _in_scope(meta, user_key):
                    episodes.append(Episode.from_metadata(meta))
            if len(items) < batch:
                return Enumeration(episodes, truncated=False)
            offset += batch
        return Enumeration(episodes[:limit], truncated=True)

    async def upsert(self, kb_id: str, episodes: list[Episode], vectors: list[list[float]]) -> None:
        for start in range(0, len(episodes), UPSERT_BATCH):
            batch = episodes[start : start + UPSERT_BATCH]
            await self._port.vector_upsert(
                kb_id,
                ids=[e.episode_id for e in batch],
                vectors=vectors[start : start + UPSERT_BATCH],
                metadatas=[e.to_metadata() for e in batch],
                documents=[e.content for e in batch],
            )
        log.info("[LongTermMemory] vector write kb=%s records=%d", kb_id, len(episodes))

    async def delete(self, kb_id: str, user_key: str, episode_ids: list[str]) -> None:
        """Delete by packed file_id: an id from another space cannot match anything here."""
        if not episode_ids:
            return
        await self._port.vector_delete(kb_id, file_ids=[scoped_record_id(user_key, i) for i in episode_ids])
        log.info("[LongTermMemory] vector delete kb=%s records=%d", kb_id, len(episode_ids))

    async def delete_collection_records(self, kb_id: str) -> None:
        await self._port.vector_delete(kb_id, filters={"_langbot_knowledge_base_uuid": kb_id})
