"""One fact, one record; nothing stale presented as current (issue 22 items 1, 2, 6, 7, 8), on the
real test host (Chroma, Qdrant, Milvus Lite) through the SDK's real dispatch: tools, `!memory`
commands, the candidate listener, prompt injection and the console page API.

The rules under test are in ltm/episodes/sameness.py (same fact: one normalized key; near
duplicate: words added or left out and close embeddings) and ltm/episodes/recall.py (validity,
summary folding).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from ltm import timefields
from ltm.timefields import format_utc, utc_now
from testhost import PluginHarness
from tests.chat import Place, open_chat, open_turn, prompt_turn
from tests.test_candidates import queue_records, responded
from tests.test_console_api import ok
from tests.test_consolidation import one_statement, preview_id

GROUP = Place("group", "g1")
CANDIDATES_ON = {"candidate_extraction_enabled": True}
EXPIRED = "2020-06-01T00:00:00Z"


def pending(harness: PluginHarness) -> list[dict[str, Any]]:
    return [r for r in queue_records(harness.host) if r["status"] == "pending"]


def memory_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("memory ")]


# --------------------------------------------------------------------------- 1. write-time de-duplication


async def test_two_identical_remember_calls_leave_one_record_and_the_second_names_it(harness: PluginHarness
                                                                                      ) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    first = await chat.tool("remember", {"content": "my quarterly report is due on March 3"})
    # The same fact: other case, a trailing full stop, the "the user's" wrapper, extra spaces.
    second = await chat.tool("remember", {"content": "The user's  quarterly report is due on March 3."})
    assert first["ok"] and "already_remembered" not in first
    assert second["ok"] is True and second["already_remembered"] is True
    assert second["episode_id"] == first["episode_id"] and first["episode_id"] in second["note"]
    assert [e["id"] for e in await chat.export_l2()] == [first["episode_id"]]
    entries = await chat.audit_entries()
    [noted] = [e for e in entries if e["operation"] == "remember_duplicate"]
    assert noted["target_id"] == first["episode_id"] and "already remembered" in noted["summary"]
    assert [e["operation"] for e in entries].count("remember") == 1


async def test_a_changed_number_or_another_speaker_is_not_a_duplicate(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    alice, bob = open_chat(harness, sender_id="u1", sender_name="Alice"), open_chat(harness, sender_id="u2",
                                                                                    sender_name="Bob")
    a = await alice.tool("remember", {"content": "my report is due on March 3"})
    changed = await alice.tool("remember", {"content": "my report is due on March 13"})
    other = await bob.tool("remember", {"content": "my report is due on March 3"})  # Bob's "my" is not Alice's
    assert "already_remembered" not in changed and "already_remembered" not in other
    assert len({a["episode_id"], changed["episode_id"], other["episode_id"]}) == 3
    assert len(await alice.export_l2()) == 3


async def test_a_near_duplicate_is_stored_and_names_the_similar_record(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    first = await chat.remember("the demo is on Friday")
    near = await chat.tool("remember", {"content": "The demo is scheduled for Friday"})
    assert near["ok"] and "already_remembered" not in near and near["episode_id"] != first
    assert [s["id"] for s in near["similar"]] == [first] and "forget the outdated one" in near["note"]
    # A replaced word is a changed fact, not a copy: nothing is named.
    moved = await chat.tool("remember", {"content": "the demo is on Monday"})
    assert "similar" not in moved
    assert len(await chat.export_l2()) == 3  # reported, never merged
    [stored] = [e for e in await chat.audit_entries()
                if e["operation"] == "remember" and e["target_id"] == near["episode_id"]]
    assert stored["meta"]["similar"] == [first]


async def test_an_import_reports_duplicates_per_record_and_writes_the_rest(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    stored = await chat.remember("the office wifi is on the second floor router")
    batch = [{"id": "a", "content": "Parking is free on weekends"},
             {"id": "b", "content": "parking is free on weekends."},  # repeats record #1 of this batch
             {"id": "c", "content": "The office wifi is on the second floor router"},  # repeats the space
             {"id": "d", "content": "The canteen opens at 11:30"}]
    reply = await chat.run("!memory import l2\n" + json.dumps(batch))
    assert reply.startswith("Imported 2 episodes"), reply
    assert "Already remembered, not imported: 2 records" in reply
    records = {e["original_id"]: e["id"] for e in await chat.export_l2() if e.get("original_id")}
    assert set(records) == {"a", "d"}
    assert f"/1 (b) -> {records['a']} (an earlier record of this import)" in reply  # by JSON Pointer
    assert f"/2 (c) -> {stored}" in reply
    noted = [e for e in await chat.audit_entries() if e["operation"] == "import_duplicate"]
    assert sorted((e["meta"]["position"], e["target_id"]) for e in noted) == [(2, records["a"]), (3, stored)]


# --------------------------------------------------------------------------- 2. candidates never duplicate memory


async def test_a_remember_that_turn_leaves_no_pending_candidate(harness: PluginHarness,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    await harness.create_memory_kb(**CANDIDATES_ON)
    text = "Remember that the design review moved to Friday."
    query_id, _ = open_turn(harness, GROUP, "u1", "Alice", text)
    # The agent's tool call of that turn (the model worded it its own way), then the reply event.
    stored = await harness.call_tool("remember", {"content": "The user's design review moved to Friday"},
                                     session=GROUP.session("first-speaker"), query_id=query_id)
    assert stored["ok"], stored
    with caplog.at_level(logging.INFO, logger="LongTermMemory"):
        await responded(harness, text, query_id=query_id)
    assert pending(harness) == []
    [line] = [r.getMessage() for r in caplog.records if "candidates stored" in r.getMessage()]
    assert "added=0" in line and "duplicates=1" in line and "in_memory=1" in line, line
    # Without the tool call, the same message still proposes it (the check is not a blanket refusal).
    await responded(harness, "Remember that the budget review moved to Monday.")
    assert [r["content"] for r in pending(harness)] == ["the budget review moved to Monday"]


async def test_a_candidate_repeating_a_profile_value_is_not_queued(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**CANDIDATES_ON)
    chat = open_chat(harness)
    await chat.tool("update_profile", {"scope": "speaker", "traits": ["vegetarian"]})
    await responded(harness, "I'm a vegetarian.")
    assert pending(harness) == []


async def test_accepting_a_candidate_whose_fact_is_stored_returns_the_existing_id(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**CANDIDATES_ON)
    await responded(harness, "Remember that the quarterly offsite is in Lisbon.")
    (record,) = pending(harness)
    # Meanwhile the fact is stored another way (a later turn's tool call).
    chat = open_chat(harness, sender_id="u1", sender_name="Alice")
    existing = await chat.remember("the quarterly offsite is in Lisbon")
    admin = open_chat(harness, sender_id="admin-1", sender_name="Ada")
    reply = await admin.run(f"!memory candidate accept {record['id']}")
    assert reply.startswith(f"Accepted candidate {record['id']}: already remembered as episode {existing}"), reply
    assert [e["id"] for e in await admin.export_l2()] == [existing]
    decided = await admin.run("!memory candidates --all-statuses")
    assert f"applied as episode {existing} (already remembered)" in decided
    [accepted] = queue_records(harness.host)
    assert accepted["applied_id"] == existing and accepted["applied_existing"] is True


# --------------------------------------------------------------------------- 6. validity


async def test_an_expired_fact_is_not_injected_but_recall_search_and_console_mark_it(harness: PluginHarness
                                                                                      ) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    old = await chat.remember("the gym opens at 6am on weekdays", valid_until=EXPIRED)
    current = await chat.remember("the gym closes at 10pm on weekdays")
    turn = await prompt_turn(harness, GROUP, "u1", "Alice", "when does the gym open on weekdays?")
    assert "gym closes at 10pm" in turn.memory_text
    assert "opens at 6am" not in turn.memory_text and old not in json.dumps(turn.context)

    recalled = await chat.tool("recall_memory", {"query": "when does the gym open"})
    marks = {e["id"]: e.get("validity") for e in recalled["episodes"]}
    assert marks[old] == "expired" and marks[current] is None

    search = await chat.run("!memory search gym opens")
    [old_line] = [line for line in search.splitlines() if old in line]
    assert "[expired]" in old_line
    assert "[expired]" not in next(line for line in search.splitlines() if current in line)
    assert "expired" in await chat.run(f"!memory show {old}")

    space = {"scope_key": chat.chat_key, "user_key": chat.chat_key}
    listed = {e["id"]: e["validity"] for e in (await ok(harness, "/episodes", {"space": space}))["episodes"]}
    assert listed == {old: "expired", current: "current"}
    found = {r["id"]: r["validity"] for r in (await ok(harness, "/search", {"space": space, "query": "gym"}))["results"]}
    assert found[old] == "expired"


async def test_a_fact_that_starts_later_is_injected_with_its_start(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    start = (utc_now() + timedelta(days=30)).strftime("%Y-%m-%dT00:00:00Z")
    await chat.remember("the new parking rules apply to the north lot", valid_from=start)
    turn = await prompt_turn(harness, GROUP, "u1", "Alice", "what are the parking rules for the north lot?")
    [line] = [line for line in memory_lines(turn.memory_text) if "north lot" in line]
    assert f"valid_from {start} (not yet in effect)" in line


# --------------------------------------------------------------------------- 7. the date line


async def test_the_injected_block_carries_todays_date(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    await chat.remember("the team lunch is next Friday")
    before = utc_now()
    turn = await prompt_turn(harness, GROUP, "u1", "Alice", "when is the team lunch?")
    after = utc_now()
    days = {f"Current date and time: {m:%A %Y-%m-%d}" for m in (before, after)}  # a turn across midnight
    [line] = [line for line in turn.memory_text.splitlines() if line.startswith("Current date and time:")]
    assert any(line.startswith(day) for day in days) and line.endswith("UTC (the user's time zone is not known).")


# --------------------------------------------------------------------------- 8. a summary and its sources


@pytest.mark.parametrize("top_k", [2])
async def test_a_summary_and_its_sources_take_one_slot(harness: PluginHarness, top_k: int) -> None:
    await harness.create_memory_kb(consolidation_enabled=True, consolidation_model_uuid="llm-1",
                                   auto_recall_top_k=top_k)
    chat = open_chat(harness)
    sources = [await chat.remember("Alice's team ships the mobile app on Fridays"),
               await chat.remember("Alice's team ships the web app on Mondays")]
    harness.host.llm_script = one_statement("Alice's team ships the mobile app on Fridays and the web app on Mondays")
    await chat.run(f"!memory consolidate run {await preview_id(chat)}")
    await chat.remember("Alice's team ships release notes by email")
    turn = await prompt_turn(harness, GROUP, "u1", "Alice", "when does Alice's team ship the apps?")
    lines = memory_lines(turn.memory_text)
    assert len(lines) == top_k, turn.memory_text
    assert "summary of 2 memories" in lines[0] and "mobile app on Fridays and the web app" in lines[0]
    assert "release notes by email" in lines[1]  # the slot the sources would have taken
    # Asked for, every record is found: a summary may leave a detail of its sources out.
    recalled = await chat.tool("recall_memory", {"query": "when does Alice's team ship the apps"})
    assert set(sources) <= {e["id"] for e in recalled["episodes"]}
    listed = await chat.run("!memory search ships the app")
    assert all(i in listed for i in sources)


# --------------------------------------------------------------------------- 9. expiry and de-duplication


def days_ahead(days: float) -> str:
    return format_utc(utc_now() + timedelta(days=days))


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Let `days` pass for the plugin (the one clock seam, `ltm.timefields.clock`)."""
    def let_pass(days: float) -> None:
        now = timefields.clock()
        monkeypatch.setattr(timefields, "clock", lambda: now + timedelta(days=days))
    return let_pass


