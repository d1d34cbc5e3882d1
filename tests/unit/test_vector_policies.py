"""The vector adapter as policies (issue 32, point 5): a store's behaviour is chosen once from its probed
traits (`ltm/langbot/policies/choose.py`), row writes leave only through the row writer, which counts
each one before it is sent, and the rewrite no test-host store chooses (delete first) still writes the
old row back when the store refuses the new one.

The plugin here is the SDK's vector calls over one in-memory store of the test host (`testhost/vectors/`),
its refusals raised as the SDK raises them; no LangBot, no database.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from langbot_plugin.api.proxies.langbot_api import LangBotAPIProxy
from langbot_plugin.entities.io.errors import ActionCallError

from ltm.errors import HostError, OutcomeUnknown
from ltm.langbot.host_rows import HostRows
from ltm.langbot.policies import delete, keyed_read, rewrite, scores, speaker, text_search
from ltm.langbot.policies.choose import choose
from ltm.langbot.traits import Traits
from ltm.langbot.vector_index import HostVectorIndex
from ltm.ports import IndexRecord, WriteProbe, stop_watching, watch_writes
from ltm.spaces import L2Space
from testhost.vectors import make_backend

ROOT = Path(__file__).resolve().parents[2]
KB = "lb_kb1"
SPACE = "group:g1"
L2 = L2Space(KB, SPACE)
DIM = 8


class _Plugin:
    """The plugin's vector calls over a test-host store; `uuid_filter=False` makes a store that ignores
    the `uuid` filter key, `refused` the upserts (counted from 1) the store refuses."""

    def __init__(self, store: str = "fixed", *, uuid_filter: bool = True) -> None:
        self.store = make_backend(store)
        self.uuid_filter = uuid_filter
        self.refused: set[int] = set()
        self.upserts = 0
        self.watched: WriteProbe | None = None
        self.counted_at_arrival: list[int] = []

    def _filters(self, filters: dict[str, Any] | None) -> dict[str, Any] | None:
        return filters if self.uuid_filter or not filters else {k: v for k, v in filters.items() if k != "uuid"}

    def _arrived(self) -> None:
        if self.watched is not None:
            self.counted_at_arrival.append(self.watched.sent)

    async def vector_upsert(self, collection_id: str, vectors: list[list[float]], ids: list[str],
                            metadata: list[dict[str, Any]], documents: list[str]) -> None:
        self._arrived()
        self.upserts += 1
        if self.upserts in self.refused:
            raise ActionCallError("the store refused the write")
        await self.store.upsert(collection_id, ids, vectors, metadata, documents)

    async def vector_delete(self, collection_id: str, file_ids: list[str] | None, filters: dict[str, Any] | None
                            ) -> None:
        self._arrived()
        await self.store.delete(collection_id, file_ids, self._filters(filters))

    async def vector_search(self, collection_id: str, query_vector: list[float], top_k: int,
                            filters: dict[str, Any], search_type: str, query_text: str) -> list[dict[str, Any]]:
        try:
            return await self.store.search(collection_id, query_vector, top_k, self._filters(filters),
                                           search_type, query_text)
        except ValueError as exc:
            raise ActionCallError(str(exc)) from None

    async def vector_list(self, collection_id: str, filters: dict[str, Any] | None, limit: int, offset: int
                          ) -> dict[str, Any]:
        return await self.store.list(collection_id, self._filters(filters), limit, offset)


def _vector(seed: int) -> list[float]:
    return [1.0 if i == seed % DIM else 0.1 for i in range(DIM)]


def _record(record_id: str, text: str, status: str = "active") -> IndexRecord:
    return IndexRecord(record_id, SPACE, "alice", text, {"episode_id": record_id, "content": text, "status": status,
                                                       "status_changed_at": status})


# ------------------------------------------------------------------ the row writer
# The SDK's write calls, read from its API proxy: vector rows and plugin/workspace storage. Components hold
# the SDK plugin (`self.plugin`) too, so the scan reads them as well as the core (issue 40, point 4).
SDK_WRITES = frozenset(name for name in vars(LangBotAPIProxy)
                       if name in ("vector_upsert", "vector_delete") or re.fullmatch(r"(set|delete)_\w+_storage", name))
# Each write reaches the host from one module of the adapter.
_SDK_WRITERS = {"ltm/langbot/host_rows.py": {"vector_upsert", "vector_delete"},
                "ltm/langbot/port.py": {"set_plugin_storage", "delete_plugin_storage"}}


def _sdk_writes(source: str) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in SDK_WRITES:
            found.setdefault(node.attr, []).append(node.lineno)
    return found


def _scanned() -> list[Path]:
    return sorted([*(ROOT / "ltm").rglob("*.py"), *(ROOT / "components").rglob("*.py"), ROOT / "main.py"])


def test_the_scan_finds_a_vector_or_storage_write() -> None:
    named = {"vector_upsert", "vector_delete", "set_plugin_storage", "delete_plugin_storage",
             "set_workspace_storage", "delete_workspace_storage"}
    assert named <= SDK_WRITES
    assert _sdk_writes("async def f(p):\n    await p.vector_delete(collection_id='c')\n") == {"vector_delete": [2]}
    assert _sdk_writes("async def f(p):\n    await p.vector_list(collection_id='c')\n") == {}
    # a component writing through the plugin it holds
    assert _sdk_writes("class T:\n    async def run(self):\n        await self.plugin.set_plugin_storage('k', b'')\n"
                       ) == {"set_plugin_storage": [3]}


def test_only_the_adapter_writers_reach_the_host_writes() -> None:
    files = _scanned()
    assert any(path.parts[-3:-1] == ("components", "tools") for path in files)  # components are read
    found = {path.relative_to(ROOT).as_posix(): set(writes) for path in files
             if (writes := _sdk_writes(path.read_text(encoding="utf-8")))}
    assert found == _SDK_WRITERS


@pytest.mark.parametrize("store", ["fixed", "milvus-insert", "valkey"])
async def test_every_row_write_is_counted_before_it_reaches_the_host(store: str) -> None:
    plugin = _Plugin(store)
    index = HostVectorIndex(plugin)
    probe, token = watch_writes()
    plugin.watched = probe
    try:
        await index.upsert(L2, [_record("e1", "the ferry leaves at six")], [_vector(1)])  # probes first
        await index.upsert(L2, [_record("e1", "the ferry leaves at six", "archived")], [_vector(1)])
        await index.delete(L2, ["e1"])
    finally:
        stop_watching(token)
    assert probe.reporting
    assert plugin.counted_at_arrival == list(range(1, probe.sent + 1)) and probe.sent >= 6
    assert await index.get(L2, "e1") is None


async def test_a_delete_before_the_probe_reports_its_writes_and_counts_them() -> None:
    plugin = _Plugin()
    await HostVectorIndex(plugin).upsert(L2, [_record("e1", "the key is under the mat")], [_vector(2)])
    fresh = HostVectorIndex(plugin)  # another process: this collection is not probed in it yet
    probe, token = watch_writes()
    plugin.watched = probe
    try:
        await fresh.delete(L2, ["e1"])
    finally:
        stop_watching(token)
    assert probe.reporting and plugin.counted_at_arrival == [1]
    assert await fresh.get(L2, "e1") is None


async def test_a_read_sends_nothing_and_reports_nothing() -> None:
    plugin = _Plugin()
    index = HostVectorIndex(plugin)
    await index.upsert(L2, [_record("e1", "tea at four")], [_vector(3)])
    probe, token = watch_writes()
    try:
        assert [h.record_id for h in await index.search(L2, _vector(3), 5)] == ["e1"]
        assert (await index.get(L2, "e1")) is not None
    finally:
        stop_watching(token)
    assert (probe.reporting, probe.sent) == (False, 0)


# ------------------------------------------------------------------ a store that rewrites by deleting first
async def _delete_first_index() -> tuple[_Plugin, HostVectorIndex]:
    """pgvector's fixed schema (no plugin metadata kept) with the `uuid` filter ignored: reads scan the
    space, deletes go through the graveyard and a rewrite deletes the old row first."""
    plugin = _Plugin(uuid_filter=False)
    index = HostVectorIndex(plugin)
    await index.upsert(L2, [_record("e1", "the boat is blue")], [_vector(4)])
    chosen = choose(index.traits(KB) or pytest.fail("not probed"), HostRows(plugin))
    assert (type(chosen.read), type(chosen.delete), type(chosen.rewrite)) == (
        keyed_read.ByScan, delete.ByGraveyard, rewrite.DeleteFirst)
    return plugin, index


def _refuse_the_new_row(plugin: _Plugin) -> None:
    """The next rewrite's steps: 1 the husk that moves the old row to its graveyard, 2 the new row."""
    plugin.refused = {plugin.upserts + 2}


