"""Shared fixtures: a fake LangBot host per vector backend and a started plugin harness.

- ``host``: FakeLangBotHost with embedding model "emb-1"; runs once per backend: real
  "chroma", "qdrant" and "milvus" (Milvus Lite), and the stand-ins for what cannot run
  here: "fixed" (pgvector), "milvus-insert" (a Milvus cluster's insert-only rows) and
  "valkey" (Valkey Search).
- ``supported_host``: the same on the real stores ("chroma", "qdrant", "milvus"): the
  isolation, tools, command, console and probe suites run on each.
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

from testhost import FakeLangBotHost, PluginHarness, make_backend  # noqa: E402


async def _make_host(name: str, tmp_path: Path) -> FakeLangBotHost:
    host = FakeLangBotHost(make_backend(name, tmp_path))
    host.add_embedding_model("emb-1")
    return host


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "plugin_config(cfg): plugin config dict passed to the `harness` fixture")


@pytest.fixture(params=["chroma", "qdrant", "milvus", "fixed", "milvus-insert", "valkey"], ids=lambda name: name)
def backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=["chroma", "qdrant", "milvus"], ids=lambda name: name)
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