def fact_lines(turn_text: str, words: str) -> list[str]:
    return [line for line in memory_lines(turn_text) if words in line]


async def test_a_restated_expired_fact_becomes_the_current_record_and_supersedes_the_expired_one(
        harness: PluginHarness, later: Callable[[float], None]) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    old = await chat.remember("the spare office key is in the blue drawer", valid_until=days_ahead(1),
                              source_ref="note:desk-7", claim_type="user_statement", tags=["office"],
                              event_at="2026-01-05T09:00:00Z")
    kept = {k: v for k, v in (await chat.export_l2())[0].items() if k not in ("status", "status_changed_at")}
    later(2)  # its validity ends: the fact leaves the prompt
    asked = "where is the spare office key?"
    assert fact_lines((await prompt_turn(harness, GROUP, "u1", "Alice", asked)).memory_text, "blue drawer") == []
    again = await chat.tool("remember", {"content": "The spare office key is in the blue drawer."})
    assert again["ok"] and "already_remembered" not in again, again
    assert again["episode_id"] != old and again["superseded"] == [old]
    [shown] = fact_lines((await prompt_turn(harness, GROUP, "u1", "Alice", asked)).memory_text, "blue drawer")
    assert "valid_until" not in shown  # the restatement, not the expired record
    records = {e["id"]: e for e in await chat.export_l2()}
    assert records[old]["status"] == "superseded" and records[old]["superseded_by"] == again["episode_id"]
    assert {k: records[old][k] for k in kept} == kept  # superseding changed its status, nothing else
    assert records[again["episode_id"]]["status"] == "active" and records[again["episode_id"]]["supersedes"] == [old]
    entries = [(e["operation"], e["target_id"]) for e in await chat.audit_entries()]
    assert ("remember", again["episode_id"]) in entries and ("supersede", old) in entries
    assert not any(op == "remember_duplicate" for op, _ in entries)
    # Said a third time, it is the current record that holds it.
    third = await chat.tool("remember", {"content": "the spare office key is in the blue drawer"})
    assert third["already_remembered"] is True and third["episode_id"] == again["episode_id"]


