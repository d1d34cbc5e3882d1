"""Conversation continuity in a real LangBot 4.11.2 (issue 42): a chat of several turns, LangBot restarted on
the same data dir, then a follow-up question; the model's request holds the earlier turns (the recent ones
as `earlier_turn` lines, the oldest in the rolling summary) once each, and nothing of another chat. With the
setting off nothing more is recorded and nothing is handed to the model.

The stack is this test's own (a restart in the middle would disturb the session's shared stack), set up as
`scripts/run-local.sh` sets it up: the conversation record on with `conversation_host_window` 0, because
the test Runner shows the model no history of its own (tests/e2e/runner_plugin: it sends the host's prompt,
`_ltm_context` as an "LTM_CONTEXT:" message and the user's text). Four turns at most per chat, so the
oldest are folded by the chat model (the scripted local model answers the fold request with
"[scripted summary]" and one line per turn, devhost/model_server.py). The model's requests are read from
the local model server's log (`devhost.chat.ModelLog`).

"Once" is counted in what the host's prompt gives the model: the pipeline's system prompt, the
"[LongTermMemory]" block and the user's message. The test Runner also forwards `_ltm_context` whole (it is
the variable for other plugins, checked here to hold the same turns); a Runner uses one or the other.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from devhost.chat import DebugChat, ModelLog, ltm_block, ltm_context, message_text
from devhost.lbclient import LangBotClient
from devhost.processes import pid_alive
from devhost.stack import SetupInfo, Stack
from tests.e2e.test_real_host_history import data_dir  # noqa: F401  # a data dir kept across the restart
from tests.e2e.test_real_host_history import start as restarted_stack
from tests.e2e.test_real_langbot import unique

SETTINGS = {"conversation_enabled": True, "conversation_host_window": 0, "conversation_max_turns": 4}
KEPT = re.compile(r"(\d+) turns? kept, a summary of (\d+) turns? earlier")


def start(directory: Path) -> tuple[Stack, SetupInfo]:
    return restarted_stack(directory, consumer=False, kb_settings=SETTINGS)


def client(info: SetupInfo) -> LangBotClient:
    found = LangBotClient(info.base_url, token=info.token)
    found.workspace_uuid = info.workspace_uuid
    return found


def chat(info: SetupInfo, session_type: str) -> DebugChat:
    return DebugChat(info.base_url, info.pipeline_uuid, info.token, info.workspace_uuid, session_type=session_type)


def record_of(info: SetupInfo, session_name: str) -> dict[str, Any]:
    """The chat's conversation record, as the Memory Console reads it."""
    api = client(info)
    scopes = api.page_api("/overview")["scopes"]
    space = next(s for s in scopes if s["scope_key"].endswith(":" + session_name))
    answer = api.page_api("/conversation", {"space": {"scope_key": space["scope_key"], "user_key": space["user_key"]}})
    assert answer["ok"] is True, answer
    return dict(answer["record"])


def settled(info: SetupInfo, session_name: str, turns: int, timeout: float = 90.0) -> dict[str, Any]:
    """The record once all `turns` are in it or folded into its summary, and no fold is left to do."""
    deadline = time.monotonic() + timeout
    while True:
        record = record_of(info, session_name)
        held = len(record["turns"]) + record["summary"]["folded"]
        if held >= turns and len(record["turns"]) * 4 < SETTINGS["conversation_max_turns"] * 3:
            return record
        if time.monotonic() > deadline:
            raise AssertionError(f"the record of {session_name} did not settle: {json.dumps(record)[:2000]}")
        time.sleep(0.5)


def the_request(log: ModelLog, mark: int, text: str) -> dict[str, Any]:
    """The Runner's request for the message `text` (the plugin's own model calls are other requests)."""
    found = [r for r in log.chats_since(mark)
             if any(m.get("role") == "user" and text in message_text(m) for m in r.get("messages") or [])
             and "conversation summary request" not in json.dumps(r.get("messages"))]
    assert found, [r.get("messages") for r in log.chats_since(mark)]
    return found[0]


