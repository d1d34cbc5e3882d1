"""What a LangBot vector store can do, learned by probing it with two throwaway records.

`StoreProbing` is the probing half of `HostVectorIndex` (`vector_index.py`): the first call
on a collection in a process, the KB's creation and every health check write two records in two
throwaway spaces, watch what the store does with them and keep the result (`Traits`). The row
calls it uses are the index's own (declared here, implemented there).
"""

from __future__ import annotations

import abc
import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Sequence
from typing import Any

from ..errors import HostError, OutcomeUnknown
from ..ports import PROBE_TEXT, IndexRecord, StoreProfile, Vector
from ..wording import Phrase, Said
from . import layout

log = logging.getLogger("LongTermMemory")

# A word that is not in PROBE_TEXT: a store that answers full-text searches by text finds nothing for it.
_ABSENT_WORD = "qzxvwk"
# A store that indexes vectors in the background (SeekDB: a new row reaches search 0.2-1.5 s after its
# write, docs/HOST-FACTS.md 12) is asked again, this often, for this long, before the probe calls the
# record missing from search.
INDEX_POLL_S = 0.25
INDEX_WAIT_S = 6.0

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


class StoreProbing(abc.ABC):
    _traits: dict[str, Traits]
    _problems: dict[str, list[str]]
    _dims: dict[str, int]
    _probing: dict[str, asyncio.Lock]

    # The index's raw host calls (vector_index.py).
    @abc.abstractmethod
    async def _upsert_rows(self, collection: str, records: Sequence[IndexRecord], vectors: Sequence[Vector], *,
                           gone: bool = False, alt: Sequence[bool] | None = None) -> None: ...

    @abc.abstractmethod
    async def _search_rows(self, collection: str, vector: Vector, top_k: int, filters: dict[str, Any],
                           search_type: str = "vector", query_text: str = "") -> list[dict[str, Any]]: ...

    @abc.abstractmethod
    async def _list_rows(self, collection: str, filters: dict[str, Any] | None, limit: int, offset: int
                         ) -> list[dict[str, Any]]: ...

    @abc.abstractmethod
    async def _list_counted(self, collection: str, filters: dict[str, Any] | None, limit: int, offset: int
                            ) -> tuple[list[dict[str, Any]], int]: ...

    @abc.abstractmethod
    async def _delete_rows(self, collection: str, *, file_ids: list[str] | None = None,
                           filters: dict[str, Any] | None = None) -> None: ...

    @abc.abstractmethod
    async def _delete_records(self, collection: str, traits: Traits, space: str, record_ids: Sequence[str]
                              ) -> None: ...

    @staticmethod
    @abc.abstractmethod
    def _meta(row: dict[str, Any]) -> Any: ...

    # ------------------------------------------------------------------ what the store can do
    async def _traits_for(self, collection: str, vector: Vector) -> Traits:
        traits = self._traits.get(collection)
        if traits is not None:
            return traits
        async with self._probing.setdefault(collection, asyncio.Lock()):  # one probe for concurrent first calls
            traits = self._traits.get(collection)
            if traits is None:
                traits, problems = await self._probe(collection, vector)
                if traits is None:
                    raise HostError("the vector store could not be probed: " + "; ".join(problems))
        return traits

    async def prepare(self, collection: str, vector: Vector) -> StoreProfile:
        """Probe a new collection; raises HostError when the probe could not run (on Milvus the first
        call fixes a collection's dimension, so a KB whose first write failed must not be kept)."""
        traits, problems = await self._probe(collection, vector)
        if traits is None:
            raise HostError("the vector store could not be probed: " + "; ".join(problems))
        return traits.profile(problems)

    def profile(self, collection: str) -> StoreProfile | None:
        traits = self._traits.get(collection)
        return traits.profile(self._problems.get(collection, [])) if traits is not None else None

    async def probe_isolation(self, collection: str, vector: Vector) -> list[str]:
        """Two archived probe records in two fresh spaces, asked with exactly the filters and deletes
        the plugin uses: any way one space saw or removed the other is reported (empty: isolated)."""
        _, problems = await self._probe(collection, vector)
        return problems

    async def _probe(self, collection: str, vector: Vector) -> tuple[Traits | None, list[str]]:
        run = uuid.uuid4().hex[:12]
        a, b = (IndexRecord(rid, f"health-probe:{run}:{side}", f"probe-{side}", PROBE_TEXT,
                            {"episode_id": rid, "content": PROBE_TEXT, "status": "archived", "source": "health_probe",
                             "status_changed_at": "0"})
                for rid, side in ((str(uuid.uuid4()), "a"), (str(uuid.uuid4()), "b")))
        id_a, id_b = layout.host_id(a.space, a.record_id), layout.host_id(b.space, b.record_id)
        problems: list[str] = []
        traits: Traits | None = None
        try:
            await self._upsert_rows(collection, [a, b], [vector, vector])
            rows = await self._search_indexed(collection, vector, layout.space_filter(a.space), id_a)
            if id_b in {str(r.get("id")) for r in rows}:
                problems.append("search filtered on one scope returned another scope's record")
            mine = [r for r in rows if str(r.get("id")) == id_a]
            if not mine:
                problems.append("search filtered on a scope did not return that scope's record")
            similarity = bool(mine) and float(mine[0].get("distance") or 0.0) > 0.5
            items = await self._list_rows(collection, layout.space_filter(a.space), 10, 0)
            if id_b in {str(i.get("id")) for i in items}:
                problems.append("list filtered on one scope returned another scope's record")
            item_a = next((i for i in items if str(i.get("id")) == id_a), None)
            meta_a = self._meta(item_a) if item_a is not None else None
            if layout.from_metadata(meta_a, a.space) is None:
                problems.append("the store did not keep the record's text, file_id and uuid")
            keeps = isinstance(meta_a, dict) and meta_a.get("user_key") == a.space
            by_speaker = await self._list_rows(collection, layout.speaker_filter(a.space, a.speaker), 10, 0)
            filters_metadata = keeps and {str(i.get("id")) for i in by_speaker} == {id_a}
            by_key, counted = await self._list_counted(collection, layout.keys_filter(b.space, [b.record_id]), 10, 0)
            filters_uuid = {str(i.get("id")) for i in by_key} == {id_b}
            keyed_by_search = filters_uuid and counted >= 0 and {str(r.get("id")) for r in await self._search_rows(
                collection, vector, 10, layout.keys_filter(b.space, [b.record_id]))} == {id_b}
            rewritten = dataclasses.replace(a, fields={**a.fields, "status_changed_at": "1"})
            await self._upsert_rows(collection, [rewritten], [vector])
            again = await self._list_rows(collection, layout.space_filter(a.space), 10, 0)
            replaces = sum(1 for i in again if str(i.get("id")) == id_a) == 1
            text_search = await self._probe_text_search(collection, a.space, id_a, vector)
            traits = Traits(keeps, filters_metadata, filters_uuid, similarity, replaces, False, len(vector),
                            text_search, keyed_by_search)
            await self._delete_records(collection, traits, a.space, [a.record_id])
            left_a = await self._list_rows(collection, layout.space_filter(a.space), 10, 0)
            left_b = await self._list_rows(collection, layout.space_filter(b.space), 10, 0)
            if id_b not in {str(i.get("id")) for i in left_b}:
                problems.append("deleting one scope's record removed another scope's record")
            traits = dataclasses.replace(traits, single_delete=id_a not in {str(i.get("id")) for i in left_a})
            await self._delete_rows(collection, file_ids=[layout.space_token(a.space)])
            if id_b not in {str(i.get("id")) for i in await self._list_rows(
                    collection, layout.space_filter(b.space), 10, 0)}:
                problems.append("deleting one scope removed another scope's record")
        except (HostError, OutcomeUnknown) as exc:
            problems.append(f"probe failed: {exc}")
            traits = None
        finally:
            try:
                await self._delete_rows(collection, file_ids=[
                    layout.space_token(a.space), layout.space_token(b.space),
                    layout.gone_token(a.space), layout.gone_token(b.space)])
            except (HostError, OutcomeUnknown):
                problems.append("probe records could not be removed")
        if traits is not None:
            self._traits[collection] = traits
            self._problems[collection] = problems
            self._dims[collection] = len(vector)
            log.info("[LongTermMemory] vector store of kb=%s: %s; problems=%d", collection,
                     traits.profile(problems).kind, len(problems))
        return traits, problems

    async def _search_indexed(self, collection: str, vector: Vector, filters: dict[str, Any], host_id: str
                              ) -> list[dict[str, Any]]:
        """The probe's filtered search, asked again while `host_id` (written just before) is not in it yet,
        up to INDEX_WAIT_S: a store that indexes in the background is not a store that loses the row."""
        rows = await self._search_rows(collection, vector, 10, filters)
        waited = 0.0
        while all(str(r.get("id")) != host_id for r in rows) and waited < INDEX_WAIT_S:
            await asyncio.sleep(INDEX_POLL_S)
            waited += INDEX_POLL_S
            rows = await self._search_rows(collection, vector, 10, filters)
        return rows

    async def _probe_text_search(self, collection: str, space: str, host_id: str, vector: Vector) -> bool:
        """A full-text search for the probe's text with the opposite vector, then one for a word the record
        does not hold: a store that answers by text returns the record to the first only (Chroma at
        distance 0, SeekDB at one minus its relevance, so the distance cannot tell); one that ignores the
        mode answers by vector and returns it to both (Qdrant, Milvus); pgvector refuses the mode."""
        opposite = [-x for x in vector]
        try:
            rows = await self._search_rows(collection, opposite, 5, layout.space_filter(space),
                                           search_type="full_text", query_text=PROBE_TEXT)
            if all(str(r.get("id")) != host_id for r in rows):
                return False
            absent = await self._search_rows(collection, opposite, 5, layout.space_filter(space),
                                             search_type="full_text", query_text=_ABSENT_WORD)
        except HostError:
            return False
        return all(str(r.get("id")) != host_id for r in absent)
