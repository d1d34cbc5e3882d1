"""What a LangBot vector store can do, learned by probing it with two throwaway records.

The first call on a collection in a process, the KB's creation and every health check write two
records in two throwaway spaces, watch what the store does with them and answer the result
(`Traits`, `traits.py`) with the problems seen; `HostVectorIndex` (`vector_index.py`) keeps it and
chooses the store's policies from it. The probe deletes with the delete policy those traits choose,
so the delete it checks is the one the plugin will use.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from typing import Any

from ..errors import HostError, OutcomeUnknown
from ..ports import PROBE_TEXT, IndexRecord, Vector
from . import layout
from .host_rows import HostRows, Row, meta
from .policies.choose import choose
from .traits import Traits

# A word that is not in PROBE_TEXT: a store that answers full-text searches by text finds nothing for it.
_ABSENT_WORD = "qzxvwk"
# A store that indexes vectors in the background (SeekDB: a new row reaches search 0.2-1.5 s after its
# write, docs/HOST-FACTS.md 12) is asked again, this often, for this long, before the probe calls the
# record missing from search.
INDEX_POLL_S = 0.25
INDEX_WAIT_S = 6.0


def _ids(rows: list[Row]) -> set[str]:
    return {str(r.get("id")) for r in rows}


async def probe(rows: HostRows, collection: str, vector: Vector) -> tuple[Traits | None, list[str]]:
    """The store's traits (None: the probe could not run) and every way one space saw or removed the
    other, asked with exactly the filters and deletes the plugin uses (empty: isolated)."""
    writer = rows.writer()
    run = uuid.uuid4().hex[:12]
    a, b = (IndexRecord(rid, f"health-probe:{run}:{side}", f"probe-{side}", PROBE_TEXT,
                        {"episode_id": rid, "content": PROBE_TEXT, "status": "archived", "source": "health_probe",
                         "status_changed_at": "0"})
            for rid, side in ((str(uuid.uuid4()), "a"), (str(uuid.uuid4()), "b")))
    id_a, id_b = layout.host_id(a.space_key, a.record_id), layout.host_id(b.space_key, b.record_id)
    problems: list[str] = []
    traits: Traits | None = None
    try:
        await writer.upsert(collection, [a, b], [vector, vector])
        found = await _search_indexed(rows, collection, vector, layout.space_filter(a.space_key), id_a)
        if id_b in _ids(found):
            problems.append("search filtered on one scope returned another scope's record")
        mine = [r for r in found if str(r.get("id")) == id_a]
        if not mine:
            problems.append("search filtered on a scope did not return that scope's record")
        similarity = bool(mine) and float(mine[0].get("distance") or 0.0) > 0.5
        items = await rows.list_rows(collection, layout.space_filter(a.space_key), 10, 0)
        if id_b in _ids(items):
            problems.append("list filtered on one scope returned another scope's record")
        item_a = next((i for i in items if str(i.get("id")) == id_a), None)
        meta_a = meta(item_a) if item_a is not None else None
        if layout.from_metadata(meta_a, a.space_key) is None:
            problems.append("the store did not keep the record's text, file_id and uuid")
        keeps = isinstance(meta_a, dict) and meta_a.get("user_key") == a.space_key
        by_speaker = await rows.list_rows(collection, layout.speaker_filter(a.space_key, a.speaker), 10, 0)
        filters_metadata = keeps and _ids(by_speaker) == {id_a}
        by_key, counted = await rows.list_counted(collection, layout.keys_filter(b.space_key, [b.record_id]), 10, 0)
        filters_uuid = _ids(by_key) == {id_b}
        keyed_by_search = filters_uuid and counted >= 0 and _ids(await rows.search(
            collection, vector, 10, layout.keys_filter(b.space_key, [b.record_id]))) == {id_b}
        rewritten = dataclasses.replace(a, fields={**a.fields, "status_changed_at": "1"})
        await writer.upsert(collection, [rewritten], [vector])
        again = await rows.list_rows(collection, layout.space_filter(a.space_key), 10, 0)
        replaces = sum(1 for i in again if str(i.get("id")) == id_a) == 1
        text_search = await _probe_text_search(rows, collection, a.space_key, id_a, vector)
        traits = Traits(keeps, filters_metadata, filters_uuid, similarity, replaces, False, len(vector),
                        text_search, keyed_by_search)
        await choose(traits, rows).delete.delete(writer, collection, a.space_key, [a.record_id])
        left_a = await rows.list_rows(collection, layout.space_filter(a.space_key), 10, 0)
        left_b = await rows.list_rows(collection, layout.space_filter(b.space_key), 10, 0)
        if id_b not in _ids(left_b):
            problems.append("deleting one scope's record removed another scope's record")
        traits = dataclasses.replace(traits, single_delete=id_a not in _ids(left_a))
        await writer.delete(collection, file_ids=[layout.space_token(a.space_key)])
        if id_b not in _ids(await rows.list_rows(collection, layout.space_filter(b.space_key), 10, 0)):
            problems.append("deleting one scope removed another scope's record")
    except (HostError, OutcomeUnknown) as exc:
        problems.append(f"probe failed: {exc}")
        traits = None
    finally:
        try:
            await writer.delete(collection, file_ids=[
                layout.space_token(a.space_key), layout.space_token(b.space_key),
                layout.gone_token(a.space_key), layout.gone_token(b.space_key)])
        except (HostError, OutcomeUnknown):
            problems.append("probe records could not be removed")
    return traits, problems


async def _search_indexed(rows: HostRows, collection: str, vector: Vector, filters: dict[str, Any], host_id: str
                          ) -> list[Row]:
    """The probe's filtered search, asked again while `host_id` (written just before) is not in it yet,
    up to INDEX_WAIT_S: a store that indexes in the background is not a store that loses the row."""
    found = await rows.search(collection, vector, 10, filters)
    waited = 0.0
    while host_id not in _ids(found) and waited < INDEX_WAIT_S:
        await asyncio.sleep(INDEX_POLL_S)
        waited += INDEX_POLL_S
        found = await rows.search(collection, vector, 10, filters)
    return found


async def _probe_text_search(rows: HostRows, collection: str, space: str, host_id: str, vector: Vector) -> bool:
    """A full-text search for the probe's text with the opposite vector, then one for a word the record
    does not hold: a store that answers by text returns the record to the first only (Chroma at
    distance 0, SeekDB at one minus its relevance, so the distance cannot tell); one that ignores the
    mode answers by vector and returns it to both (Qdrant, Milvus); pgvector refuses the mode."""
    opposite = [-x for x in vector]
    try:
        found = await rows.search(collection, opposite, 5, layout.space_filter(space),
                                  search_type="full_text", query_text=PROBE_TEXT)
        if host_id not in _ids(found):
            return False
        absent = await rows.search(collection, opposite, 5, layout.space_filter(space),
                                   search_type="full_text", query_text=_ABSENT_WORD)
    except HostError:
        return False
    return host_id not in _ids(absent)
