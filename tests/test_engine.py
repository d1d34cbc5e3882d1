"""KnowledgeEngine through the SDK RAG dispatch: KB lifecycle, retrieve, JSON document import (E10, S8)."""

from __future__ import annotations

import json

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.entities.io.errors import ActionCallTimeoutError

from ltm.errors import OutcomeUnknown
from tests.chat import Place, tool
from tests.service_helpers import ident

GROUP1 = Place("group", "g1")
SETTINGS = {"session_name": "group_g1", "bot_uuid": "bot-1", "sender_id": "alice"}


def _doc(episodes, scope=None) -> bytes:
    scope = scope if scope is not None else {"bot_uuid": "bot-1", "session_name": "group_g1"}
    return json.dumps({"scope": scope, "episodes": episodes}).encode()


async def test_kb_settings_are_validated_persisted_and_single(harness):
    # The runtime turns the hook's exception into the error LangBot shows; here it propagates as is.
    with pytest.raises(ValueError, match="isolation must be one of"):
        await harness.kb_create(config={"embedding_model_uuid": "emb-1", "isolation": "world"})
    with pytest.raises(ValueError, match="embedding_model_uuid is required"):
        await harness.kb_create(config={})
    kb = await harness.kb_create(config={"embedding_model_uuid": "emb-1", "isolation": "bot", "auto_recall_top_k": 3})
    memory = harness.plugin.memory
    kb_id, settings = await memory.memory_kb()
    assert kb_id == kb and settings.isolation.value == "bot" and settings.auto_recall_top_k == 3
    with pytest.raises(ValueError, match="already has a memory knowledge base"):
        await harness.create_memory_kb()
    await harness.restart(fresh_modules=False)
    assert (await harness.plugin.memory.memory_kb())[0] == kb


async def test_kb_delete_removes_config_vectors_and_fences(harness):
    kb = await harness.create_memory_kb()
    await tool(harness, GROUP1, "remember", {"content": "kept until the KB goes"}, sender="alice")
    memory = harness.plugin.memory
    scope = await memory.scope_for(ident("g1"))
    harness.host.fail_next(A.VECTOR_UPSERT, ActionCallTimeoutError)
    with pytest.raises(OutcomeUnknown):
        await memory.remember(scope, {"content": "lost answer"})
    assert await memory.parts.fences.all()
    await harness.kb_delete(kb)
    assert await memory.memory_kb() is None
    assert await memory.parts.fences.all() == []
    assert await harness.host.dump_kb(kb) == []  # the backend collection itself, not through the KB row
    result = await tool(harness, GROUP1, "remember", {"content": "no kb now"}, sender="alice")
    assert result == {"ok": False, "error": "no memory knowledge base configured", "code": "no_knowledge_base"}


async def test_retrieve_is_scoped_and_needs_a_conversation(harness):
    kb = await harness.create_memory_kb()
    await tool(harness, GROUP1, "remember", {"content": "group one likes hiking"}, sender="alice")
    await tool(harness, Place("group", "g2"), "remember", {"content": "group two likes hiking"}, sender="alice")
    found = await harness.retrieve(kb, "hiking", retrieval_settings=SETTINGS)
    assert [r["content"][0]["text"] for r in found["results"]] == ["group one likes hiking"]
    assert found["results"][0]["metadata"]["status"] == "active"
    nobody = await harness.retrieve(kb, "hiking", retrieval_settings={"top_k": 5})
    assert nobody["results"] == [] and "conversation" in nobody["metadata"]["note"]


