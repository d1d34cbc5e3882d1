"""What LangBot 4.11.2 itself keeps of a conversation, read in a real host (docs/HOST-FACTS.md 13).

The conversation record (issue 42) fills what the host no longer gives the model, so what the host
gives is measured here rather than assumed: the test consumer plugin logs, for every turn, the
messages of PromptPreProcessing's `prompt` (the history) and `default_prompt`, and what
NormalMessageResponded carries with the query variables still readable then (`HISTORY_PROBE` lines
in the plugin runtime's log). LangBot's own transcript is read from its database on disk. The stack
is this test's own (a restart in the middle would disturb the session's shared stack): a group
debug chat (the same chat after a restart: its launcher id is fixed) speaks three turns, LangBot is
stopped and started again on the same data dir, and the chat speaks once more.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devhost.chat import DebugChat
from devhost.langbot_setup import ensure_pipeline
from devhost.lbclient import CONSUMER_PLUGIN, LTM_PLUGIN, LangBotClient
from devhost.processes import pid_alive
from devhost.stack import SetupInfo, Stack, StackConfig
from tests.e2e.test_real_langbot import unique


def probes(stack: Stack, kind: str) -> list[dict[str, Any]]:
    runtime = next(p for p in stack.procs if p.name == "plugin-runtime")
    found = []
    marker = f"HISTORY_PROBE {kind}="
    for line in Path(runtime.log_path).read_text(encoding="utf-8", errors="replace").splitlines():
        if marker in line:
            found.append(json.loads(line.split(marker, 1)[1]))
    return found


def transcript_rows(stack: Stack) -> list[tuple[str, str, str]]:
    """(conversation_id, role, content) of every transcript row of LangBot's database, oldest first."""
    database = stack.home / "data" / "langbot.db"
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        return [(str(c), str(r), str(t or "")) for c, r, t in
                db.execute("SELECT conversation_id, role, content FROM transcript ORDER BY seq")]


def start(data_dir: Path, *, consumer: bool = True, kb_settings: dict[str, Any] | None = None
          ) -> tuple[Stack, SetupInfo]:
    """A stack of the test's own on `data_dir` (the same dir again: a restart), on free ports, with the
    scripted model; `consumer`: the probe plugin; `kb_settings`: overrides of the memory KB's settings."""
    config = StackConfig.from_env(data_dir, embedder="hashing", vdb="chroma")
    config.chat_base_url = config.chat_api_key = config.chat_model = None
    config.webui_port = config.runtime_control_port = config.runtime_debug_port = config.model_port = None
    config.install_consumer = consumer
    config.kb_settings = dict(kb_settings or {})
    stack = Stack(config)
    try:
        stack.start()
        return stack, stack.setup()
    except BaseException:
        stack.stop()
        raise


def chat(info: SetupInfo) -> DebugChat:
    """The group debug chat on a pipeline with the probe (the consumer plugin) bound after LongTermMemory."""
    client = LangBotClient(info.base_url, token=info.token)
    client.workspace_uuid = info.workspace_uuid
    pipeline = ensure_pipeline(client, "e2e history probe", llm_uuid=info.llm_model_uuid, kb_uuids=[info.kb_uuid],
                               plugins=[LTM_PLUGIN, CONSUMER_PLUGIN])
    return DebugChat(info.base_url, pipeline, info.token, info.workspace_uuid, session_type="group")


@pytest.fixture()
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="ltm-e2e-restart-"))
    try:
        yield path
    finally:
        if os.environ.get("LTM_E2E_KEEP_DATA") != "1":
            shutil.rmtree(path, ignore_errors=True)


def test_the_history_a_listener_gets_before_and_after_a_restart(data_dir: Path) -> None:
    words = [unique(w) for w in ("apricot", "bassoon", "cobalt", "dulcimer")]
    stack, info = start(data_dir)
    try:
        with chat(info) as group:
            for word in words[:3]:
                group.send(f"let us talk about the {word} [history?]")
        listener = [p for p in probes(stack, "prompt") if p["session_name"] == "group_websocketgroup"]
        runner, responded = probes(stack, "runner"), probes(stack, "responded")
        rows_before = transcript_rows(stack)
    finally:
        pids = stack.stop()
    assert not [p for p in pids if pid_alive(p)]
    # What the host gave, printed for the reader of a failure (pytest shows a passing test's output to nobody).
    print("\nLISTENER BEFORE:", json.dumps(listener, ensure_ascii=False))
    print("RUNNER BEFORE:", json.dumps(runner, ensure_ascii=False))
    print("RESPONDED:", json.dumps(responded, ensure_ascii=False))
    print("TRANSCRIPT BEFORE:", rows_before)

    stack, info = start(data_dir)  # the same data dir: LangBot's database and the plugin's storage stay
    try:
        with chat(info) as group:
            group.send(f"and now the {words[3]} [history?]")
        listener_after = [p for p in probes(stack, "prompt") if p["session_name"] == "group_websocketgroup"]
        runner_after = probes(stack, "runner")[len(runner):]  # the runtime's log file goes on
        rows_after = transcript_rows(stack)
    finally:
        pids = stack.stop()
    assert not [p for p in pids if pid_alive(p)]
    listener_after = listener_after[len(listener):]
    print("LISTENER AFTER:", json.dumps(listener_after, ensure_ascii=False))
    print("RUNNER AFTER:", json.dumps(runner_after, ensure_ascii=False))
    print("TRANSCRIPT AFTER:", rows_after)

    # docs/HOST-FACTS.md 13, each fact checked.
    # A listener's history (`prompt`) is empty on every turn, before and after the restart.
    assert len(listener) == 3 and len(listener_after) == 1, (listener, listener_after)
    assert all(p["prompt"] == [] for p in listener + listener_after)
    # NormalMessageResponded carries the reply; the user's words, speaker and time are query variables.
    said = {r["variables"].get("user_message_text"): r for r in responded}
    first = said[f"let us talk about the {words[0]} [history?]"]
    assert first["response_text"] and first["variables"]["sender_id"] == first["sender_id"]
    assert isinstance(first["variables"]["msg_create_time"], int) and first["variables"]["sender_name"]
    # LangBot's transcript is keyed by the session name and outlives the restart ...
    assert {c for c, _r, _t in rows_before} == {"group_websocketgroup"}
    assert [w for w in words[:3] if any(w in t for _c, r, t in rows_before if r == "user")] == words[:3]
    assert len(rows_after) > len(rows_before) and rows_after[:len(rows_before)] == rows_before
    # ... and a runner that pages it (as LocalAgent does) still sees the earlier turns after the restart.
    seen_after = " ".join(i["text"] for p in runner_after for i in p["items"])
    assert all(w in seen_after for w in words[:3]), runner_after
