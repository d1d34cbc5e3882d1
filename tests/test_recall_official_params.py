"""`recall_memory` takes the official plugin's parameters unchanged (issue 34, docs/OFFICIAL-PLUGIN.md
"Tools: recall_memory"): speaker_id, speaker_name, time_after, time_before (a naive time is UTC, both
ends included), importance_min, source, status; our own names keep working, one name per end of the
time window."""

from __future__ import annotations

import pytest

from ltm import parse_records
from tests.chat import Place, tool
from tests.service_helpers import ident

ROOM = Place("group", "ferry-room")

# Official-shaped records (what its `export l2` writes), with the times, speakers, importances and
# sources the filters are asked about.
SEEDED = [
    {"id": "a00000000001", "content": "the ferry leaves from pier 3", "timestamp": "2026-03-01T10:00:00Z",
     "sender_id": "alice", "sender_name": "Alice", "importance": 4, "source": "agent", "status": "active",
     "tags": ["ferry"]},
    {"id": "b00000000002", "content": "a ferry ticket costs 12 euros", "timestamp": "2026-03-05T10:00:00Z",
     "sender_id": "bob", "sender_name": "Bob", "importance": 2, "source": "import", "status": "active",
     "tags": ["ferry", "money"]},
    {"id": "c00000000003", "content": "the ferry used to leave from pier 1", "timestamp": "2026-02-01T08:00:00Z",
     "sender_id": "alice", "sender_name": "Alice", "importance": 3, "source": "agent", "status": "superseded",
     "superseded_by": "a00000000001", "tags": ["ferry"]},
    {"id": "d00000000004", "content": "the ferry timetable changes in summer", "timestamp": "2026-03-10T00:00:00Z",
     "sender_id": "carol", "sender_name": "Carol", "importance": 5, "source": "document", "status": "active",
     "tags": ["ferry"]},
]


async def _seed(harness) -> dict[str, str]:
    memory = harness.plugin.memory
    scope = await memory.scope_for(ident(ROOM.launcher_id))
    result = await memory.import_episodes(scope, parse_records(SEEDED), keep_speakers=True)
    saved = await tool(harness, ROOM, "remember", {"content": "the ferry is painted blue"}, sender="dave")
    ids = {e.original_id or "": e.episode_id for e in result.episodes}
    return {"pier3": ids["a00000000001"], "ticket": ids["b00000000002"], "pier1": ids["c00000000003"],
            "summer": ids["d00000000004"], "blue": saved["episode_id"]}


async def _found(harness, args, sender="alice") -> set[str]:
    result = await tool(harness, ROOM, "recall_memory", {"query": "ferry", **args}, sender=sender)
    assert "episodes" in result, result
    assert "ignored_params" not in result, result
    return {e["id"] for e in result["episodes"]}


async def test_each_official_filter_narrows_as_the_official_plugin_did(harness, kb):
    ids = await _seed(harness)
    active = {ids["pier3"], ids["ticket"], ids["summer"], ids["blue"]}
    assert await _found(harness, {}) == active  # status active by default
    assert await _found(harness, {"speaker_id": "bob"}) == {ids["ticket"]}
    assert await _found(harness, {"speaker_id": "Bob"}) == set()  # an id is matched exactly
    assert await _found(harness, {"speaker_name": "alice"}) == {ids["pier3"]}
    assert await _found(harness, {"speaker_id": "alice", "speaker_name": "Bob"}) == set()  # all filters hold
    # Naive times are UTC, and both ends are included.
    assert await _found(harness, {"time_after": "2026-03-05T10:00:00", "time_before": "2026-03-10T00:00:00"}) == {
        ids["ticket"], ids["summer"]}
    assert await _found(harness, {"time_before": "2026-03-05T11:00:00+01:00"}) == {ids["pier3"], ids["ticket"]}
    assert await _found(harness, {"importance_min": 4}) == {ids["pier3"], ids["summer"]}
    # The official "agent" is what the model stored with remember (ours: "tool"); "import" covers uploads too.
    assert await _found(harness, {"source": "agent"}) == {ids["pier3"], ids["blue"]}
    assert await _found(harness, {"source": "tool"}) == {ids["pier3"], ids["blue"]}
    assert await _found(harness, {"source": "import"}) == {ids["ticket"], ids["summer"]}
    assert await _found(harness, {"source": "document"}) == {ids["summer"]}


async def test_status_shows_hidden_records_and_says_which(harness, kb):
    ids = await _seed(harness)
    result = await tool(harness, ROOM, "recall_memory", {"query": "ferry", "status": "superseded"}, sender="alice")
    [old] = result["episodes"]
    assert old["id"] == ids["pier1"] and old["status"] == "superseded" and old["superseded_by"] == ids["pier3"]
    assert await _found(harness, {"status": "deleted"}) == set()  # a deleted record is gone for good here
    active = await tool(harness, ROOM, "recall_memory", {"query": "ferry pier"}, sender="alice")
    assert all("status" not in e for e in active["episodes"])  # the reply keeps its shape for active records


async def test_our_own_names_keep_working_and_one_end_has_one_name(harness, kb):
    ids = await _seed(harness)
    assert await _found(harness, {"speaker": "Bob"}) == {ids["ticket"]}
    assert await _found(harness, {"since": "2026-03-05T10:00:00Z", "until": "2026-03-10T00:00:00Z"}) == {
        ids["ticket"]}  # our `until` excludes its instant
    assert await _found(harness, {"since": "2026-03-05T10:00:00Z", "time_before": "2026-03-10T00:00:00Z"}) == {
        ids["ticket"], ids["summer"]}


@pytest.mark.parametrize("args, message", [
    ({"since": "2026-03-05T10:00:00"}, "since has no timezone"),  # our names still want a zone
    ({"since": "2026-03-01T00:00:00Z", "time_after": "2026-03-01T00:00:00Z"}, "give since or time_after, not both"),
    ({"time_after": "2026-03-10T00:00:00", "time_before": "2026-03-01T00:00:00"}, "earlier than its end"),
    ({"time_after": "last week"}, "time_after is not an ISO-8601 time"),
    ({"importance_min": 9}, "importance_min must be a whole number from 1 to 5"),
    ({"status": "gone"}, "unknown status 'gone'"),
    ({"top_k": 0}, "top_k"),
])
async def test_bad_values_get_a_specific_message(harness, kb, args, message):
    result = await tool(harness, ROOM, "recall_memory", {"query": "ferry", **args}, sender="alice")
    assert result["ok"] is False and message in result["error"], result