async def test_new_dates_replace_a_current_record_and_a_restatement_without_dates_repeats_it(
        harness: PluginHarness, later: Callable[[float], None]) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    until = days_ahead(3)
    first = await chat.remember("Bob covers the front desk", valid_until=until)
    for same in ({}, {"valid_until": until}):  # no dates: says nothing new about time; the same dates: a copy
        repeated = await chat.tool("remember", {"content": "Bob covers the front desk", **same})
        assert repeated["already_remembered"] is True and repeated["episode_id"] == first
    longer = await chat.tool("remember", {"content": "Bob covers the front desk", "valid_until": days_ahead(10)})
    assert "already_remembered" not in longer and longer["superseded"] == [first]
    later(5)  # past the first end date, before the new one: the fact is still shown, once
    turn = await prompt_turn(harness, GROUP, "u1", "Alice", "who covers the front desk?")
    assert len(fact_lines(turn.memory_text, "front desk")) == 1
    active = [e["id"] for e in await chat.export_l2() if e["status"] == "active"]
    assert active == [longer["episode_id"]]
    # A record that starts later is shown (with its start), so it holds its fact against a plain restatement.
    starts = await chat.remember("the north lot needs a permit", valid_from=days_ahead(30))
    plain = await chat.tool("remember", {"content": "the north lot needs a permit"})
    assert plain["already_remembered"] is True and plain["episode_id"] == starts


