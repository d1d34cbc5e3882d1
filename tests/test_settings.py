"""Effective settings with overrides, on the real test host (Chroma, Qdrant, Milvus Lite): the KB's
creation settings are the base, an admin overrides one for the installation with `!memory settings
set` or the console's Settings tab, and the next turn runs with it; a bad value gets the creation's
message; isolation does not change under stored memories."""

from __future__ import annotations

from typing import Any

import pytest

from testhost import PluginHarness
from testhost.hooks import installation_audit
from tests.chat import Place, open_chat, prompt_turn

G1 = Place("group", "g1")


async def console(h: PluginHarness, endpoint: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    response = await h.page_api("console", endpoint, "POST", body or {})
    assert response["error"] is None, response
    data: dict[str, Any] = response["data"]
    return data


async def installation_ops(h: PluginHarness) -> list[tuple[str, str, dict[str, Any]]]:
    page = await installation_audit(h.plugin.memory, 1, 100)
    return [(e["operation"], e["target_id"], e["meta"]) for e in reversed(page.entries)]


async def every_record(h: PluginHarness, *chats: Any) -> list[dict[str, Any]]:
    return [e for chat in chats for e in await chat.export_l2("--status all")]


async def test_an_override_changes_the_next_turn_and_is_audited(harness: PluginHarness) -> None:
    kb_id = await harness.create_memory_kb()
    admin = open_chat(harness, "g1", sender_id="u1")
    for fact in ("the rota starts on Monday", "the rota lists Ann first", "the rota changes in May"):
        await admin.remember(fact)
    before = await prompt_turn(harness, G1, "u2", "Bob", "what is on the rota?")
    assert len(before.context["episodes"]) == 3  # auto_recall_top_k 5 (the creation value)

    reply = await admin.run("!memory settings set auto_recall_top_k 1")
    assert reply.startswith("auto_recall_top_k: 5 -> 1 (override for this installation)"), reply
    after = await prompt_turn(harness, G1, "u2", "Bob", "what is on the rota?")
    assert len(after.context["episodes"]) == 1

    assert ("settings_override", "auto_recall_top_k", {
        "kb_id": kb_id, "before": 5, "after": 1, "creation": 5,
        "origin": "override"}) in await installation_ops(harness)
    shown = await admin.run("!memory settings")
    assert "auto_recall_top_k: 1 (override; created 5)" in shown and "isolation: session (creation)" in shown
    health = await admin.run("!memory health")
    assert "auto_recall_top_k = 1 (created 5)" in health, health

    assert (await admin.run("!memory settings reset auto_recall_top_k")).startswith(
        "auto_recall_top_k: 1 -> 5 (the creation value again)")
    again = await prompt_turn(harness, G1, "u2", "Bob", "what is on the rota?")
    assert len(again.context["episodes"]) == 3


async def test_a_bad_value_gets_the_message_creation_gives_on_every_surface(harness: PluginHarness) -> None:
    with pytest.raises(ValueError) as creation:  # the host shows the admin this message and drops the KB
        await harness.create_memory_kb(auto_recall_top_k="lots")
    message = "auto_recall_top_k must be a whole number from 0 to 20"
    assert str(creation.value) == f"LongTermMemory: {message}"
    await harness.create_memory_kb()
    admin = open_chat(harness, "g1", sender_id="u1")
    assert message in await admin.run("!memory settings set auto_recall_top_k lots")
    bad = await console(harness, "/settings/set", {"name": "auto_recall_top_k", "value": "lots"})
    assert bad["ok"] is False and bad["code"] == "invalid_input" and message in bad["error"]
    assert "Unknown setting “top_k”" in await admin.run("!memory settings set top_k 3")
    assert "Usage: !memory settings" in await admin.run("!memory settings set auto_recall_top_k")
    assert [op for op, _, _ in await installation_ops(harness)] == ["kb_register"]


async def test_only_bot_admins_change_settings(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    member = open_chat(harness, "g1", sender_id="u2", privilege=1)
    private = open_chat(harness, "p1", sender_id="u3", privilege=1, launcher_type="person")
    for chat in (member, private):
        reply = await chat.run("!memory settings set consolidation_enabled true")
        assert reply.startswith("!memory settings set: only bot admins change the settings here"), reply
        assert "Plugin Pages > Memory Console > Settings tab" in reply, reply  # where else it can be changed
    assert "consolidation_enabled: false (creation)" in await member.run("!memory settings")
    assert [op for op, _, _ in await installation_ops(harness)] == ["kb_register"]


async def test_consolidation_switched_on_by_an_override_on_a_kb_created_without_it(harness: PluginHarness) -> None:
    await harness.create_memory_kb()  # consolidation_enabled: false at creation
    admin = open_chat(harness, "p1", sender_id="u1", launcher_type="person")
    await admin.remember("the plan is ready")
    assert "consolidation is switched off" in await admin.run("!memory consolidate run")
    changed = await console(harness, "/settings/set", {"name": "consolidation_enabled", "value": True})
    assert changed["ok"] and changed["changed"] and changed["setting"]["origin"] == "override"
    assert "switched off" not in await admin.run("!memory consolidate run")
    listing = await console(harness, "/settings")
    row = next(s for s in listing["settings"] if s["name"] == "consolidation_enabled")
    assert row == {"name": "consolidation_enabled", "value": True, "origin": "override", "creation": False,
                   "choices": []} and listing["overridden"] == 1
    reset = await console(harness, "/settings/reset", {"name": "consolidation_enabled"})
    assert reset["ok"] and reset["setting"]["value"] is False
    assert "consolidation is switched off" in await admin.run("!memory consolidate run")


async def test_isolation_is_refused_on_a_kb_that_holds_memories(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    g1 = open_chat(harness, "g1", sender_id="u1")
    g2 = open_chat(harness, "g2", sender_id="u2")
    await g1.remember("the g1 plan")
    kept = await g2.remember("the g2 plan")
    await g2.run(f"!memory archive {kept}")
    before = await every_record(harness, g1, g2)

    reply = await g1.run("!memory settings set isolation bot")
    assert "isolation cannot change from session to bot" in reply and "already holds memories" in reply, reply
    assert "Nothing was changed" in reply
    refused = await console(harness, "/settings/set", {"name": "isolation", "value": "bot"})
    assert refused["ok"] is False and "already holds memories" in refused["error"]
    assert await every_record(harness, g1, g2) == before
    assert "isolation: session (creation)" in await g1.run("!memory settings")
    assert "session isolation" in await g1.run("!memory")


async def test_isolation_changes_on_an_empty_kb(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    g1 = open_chat(harness, "g1", sender_id="u1")
    assert (await g1.run("!memory settings set isolation bot")).startswith("isolation: session -> bot")
    await g1.remember("shared by every chat of the bot")
    g2 = open_chat(harness, "g2", sender_id="u2")
    assert [e["content"] for e in await g2.export_l2()] == ["shared by every chat of the bot"]


KEY = "sk-proj-abc123DEF456ghi789JKL012mno"


def stored_anywhere(h: PluginHarness, text: str) -> list[str]:
    """Plugin storage keys whose value holds `text` (the KB configuration and every audit log)."""
    return [key for key, value in h.host.storage.items() if text.encode() in value]


async def test_a_credential_is_never_a_setting_value(harness: PluginHarness) -> None:
    """Issue 35, finding 5: a key pasted as a model id was accepted, echoed, stored and shown to every chat."""
    with pytest.raises(ValueError) as creation:
        await harness.create_memory_kb(candidate_model_uuid=KEY)
    assert "refused: the value of candidate_model_uuid looks like an API key" in str(creation.value)
    assert KEY not in str(creation.value)
    await harness.create_memory_kb()
    admin = open_chat(harness, "g1", sender_id="u1")
    for command in (f"!memory settings set candidate_model_uuid {KEY}", f"!memory settings set {KEY} x",
                    f"!memory settings set {KEY}", f"!memory settings {KEY}"):
        reply = await admin.run(command)
        assert "sk-proj" not in reply and "abc123" not in reply, reply
    refused = await admin.run(f"!memory settings set consolidation_model_uuid {KEY}")
    assert "refused: the value of consolidation_model_uuid looks like an API key" in refused, refused
    bad = await console(harness, "/settings/set", {"name": "candidate_model_uuid", "value": KEY})
    assert bad["ok"] is False and bad["code"] == "invalid_input" and "sk-proj" not in str(bad)
    assert "candidate_model_uuid: (empty) (creation)" in await admin.run("!memory settings")
    assert [op for op, _, _ in await installation_ops(harness)] == ["kb_register"]
    assert stored_anywhere(harness, "sk-proj") == []
