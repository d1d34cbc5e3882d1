"""The Memory Console's page API over a chat's conversation record (V4): read, the summary edited (checked
like a model's, audited), cleared, and carried by the chat's export; the selected space only."""

from __future__ import annotations

from typing import Any

from testhost import PluginHarness
from tests.chat import Place
from tests.test_conversation_hooks import ON, said, turn

G1 = {"scope_key": "bot-1:group_g1", "user_key": "bot-1:group_g1"}
G2 = {"scope_key": "bot-1:group_g2", "user_key": "bot-1:group_g2"}


async def console(h: PluginHarness, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await h.page_api("console", endpoint, "POST", body)
    data: dict[str, Any] = response["data"]
    return data


async def test_the_console_reads_edits_and_clears_one_chats_record(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**{**ON, "conversation_max_turns": 4})
    for n in range(1, 5):
        await turn(harness, f"plan part {n}", f"reply {n}")
    await turn(harness, "another chat", "ok", place=Place("group", "g2"))
    shown = await console(harness, "/conversation", {"space": G1})
    assert shown["ok"] and shown["settings"]["enabled"] is True and shown["settings"]["host_window"] == 0
    assert [t["seq"] for t in shown["record"]["turns"]] == [3, 4] and shown["record"]["summary"]["folded"] == 2
    assert "another chat" not in str(shown)

    edited = await console(harness, "/conversation/summary", {"space": G1, "text": "The plan has four parts."})
    assert edited["ok"] and edited["record"]["summary"]["text"] == "The plan has four parts."
    assert edited["changes_spaces"] is True  # the overview's "last change" moved
    refused = await console(harness, "/conversation/summary",
                            {"space": G1, "text": "key sk_live_51HqLyjWDarjtT1zdp7dc"})
    assert refused["ok"] is False and "secret" in refused["error"] and "sk_live" not in str(refused)
    too_long = await console(harness, "/conversation/summary", {"space": G1, "text": "x" * 2_001})
    assert too_long["ok"] is False and "longer than 2000" in too_long["error"]

    exported = (await console(harness, "/export", {"space": G1}))["export"]["conversation"]
    assert exported["format"] == "longterm-memory-conversation" and exported["summary"]["text"] == (
        "The plan has four parts.")
    cleared = await console(harness, "/conversation/clear", {"space": G1})
    assert cleared["ok"] and cleared["cleared"] == 2 and cleared["record"]["turns"] == []
    assert said(harness) == [] and len(said(harness, Place("group", "g2"))) == 1
    unknown = await console(harness, "/conversation", {"space": G2, "text": "x"})
    assert unknown["ok"] is False and unknown["code"] == "invalid_input"
