"""Reading records by key (`HostVectorIndex._find`): one list on Chroma, one search on the stores that count
every filtered list (Qdrant, Milvus), and never a record called gone because a search left it out."""

from __future__ import annotations

from typing import Any

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

from testhost import PluginHarness
from tests.chat import listed_ids, open_chat


def _keyed(harness: PluginHarness, action: Any) -> list[dict[str, Any]]:
    return [c for c in harness.host.calls_of(action) if "uuid" in (c.get("filters") or {})]


@pytest.mark.stores_slice
async def test_a_record_is_read_by_key_in_one_host_call(harness: PluginHarness, supported_backend_name: str) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    ids = [await chat.remember(f"the harbour ferry leaves at {hour} o'clock") for hour in (6, 7, 8)]
    harness.host.reset_counts()
    shown = await chat.run(f"!memory show {ids[1]}")
    assert f"Episode {ids[1]}" in shown and "leaves at 7 o'clock" in shown
    searched, listed = _keyed(harness, A.VECTOR_SEARCH), _keyed(harness, A.VECTOR_LIST)
    if supported_backend_name in ("chroma", "seekdb"):  # no count of a filtered list: a list is one cheap pass
        assert (len(searched), len(listed)) == (0, 1)
    else:  # Qdrant, Milvus and pgvector count every filtered list (a second pass): the read is one search
        assert (len(searched), len(listed)) == (1, 0)
        assert searched[0]["top_k"] >= 2  # both keys of the record (a rewrite may hold two rows for a moment)


# Chroma reads by list only (above): there is no search to leave anything out.
@pytest.mark.parametrize("supported_backend_name", ["qdrant", "milvus"])
async def test_what_a_keyed_search_leaves_out_is_listed_before_it_is_called_gone(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    kept = await chat.remember("the lighthouse key hangs behind the blue door")
    other = await chat.remember("the lighthouse lamp is cleaned on Fridays")
    backend = harness.host.backend
    real_search = backend.search

    async def approximate(collection: str, vector: list[float], top_k: int = 5, filters: Any = None,
                          *args: Any, **kwargs: Any) -> list[Any]:
        rows = await real_search(collection, vector, top_k, filters, *args, **kwargs)
        if "uuid" in (filters or {}):  # an approximate index that misses a record it holds
            rows = [r for r in rows if kept not in str((r.get("metadata") or {}).get("uuid"))]
        return rows

    backend.search = approximate  # type: ignore[method-assign]  # a store whose keyed search is approximate
    try:
        harness.host.reset_counts()
        shown = await chat.run(f"!memory show {kept}")
        assert "behind the blue door" in shown
        assert len(_keyed(harness, A.VECTOR_SEARCH)) == 1 and len(_keyed(harness, A.VECTOR_LIST)) == 1
        # The space's index was not told the record is gone: it is still listed and still found by words.
        assert set(listed_ids(await chat.run("!memory list"))) == {kept, other}
        assert kept in listed_ids(await chat.run("!memory search blue door"))
    finally:
        backend.search = real_search  # type: ignore[method-assign]  # the real search back


@pytest.mark.parametrize("supported_backend_name", ["qdrant", "milvus"])
async def test_a_store_whose_search_ignores_the_key_filter_keeps_reading_by_list(harness: PluginHarness) -> None:
    backend = harness.host.backend
    real_search = backend.search

    async def unkeyed(collection: str, vector: list[float], top_k: int = 5, filters: Any = None,
                      *args: Any, **kwargs: Any) -> list[Any]:
        if "uuid" in (filters or {}):  # a store that filters search on file_id only
            filters = {k: v for k, v in filters.items() if k != "uuid"} or None
        return list(await real_search(collection, vector, top_k, filters, *args, **kwargs))

    backend.search = unkeyed  # type: ignore[method-assign]  # before the KB's probe learns what the store does
    try:
        await harness.create_memory_kb()
        chat = open_chat(harness)
        note = await chat.remember("the spare oars are under the slipway")
        harness.host.reset_counts()
        assert "under the slipway" in await chat.run(f"!memory show {note}")
        assert len(_keyed(harness, A.VECTOR_SEARCH)) == 0 and len(_keyed(harness, A.VECTOR_LIST)) == 1
    finally:
        backend.search = real_search  # type: ignore[method-assign]  # the real search back
