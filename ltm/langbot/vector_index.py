"""The vector index port over LangBot's vector API, on every backend LangBot 4.11.2 ships.

Records sit in the store as `layout` describes: the space in `file_id` (the one field
every backend keeps and filters), the record in `text`. What differs per backend is
learned, not assumed from a name (docs/HOST-FACTS.md 12): once per collection and
process the index writes two throwaway records in two throwaway spaces and watches
what the store does with them (`store_probe.py`). It learns whether the store

- keeps plugin metadata and filters on it (then "this speaker in this space" is one
  filter; otherwise the speaker's records are taken from an over-fetched space search),
- filters on `uuid` (then one record is read and deleted by its key; otherwise it is
  read by scanning its space, and deleted by moving it into the space's graveyard
  `file_id` and deleting that),
- answers similarities rather than distances (Milvus: higher is better; turned into
  `1 - similarity` here, so every `IndexHit.distance` is lower-is-better),
- replaces a record written again (otherwise a rewrite deletes the old row first).

From what it learned the index chooses the store's policies once (`policies/choose.py`)
and only calls them: no method here asks a trait. The probe runs when the knowledge base
is created (so the first call on a new collection is a write of real vectors: Milvus
would otherwise create it with 1536 dimensions), at every health check, and otherwise
before the first search or write of a process. Every record read back is checked for
its space (fail closed).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from ..errors import HostError
from ..ports import IndexHit, IndexPage, IndexRecord, StoreProfile, Vector
from ..spaces import L2Space
from . import layout
from .host_rows import HostRows, hits, meta, records
from .policies.choose import Policies, choose, store_profile, unprobed
from .store_probe import probe
from .traits import Traits

log = logging.getLogger("LongTermMemory")

DROP_ROUNDS = 400


class HostVectorIndex:
    """VectorIndex (and the optional `DescribedIndex`, and the layout migration's `LegacyIndex`) over the host's API."""

    def __init__(self, plugin: object) -> None:
        self._rows = HostRows(plugin)
        self._traits: dict[str, Traits] = {}
        self._problems: dict[str, list[str]] = {}
        self._policies: dict[str, Policies] = {}
        self._unprobed = unprobed(self._rows)
        self._probing: dict[str, asyncio.Lock] = {}

    # ------------------------------------------------------------------ what the store can do
    def adopt(self, collection: str, traits: Traits, problems: Sequence[str] = ()) -> None:
        """Drive `collection` as a store with these traits (what the probe learned; a benchmark may
        hand in others to measure a policy on a store that would not choose it)."""
        self._traits[collection] = traits
        self._problems[collection] = list(problems)
        self._policies[collection] = choose(traits, self._rows)

    def traits(self, collection: str) -> Traits | None:
        return self._traits.get(collection)

    async def _probe(self, collection: str, vector: Vector) -> tuple[Traits | None, list[str]]:
        traits, problems = await probe(self._rows, collection, vector)
        if traits is not None:
            self.adopt(collection, traits, problems)
            self._rows.seen(collection, len(vector))
            log.info("[LongTermMemory] vector store of kb=%s: %s; problems=%d", collection,
                     traits.kind, len(problems))
        return traits, problems

    async def _store(self, collection: str, vector: Vector) -> Policies:
        """The collection's policies, probing it first if this process has not yet."""
        policies = self._policies.get(collection)
        if policies is not None:
            return policies
        async with self._probing.setdefault(collection, asyncio.Lock()):  # one probe for concurrent first calls
            if collection not in self._policies:
                traits, problems = await self._probe(collection, vector)
                if traits is None:
                    raise HostError("the vector store could not be probed: " + "; ".join(problems))
        return self._policies[collection]

    async def prepare(self, kb_id: str, vector: Vector) -> StoreProfile:
        """Probe a new collection; raises HostError when the probe could not run (on Milvus the first
        call fixes a collection's dimension, so a KB whose first write failed must not be kept)."""
        traits, problems = await self._probe(kb_id, vector)
        if traits is None:
            raise HostError("the vector store could not be probed: " + "; ".join(problems))
        return store_profile(traits, self._policies[kb_id], problems)

    def profile(self, kb_id: str) -> StoreProfile | None:
        traits = self._traits.get(kb_id)
        return store_profile(traits, self._policies[kb_id], self._problems.get(kb_id, [])) \
            if traits is not None else None

    async def probe_isolation(self, kb_id: str, vector: Vector) -> list[str]:
        """Two archived probe records in two fresh spaces, asked with exactly the filters and deletes
        the plugin uses: any way one space saw or removed the other is reported (empty: isolated)."""
        _, problems = await self._probe(kb_id, vector)
        return problems

    # ------------------------------------------------------------------ reads
    # The core's `L2Space` becomes the host's names here: the KB is the collection, the space key is
    # what `layout` turns into the `file_id` filter.
    async def search(self, space: L2Space, vector: Vector, top_k: int, *,
                     speaker: str | None = None) -> list[IndexHit]:
        collection, key = space.kb_id, space.space_key
        store = await self._store(collection, vector)
        filters, asked = store.speaker.ask(key, speaker, top_k) if speaker else (layout.space_filter(key), top_k)
        found = hits(await self._rows.search(collection, vector, asked, filters), key, store.score)
        if speaker:
            found = [h for h in found if (r := h.record) is not None and r.speaker == speaker][:top_k]
        log.info("[LongTermMemory] vector search kb=%s filter=%s results=%d", collection,
                 "speaker" if speaker else "space", len(found))
        return found

    async def search_text(self, space: L2Space, text: str, vector: Vector, top_k: int) -> list[IndexHit] | None:
        """The store's full-text matches, or None where it has no full-text search (the caller then
        uses vectors only; `policies/text_search.py`)."""
        store = await self._store(space.kb_id, vector)
        return await store.text.search(space.kb_id, space.space_key, text, vector, top_k)

    async def _find(self, space: L2Space, record_ids: Sequence[str], *, complete: bool = False
                    ) -> dict[str, IndexRecord]:
        wanted = set(record_ids)
        if not wanted:
            return {}
        read = self._policies.get(space.kb_id, self._unprobed).read
        return await read.find(space.kb_id, space.space_key, wanted, complete=complete)

    async def get(self, space: L2Space, record_id: str) -> IndexRecord | None:
        found = await self._find(space, [record_id])
        return found.get(record_id)

    async def get_many(self, space: L2Space, record_ids: Sequence[str]) -> list[IndexRecord]:
        found = await self._find(space, record_ids, complete=True)
        return [found[r] for r in dict.fromkeys(record_ids) if r in found]

    async def present(self, space: L2Space, record_ids: Sequence[str]) -> set[str]:
        return set(await self._find(space, record_ids))

    async def page(self, space: L2Space, limit: int, offset: int) -> IndexPage:
        rows = await self._rows.list_rows(space.kb_id, layout.space_filter(space.space_key), limit, offset)
        return IndexPage(records(rows, space.space_key), more=len(rows) >= limit)

    # ------------------------------------------------------------------ writes
    async def upsert(self, space: L2Space, records: Sequence[IndexRecord], vectors: Sequence[Vector]) -> None:
        """Write records of one space, rewriting the ones already there the way the store allows
        (`policies/rewrite.py`)."""
        if any(r.space_key != space.space_key for r in records):
            raise ValueError("a vector write holds records of one space only")
        if not records:
            return
        writer = self._rows.writer()
        store = await self._store(space.kb_id, vectors[0])
        await store.rewrite.write(writer, space.kb_id, space.space_key, records, vectors)

    async def delete(self, space: L2Space, record_ids: Sequence[str]) -> None:
        if not record_ids:
            return
        writer = self._rows.writer()
        delete = self._policies.get(space.kb_id, self._unprobed).delete
        await delete.delete(writer, space.kb_id, space.space_key, record_ids)

    async def drop_kb(self, kb_id: str) -> None:
        """Every record of the memory KB (the host's collection of that id): by the host's KB key where
        the store filters on metadata, then by every `file_id` still listed (the one field every store
        deletes by)."""
        collection = kb_id
        writer = self._rows.writer()
        await writer.delete(collection, filters=layout.collection_filter(collection))
        seen: set[str] = set()
        for _ in range(DROP_ROUNDS):
            rows = await self._rows.list_rows(collection, None, 500, 0)
            file_ids = sorted({str((meta(r) or {}).get("file_id") or "") for r in rows} - {""} - seen)
            file_ids = [f for f in file_ids if layout.legacy_deletable(f)]
            if not file_ids:
                return
            seen.update(file_ids)
            await writer.delete(collection, file_ids=file_ids)

    # ------------------------------------------------------------------ layout migration
    async def legacy_page(self, kb_id: str, limit: int, offset: int) -> layout.LegacyPage:
        rows = await self._rows.list_rows(kb_id, None, limit, offset)
        found = [layout.legacy_record(meta(r), str(r.get("id") or "")) for r in rows]
        return layout.LegacyPage([f for f in found if f is not None], scanned=len(rows), more=len(rows) >= limit)

    async def delete_legacy(self, kb_id: str, keys: Sequence[str]) -> None:
        safe = [k for k in keys if layout.legacy_deletable(k)]
        if len(safe) != len(keys):
            log.warning("[LongTermMemory] %d old-layout record(s) in kb=%s have a file_id that cannot be deleted "
                        "safely (quote or backslash); left in place", len(keys) - len(safe), kb_id)
        if safe:
            await self._rows.writer().delete(kb_id, file_ids=safe)
