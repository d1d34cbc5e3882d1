"""Management listings (C, M): enumerations say `truncated` only when records were left out, and
`list` pages (newest first, by status) are served from the plugin's own index of the space."""

from __future__ import annotations

import pytest

from ltm import parse_records
from ltm.episodes.model import LISTED_STATUSES, EpisodeStatus
from ltm.errors import ValidationError
from tests.service_helpers import ident, scope, start_with_kb

# SeekDB and pgvector run this file in the default run too (tests/stores.py).
pytestmark = pytest.mark.stores_slice


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


async def test_list_pages_come_from_the_index_in_the_order_of_the_enumeration(plugin):
    """Every page, for every status filter, equals the same page cut from a full enumeration of the space
    (newest first, then by id); each page costs the same few host calls, whatever the page."""
    harness, _ = plugin
    memory = harness.plugin.memory
    sc = await scope(memory, ident())
    days = [f"2026-0{1 + n % 3}-1{n % 7}T10:00:00+00:00" for n in range(31)]  # many records share a timestamp
    stored = (await memory.import_episodes(sc, parse_records(
        [{"content": f"note {n}", "timestamp": day} for n, day in enumerate(days)]))).episodes
    for episode in stored[::4]:
        await memory.archive(sc, episode.episode_id)
    newer = (await memory.remember(sc, {"content": "note 1, corrected", "supersedes": [stored[1].episode_id]})).episode
    everything = await memory.all_episodes(sc)
    assert len(everything) == 32 and newer.episode_id in {e.episode_id for e in everything}
    await memory.list_episodes(sc)  # the first listing of the space builds its index (one page of the space)
    for statuses in [(EpisodeStatus.ACTIVE,), (EpisodeStatus.ARCHIVED,), LISTED_STATUSES]:
        expected = [e.episode_id for e in sorted((e for e in everything if e.status in statuses),
                                                  key=lambda e: (e.timestamp, e.episode_id), reverse=True)]
        calls = []
        for page in range(1, -(-len(expected) // 7) + 1):
            harness.host.reset_counts()
            result = await memory.list_episodes(sc, statuses, page=page, page_size=7)
            calls.append(sorted(c[0] for c in harness.host.calls))
            assert [e.episode_id for e in result.episodes] == expected[(page - 1) * 7 : page * 7]
            assert (result.total, result.truncated) == (len(expected), False)
            assert all(e.status in statuses and e.content for e in result.episodes)  # whole records
        assert all(c == calls[0] for c in calls) and len(calls[0]) <= 2, calls
    with pytest.raises(ValidationError, match="past the end"):
        await memory.list_episodes(sc, (EpisodeStatus.ARCHIVED,), page=9, page_size=7)
