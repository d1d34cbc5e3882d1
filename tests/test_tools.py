"""The four tools through the SDK tool dispatch (T1-T6, E4, E5 in docs/REQUIREMENTS.md)."""

from __future__ import annotations

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

from ltm.episodes.model import EpisodeStatus
from tests.chat import Place, open_chat, tool
from tests.service_helpers import ident

GROUP1, GROUP2 = Place("group", "g1"), Place("group", "g2")


async def _remember(harness, content, chat=GROUP1, sender="alice", **extra):
    result = await tool(harness, chat, "remember", {"content": content, **extra}, sender=sender)
    assert result["ok"] is True, result
    return result["episode_id"]


async def _rejected_without_writes(harness, params, sender="alice", chat=GROUP1) -> str:
    memory = harness.plugin.memory
    scope = await memory.scope_for(ident(chat.launcher_id, bot=chat.bot_uuid))
    before = await memory.all_episodes(scope)
    harness.host.reset_counts()
    result = await tool(harness, chat, "remember", params, sender=sender)
    assert result["ok"] is False
    assert harness.host.count(A.VECTOR_UPSERT) == 0 and harness.host.count(A.VECTOR_DELETE) == 0
    assert await memory.all_episodes(scope) == before
    return result["error"]


async def test_supersede_of_another_speakers_episode_fails_before_any_write(harness, kb):
    bobs = await _remember(harness, "Bob's flight is at 9", sender="bob")
    error = await _rejected_without_writes(harness, {"content": "flight is at 10", "supersedes": [bobs]})
    assert "another speaker" in error


async def test_supersede_of_another_scopes_episode_fails(harness, kb):
    theirs = await _remember(harness, "group two's plan", chat=GROUP2)
    error = await _rejected_without_writes(harness, {"content": "new plan", "supersedes": [theirs]})
    assert "not in this scope" in error


async def test_supersede_of_an_archived_episode_fails(harness, kb):
    old = await _remember(harness, "old plan")
    memory = harness.plugin.memory
    await memory.archive(await memory.scope_for(ident("g1")), old)
    error = await _rejected_without_writes(harness, {"content": "new plan", "supersedes": [old]})
    assert "archived" in error


async def test_supersede_with_one_bad_id_among_good_ones_fails_whole_call(harness, kb):
    good = await _remember(harness, "plan A")
    error = await _rejected_without_writes(
        harness, {"content": "plan B", "supersedes": [good, "00000000-0000-4000-8000-000000000000"]})
    assert "00000000-0000-4000-8000-000000000000" in error
    memory = harness.plugin.memory
    assert (await memory.get_episode(await memory.scope_for(ident("g1")), good)).is_active


async def test_valid_correction_links_both_records_and_keeps_the_old_one(harness, kb):
    old = await _remember(harness, "the offsite is in Lisbon", importance=4, tags=["offsite"])
    result = await tool(harness, GROUP1, "remember", {"content": "the offsite moved to Porto", "supersedes": [old]},
                        sender="alice")
    assert result["superseded"] == [old]
    memory = harness.plugin.memory
    scope = await memory.scope_for(ident("g1"))
    previous = await memory.get_episode(scope, old)
    assert previous.status is EpisodeStatus.SUPERSEDED and previous.superseded_by == result["episode_id"]
    assert (previous.content, previous.importance, previous.tags) == ("the offsite is in Lisbon", 4, ("offsite",))
    assert previous.superseded_at
    newer = await memory.get_episode(scope, result["episode_id"])
    assert newer.supersedes == (old,)
    hidden = await memory.list_episodes(scope, statuses=(EpisodeStatus.SUPERSEDED,))
    assert [e.episode_id for e in hidden.episodes] == [old]
    recalled = await tool(harness, GROUP1, "recall_memory", {"query": "offsite"}, sender="alice")
    assert [e["id"] for e in recalled["episodes"]] == [result["episode_id"]]  # active only (E3)


async def test_tools_work_without_a_pipeline_query(harness, kb):
    saved = await tool(harness, GROUP1, "remember", {"content": "runner path fact"}, sender="erin", live=False)
    assert saved["ok"] is True
    recalled = await tool(harness, GROUP1, "recall_memory", {"query": "runner path"}, sender="erin", live=False)
    [episode] = recalled["episodes"]
    assert episode["id"] == saved["episode_id"] and episode["sender"]["id"] == "erin"
    profile = await tool(harness, GROUP1, "update_profile", {"scope": "speaker", "name": "Erin"}, sender="erin",
                         live=False)
    assert profile["ok"] is True
    gone = await tool(harness, GROUP1, "forget", {"episode_id": saved["episode_id"]}, sender="erin", live=False)
    assert gone == {"ok": True, "deleted": saved["episode_id"]}


