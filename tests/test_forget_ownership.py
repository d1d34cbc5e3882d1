"""The `forget` tool in a shared chat deletes only the speaker's own episodes (or episodes with no
speaker): anyone in a group, or a prompt injection there, can steer the model, so another member's
episode is refused with the way to go (a bot admin's `!memory forget`). The same rule on every
backend and in bot isolation; `!memory forget` keeps its admin rule."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from testhost import FakeLangBotHost, PluginHarness
from tests.chat import Place, open_chat, tool

G1 = Place("group", "g1")
P1, P2 = Place("person", "p1"), Place("person", "p2")


@pytest.fixture(params=["session", "bot"])
async def plugin(request: pytest.FixtureRequest, host: FakeLangBotHost) -> AsyncIterator[PluginHarness]:
    harness = PluginHarness(host)
    await harness.start()
    await harness.create_memory_kb(isolation=request.param)
    try:
        yield harness
    finally:
        await harness.stop()


async def remember(h: PluginHarness, place: Place, sender: str, content: str) -> str:
    result = await tool(h, place, "remember", {"content": content}, sender=sender)
    assert result["ok"] is True, result
    return str(result["episode_id"])


async def forget(h: PluginHarness, place: Place, sender: str, episode_id: str) -> dict[str, Any]:
    result: dict[str, Any] = await tool(h, place, "forget", {"episode_id": episode_id}, sender=sender)
    return result


async def stored_ids(h: PluginHarness, place: Place) -> set[str]:
    chat = open_chat(h, place.launcher_id, sender_id="admin", launcher_type=place.launcher_type)
    return {e["id"] for e in await chat.export_l2("--status all")}


async def test_in_a_group_the_tool_forgets_only_the_speakers_own_episodes(plugin: PluginHarness) -> None:
    alices = await remember(plugin, G1, "alice", "Alice's locker code is on the card")
    bobs = await remember(plugin, G1, "bob", "Bob parks on level 2")
    nobodys = await remember(plugin, G1, "", "the projector needs an HDMI adapter")

    refused = await forget(plugin, G1, "bob", alices)
    assert refused["ok"] is False and refused["code"] == "not_permitted", refused
    assert "another speaker" in refused["error"] and f"!memory forget {alices}" in refused["error"]
    assert alices in await stored_ids(plugin, G1)

    assert await forget(plugin, G1, "bob", bobs) == {"ok": True, "deleted": bobs}
    assert await forget(plugin, G1, "bob", nobodys) == {"ok": True, "deleted": nobodys}
    assert await stored_ids(plugin, G1) == {alices}

    # The admin command keeps its own rule: a bot admin deletes anyone's episode, a member is refused.
    member = open_chat(plugin, "g1", sender_id="bob", privilege=1)
    assert "only bot admins" in await member.run(f"!memory forget {alices}")
    admin = open_chat(plugin, "g1", sender_id="admin")
    assert (await admin.run(f"!memory forget {alices}")).startswith(f"Deleted episode {alices}")
    assert await stored_ids(plugin, G1) == set()


async def test_chats_that_share_memory_follow_the_same_rule(plugin: PluginHarness) -> None:
    alices = await remember(plugin, P1, "alice", "Alice's dentist is on Tuesday")
    carol = await forget(plugin, P2, "carol", alices)
    found = await plugin.plugin.memory.memory_kb()
    assert found is not None
    if found[1].isolation.value == "bot":
        # One episode space for every chat of the bot: Carol's private chat reaches Alice's episode, and
        # the tool refuses it there as in a group.
        assert carol["ok"] is False and carol["code"] == "not_permitted", carol
        assert alices in await stored_ids(plugin, P1)
    else:
        # Each private chat has its own space: Alice's episode is not even in Carol's.
        assert carol["ok"] is False and carol["code"] == "not_found", carol
    # In her own private chat Alice forgets her own episode either way.
    assert await forget(plugin, P1, "alice", alices) == {"ok": True, "deleted": alices}