async def test_json_document_import_and_exact_delete(harness):
    kb = await harness.create_memory_kb()
    kept = await tool(harness, GROUP1, "remember", {"content": "typed by hand"}, sender="alice")
    data = _doc([
        {"content": "Q3 launch led by Alice", "tags": ["work"], "importance": 4,
         "event_at": "2026-07-01T09:00:00+08:00", "sender_id": "alice", "sender_name": "Alice"},
        {"content": "budget frozen until August", "status": "archived", "claim_type": "user_statement"},
    ])
    result = await harness.ingest(kb, "doc-1", "memories.json", data)
    assert result["status"] == "completed" and result["chunks_created"] == 2
    memory = harness.plugin.memory
    scope = await memory.scope_for(ident("g1"))
    imported = [e for e in await memory.all_episodes(scope) if e.document_id == "doc-1"]
    assert {e.content for e in imported} == {"Q3 launch led by Alice", "budget frozen until August"}
    assert {e.fact.source_ref for e in imported} == {"document:doc-1"}
    launch = next(e for e in imported if e.tags == ("work",))
    assert (launch.importance, launch.fact.event_at, launch.sender_id) == (4, "2026-07-01T01:00:00Z", "alice")
    assert await harness.delete_document(kb, "doc-1") is True
    left = await memory.all_episodes(scope)
    assert [e.episode_id for e in left] == [kept["episode_id"]]
    audit = await memory.audit_export(scope)
    assert [e["operation"] for e in audit].count("document_import") == 2
    assert [e["operation"] for e in audit].count("document_delete") == 2


@pytest.mark.parametrize(
    "data, message",
    [
        (b"{not json", "malformed JSON"),
        (json.dumps({"episodes": [{"content": "x"}]}).encode(), "or name the conversation"),
        (_doc([{"content": ""}]), "[0] content is required"),
        (_doc({"content": "not a list"}), "must be a list"),
    ],
)
async def test_documents_with_nothing_to_store_fail_and_write_nothing(harness, data, message):
    kb = await harness.create_memory_kb()
    harness.host.reset_counts()
    result = await harness.ingest(kb, "doc-bad", "bad.json", data)
    assert result["status"] == "failed" and message in result["error_message"]
    assert harness.host.count(A.VECTOR_UPSERT) == 0


async def test_a_record_that_cannot_be_stored_is_skipped_and_the_rest_written(harness):
    kb = await harness.create_memory_kb()
    data = _doc([{"content": "ok one"}, {"content": "bad", "event_at": "2026-01-01T10:00:00"}, {"content": ""},
                 {"content": "ok two"}])
    result = await harness.ingest(kb, "doc-mixed", "mixed.json", data)
    assert result["status"] == "completed" and result["chunks_created"] == 2
    assert [s["index"] for s in result["metadata"]["skipped"]] == [1, 2]
    assert "event_at has no timezone" in result["metadata"]["skipped"][0]["reason"]
    scope = await harness.plugin.memory.scope_for(ident("g1"))
    assert sorted(e.content for e in await harness.plugin.memory.all_episodes(scope)) == ["ok one", "ok two"]


async def test_capabilities_offer_document_upload(harness):
    assert await harness.rag_capabilities() == ["doc_ingestion"]


async def test_retrieve_degrades_to_nothing_when_the_host_fails(harness):
    kb = await harness.create_memory_kb()
    await tool(harness, GROUP1, "remember", {"content": "group one likes hiking"}, sender="alice")
    harness.host.fail_next(A.INVOKE_EMBEDDING, ActionCallTimeoutError)
    found = await harness.retrieve(kb, "hiking", retrieval_settings=SETTINGS)
    assert found["results"] == [] and found["metadata"]["error"]


async def test_retrieve_log_shortens_the_query_and_never_logs_a_secret(harness, caplog):
    kb = await harness.create_memory_kb()
    caplog.set_level("INFO", logger="LongTermMemory")
    await harness.retrieve(kb, "my password: hunter2-very-secret and more words", retrieval_settings=SETTINGS)
    await harness.retrieve(kb, "x" * 100, retrieval_settings=SETTINGS)
    lines = [r.getMessage() for r in caplog.records if "engine retrieve" in r.getMessage()]
    assert "<redacted>" in lines[0] and "hunter2" not in " ".join(lines)
    assert "x" * 40 in lines[1] and "x" * 41 not in lines[1]