async def test_a_rewrite_refused_after_the_delete_writes_the_old_row_back() -> None:
    plugin, index = await _delete_first_index()
    await index.upsert(L2, [_record("e1", "the boat is blue", "archived")], [_vector(4)])  # one clean rewrite
    assert (await index.get(L2, "e1") or pytest.fail("lost")).fields["status"] == "archived"
    _refuse_the_new_row(plugin)
    with pytest.raises(HostError, match="old rows were written back"):
        await index.upsert(L2, [_record("e1", "the boat is blue", "active")], [_vector(4)])
    kept = await index.get(L2, "e1")
    assert kept is not None and kept.fields["status"] == "archived"


async def test_a_refused_rewrite_of_other_text_is_an_unknown_outcome() -> None:
    plugin, index = await _delete_first_index()
    _refuse_the_new_row(plugin)
    with pytest.raises(OutcomeUnknown, match="could not be written back"):
        await index.upsert(L2, [_record("e1", "the boat is red")], [_vector(5)])
    assert await index.get(L2, "e1") is None  # what the unknown outcome warns of: the old row is gone


# ------------------------------------------------------------------ which policy a trait chooses
_CHROMA = Traits(keeps_metadata=True, filters_metadata=True, filters_uuid=True, similarity=False, replaces=True,
                 single_delete=True, dimension=DIM, text_search=True)


