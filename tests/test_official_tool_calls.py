"""The official tools' calls that `tests/test_profile_official.py` and `tests/test_recall_official_params.py`
leave out (issue 34, "Done means": each official parameter has a test): `update_profile` setting the
`name` field, naming `scope: session` outright, removing a value by `value` alone; `recall_memory`'s
`top_k` bounding what comes back, as a prompt written for the official plugin calls them."""

from __future__ import annotations

from typing import Any

from testhost import PluginHarness
from tests.chat import Chat, Place, open_chat, tool


async def _l1(chat: Chat) -> dict[str, Any]:
    data: dict[str, Any] = await chat.run_json("!memory export")
    return data


async def test_update_profile_name_session_scope_and_remove_by_value(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    alice = open_chat(harness, "g1", sender_id="alice", sender_name="Alice")
    named = await alice.tool("update_profile", {"scope": "speaker", "field": "name", "action": "set",
                                                "value": "Ali"})
    assert named["ok"] is True and named["scope"] == "speaker", named
    team = await alice.tool("update_profile", {"scope": "session", "field": "name", "action": "set",
                                               "value": "Release crew"})
    assert team["ok"] is True and team["scope"] == "session", team
    # A trait named in the session scope goes to the chat's profile, not the speaker's (its default).
    await alice.tool("update_profile", {"scope": "session", "field": "traits", "action": "add",
                                        "value": "ships on Fridays"})
    for value in ("likes tea", "likes maps"):
        await alice.tool("update_profile", {"field": "preferences", "action": "add", "value": value})
    removed = await alice.tool("update_profile", {"field": "preferences", "action": "remove", "value": "likes tea"})
    assert removed["ok"] is True, removed

    data = await _l1(alice)
    speaker, session = data["speaker_profiles"]["alice"], data["session_profile"]
    assert speaker["name"] == "Ali" and speaker["preferences"] == ["likes maps"] and speaker["traits"] == []
    assert session["name"] == "Release crew" and session["traits"] == ["ships on Fridays"]
    shown = await alice.run("!memory profile")
    assert "Release crew" in shown and "Ali" in shown and "likes tea" not in shown, shown


async def test_recall_top_k_bounds_what_comes_back(harness: PluginHarness, kb: str) -> None:
    room = Place("group", "harbour")
    for text in ("the harbour opens at six", "the harbour closes at ten", "the harbour cafe sells tea",
                 "the harbour master is Lin"):
        saved = await tool(harness, room, "remember", {"content": text}, sender="alice")
        assert saved.get("episode_id"), saved
    counts = {}
    for top_k in (1, 3, 20):
        result = await tool(harness, room, "recall_memory", {"query": "harbour", "top_k": top_k}, sender="alice")
        counts[top_k] = len(result["episodes"])
    assert counts == {1: 1, 3: 3, 20: 4}
