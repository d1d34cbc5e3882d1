"""The plugin as an installed (desired-state) worker: every action runs in the SDK's invocation
scope, config is a frozen snapshot, and nothing may outlive its action (docs/HOST-FACTS.md 1.2, 1.3, 10)."""

from __future__ import annotations

from testhost import PluginHarness
from tests.chat import Place, prompt_turn, tool


async def test_tools_injection_and_command_work_in_installed_mode(supported_host):
    harness = PluginHarness(supported_host, installed_mode=True)
    await harness.start({"max_profile_traits": 2, "command_admin_only_in_groups": True})
    try:
        await harness.create_memory_kb()
        chat = Place("group", "g1")
        saved = await tool(harness, chat, "remember", {"content": "demo day is on the 12th"}, sender="alice")
        assert saved["ok"] is True
        profile = await tool(harness, chat, "update_profile", {"scope": "speaker", "traits": ["a", "b", "c"]},
                             sender="alice")
        assert profile["profile"] == "Traits: b; c"  # the frozen config's limit applies
        turn = await prompt_turn(harness, chat, "alice", "Alice", "when is demo day")
        assert "demo day is on the 12th" in turn.memory_text
        [reply] = await harness.execute_command("!memory list", session=chat.session("alice"),
                                                query_id=turn.query_id)
        assert saved["episode_id"] in reply["text"]
        await harness.settle(timeout=2.0)  # nothing left running after the actions returned
    finally:
        await harness.stop()