async def test_recall_memory_filters_and_shape(harness, kb):
    await _remember(harness, "trip to Kyoto booked", tags=["travel"], event_at="2026-10-01T09:00:00+09:00")
    await _remember(harness, "trip budget approved", sender="bob", tags=["money"])
    result = await tool(harness, GROUP1, "recall_memory", {"query": "trip", "speaker": "alice"}, sender="alice")
    assert set(result) == {"session_profile", "speaker_profile", "episodes"}
    [kyoto] = result["episodes"]
    assert kyoto["event_at"] == "2026-10-01T00:00:00Z" and kyoto["tags"] == ["travel"]
    assert {"id", "content", "timestamp", "sender", "tags", "importance", "event_at"} <= set(kyoto)
    tagged = await tool(harness, GROUP1, "recall_memory", {"query": "trip", "tags": ["money"]}, sender="alice")
    assert [e["content"] for e in tagged["episodes"]] == ["trip budget approved"]
    by_event = await tool(harness, GROUP1, "recall_memory",
                          {"query": "trip", "since": "2026-09-30T00:00:00Z", "time_field": "event_at"},
                          sender="alice")
    assert [e["content"] for e in by_event["episodes"]] == ["trip to Kyoto booked"]


@pytest.mark.parametrize(
    "name, params, message",
    [
        ("remember", {}, "content is required"),
        ("remember", {"content": "x", "importance": "high"}, "importance"),
        ("recall_memory", {"top_k": 0}, "top_k"),
        ("recall_memory", {"since": "yesterday"}, "since"),
        ("update_profile", {"name": "x"}, "scope is required"),
        ("update_profile", {"scope": "speaker", "traits": "x", "mode": "append"}, "mode"),
        ("forget", {}, "episode_id is required"),
        ("forget", {"episode_id": "00000000-0000-4000-8000-000000000000"}, "not found"),
    ],
)
async def test_errors_are_short_specific_messages(harness, kb, name, params, message):
    result = await tool(harness, GROUP1, name, params, sender="alice")
    assert result["ok"] is False and message in result["error"]
    assert "Traceback" not in result["error"] and len(result["error"]) < 300


async def test_without_a_memory_kb_tools_say_so(harness):
    result = await tool(harness, GROUP1, "remember", {"content": "anything"}, sender="alice")
    assert result == {"ok": False, "error": "no memory knowledge base configured", "code": "no_knowledge_base"}


async def test_forget_of_another_scopes_episode_is_not_found(harness, kb):
    theirs = await _remember(harness, "group two secret plan", chat=GROUP2)
    result = await tool(harness, GROUP1, "forget", {"episode_id": theirs}, sender="alice")
    assert result["ok"] is False and "not found" in result["error"]
    memory = harness.plugin.memory
    assert (await memory.get_episode(await memory.scope_for(ident("g2")), theirs)).is_active


async def test_tool_logs_name_keys_and_counts_never_content(harness, kb, caplog):
    caplog.set_level("INFO", logger="LongTermMemory")
    secretish = "Dana's surprise party is at the lighthouse"
    await _remember(harness, secretish, tags=["party"])
    await tool(harness, GROUP1, "recall_memory", {"query": "lighthouse party"}, sender="alice")
    lines = [r.getMessage() for r in caplog.records if r.name == "LongTermMemory"]
    assert any(line.startswith("[LongTermMemory] tool Remember") and "params=['content', 'tags']" in line
               for line in lines)
    assert any("vector write" in line for line in lines) and any("recall scope=" in line for line in lines)
    assert not [line for line in lines if "lighthouse" in line or "surprise" in line]


async def test_unknown_and_identity_like_arguments_are_ignored_and_named(harness, kb):
    """Models add arguments of their own; they are ignored (and said so), never used for identity."""
    result = await tool(harness, GROUP1, "remember",
                        {"content": "the demo is on Friday", "reason": "user asked", "user_key": "bot:other",
                         "session_name": "group_g2", "sender_id": "mallory", "scope_key": "x", "bot_uuid": "b2"},
                        sender="alice")
    assert result["ok"] is True
    assert result["ignored_params"] == ["bot_uuid", "reason", "scope_key", "sender_id", "session_name", "user_key"]
    [hit] = (await tool(harness, GROUP1, "recall_memory", {"query": "demo", "why": "check"}, sender="alice"))[
        "episodes"]
    assert hit["id"] == result["episode_id"] and hit["sender"]["id"] == "alice"
    elsewhere = await tool(harness, Place("group", "g2"), "recall_memory", {"query": "demo"}, sender="mallory")
    assert elsewhere["episodes"] == [] and "ignored_params" not in elsewhere


@pytest.mark.parametrize("params", [
    {"content": "deploy notes", "tags": ["ops", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"]},
    {"content": "deploy notes", "source_ref": "https://deploy:hunter2pass@ci.example.com/job/1"},
    {"content": "我的银行卡密码是 838201"},
    {"content": "token for the bot: xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx"},
])
async def test_credentials_in_any_stored_field_are_refused_and_nothing_is_written(harness, kb, params):
    message = await _rejected_without_writes(harness, params)
    assert message.startswith("refused:") and "secrets are never stored" in message
    for value in params.values():
        for part in (value if isinstance(value, list) else [value]):
            if part not in ("deploy notes", "ops"):
                assert part not in message  # the message names the field, never the text


async def test_an_import_cannot_carry_a_credential_in_its_sender_fields(harness, kb):
    chat = open_chat(harness)
    reply = await chat.run('!memory import l2 [{"content": "ok", "sender_name": "password: hunter2hunter2"}]')
    assert "no record can be stored: [0] refused: sender_name looks like a password" in reply
    assert "hunter2" not in reply
    assert await chat.export_l2() == []
