"""Operator control inside a real LangBot 4.11.2, end to end.

The e2e memory KB is created WITHOUT `consolidation_enabled` (devhost/langbot_setup.py) and the
setup switches it on with an override through the Memory Console's page API, the way an operator
does on such a KB. Here:
1. the override is what lets `!memory consolidate run <proposal_id>` write (reset it: refused;
   set it again through the page API: the reviewed draft is applied), and health names it;
2. one person's memory is erased through the console's page API (a counted dry run first), and
   another member's memory in the same group stays.
"""

from __future__ import annotations

import re
from typing import Any

from tests.e2e.test_real_consolidation import PROPOSAL, SUMMARY
from tests.e2e.test_real_langbot import remember, turn, unique


def settings_row(e2e: Any, name: str) -> dict[str, Any]:
    listing = e2e.client.page_api("/settings")
    assert listing["ok"] is True, listing
    return next(row for row in listing["settings"] if row["name"] == name)


def test_consolidation_switched_on_by_an_override_on_a_kb_created_without_it(e2e):
    assert settings_row(e2e, "consolidation_enabled") == {
        "name": "consolidation_enabled", "value": True, "origin": "override", "creation": False, "choices": []}
    facts = [f"the {unique('choir')} choir rehearses on Wednesdays",
             f"the {unique('choir')} choir sings at the harbour festival"]
    with e2e.chat("person") as chat:
        ids = [remember(e2e, chat, fact) for fact in facts]
        shown, _ = turn(e2e, chat, "!memory settings")
        assert "consolidation_enabled: true (override; created false)" in shown, shown
        health, _ = turn(e2e, chat, "!memory health")
        assert "consolidation_enabled = true (created false)" in health, health
        reply, _ = turn(e2e, chat, "!memory consolidate preview")
        match = PROPOSAL.search(reply)
        assert match, reply
        pid = match.group(1)
        try:
            reset = e2e.client.page_api("/settings/reset", {"name": "consolidation_enabled"})
            assert reset["ok"] and reset["setting"] == {**reset["setting"], "value": False, "origin": "creation"}
            refused, _ = turn(e2e, chat, f"!memory consolidate run {pid}")
            assert "consolidation is switched off" in refused, refused
        finally:
            switched = e2e.client.page_api("/settings/set", {"name": "consolidation_enabled", "value": True})
            assert switched["ok"] is True, switched
        applied, requests = turn(e2e, chat, f"!memory consolidate run {pid}")
        assert requests == [] and SUMMARY.search(applied), applied
        listed, _ = turn(e2e, chat, "!memory list")
        assert all(i in listed for i in ids), listed
    bad = e2e.client.page_api("/settings/set", {"name": "auto_recall_top_k", "value": "lots"})
    assert bad["ok"] is False and "auto_recall_top_k must be a whole number from 0 to 20" in bad["error"]


def test_a_persons_memory_erased_through_the_console_page_api(e2e):
    # One group connection at a time: LangBot 4.11.2 sends every reply of its debug group chat to
    # every open connection of that group.
    with e2e.chat("group") as alice:
        sender = alice.sender_id
        theirs = [remember(e2e, alice, f"the {unique('kite')} kite is red"),
                  remember(e2e, alice, f"the {unique('kite')} kite flies on Sundays")]
        mine, _ = turn(e2e, alice, "!memory me")
        assert f", {sender}):" in mine and re.search(r"Episodes you said: 2 \(2 active", mine), mine
    with e2e.chat("group") as bob:
        kept = remember(e2e, bob, f"the {unique('drum')} drum is blue")
        plan = e2e.client.page_api("/person/erase", {"sender_id": sender})
        assert plan["ok"] and plan["dry_run"] is True and plan["counts"]["episodes"] == 2, plan
        listed, _ = turn(e2e, bob, "!memory list")
        assert all(i in listed for i in (*theirs, kept)), listed  # a dry run changes nothing

        result = e2e.client.page_api("/person/erase", {"sender_id": sender, "dry_run": False})
        assert result["ok"] and result["counts"]["episodes"] == 2 and result["fenced"] == [], result
        listed, _ = turn(e2e, bob, "!memory list")
        assert kept in listed and not any(i in listed for i in theirs), listed
        found = e2e.client.page_api("/person/find", {"sender_id": sender})
        assert found["ok"] and found["spaces"] == [], found
        audit, _ = turn(e2e, bob, "!memory audit")
        assert "Person erase · episode" in audit, audit  # the operation by its readable name
