"""The official LongTermMemory plugin's L1 on the real test host: `update_profile` with its parameters
(scope, field, action, value, fact_key, previous_value), the per-fact history that keeps, shown by
`!memory profile`, the console's Profiles data and the L1 export, and `!memory import l1` of the
official L1 export (tests/official_l1_export.json, written for these tests in the official shape)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testhost import PluginHarness
from tests.chat import Chat, open_chat

OFFICIAL_EXPORT = Path(__file__).with_name("official_l1_export.json")
G1 = {"scope_key": "bot-1:group_g1", "user_key": "bot-1:group_g1"}


async def l1(chat: Chat) -> dict[str, Any]:
    data: dict[str, Any] = await chat.run_json("!memory export")
    return data


async def l1_ops(chat: Chat) -> list[tuple[str, str]]:
    return [(e["operation"], e["target_id"]) for e in await chat.audit_entries()
            if e["operation"] in ("update_profile", "profile_import")]


async def test_official_parameters_keep_one_current_value_per_fact_and_its_history(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    alice = open_chat(harness, "g1", sender_id="alice", sender_name="Alice")
    first = await alice.tool("update_profile", {"field": "preferences", "action": "set", "value": "likes coffee",
                                                "fact_key": "Coffee"})
    assert first["ok"] is True and first["scope"] == "speaker", first  # no scope: a preference is the speaker's
    assert first["fact"] == {"field": "preferences", "key": "coffee", "value": "likes coffee", "earlier": []}
    await alice.tool("update_profile", {"field": "preferences", "action": "add", "value": "short answers"})
    corrected = await alice.tool("update_profile", {"field": "preferences", "action": "set", "value": "no coffee",
                                                    "fact_key": "coffee", "previous_value": "likes coffee"})
    assert corrected["fact"]["value"] == "no coffee"
    assert [(p["value"], p["status"]) for p in corrected["fact"]["earlier"]] == [("likes coffee", "replaced")]
    assert "likes coffee" not in corrected["profile"]  # never two current values of one fact
    notes = await alice.tool("update_profile", {"field": "notes", "action": "add", "value": "meets on Fridays"})
    assert notes["scope"] == "session"  # no scope: notes are the session's
    await alice.tool("update_profile", {"field": "notes", "action": "add", "value": "brings snacks"})

    data = await l1(alice)
    speaker = data["speaker_profiles"]["alice"]
    assert speaker["preferences"] == ["short answers", "no coffee"]
    coffee = speaker["facts"]["preferences"]["coffee"]
    assert coffee["value"] == "no coffee" and [h["value"] for h in coffee["history"]] == ["likes coffee"]
    assert data["session_profile"]["notes"] == "meets on Fridays; brings snacks"
    assert "facts" not in data["session_profile"]  # a profile without named facts is stored as before

    shown = await alice.run("!memory profile")
    assert "Preference “coffee”: “no coffee”; before: “likes coffee” (until " in shown, shown
    response = await harness.page_api("console", "/profiles", "POST", {"space": G1})
    assert response["data"]["speaker_profiles"]["alice"]["facts"] == speaker["facts"]

    removed = await alice.tool("update_profile", {"field": "preferences", "action": "remove", "fact_key": "coffee"})
    assert removed["fact"]["value"] == "" and [p["status"] for p in removed["fact"]["earlier"]] == ["removed",
                                                                                                   "replaced"]
    assert (await l1(alice))["speaker_profiles"]["alice"]["preferences"] == ["short answers"]
    audit = [e for e in await alice.audit_entries() if e["operation"] == "update_profile"]
    assert [e["meta"].get("fact_key") for e in audit] == ["coffee", None, "coffee", None, None, "coffee"]


async def test_a_group_member_changes_only_their_own_speaker_profile(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    alice = open_chat(harness, "g1", sender_id="alice", privilege=1)
    bob = open_chat(harness, "g1", sender_id="bob", privilege=1)
    await alice.tool("update_profile", {"field": "traits", "action": "add", "value": "plays chess",
                                        "fact_key": "hobby"})
    # Bob's call names Alice's fact key and her value: it still lands in Bob's own profile.
    result = await bob.tool("update_profile", {"scope": "speaker", "field": "traits", "action": "set",
                                               "value": "plays go", "fact_key": "hobby",
                                               "previous_value": "plays chess"})
    assert result["ok"] is True
    data = await l1(alice)
    assert data["speaker_profiles"]["alice"]["traits"] == ["plays chess"]
    assert data["speaker_profiles"]["alice"]["facts"]["traits"]["hobby"]["history"] == []
    assert data["speaker_profiles"]["bob"]["traits"] == ["plays go"]


@pytest.mark.parametrize("params, message", [
    ({"field": "traits", "action": "add", "value": "my password is hunter2"}, "looks like a password"),
    ({"field": "traits", "action": "set", "value": "x", "fact_key": "k", "previous_value": "password is hunter2"},
     "previous_value looks like a password"),
    ({"field": "traits", "action": "add", "value": "x" * 201}, "value is longer than 200 characters"),
    ({"field": "notes", "action": "set", "value": "y" * 1001}, "notes are longer than 1000 characters"),
    ({"field": "name", "action": "set", "value": "Al", "fact_key": "k"}, "fact_key is only for traits and preferences"),
    ({"field": "age", "action": "set", "value": "4"}, "field must be one of"),
    ({"field": "traits", "action": "append", "value": "x"}, "action must be one of"),
    ({"field": "traits", "action": "add"}, "value is required"),
    ({"field": "traits", "action": "add", "value": "x", "traits": ["y"]}, "not both"),
    ({"scope": "everyone", "field": "traits", "action": "add", "value": "x"}, "scope must be one of"),
])
async def test_bad_official_calls_are_refused_and_write_nothing(harness: PluginHarness, params: dict[str, Any],
                                                                message: str) -> None:
    await harness.create_memory_kb()
    alice = open_chat(harness, "g1", sender_id="alice")
    result = await alice.tool("update_profile", params)
    assert result["ok"] is False and message in result["error"], result
    assert (await l1(alice))["speaker_profiles"] == {} and await l1_ops(alice) == []


@pytest.mark.plugin_config({"max_profile_traits": 2})
async def test_import_l1_takes_the_official_export_skips_and_reports_what_it_cannot_store(
        harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness, "g2", sender_id="u1")
    document = OFFICIAL_EXPORT.read_text(encoding="utf-8")
    reply = await chat.run("!memory import l1 " + json.dumps(json.loads(document)))
    assert reply.startswith("Imported the session profile and 2 speaker profiles (1001, 1002) into "
                            "bot-1:group_g2"), reply
    for place, reason in [
        ("/profiles/1/profile/profile_slots/traits/occupation/history/1", "looks like a password"),
        ("/profiles/1/profile/freeform_traits/1", "an item must be a string"),
        ("/profiles/2/profile/notes", "notes is longer than 1000 characters"),
        ("/profiles/2/profile/freeform_traits/0", "over max_profile_traits (2)"),
        ("/profiles/3/sender_id", "sender_id is required"),
        ("/profiles/4/type", "type must be one of"),
    ]:
        assert f"{place}: " in reply and reason in reply.split(f"{place}: ")[1].split("\n")[0], (place, reply)
    assert "Skipped 6 items this plugin cannot store" in reply and "1 empty profile" in reply
    assert "the JSON came from bot-9:group_500" in reply and "hunter2" not in reply

    data = await l1(chat)
    session = data["session_profile"]
    assert session["traits"] == ["meets on Saturdays"]
    assert session["preferences"] == ["short answers", "reply in English"]  # no item counted twice
    language = session["facts"]["preferences"]["reply_language"]
    assert language["value"] == "reply in English" and language["confidence"] == 0.9
    assert language["history"] == [{"value": "reply in Chinese", "since": "2026-02-01T10:00:00Z", "until": None,
                                    "status": "replaced", "reason": "profile_update"}]
    mei = data["speaker_profiles"]["1001"]
    assert mei["traits"] == ["vegetarian", "works as a nurse"] and mei["preferences"] == ["tea over coffee"]
    assert [h["value"] for h in mei["facts"]["traits"]["occupation"]["history"]] == ["student"]
    assert mei["facts"]["preferences"]["coffee"]["history"][0]["until"] == "2026-03-12T07:30:00Z"
    tom = data["speaker_profiles"]["1002"]
    assert tom["traits"] == ["paddles since 2019", "early riser"] and tom["notes"] == "" and tom["name"] == "Tom"
    assert "1003" not in data["speaker_profiles"]
    imported = await l1_ops(chat)
    assert len(imported) == 3

    again = await chat.run("!memory import l1 " + document)
    assert again.startswith("Nothing changed: every profile in the JSON (3 profiles) is stored exactly so"), again
    assert await l1(chat) == data and await l1_ops(chat) == imported


async def test_our_own_export_carries_fact_history_and_imports_once(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    source = open_chat(harness, "g1", sender_id="u2")
    await source.tool("update_profile", {"field": "traits", "action": "set", "value": "student", "fact_key": "job"})
    await source.tool("update_profile", {"field": "traits", "action": "set", "value": "nurse", "fact_key": "job"})
    exported = await l1(source)
    assert [h["value"] for h in exported["speaker_profiles"]["u2"]["facts"]["traits"]["job"]["history"]] == ["student"]

    target = open_chat(harness, "g2", sender_id="u1")
    reply = await target.run("!memory import l1 " + json.dumps(exported))
    assert reply.startswith("Imported 1 speaker profile (u2)"), reply
    assert (await l1(target))["speaker_profiles"] == exported["speaker_profiles"]
    assert "Nothing changed" in await target.run("!memory import l1 " + json.dumps(exported))
    broken = json.loads(json.dumps(exported))
    broken["speaker_profiles"]["u2"]["facts"]["traits"]["job"]["history"][0]["value"] = "password is hunter2"
    refused = await target.run("!memory import l1 " + json.dumps(broken))
    assert "looks like a password" in refused and "hunter2" not in refused, refused
