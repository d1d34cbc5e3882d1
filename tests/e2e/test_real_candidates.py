"""Candidate extraction inside a real LangBot 4.11.2 (Q1, Q2), end to end.

The session's memory KB is created with `candidate_extraction_enabled=true` (devhost), the
plugin is installed from its `.lbpkg` (so the background task runs in an installed worker,
HOST-FACTS 10), and the chat goes through the WebUI debug chat. The scripted local model
never calls a tool for the messages used here, so whatever is stored comes from the
candidate path.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

from devhost.chat import ltm_block, system_texts

SCRIPTED = "[scripted local model]"
CANDIDATE_LINE = re.compile(r"^\[\d+\] (c-[0-9a-f]{8}) · ", re.MULTILINE)


def _runtime_log(e2e: Any) -> str:
    return (e2e.stack.logs / "plugin-runtime.log").read_text(errors="replace")


def _wait_for_candidate(chat: Any, marker: str, timeout: float = 60.0) -> str:
    """The listing line's candidate id once the background extraction stored it (polls the command)."""
    deadline = time.monotonic() + timeout
    listing = ""
    while time.monotonic() < deadline:
        listing = chat.send("!memory candidates")
        if marker in listing:
            ids = CANDIDATE_LINE.findall(listing)
            assert len(ids) == 1, listing
            return ids[0]
        time.sleep(0.5)
    raise AssertionError(f"no candidate with {marker!r} was listed within {timeout:.0f}s; last listing:\n{listing}")


def test_a_user_message_becomes_a_pending_candidate_that_accept_makes_recallable(e2e):
    tag = f"kiwi{uuid.uuid4().hex[:8]}"
    statement = f"We decided that the {tag} offsite is in Lisbon."
    with e2e.chat("person") as chat:
        mark = e2e.model_log.mark()
        reply = chat.send(statement)
        assert reply.startswith(SCRIPTED), reply
        first_turn = e2e.model_log.chats_since(mark)
        assert len(first_turn) == 1 and not (first_turn[0]["reply"].get("tool_calls") or []), first_turn

        candidate_id = _wait_for_candidate(chat, tag)
        listing = chat.send("!memory candidates")
        assert f"We decided that the {tag} offsite is in Lisbon" in listing, listing
        assert "episode" in listing and "rules en.decision" in listing, listing
        assert SCRIPTED not in listing  # the bot's reply is never a source
        assert "No active episodes" in chat.send("!memory list")  # pending changes nothing

        accepted = chat.send(f"!memory candidate accept {candidate_id}")
        match = re.search(r"stored episode ([0-9a-f-]{36}) \(claim type user statement, source ref query:(\d+)\)", accepted)
        assert match, accepted
        episode_id, query_id = match.group(1), match.group(2)
        shown = chat.send(f"!memory show {episode_id}")
        assert f"Source ref: query:{query_id}" in shown and "Source: candidate" in shown, shown

        # A later turn: the accepted candidate is recalled into the prompt the model receives.
        mark = e2e.model_log.mark()
        chat.send(f"where is the {tag} offsite?")
        (request,) = e2e.model_log.chats_since(mark)
        assert f"the {tag} offsite is in Lisbon" in ltm_block(request), system_texts(request)

        audit = chat.send("!memory audit")
        assert "Candidate accepted" in audit and "· Remember ·" in audit, audit  # operations by their readable names

    # The handler handed the work off before anything was stored: the reply of the first turn waited
    # for the hand-off only (two reads of the turn), never for extraction or storage.
    log = _runtime_log(e2e)
    handed = log.find(f"candidate extraction handed off query={query_id} ")
    stored = log.find(f"candidates stored query={query_id} ")
    assert 0 <= handed < stored, log[-4000:]
    assert "Plugin invocation has ended" not in log and "candidate extraction failed" not in log


def test_a_question_proposes_nothing_a_plan_does(e2e):
    tag = f"plum{uuid.uuid4().hex[:8]}"
    with e2e.chat("person") as chat:
        chat.send(f"Did we decide that the {tag} offsite is in Lisbon?")
        chat.send(f"I will present the {tag} roadmap next Friday.")  # a plan: proposed
        _wait_for_candidate(chat, f"present the {tag} roadmap")
        listing = chat.send("!memory candidates --all-statuses")
        assert listing.count(tag) == 1, listing  # the question was declined


def test_a_past_tense_move_and_a_japanese_fact_each_leave_one_pending_candidate(e2e):
    """Issue 22 items 3 and 4: a life event in the past tense and a Japanese statement are found."""
    tag = f"fig{uuid.uuid4().hex[:8]}"
    move, home = f"I moved to Osaka {tag} last month", f"{tag}市在住"
    with e2e.chat("person") as chat:
        chat.send(move)
        chat.send(f"私は{tag}市に住んでいます")
        deadline, listing = time.monotonic() + 60.0, ""
        while time.monotonic() < deadline and not (move in listing and home in listing):
            time.sleep(0.5)
            listing = chat.send("!memory candidates")
        assert move in listing and home in listing, listing
        assert "rules en.life" in listing and "rules ja.trait" in listing, listing
        # One candidate each: the move is an episode only (no "lives in Osaka" beside it).
        every = chat.send("!memory candidates --all-statuses")
        tagged = [line.strip() for line in every.splitlines() if tag in line]
        assert sorted(tagged) == sorted([f"“{move}”", f"“{home}”", f"said: “私は{tag}市に住んでいます”"]), every


def _stored_line_after(e2e: Any, offset: int, timeout: float = 60.0) -> str:
    """The first "candidates stored" log line written after `offset` (the turn's background task)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in _runtime_log(e2e)[offset:].splitlines():
            if "candidates stored query=" in line:
                return line
        time.sleep(0.5)
    raise AssertionError(f"no 'candidates stored' line within {timeout:.0f}s:\n{_runtime_log(e2e)[offset:][-3000:]}")


def test_a_remember_that_turn_stores_one_episode_and_leaves_no_pending_candidate(e2e):
    """Issue 22 item 2: the agent's `remember` call and the candidate listener of the same turn see one
    fact: the episode is stored once, and the listener, which runs after the reply, does not queue it."""
    tag = f"pear{uuid.uuid4().hex[:8]}"
    fact = f"the {tag} design review moved to Friday"
    with e2e.chat("person") as chat:
        offset = len(_runtime_log(e2e))
        mark = e2e.model_log.mark()
        reply = chat.send(f"Remember that {fact}.")
        assert "done: remember" in reply and "It worked" in reply, reply
        calls = [c for r in e2e.model_log.chats_since(mark) for c in (r["reply"].get("tool_calls") or [])]
        assert [c["function"]["name"] for c in calls] == ["remember"], calls
        line = _stored_line_after(e2e, offset)
        assert " added=0 " in line and " in_memory=1" in line, line
        assert tag not in chat.send("!memory candidates --all-statuses")
        listed = chat.send("!memory list")
        assert listed.count(tag) == 1, listed
        # Said again, the fact is not stored a second time: the tool names the stored episode.
        again = chat.send(f"Remember that {fact}.")
        assert "already remembered true" in again, again
        assert chat.send("!memory list").count(tag) == 1
