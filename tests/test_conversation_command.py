"""`!memory conversation`, its clearing, its export and import, and a speaker's turns removed by `delete
--speaker` and `forget-me`, through the SDK's command dispatch on the test host (V4)."""

from __future__ import annotations

import json

import pytest

from testhost import PluginHarness
from tests.chat import Place, open_chat
from tests.test_conversation_hooks import ON, said, turn

G2 = Place("group", "g2")


async def three_speakers(h: PluginHarness) -> None:
    await turn(h, "the boat is called Marigold", "Lovely name.", sender="u1", name="Alice")
    await turn(h, "I bring the quince jam", "Sweet.", sender="u2", name="Bob")
    await turn(h, "I steer on the way back", "Noted.", sender="u3", name="Carol")


async def test_the_conversation_shows_the_summary_and_the_last_turns(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**{**ON, "conversation_max_turns": 6})
    for n in range(1, 6):
        await turn(harness, f"message number {n}", f"reply {n}")
    reply = await open_chat(harness, privilege=1).run("!memory conversation")
    lines = reply.splitlines()
    assert lines[0].startswith("Conversation record of bot-1:group_g1: 3 turns kept, a summary of 2 turns earlier")
    assert "Summary (short lines, no model," in reply and "message number 1" in lines[1]
    assert "Last 3 turns:" in reply and "#5 " in reply and "message number 5" in reply and "reply 5" in reply
    assert lines[-1].startswith("Clear: !memory conversation clear")


async def test_the_setting_off_is_said_and_an_empty_record_too(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    assert (await chat.run("!memory conversation")).startswith("The conversation record is off")
    await chat.run("!memory settings set conversation_enabled true")
    assert (await chat.run("!memory conversation")) == "Nothing recorded in this chat yet."


async def test_clearing_follows_the_admin_rule_and_is_audited(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await three_speakers(harness)
    member, admin = open_chat(harness, privilege=1), open_chat(harness)
    assert "needs a bot admin" in await member.run("!memory conversation clear")
    assert len(said(harness)) == 3
    assert (await admin.run("!memory conversation clear")).startswith(
        "Cleared the conversation record of bot-1:group_g1: 3 turns and the summary of 0 turns earlier")
    assert said(harness) == []
    assert "conversation_clear" in [e["operation"] for e in await admin.audit_entries()]
    assert "empty already" in await admin.run("!memory conversation clear")
    assert "unknown action" in await admin.run("!memory conversation wipe")


async def test_a_conversation_is_exported_and_imported_into_another_chat(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await three_speakers(harness)
    source = open_chat(harness)
    document = await source.run_json("!memory export conversation")
    assert document["format"] == "longterm-memory-conversation" and len(document["turns"]) == 3
    target = open_chat(harness, "g2")
    reply = await target.run(f"!memory import conversation {json.dumps(document)}")
    assert reply.startswith("Imported into bot-1:group_g2: 3 turns kept"), reply
    assert said(harness, G2) == said(harness)
    again = await target.run(f"!memory import conversation {json.dumps(document)}")
    assert "already has a conversation record" in again and len(said(harness, G2)) == 3
    assert "conversation export" in await target.run('!memory import conversation {"turns": []}')


@pytest.mark.parametrize("command", ["!memory delete --speaker u2", "!memory forget-me --confirm"])
async def test_a_speakers_turns_go_and_the_others_stay(harness: PluginHarness, command: str) -> None:
    await harness.create_memory_kb(**ON)
    await three_speakers(harness)
    bob = open_chat(harness, sender_id="u2", sender_name="Bob")
    if command.startswith("!memory delete"):
        preview = await bob.run(command + " --dry-run")
        assert "1 of their turns in this chat's conversation record" in preview and len(said(harness)) == 3
    else:
        assert "1 conversation turn" in await bob.run("!memory forget-me")
        assert "Your turns in this chat's conversation record: 1" in await bob.run("!memory me")
    reply = await bob.run(command)
    assert ("removed 1 of their turns" in reply) if "delete" in command else ("1 conversation turn" in reply), reply
    assert said(harness) == [("u1", "the boat is called Marigold", "Lovely name."),
                             ("u3", "I steer on the way back", "Noted.")]
    assert "quince" not in json.dumps({k: v.decode("utf-8", "replace") for k, v in harness.host.storage.items()})


async def test_delete_with_another_filter_leaves_the_conversation_alone(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await three_speakers(harness)
    await open_chat(harness).run("!memory delete --speaker u2 --tag trips")
    assert len(said(harness)) == 3


async def test_help_names_the_conversation_group(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    assert "conversation — conversation" in await chat.run("!memory help")
    assert "!memory conversation clear" in await chat.run("!memory help conversation")
