"""Management listings (C, M): enumerations say `truncated` only when records were left out, and
`list` pages (newest first, by status) are served from the plugin's own index of the space."""

from __future__ import annotations

import pytest

from ltm import parse_records
from ltm.episodes.model import EpisodeStatus
from tests.service_helpers import ident, scope, start_with_kb


@pytest.fixture
async def plugin(supported_host):
    harness, kb_id = await start_with_kb(supported_host)
    yield harness, kb_id
    await harness.stop()


async def test_a_space_of_exactly_one_enumeration_is_not_called_truncated(plugin, monkeypatch):
    import ltm.episodes.store as store

    harness, _ = plugin
    memory = harness.plugin.memory
    sc = await scope(memory, ident())
    await memory.import_episodes(sc, parse_records([{"content": f"note {i}"} for i in range(4)]))
    # Full listing pages of a filtered store only say that more *may* follow; exactly the limit is all.
    monkeypatch.setattr(store, "LIST_BATCH", 2)
    monkeypatch.setattr(store, "MAX_ENUMERATED", 4)
    export = await memory.export_episodes(sc, (EpisodeStatus.ACTIVE,))
    assert "truncated" not in export and len(export["episodes"]) == 4
    await memory.import_episodes(sc, parse_records([{"content": "one more"}]))
    export = await memory.export_episodes(sc, (EpisodeStatus.ACTIVE,))
    assert export["truncated"] is True and len(export["episodes"]) == 4