def prompt_text(request: dict[str, Any]) -> str:
    """Every message of the request but the Runner's echo of `_ltm_context`."""
    return "\n".join(message_text(m) for m in request.get("messages") or []
                     if not message_text(m).startswith("LTM_CONTEXT: "))


def test_a_chat_carries_on_after_a_restart_and_stops_recording_when_turned_off(data_dir: Path) -> None:  # noqa: F811 - the imported fixture, taken by name
    words = [unique(w) for w in ("apricot", "bassoon", "cobalt", "dulcimer", "emerald")]
    other = unique("fennel")
    stack, info = start(data_dir)
    try:
        with chat(info, "group") as group, chat(info, "person") as private:
            for word in words:
                group.send(f"let us talk about the {word}")
            private.send(f"my own secret topic is the {other}")
            person_session = f"person_{private.sender_id}"
            before = settled(info, "group_websocketgroup", len(words))
            settled(info, person_session, 1)
            assert "not recorded" not in group.send("!memory conversation")  # a command: never recorded
    finally:
        pids = stack.stop()
    assert not [p for p in pids if pid_alive(p)]
    # Four turns at most: the oldest were folded into the summary by the (scripted) chat model.
    assert before["summary"]["source"] == "model" and before["summary"]["text"].startswith("[scripted summary]")
    assert len(before["turns"]) + before["summary"]["folded"] == len(words)
    assert not any("!memory" in t["user_text"] for t in before["turns"])

    stack, info = start(data_dir)  # the same data dir: LangBot's database and the plugin's storage stay
    try:
        log = ModelLog(stack.request_log)
        with chat(info, "group") as group:
            mark = log.mark()
            question = f"what did we talk about first? {unique('q')}"
            group.send(question)
            request = the_request(log, mark, question)
            shown = prompt_text(request)
            block = ltm_block(request)
            forwarded = ltm_context(request)

            # The follow-up is recorded in its turn (off the reply path: waited for here) ...
            kept = settled(info, "group_websocketgroup", len(words) + 1)
            # ... and with the setting off, a new turn is neither recorded nor given anything of the record.
            api = client(info)
            switched = api.page_api("/settings/set", {"name": "conversation_enabled", "value": False})
            assert switched["ok"] is True, switched
            late = unique("gooseberry")
            mark = log.mark()
            group.send(f"and now the {late}")
            off_request = the_request(log, mark, late)
            time.sleep(3)  # the hook's quiet time (1 s) and a recording would have landed by now
            after_off = record_of(info, "group_websocketgroup")
    finally:
        pids = stack.stop()
    assert not [p for p in pids if pid_alive(p)]
    # The request, printed for the reader of a failure (pytest shows a passing test's output to nobody).
    print("\nFOLLOW-UP REQUEST:", json.dumps(request.get("messages"), ensure_ascii=False)[:6000])

    # Every earlier turn reaches the model once: the recent ones as earlier_turn lines, the first in the summary.
    assert all(shown.count(word) == 1 for word in words), {w: shown.count(w) for w in words}
    assert "conversation_summary (of" in block and "[scripted summary]" in block
    assert "earlier_turn" in block and "Earlier in this chat" in block
    # Nothing of another chat, in the prompt or in what the Runner was handed.
    assert other not in json.dumps(request.get("messages"), ensure_ascii=False)
    # `_ltm_context.conversation` carries the same for other plugins.
    assert forwarded is not None and forwarded["conversation"]["summary"].startswith("[scripted summary]")
    assert [t["said"] for t in forwarded["conversation"]["earlier_turns"]][-1] == f"let us talk about the {words[-1]}"
    # The follow-up itself was recorded (the setting was still on).
    assert any(question in t["user_text"] for t in kept["turns"])
    # Off: the record is as it was, and the model was given none of it.
    assert after_off == kept and late not in json.dumps(after_off)
    assert "earlier_turn" not in ltm_block(off_request) and "conversation_summary" not in ltm_block(off_request)
    off_context = ltm_context(off_request)
    assert off_context is not None and off_context["conversation"] is None
