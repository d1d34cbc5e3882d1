"""Episodes from the official plugin import as they are (issue 34; docs/OFFICIAL-PLUGIN.md, "Importing
episodes"): its `export l2` through `!memory import l2`, and its KB upload form (records keyed by
`user_key`). A record this plugin cannot store is skipped and named by its index in the array with its
reason; the rest is stored; the same export imported twice writes nothing new.

The fixtures are written here from the official data shapes (fields and value forms), not copied."""

from __future__ import annotations

import json
from typing import Any

from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

from tests.chat import open_chat
from tests.service_helpers import ident

SECRET = "password: hunter2hunter2"


def official_export() -> dict[str, Any]:
    """What the official bare `!memory export l2` gives: every status, deleted included."""
    def record(rid: str, content: Any, status: str = "active", **extra: Any) -> dict[str, Any]:
        return {"id": rid, "content": content, "tags": ["schedule"], "importance": 2,
                "timestamp": "2026-03-01T09:00:00Z", "sender_id": "u7", "sender_name": "Mia", "source": "agent",
                "status": status, "superseded_by": "", **extra}

    episodes: list[Any] = [
        record("a1b2c3d4e5f6", "the standup moved to 10am", importance=3, timestamp="2026-03-02T09:00:00Z"),
        record("0a0b0c0d0e0f", "the standup is at 9am", "superseded", superseded_by="a1b2c3d4e5f6"),
        record("dddddddddddd", "a note the user deleted", "deleted"),
        record("bbbbbbbbbbbb", "x" * 2001),
        record("cccccccccccc", "a record with many tags", tags=[f"t{i}" for i in range(11)]),
        record("eeeeeeeeeeee", SECRET),
        record("ffffffffffff", "the retreat plan from last year", "archived"),
        "not a record",
    ]
    return {"version": 1, "exported_at": "2026-03-20T08:00:00Z", "scope_key": "bot-old:group_9",
            "user_key": "bot-old:group_9", "collection_id": "kb-old",
            "statuses": ["active", "superseded", "archived", "deleted"], "episodes": episodes, "count": len(episodes)}


async def test_an_official_export_imports_what_can_be_stored_and_names_the_rest(harness, kb):
    chat = open_chat(harness, "g1")
    reply = await chat.run("!memory import l2 " + json.dumps(official_export()))
    assert "Imported 3 episodes" in reply and "1 active, 1 superseded, 1 archived" in reply, reply
    for index, reason in [(2, "status deleted"), (3, "content is longer than 2000 characters"),
                          (4, "tags has more than 10 items"), (5, "refused: the content looks like"),
                          (7, "must be a JSON object")]:
        assert f"/episodes/{index}: {reason}" in reply, (index, reply)
    assert "hunter2" not in reply
    stored = {e["original_id"]: e for e in await chat.export_l2()}
    assert set(stored) == {"a1b2c3d4e5f6", "0a0b0c0d0e0f", "ffffffffffff"}
    # The supersede link inside the batch points at the new id of its target.
    assert stored["0a0b0c0d0e0f"]["superseded_by"] == stored["a1b2c3d4e5f6"]["id"]
    assert stored["a1b2c3d4e5f6"]["sender_id"] == "u7" and stored["a1b2c3d4e5f6"]["source"] == "agent"
    entries = await harness.plugin.memory.audit_export(await harness.plugin.memory.scope_for(ident("g1")))
    skipped = [e for e in entries if e["operation"] == "import_skipped"]
    assert sorted(e["meta"]["index"] for e in skipped) == [2, 3, 4, 5, 7]
    assert "hunter2" not in json.dumps(skipped)


async def test_importing_the_same_export_twice_writes_nothing_new(harness, kb):
    chat = open_chat(harness, "g1")
    await chat.run("!memory import l2 " + json.dumps(official_export()))
    before = await chat.export_l2()
    harness.host.reset_counts()
    again = await chat.run("!memory import l2 " + json.dumps(official_export()))
    assert "Imported 0 episodes" in again and "Already remembered, not imported: 3 records" in again, again
    assert harness.host.count(A.VECTOR_UPSERT) == 0
    assert await chat.export_l2() == before
    # Our own export of the space, imported back, is recognised by its ids as well.
    ours = (await chat.run_json("!memory export l2"))
    harness.host.reset_counts()
    back = await chat.run("!memory import l2 " + json.dumps(ours))
    assert "Already remembered, not imported: 3 records" in back and harness.host.count(A.VECTOR_UPSERT) == 0