async def test_a_candidate_restating_an_expired_fact_is_queued_and_accepting_it_supersedes_it(
        harness: PluginHarness, later: Callable[[float], None]) -> None:
    await harness.create_memory_kb(**CANDIDATES_ON)
    chat = open_chat(harness, sender_id="u1", sender_name="Alice")
    old = await chat.remember("the quarterly offsite is in Lisbon", valid_until=days_ahead(1))
    await responded(harness, "Remember that the quarterly offsite is in Lisbon.")
    assert pending(harness) == []  # still current: memory holds it
    later(2)
    await responded(harness, "Remember that the quarterly offsite is in Lisbon.")
    (record,) = pending(harness)
    admin = open_chat(harness, sender_id="admin-1", sender_name="Ada")
    reply = await admin.run(f"!memory candidate accept {record['id']}")
    assert "already remembered" not in reply, reply
    [accepted] = [r for r in queue_records(harness.host) if r["status"] == "accepted"]
    assert not accepted.get("applied_existing") and accepted["applied_id"] != old
    records = {e["id"]: e for e in await admin.export_l2()}
    assert records[old]["superseded_by"] == accepted["applied_id"]
    assert [i for i, e in records.items() if e["status"] == "active"] == [accepted["applied_id"]]


async def test_an_import_restating_an_expired_fact_writes_it_unlinked(harness: PluginHarness,
                                                                      later: Callable[[float], None]) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    old = await chat.remember("the canteen opens at 11:30", valid_until=days_ahead(1))
    batch = json.dumps([{"id": "a", "content": "The canteen opens at 11:30."}])
    assert "Already remembered, not imported: 1 record" in await chat.run("!memory import l2\n" + batch)
    later(2)
    reply = await chat.run("!memory import l2\n" + batch)
    assert "Already remembered" not in reply, reply
    records = {e["id"]: e for e in await chat.export_l2()}
    [new] = [i for i in records if i != old]
    assert records[new]["original_id"] == "a" and records[old]["status"] == "active"  # its own links only
    turn = await prompt_turn(harness, GROUP, "u1", "Alice", "when does the canteen open?")
    assert len(fact_lines(turn.memory_text, "canteen opens")) == 1
