"""The conversation record's hooks on the test host (V1, V3): every finished turn recorded after the reply,
off the reply path, and the chat's earlier turns handed to the next model call, through the SDK's real
event dispatch.

A turn here is what LangBot does for one message: PromptPreProcessing (the injection reads the turn), then
NormalMessageResponded with the reply. The hook waits for a query's events to settle before it records
(`conversation_hook.quiet_time`): tests/conftest.py makes it nothing, and one test here holds it.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.runtime.io.handler import ActionCallError

from components.event_listener import conversation_hook
from ltm._storage import conversation_key, snapshot_key
from testhost import PluginHarness
from tests.chat import Place, open_chat, open_turn, prompt_turn

G1, G2 = Place("group", "g1"), Place("group", "g2")
ON = {"conversation_enabled": True, "conversation_host_window": 0}


def responded_event(place: Place, sender: str, reply: str, funcs: list[str] | None = None) -> dict[str, Any]:
    return {"launcher_type": place.launcher_type, "launcher_id": place.launcher_id, "sender_id": sender,
            "session": place.session("first-speaker"), "prefix": "", "response_text": reply,
            "finish_reason": "stop", "funcs_called": funcs or [], "reply_message_chain": None}


async def turn(h: PluginHarness, text: str, reply: str, *, place: Place = G1, sender: str = "u1",
               name: str = "Alice", settle: bool = True) -> int:
    """One message of a pipeline with the memory KB: its prompt, then its reply."""
    prompt = await prompt_turn(h, place, sender, name, text)
    await h.emit_event("NormalMessageResponded", responded_event(place, sender, reply), query_id=prompt.query_id)
    if settle:
        await h.settle()
    return prompt.query_id


def record(h: PluginHarness, place: Place = G1) -> dict[str, Any]:
    raw = h.host.storage.get(conversation_key(f"bot-1:{place.session_name}"))
    return json.loads(raw) if raw is not None else {}


def said(h: PluginHarness, place: Place = G1) -> list[tuple[str, str, str]]:
    return [(t["sender_id"], t["user_text"], t["reply_text"]) for t in record(h, place).get("turns", [])]


async def test_each_finished_turn_is_recorded_with_its_speaker_and_time(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    query_id, variables = open_turn(harness, G1, "u1", "Alice", "we sail on Friday")
    await harness.emit_event("PromptPreProcessing", {"session_name": "group_g1", "default_prompt": [], "prompt": []},
                             query_id=query_id)
    harness.host.calls.clear()
    context = await harness.emit_event("NormalMessageResponded", responded_event(G1, "u1", "Fair winds!"),
                                       query_id=query_id)
    # The reply is not held up: the handler asked the host nothing and wrote nothing.
    assert harness.host.calls == [] and context["is_prevent_default"] is False
    assert record(harness) == {}
    await harness.settle()
    [stored] = record(harness)["turns"]
    assert (stored["sender_id"], stored["sender_name"], stored["user_text"], stored["reply_text"]) == (
        "u1", "Alice", "we sail on Friday", "Fair winds!")
    sent = datetime.fromtimestamp(variables["msg_create_time"], UTC)
    assert stored["at"] == sent.isoformat().replace("+00:00", "Z") and stored["message_id"] == ""
    await turn(harness, "bring the charts", "Will do.", sender="u2", name="Bob")
    assert said(harness) == [("u1", "we sail on Friday", "Fair winds!"), ("u2", "bring the charts", "Will do.")]


async def test_with_the_setting_off_nothing_is_recorded_and_the_host_is_not_asked(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    prompt = await prompt_turn(harness, G1, "u1", "Alice", "we sail on Friday")
    harness.host.calls.clear()
    await harness.emit_event("NormalMessageResponded", responded_event(G1, "u1", "ok"), query_id=prompt.query_id)
    await harness.settle()
    assert harness.host.calls == [] and record(harness) == {}
    assert prompt.context["conversation"] is None
    assert not any(k.startswith("v2/conversation/") for k in harness.host.storage)


async def test_commands_and_pipelines_without_the_memory_kb_are_not_recorded(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await turn(harness, "!memory list", "1 episode")
    query_id, _ = open_turn(harness, G1, "u1", "Alice", "not a memory pipeline", pipeline_kbs=[])
    await harness.emit_event("PromptPreProcessing", {"session_name": "group_g1", "default_prompt": [], "prompt": []},
                             query_id=query_id)
    await harness.emit_event("NormalMessageResponded", responded_event(G1, "u1", "hi"), query_id=query_id)
    await harness.settle()
    assert record(harness) == {}


async def test_a_streamed_reply_is_recorded_once_as_it_ended(harness: PluginHarness,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    await harness.create_memory_kb(**ON)
    gate = asyncio.Event()

    async def held() -> None:
        await gate.wait()

    monkeypatch.setattr(conversation_hook, "quiet_time", held)
    prompt = await prompt_turn(harness, G1, "u1", "Alice", "what is the tide at noon?")
    for reply, funcs in (("Let me check", None), ("Calling recall_memory...", ["recall_memory"]),
                         ("High tide", None), ("High tide is at 12:40.", None)):
        await harness.emit_event("NormalMessageResponded", responded_event(G1, "u1", reply, funcs),
                                 query_id=prompt.query_id)
    assert record(harness) == {}  # held: the stream has not ended
    gate.set()
    await harness.settle()
    assert said(harness) == [("u1", "what is the tide at noon?", "High tide is at 12:40.")]
    # A late event of the same query does not record the turn again.
    await harness.emit_event("NormalMessageResponded", responded_event(G1, "u1", "and more"),
                             query_id=prompt.query_id)
    await harness.settle()
    assert len(said(harness)) == 1


async def test_a_reply_without_its_prompt_reads_the_turn_from_the_query(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    query_id, _ = open_turn(harness, G1, "u3", "Carol", "the plugin restarted before my reply")
    await harness.emit_event("NormalMessageResponded", responded_event(G1, "u3", "Still here."), query_id=query_id)
    assert harness.host.count(A.GET_QUERY_VARS) >= 1
    await harness.settle()
    assert said(harness) == [("u3", "the plugin restarted before my reply", "Still here.")]


async def test_a_reply_whose_turn_could_not_be_read_is_recorded_by_the_querys_next_event(
        harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    query_id, _ = open_turn(harness, G1, "u3", "Carol", "the host stumbled once")
    harness.host.fail_next(A.GET_QUERY_VARS, ActionCallError("no answer"))
    await harness.emit_event("NormalMessageResponded", responded_event(G1, "u3", "Still"), query_id=query_id)
    await harness.settle()
    assert said(harness) == []
    await harness.emit_event("NormalMessageResponded", responded_event(G1, "u3", "Still here."), query_id=query_id)
    await harness.settle()
    assert said(harness) == [("u3", "the host stumbled once", "Still here.")]


async def test_a_failing_record_never_breaks_the_turn(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    prompt = await prompt_turn(harness, G1, "u1", "Alice", "hello")
    harness.host.fail_next(A.SET_PLUGIN_STORAGE, ActionCallError("storage refused"), after_dispatch=False)
    context = await harness.emit_event("NormalMessageResponded", responded_event(G1, "u1", "Hi!"),
                                       query_id=prompt.query_id)
    await harness.settle()
    assert context["is_prevent_default"] is False and context["event"]["response_text"] == "Hi!"
    assert record(harness) == {}  # refused before anything was written: no turn, no fence
    await turn(harness, "hello again", "Hi again!")
    assert said(harness) == [("u1", "hello again", "Hi again!")]


async def test_the_next_model_call_gets_this_chats_earlier_turns_once(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await turn(harness, "the boat is called Marigold", "Lovely name.")
    await turn(harness, "we leave from Pier 9", "Noted.", sender="u2", name="Bob")
    await turn(harness, "our secret word is pelican", "Got it.", place=G2, sender="u3", name="Carol")
    follow_up = await prompt_turn(harness, G1, "u1", "Alice", "what is the boat called?")
    text = follow_up.memory_text
    assert text.count("Marigold") == 1 and text.count("Pier 9") == 1 and "pelican" not in text
    assert 'earlier_turn 1 (' in text and 'speaker "Bob"' in text and "Earlier in this chat" in text
    conversation = follow_up.context["conversation"]
    assert [t["said"] for t in conversation["earlier_turns"]] == ["the boat is called Marigold", "we leave from Pier 9"]
    assert conversation["summary"] is None and conversation["earlier_turns"][1]["speaker"] == {"id": "u2",
                                                                                                "name": "Bob"}
    await harness.plugin.memory.parts.store.writes_landed()  # the snapshot is written after the turn
    snapshot = json.loads(harness.host.storage[snapshot_key("bot-1:group_g1")])
    assert snapshot["conversation"]["turns"] == [1, 2] and "Marigold" not in json.dumps(snapshot)


async def test_turns_the_runner_shows_itself_are_not_given_again(harness: PluginHarness) -> None:
    # Eight turns at most: the sixth makes a fold due, which folds turns 1-2 (the fallback digest: no model).
    await harness.create_memory_kb(**{**ON, "conversation_host_window": 2, "conversation_max_turns": 8})
    for n in range(1, 7):
        await turn(harness, f"message number {n}", f"reply {n}")
    follow_up = await prompt_turn(harness, G1, "u1", "Alice", "what did we say?")
    conversation = follow_up.context["conversation"]
    # Turns 5 and 6 are the Runner's own window: the pack holds 3 and 4, and the summary of 1 and 2.
    assert [t["turn"] for t in conversation["earlier_turns"]] == [3, 4]
    assert conversation["summary_turns"] == 2 and "message number 1" in conversation["summary"]
    text = follow_up.memory_text
    assert "message number 5" not in text and "message number 6" not in text and text.count("message number 3") == 1


async def test_the_memory_command_shows_nothing_of_the_record_to_a_model(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await turn(harness, "the boat is called Marigold", "Lovely name.")
    command = await prompt_turn(harness, G1, "u1", "Alice", "!memory conversation")
    assert command.memory_text == "" and command.context["conversation"] is None
    chat = open_chat(harness)
    assert "Marigold" in await chat.run("!memory conversation")