async def test_a_batch_with_nothing_to_store_is_refused_and_writes_nothing(harness, kb):
    chat = open_chat(harness, "g1")
    harness.host.reset_counts()
    reply = await chat.run('!memory import l2 [{"content": "gone", "status": "deleted"}, 7]')
    assert reply.startswith("Error: no record can be stored: [0] status deleted") and "[1] must be" in reply
    assert harness.host.count(A.VECTOR_UPSERT) == 0 and await chat.export_l2() == []


# ------------------------------------------------------------------------------------ KB upload
def _upload(records: Any) -> bytes:
    return json.dumps(records).encode()


async def _contents(harness, launcher_id: str) -> list[str]:
    scope = await harness.plugin.memory.scope_for(ident(launcher_id))
    return sorted(e.content for e in await harness.plugin.memory.all_episodes(scope))


async def test_an_official_upload_goes_to_the_spaces_its_user_keys_name(harness):
    kb = await harness.create_memory_kb()
    harness.host.bots = ["bot-1"]
    records = [
        {"content": "group one loves dumplings", "tags": ["food"], "importance": 3,
         "timestamp": "2026-02-01T12:00:00Z", "user_key": "bot-1:group_g1", "status": "active"},
        {"content": "group two meets on Mondays", "user_key": "bot-1:group_g2", "timestamp": "2026-02-03 08:30:00"},
        {"content": "a record that names no space"},  # the official default user_key, "imported"
        {"content": "another bot's group", "user_key": "bot-9:group_g1"},
        {"content": "a bot-wide key in a per-chat KB", "user_key": "bot:bot-1"},
        {"content": "the old plan", "user_key": "bot-1:group_g1", "status": "deleted"},
        {"content": "group one's old venue", "user_key": "bot-1:group_g1", "status": "archived"},
    ]
    result = await harness.ingest(kb, "doc-official", "memories.json", _upload(records))
    assert result["status"] == "completed" and result["chunks_created"] == 3, result
    reasons = {s["index"]: s["reason"] for s in result["metadata"]["skipped"]}
    assert sorted(reasons) == [2, 3, 4, 5]
    assert "'imported' is not a memory space of this knowledge base" in reasons[2]
    assert "names a bot this LangBot does not have" in reasons[3]
    assert "'bot:bot-1' is not a memory space" in reasons[4] and "status deleted" in reasons[5]
    assert await _contents(harness, "g1") == ["group one loves dumplings", "group one's old venue"]
    assert await _contents(harness, "g2") == ["group two meets on Mondays"]
    [monday] = await harness.plugin.memory.all_episodes(await harness.plugin.memory.scope_for(ident("g2")))
    assert monday.timestamp == "2026-02-03T08:30:00Z"  # a naive timestamp is UTC there, as the official read it
    # Nothing went anywhere the file did not name.
    for other in ("g9", "imported"):
        assert await _contents(harness, other) == []
    # Deleting the document removes exactly what it created, in every space it wrote into.
    memory = harness.plugin.memory
    assert await memory.delete_document(kb, "doc-official") == 3
    assert await _contents(harness, "g1") == [] and await _contents(harness, "g2") == []


async def test_an_official_upload_in_bot_isolation_takes_bot_keys_only(harness):
    kb = await harness.kb_create(config={"embedding_model_uuid": "emb-1", "isolation": "bot"})
    harness.host.bots = ["bot-1"]
    records = [{"content": "the bot's team is in Berlin", "user_key": "bot:bot-1"},
               {"content": "a per-chat key", "user_key": "bot-1:group_g1"}]
    result = await harness.ingest(kb, "doc-bot", "memories.json", _upload(records))
    assert result["status"] == "completed" and result["chunks_created"] == 1, result
    [skipped] = result["metadata"]["skipped"]
    assert skipped["index"] == 1 and "bot isolation: bot:<bot uuid>" in skipped["reason"]
    assert await _contents(harness, "g5") == ["the bot's team is in Berlin"]  # every chat of the bot


async def test_an_official_upload_with_nothing_to_store_fails_with_the_reasons(harness):
    kb = await harness.create_memory_kb()
    harness.host.reset_counts()
    result = await harness.ingest(kb, "doc-none", "memories.json", _upload({"content": "one record, no key"}))
    assert result["status"] == "failed"
    assert result["error_message"].startswith("no record can be stored: [0] user_key 'imported'")
    assert '"scope"' in result["error_message"]  # and how to name the conversation instead
    assert harness.host.count(A.VECTOR_UPSERT) == 0
