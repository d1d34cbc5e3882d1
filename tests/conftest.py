"""Shared fixtures: a fake LangBot host per vector backend and a started plugin harness.

- ``host``: FakeLangBotHost with embedding model "emb-1"; runs once per backend: real
  "chroma", "qdrant", "milvus" (Milvus Lite), "seekdb" (embedded SeekDB) and "pgvector"
  (PostgreSQL + pgvector on a unix socket), and the stand-ins for what cannot run here:
  "fixed" (pgvector's schema in memory), "milvus-insert" (a Milvus cluster's insert-only rows)
  and "valkey" (Valkey Search).
- ``supported_host``: the same on the real stores: the isolation, tools, command, console and
  probe suites run on each.
- The store slice: every test runs on "chroma", "qdrant" and "milvus"; on "seekdb" and
  "pgvector" only the tests marked ``stores_slice`` run, to keep the README test command in its
  time budget. ``LTM_STORES=all`` (or ``LTM_STORES=seekdb``, ``LTM_STORES=pgvector``) runs every
  test on those stores too (README, "Tests").
- ``harness``: the real plugin started on ``supported_host``; stopped afterwards.
  Give it a config with ``@pytest.mark.plugin_config({"max_profile_traits": 5})``.
- ``kb``: the plugin's memory KB on ``harness`` (default settings). Tests that need other
  settings call ``harness.create_memory_kb(isolation="bot", ...)``, the one KB creator.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

# The runtime starts workers with `python -m ...` from the plugin root, which
# puts the root on sys.path; do the same so `testhost` and `ltm` import.
_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from components.event_listener import conversation_hook  # noqa: E402 - after the sys.path line above
from ltm.episodes import lexical  # noqa: E402 - after the sys.path line above
from testhost import FakeLangBotHost, PluginHarness, make_backend  # noqa: E402 - after the sys.path line above
from tests.stores import CORE_STORES, SLICE_STORES, STAND_INS, full_matrix_stores  # noqa: E402 - after the sys.path line above


async def _make_host(name: str, tmp_path: Path) -> FakeLangBotHost:
    host = FakeLangBotHost(make_backend(name, tmp_path))
    host.add_embedding_model("emb-1")  # the size the store takes (testhost/vectors)
    return host


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "plugin_config(cfg): plugin config dict passed to the `harness` fixture")
    config.addinivalue_line(
        "markers", "stores_slice: also runs on SeekDB and pgvector in the default run (tests/conftest.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect (not skip: nothing is hidden as passing) the slice stores' tests outside the slice."""
    full = full_matrix_stores()
    kept, dropped = [], []
    for item in items:
        params = getattr(item, "callspec", None)
        store = (params.params.get("supported_backend_name") or params.params.get("backend_name")
                 if params is not None else None)
        if store in SLICE_STORES and store not in full and item.get_closest_marker("stores_slice") is None:
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(params=[*CORE_STORES, *SLICE_STORES, *STAND_INS], ids=lambda name: name)
def backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=[*CORE_STORES, *SLICE_STORES], ids=lambda name: name)
def supported_backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def host(backend_name: str, tmp_path: Path) -> AsyncIterator[FakeLangBotHost]:
    fake = await _make_host(backend_name, tmp_path)
    try:
        yield fake
    finally:
        await fake.close()  # drops the private Chroma database / Qdrant client


@pytest.fixture
async def supported_host(supported_backend_name: str, tmp_path: Path
                         ) -> AsyncIterator[FakeLangBotHost]:
    fake = await _make_host(supported_backend_name, tmp_path)
    try:
        yield fake
    finally:
        await fake.close()


@pytest.fixture(autouse=True)
def _index_saves_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    """A big space's word index is saved `SAVE_DELAY` (30 s) after its last write (ltm/episodes/lexical.py),
    and a test that waits for the background work (`word_indexes_built`) would sleep through that delay:
    half a minute per test for nothing. Here the delay is half a second; a test about the delay itself
    sets `save_delay` on its index (tests/unit/test_saved_index.py)."""
    monkeypatch.setattr(lexical, "SAVE_DELAY", 0.5)


@pytest.fixture(autouse=True)
def _replies_settle_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The conversation record waits `REPLY_QUIET_S` (1 s) after a reply's last event before it records the
    turn (a streamed reply fires one event per chunk); the test host's replies come whole, so here it waits
    for nothing. tests/test_conversation_hooks.py holds the wait itself where a stream is the point."""
    monkeypatch.setattr(conversation_hook, "REPLY_QUIET_S", 0.0)


@pytest.fixture
async def harness(request: pytest.FixtureRequest, supported_host: FakeLangBotHost
                  ) -> AsyncIterator[PluginHarness]:
    marker = request.node.get_closest_marker("plugin_config")
    plugin = PluginHarness(supported_host)
    await plugin.start(dict(marker.args[0]) if marker else None)
    try:
        yield plugin
    finally:
        await plugin.stop()


@pytest.fixture
async def kb(harness: PluginHarness) -> str:
    return await harness.create_memory_kb()