@pytest.mark.parametrize(("change", "chosen"), [
    ({}, {"score": scores.Distance, "speaker": speaker.BySpeakerFilter, "text": text_search.FullText,
          "read": keyed_read.ByKeyList, "delete": delete.ByKey, "rewrite": rewrite.InPlace}),
    ({"keyed_by_search": True, "text_search": False},  # Qdrant
     {"read": keyed_read.ByKeySearch, "text": text_search.VectorOnly}),
    ({"keeps_metadata": False, "filters_metadata": False, "similarity": True, "replaces": False},  # Milvus
     {"score": scores.Similarity, "speaker": speaker.ByOverfetch, "text": text_search.VectorOnly,
      "rewrite": rewrite.SecondKey}),
    ({"filters_metadata": False, "filters_uuid": False},  # Valkey Search
     {"speaker": speaker.ByOverfetch, "read": keyed_read.ByScan, "delete": delete.ByGraveyard,
      "rewrite": rewrite.InPlace}),
    ({"keeps_metadata": False, "filters_uuid": False},
     {"read": keyed_read.ByScan, "delete": delete.ByGraveyard, "rewrite": rewrite.DeleteFirst}),
])
def test_each_trait_chooses_its_policy(change: dict[str, Any], chosen: dict[str, type]) -> None:
    policies = choose(dataclasses.replace(_CHROMA, **change), HostRows(object()))
    assert {name: type(getattr(policies, name)) for name in chosen} == chosen


# ------------------------------------------------------------------ what health says of the chosen policies
# Which line of the health report says what each policy does (None: said by another policy's line).
_SAYS = {speaker.BySpeakerFilter: "can.speaker_filter", speaker.ByOverfetch: "can.speaker_overfetch",
         text_search.FullText: "can.full_text", text_search.VectorOnly: "can.vector_only",
         keyed_read.ByKeyList: "can.open_by_key", keyed_read.ByKeySearch: "can.open_by_key",
         keyed_read.ByScan: "cannot.open_by_key", delete.ByKey: None, delete.ByGraveyard: "can.delete_by_graveyard",
         rewrite.InPlace: "can.rewrite_one_write", rewrite.SecondKey: "can.rewrite_second_key",
         rewrite.DeleteFirst: "can.rewrite_delete_first"}
_BOOLEAN_TRAITS = ("keeps_metadata", "filters_metadata", "filters_uuid", "similarity", "replaces", "single_delete",
                   "text_search", "keyed_by_search")


@pytest.mark.parametrize("values", list(itertools.product((False, True), repeat=len(_BOOLEAN_TRAITS))),
                         ids=lambda v: "".join("1" if b else "0" for b in v))
def test_the_health_report_says_what_the_chosen_policies_do(values: tuple[bool, ...]) -> None:
    """Issue 40, point 3: the report was derived from the traits a second time and said a store that scores
    by similarity widens recall with full text, which `choose` never lets it do. Every trait combination:
    the report has the line of each chosen policy and no other."""
    traits = Traits(dimension=DIM, **dict(zip(_BOOLEAN_TRAITS, values)))
    index = HostVectorIndex(object())
    index.adopt(KB, traits)
    report = index.profile(KB)
    assert report is not None
    chosen = choose(traits, HostRows(object()))
    expected = {"store.can.isolate"} | {f"store.{_SAYS[type(p)]}" for p in (chosen.speaker, chosen.text, chosen.read,
                                                                        chosen.delete, chosen.rewrite)
                                        if _SAYS[type(p)] is not None}
    if not traits.single_delete:
        expected = expected - {"store.can.delete_by_graveyard"} | {"store.cannot.delete_one"}
    said = [s.code for s in (*report.can, *report.cannot)]
    assert sorted(said) == sorted(expected)
    assert all(s.code.startswith("store.cannot.") for s in report.cannot)
