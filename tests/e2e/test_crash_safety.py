"""Crash safety inside a real LangBot 4.11.2 (docs/GUARANTEES.md, "A plugin process that dies in the
middle of a write"): the plugin's own process is SIGKILLed in the middle of a bulk `!memory import`,
LangBot's plugin runtime relaunches it, and the relaunched plugin reports exactly that space fenced.

The plugin process is found among the plugin runtime's descendants by its command line (the SDK's
`langbot_plugin.cli.__init__ run`, tagged `langbot-ltm/LongTermMemory...` by the runtime).
The test kills only that process (by its PID); the relaunched one belongs to the runtime, which the
session's stack stops.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from typing import Any

from devhost.chat import ChatError
from devhost.processes import descendants, pid_alive
from tests.e2e.test_real_consolidation import PROPOSAL
from tests.e2e.test_real_langbot import remember, unique

RECORDS = 400  # seven vector upserts of 64 records: the kill lands between two of them


def runtime_children(e2e: Any) -> list[tuple[int, list[bytes], str]]:
    runtime = next(p for p in e2e.stack.procs if p.name == "plugin-runtime")
    found = []
    for pid in descendants(runtime.pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        found.append((pid, argv, cwd))
    return found


def plugin_pids(e2e: Any) -> list[int]:
    return [pid for pid, argv, cwd in runtime_children(e2e)
            if b"langbot_plugin.cli.__init__" in argv and b"run" in argv
            and any(a.startswith(b"langbot-ltm/LongTermMemory") for a in argv)]


def wait_for(what: str, check: Any, timeout: float, every: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def space_of(e2e: Any, session_name: str) -> dict[str, str]:
    scopes = e2e.client.page_api("/overview")["scopes"]
    [scope] = [s for s in scopes if s["session_name"].startswith(session_name)]
    return {"scope_key": scope["scope_key"], "user_key": scope["user_key"]}


def stored_in(e2e: Any, space: dict[str, str]) -> dict[str, str]:
    export = e2e.client.page_api("/export", {"space": space})
    assert export["ok"], export
    return {e["id"]: e["content"] for e in (export["export"]["l2"] or {}).get("episodes", [])}


def stored_and_audited(e2e: Any, space: dict[str, str]) -> tuple[dict[str, str], set[str]]:
    stored = stored_in(e2e, space)
    audit = e2e.client.page_api("/audit/export", {"space": space})
    assert audit["ok"], audit
    return stored, {e["target_id"] for e in audit["export"]["entries"] if e["target_type"] == "episode"}


def answers(e2e: Any) -> bool:
    try:
        return e2e.client.page_api("/overview").get("ok") is True
    except Exception:  # the plugin is not back yet
        return False


def runtime_log_since(e2e: Any, offset: int) -> str:
    runtime = next(p for p in e2e.stack.procs if p.name == "plugin-runtime")
    with open(runtime.log_path, "rb") as fh:
        fh.seek(offset)
        return fh.read().decode("utf-8", "replace")


def runtime_log_size(e2e: Any) -> int:
    runtime = next(p for p in e2e.stack.procs if p.name == "plugin-runtime")
    return os.path.getsize(runtime.log_path)


def kill_during(e2e: Any, chat: Any, command: str, started: Any) -> tuple[list[str], float]:
    """Send `command` and SIGKILL the plugin's process once `started(runtime log since the command)`;
    return the replies (if any) and how long LangBot took to have the plugin answering again."""
    victims = plugin_pids(e2e)
    assert len(victims) == 1, runtime_children(e2e)
    victim = victims[0]
    replies: list[str] = []

    def send() -> None:
        try:
            replies.append(chat.send(command, timeout=60))
        except ChatError as exc:  # the plugin died: no final reply
            replies.append(f"no reply: {exc}")

    log_from = runtime_log_size(e2e)
    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    wait_for("the write to be with the host", lambda: started(runtime_log_since(e2e, log_from)), 120, every=0.02)
    os.kill(victim, signal.SIGKILL)
    killed_at = time.monotonic()
    wait_for("the killed plugin process to go", lambda: not pid_alive(victim), 10)
    # LangBot's runtime relaunches the plugin by itself (about 1 s after the crash).
    wait_for("the relaunched plugin", lambda: [p for p in plugin_pids(e2e) if p != victim], 90)
    wait_for("the relaunched plugin to answer", lambda: answers(e2e), 90)
    relaunched_after = time.monotonic() - killed_at
    sender.join(70)
    return replies, relaunched_after


def test_the_plugin_killed_during_a_bulk_import_comes_back_with_that_space_fenced(e2e):
    with e2e.chat("group") as group:
        acked_group = remember(e2e, group, f"the {unique('choir')} choir sings on Thursdays")
    chat = e2e.chat("person")  # a person chat's space is its connection's: one connection throughout
    try:
        _test_on(e2e, chat, acked_group)
    finally:
        chat.close()


def _test_on(e2e: Any, chat: Any, acked_group: str) -> None:
    acked = remember(e2e, chat, f"the {unique('garden')} garden opens at nine")
    person, other = space_of(e2e, f"person_{chat.sender_id}"), space_of(e2e, "group_")
    before = stored_in(e2e, person)
    tag = unique("crash")
    payload = json.dumps([{"content": f"{tag} imported note {i}", "tags": [tag]} for i in range(RECORDS)])
    # Kill as soon as the first 64 records of the import are stored: the plugin logs each vector write
    # after the store confirmed it (or the store shows them first).
    replies, relaunched_after = kill_during(
        e2e, chat, f"!memory import l2 {payload}",
        lambda log: "records=64" in log or len(stored_in(e2e, person)) > len(before))
    assert replies and "Imported" not in replies[0], replies  # the import did not finish

    fences = {f["space"]: f for f in e2e.client.page_api("/overview")["fences"]}
    stored, audited = stored_and_audited(e2e, person)
    imported = {i for i, content in stored.items() if content.startswith(tag)}
    unaudited = set(stored) - audited
    assert 0 < len(imported) < RECORDS, (len(imported), "the kill did not land in the middle of the import")
    assert unaudited <= imported, "only the write in flight may hold records without audit entries"
    assert acked in stored and acked in audited, "a write acknowledged before the kill is stored and audited"
    [fenced] = [f for f in fences.values() if f.get("user_key") == person["user_key"]]
    assert fenced["reason"] == "the plugin stopped during import", fenced
    assert len(fences) == 1, fences  # no other space
    other_stored, other_audited = stored_and_audited(e2e, other)
    assert acked_group in other_stored and set(other_stored) <= other_audited

    health = chat.send("!memory health")
    assert "the plugin stopped during import" in health, health
    # The admin's check: clear the fence (audited), then remove what the interrupted import left.
    cleared = e2e.client.page_api("/fence/clear", {"space": person})
    assert cleared["ok"] and cleared["cleared"], cleared
    deleted = chat.send(f"!memory delete --tag {tag}")
    assert "Deleted" in deleted, deleted
    assert e2e.client.page_api("/overview")["fences"] == []
    stored, audited = stored_and_audited(e2e, person)
    assert not any(c.startswith(tag) for c in stored.values()) and set(stored) <= audited
    print(f"\n[crash] {len(imported)} of {RECORDS} imported records stored at the kill; plugin answering "
          f"again {relaunched_after:.1f}s after the SIGKILL")


def test_the_plugin_killed_during_a_consolidation_run_comes_back_with_that_space_fenced(e2e):
    chat = e2e.chat("person")  # a fresh person connection: a space of its own
    try:
        facts = [f"the {unique('kayak')} club paddles on Saturdays",
                 f"the {unique('kayak')} club stores its boats at the north pier"]
        ids = [remember(e2e, chat, fact) for fact in facts]
        match = PROPOSAL.search(chat.send("!memory consolidate preview"))
        assert match, "no consolidation draft"
        person = space_of(e2e, f"person_{chat.sender_id}")
        # Kill once the staged summary is stored (the run's first vector write; its activation follows).
        replies, relaunched_after = kill_during(
            e2e, chat, f"!memory consolidate run {match.group(1)}", lambda log: "vector write" in log)
        assert replies and "is active" not in replies[0], replies  # the run did not finish

        fences = {f["space"]: f for f in e2e.client.page_api("/overview")["fences"]}
        stored, audited = stored_and_audited(e2e, person)
        summaries = {i for i, content in stored.items() if "scripted draft" in content}
        assert set(stored) - audited <= summaries, "only the run's summary may lack an audit entry"
        assert all(i in stored and i in audited for i in ids), "the acknowledged sources are stored and audited"
        [fenced] = [f for f in fences.values() if f.get("user_key") == person["user_key"]]
        assert fenced["reason"] == "the plugin stopped during consolidation_run", fenced
        assert len(fences) == 1, fences  # no other space
        health = chat.send("!memory health")
        assert "the plugin stopped during consolidation_run" in health, health
        cleared = e2e.client.page_api("/fence/clear", {"space": person})
        assert cleared["ok"] and cleared["cleared"], cleared
        assert e2e.client.page_api("/overview")["fences"] == []
        print(f"\n[crash] consolidation run killed with {len(summaries)} summary record(s) stored; plugin "
              f"answering again {relaunched_after:.1f}s after the SIGKILL")
    finally:
        chat.close()
