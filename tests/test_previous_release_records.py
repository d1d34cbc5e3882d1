"""Records the previous release wrote in layout 2 also carry the episode's fields as metadata (this
release writes only the routing keys, `ltm/langbot/layout.py`). They must still read, list, recall
and rewrite correctly on every backend: reads take everything from `text`, and a rewrite leaves one
row that reads as the new record even where the store keeps the old metadata keys beside it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ltm import parse_records
from ltm.episodes.model import LISTED_STATUSES, EpisodeStatus
from ltm.langbot import layout
from ltm.ports import IndexRecord
from testhost.hooks import top
from tests.service_helpers import ident, scope, start_with_kb

# SeekDB and pgvector run this file in the default run too (tests/stores.py).
pytestmark = pytest.mark.stores_slice

KEEPS_METADATA = {"chroma", "qdrant", "seekdb", "valkey"}  # the others keep text, file_id and uuid only


def previous_release(current: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """`layout.to_metadata` as the previous release had it: the record's flat fields, then the routing keys."""
    def to_metadata(record: IndexRecord, *, gone: bool = False, alt: bool = False) -> dict[str, Any]:
        meta = {k: v for k, v in record.fields.items() if k not in layout.FLAT_ROUTING_KEYS}
        meta.update(current(record, gone=gone, alt=alt))
        return meta
    return to_metadata


def rows_of(rows: list[dict[str, Any]], space: str, episode_id: str) -> list[dict[str, Any]]:
    return [r for r in rows if layout.row_record_id(r.get("metadata"), space) == episode_id]


async def test_previous_release_records_read_list_recall_and_rewrite(host, backend_name, monkeypatch):
    harness, kb_id = await start_with_kb(host)
    try:
        memory = harness.plugin.memory
        sc = await scope(memory, ident())
        with monkeypatch.context() as old:
            old.setattr(layout, "to_metadata", previous_release(layout.to_metadata))
            key, dentist, seats = (await memory.import_episodes(sc, parse_records([
                {"content": "the spare key is under the blue flowerpot", "tags": ["home"],
                 "timestamp": "2026-01-01T10:00:00+00:00"},
                {"content": "dentist appointment moved to Friday", "timestamp": "2026-01-02T10:00:00+00:00"},
                {"content": "Bob prefers window seats on trains", "sender_id": "bob", "sender_name": "Bob",
                 "timestamp": "2026-01-03T10:00:00+00:00"}]))).episodes
        old_rows = [r for r in await host.dump_kb(kb_id) if "content" in (r.get("metadata") or {})]
        assert len(old_rows) == (3 if backend_name in KEEPS_METADATA else 0)  # the set-up wrote the old shape

        await harness.restart(fresh_modules=False)  # nothing in process memory: every read goes to the store
        memory = harness.plugin.memory
        got = await memory.get_episode(sc, key.episode_id)
        assert (got.content, got.tags, got.status) == (key.content, ("home",), EpisodeStatus.ACTIVE)
        page = await memory.list_episodes(sc)
        assert [e.episode_id for e in page.episodes] == [seats.episode_id, dentist.episode_id, key.episode_id]
        assert [h.episode.episode_id for h in await memory.recall(sc, "where is the spare key", recipe=top(1))] \
            == [key.episode_id]

        # Rewrites: an archive, a supersede; then, after another restart, reads say what the text says.
        await memory.archive(sc, key.episode_id)
        newer = (await memory.remember(sc, {"content": "dentist appointment moved to Monday",
                                            "supersedes": [dentist.episode_id]})).episode
        rows = await host.dump_kb(kb_id)
        assert len(rows_of(rows, sc.space_key, key.episode_id)) == 1 == len(rows_of(rows, sc.space_key, dentist.episode_id))
        await harness.restart(fresh_modules=False)
        memory = harness.plugin.memory
        assert (await memory.get_episode(sc, key.episode_id)).status is EpisodeStatus.ARCHIVED
        assert (await memory.get_episode(sc, dentist.episode_id)).status is EpisodeStatus.SUPERSEDED
        active = await memory.list_episodes(sc)
        assert [e.episode_id for e in active.episodes] == [newer.episode_id, seats.episode_id]
        every = await memory.list_episodes(sc, LISTED_STATUSES)
        assert {e.episode_id: e.status for e in every.episodes}[key.episode_id] is EpisodeStatus.ARCHIVED
        recalled = [h.episode.episode_id for h in await memory.recall(sc, "spare key dentist", recipe=top(5))]
        assert key.episode_id not in recalled and dentist.episode_id not in recalled and newer.episode_id in recalled
    finally:
        await harness.stop()
