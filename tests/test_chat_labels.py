"""Spaces named after their chats (issue 45, point 9): the names a turn comes with, kept as labels.

LangBot gives every turn the group's name and the speaker's display name (`group_name`, `sender_name`).
The listener keeps the latest of each per chat, as labels only (ltm/chat_labels.py): written when a
name changed and never otherwise, cleaned like every host name, never kept when it looks like a
credential, and gone with a person's erasure. `!memory` and the console show them.
"""

from __future__ import annotations

from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

from testhost import PluginHarness
from tests.chat import Place, open_chat

G1 = Place("group", "g1")
P1 = Place("person", "p1")


async def named_turn(harness: PluginHarness, place: Place, sender: str, name: str, group_name: str) -> None:
    query_id = harness.host.next_query_id()
    harness.host.open_query(query_id, bot_uuid=place.bot_uuid, launcher_type=place.launcher_type,
                            launcher_id=place.launcher_id, sender_id=sender, sender_name=name, group_name=group_name,
                            message_text="hello", pipeline_kbs=list(harness.host.kbs))
    await harness.emit_event("PromptPreProcessing", {"session_name": place.session_name, "default_prompt": [],
                                                     "prompt": []}, query_id=query_id)
    harness.host.close_query(query_id)


def label_writes(harness: PluginHarness) -> list[str]:
    return [d["key"] for d in harness.host.calls_of(A.SET_PLUGIN_STORAGE) if "/label/" in d["key"]]


async def test_the_latest_names_are_kept_and_written_only_when_they_change(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    await named_turn(harness, G1, "u1", "Alice", "Team Alpha")
    await named_turn(harness, G1, "u1", "Alice", "Team Alpha")  # nothing changed: nothing written
    assert len(label_writes(harness)) == 1, label_writes(harness)
    await named_turn(harness, G1, "u2", "Bob\u202e", "Team Alpha\nrenamed")  # cleaned: one line, no bidi
    assert len(label_writes(harness)) == 2
    health = await open_chat(harness, "g1").run("!memory health")
    assert "Chat: group “Team Alpha renamed” (g1)" in health and "Latest speaker: Bob" in health, health
    overview = await open_chat(harness, "g1").run("!memory")
    assert "Chat: group “Team Alpha renamed” (g1)" in overview, overview

    await named_turn(harness, G1, "u3", "sk-live-0123456789abcdefghijklmnopqrstuv", "Team Alpha renamed")
    labels = [bytes(v).decode() for k, v in harness.host.storage.items() if "/label/" in k]
    assert labels and not any("sk-live" in text for text in labels), labels  # a credential is never a label


async def test_a_private_chat_is_named_by_its_speaker_and_an_erasure_takes_the_names(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    await named_turn(harness, P1, "p1", "Erin", "")
    await named_turn(harness, G1, "p1", "Erin", "Team Alpha")
    assert "Chat: private chat with “Erin” (p1)" in await open_chat(harness, "p1", launcher_type="person",
                                                                    sender_id="p1").run("!memory health")
    answer = await harness.page_api("console", "/person/erase", "POST", {"sender_id": "p1", "dry_run": False})
    assert answer["data"]["ok"], answer
    labels = [bytes(v).decode() for k, v in harness.host.storage.items() if "/label/" in k]
    assert labels and not any("Erin" in text for text in labels), labels
    group = await open_chat(harness, "g1").run("!memory health")
    assert "Chat: group “Team Alpha” (g1)" in group and "Erin" not in group, group
