"""Profile control on the real test host (Chroma, Qdrant, Milvus Lite): `!memory profile set|remove|
clear`, `!memory import l1` and the console's editable Profiles tab. An admin changes any profile of
the chat; in a group a member changes only their own speaker profile; every change is validated like
`update_profile` and audited; an import is what `export` gives, validated whole before any write."""

from __future__ import annotations

import json
from typing import Any

from testhost import PluginHarness
from tests.chat import Chat, Place, open_chat, tool

G1 = {"scope_key": "bot-1:group_g1", "user_key": "bot-1:group_g1"}


async def l1(chat: Chat) -> dict[str, Any]:
    data: dict[str, Any] = await chat.run_json("!memory export")
    return data


async def console(h: PluginHarness, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await h.page_api("console", endpoint, "POST", body)
    assert response["error"] is None, response
    data: dict[str, Any] = response["data"]
    return data


async def l1_audit(chat: Chat) -> list[tuple[str, str, str]]:
    return [(e["operation"], e["target_type"], e["target_id"]) for e in await chat.audit_entries()
            if e["operation"].startswith(("profile_", "update_profile"))]


async def test_an_admin_sets_removes_and_clears_every_profile_of_the_chat(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    admin = open_chat(harness, "g1", sender_id="u1")
    reply = await admin.run("!memory profile set name Paddling club")
    assert reply.startswith("name set in the session profile.") and "Name: “Paddling club”" in reply, reply
    await admin.run("!memory profile set traits meets on Saturdays, stores boats at the north pier")
    await admin.run("!memory profile set preferences green tea --speaker u2")
    await admin.run("!memory profile set notes allergic to nuts --speaker u2")
    data = await l1(admin)
    assert data["session_profile"]["name"] == "Paddling club"
    assert data["session_profile"]["traits"] == ["meets on Saturdays", "stores boats at the north pier"]
    assert data["speaker_profiles"]["u2"]["preferences"] == ["green tea"]

    await admin.run("!memory profile remove traits meets on Saturdays")
    await admin.run("!memory profile remove notes --speaker u2")
    data = await l1(admin)
    assert data["session_profile"]["traits"] == ["stores boats at the north pier"]
    assert data["speaker_profiles"]["u2"]["notes"] == "" and data["speaker_profiles"]["u2"]["preferences"]
    assert "nothing changed" in await admin.run("!memory profile remove traits not there")

    assert await admin.run("!memory profile clear --speaker u2") == "Cleared the speaker profile of u2."
    assert "empty already" in await admin.run("!memory profile clear --speaker u2")
    assert (await l1(admin))["speaker_profiles"] == {}
    assert await l1_audit(admin) == [
        ("profile_edit", "session_profile", "session"), ("profile_edit", "session_profile", "session"),
        ("profile_edit", "speaker_profile", "u2"), ("profile_edit", "speaker_profile", "u2"),
        ("profile_edit", "session_profile", "session"), ("profile_edit", "speaker_profile", "u2"),
        ("profile_clear", "speaker_profile", "u2")]


async def test_a_group_member_changes_only_their_own_speaker_profile(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    admin = open_chat(harness, "g1", sender_id="u1")
    await admin.run("!memory profile set name Paddling club")
    await admin.run("!memory profile set traits steers --speaker u1")
    member = open_chat(harness, "g1", sender_id="u2", privilege=1)
    before, audit_before = await l1(admin), await l1_audit(admin)
    for attempt in ("!memory profile set name Hijacked", "!memory profile clear",
                    "!memory profile set traits lazy --speaker u1", "!memory profile clear --speaker u1",
                    "!memory profile remove traits steers --speaker u1"):
        reply = await member.run(attempt)
        assert "only bot admins change the session profile or another member's profile" in reply, (attempt, reply)
    assert await l1(admin) == before and await l1_audit(admin) == audit_before
    assert "only bot admins" in await member.run('!memory import l1 {"session_profile": {"name": "x"}}')

    assert "Preferences: “window seat”" in await member.run("!memory profile set preferences window seat --me")
    await member.run("!memory profile set notes prefers mornings --speaker u2")
    assert (await l1(admin))["speaker_profiles"]["u2"]["notes"] == "prefers mornings"
    assert await member.run("!memory profile clear --me") == "Cleared the speaker profile of u2."
    # A private chat's profile is its user's to manage.
    alone = open_chat(harness, "p1", sender_id="u3", privilege=1, launcher_type="person")
    assert "Name: “Ann”" in await alone.run("!memory profile set name Ann")


async def test_edits_are_validated_like_update_profile_and_write_nothing_when_refused(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    admin = open_chat(harness, "g1", sender_id="u1")
    long_name = "x" * 101
    via_tool = await tool(harness, Place("group", "g1"), "update_profile", {"scope": "session", "name": long_name},
                          sender="u1")
    assert via_tool["ok"] is False
    assert via_tool["error"] in await admin.run(f"!memory profile set name {long_name}")
    secret = await admin.run("!memory profile set notes my password is hunter2 --speaker u2")
    assert "refused: the profile notes looks like" in secret, secret
    assert "field must be one of: name, traits, preferences, notes" in await admin.run("!memory profile set age 4")
    assert "give the new value of name" in await admin.run("!memory profile set name")
    assert "give --me or --speaker" in await admin.run("!memory profile clear --me --speaker u2")
    assert await l1_audit(admin) == []
    bad = await console(harness, "/profile/edit", {"space": G1, "target": "session", "fields": {"age": 4}})
    assert bad["ok"] is False and "unknown profile field(s): age" in bad["error"]
    missing = await console(harness, "/profile/edit", {"space": G1, "target": "speaker", "fields": {"name": "A"}})
    assert missing["ok"] is False and "sender_id is required" in missing["error"]


async def test_import_l1_takes_what_export_gives_validated_whole(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    source = open_chat(harness, "g1", sender_id="u1")
    await source.run("!memory profile set name Paddling club")
    await source.run("!memory profile set traits meets on Saturdays, owns two kayaks")
    await source.run("!memory profile set preferences green tea --speaker u2")
    await source.run("!memory profile set name Ann --speaker u3")
    exported = await l1(source)

    target = open_chat(harness, "g2", sender_id="u1")
    await target.run("!memory profile set name Old name")
    await target.run("!memory profile set notes kept: not in the import --speaker u9")
    reply = await target.run("!memory import l1 " + json.dumps(exported))
    assert reply.startswith("Imported the session profile and 2 speaker profiles (u2, u3) into bot-1:group_g2"), reply
    assert "the JSON came from bot-1:group_g1" in reply
    imported = await l1(target)
    assert imported["session_profile"] == exported["session_profile"]
    assert {k: v for k, v in imported["speaker_profiles"].items() if k != "u9"} == exported["speaker_profiles"]
    assert imported["speaker_profiles"]["u9"]["notes"] == "kept: not in the import"
    assert [op for op, _, _ in await l1_audit(target)][-3:] == ["profile_import"] * 3

    # One bad profile fails the whole import; nothing of it is written.
    before = await l1(target)
    broken = json.loads(json.dumps(exported))
    broken["session_profile"]["name"] = "Renamed"
    broken["speaker_profiles"]["u3"]["traits"] = ["x" * 201]
    reply = await target.run("!memory import l1 " + json.dumps(broken))
    assert "speaker profile 'u3': an item of traits is longer than 200 characters" in reply, reply
    assert "nothing was imported" in reply and await l1(target) == before
    assert "expected an L1 export" in await target.run('!memory import l1 {"episodes": []}')
    assert "unknown field(s): age" in await target.run('!memory import l1 {"session_profile": {"age": 3}}')
    assert "looks like" in await target.run(
        '!memory import l1 {"session_profile": {"notes": "the wifi password is hunter2"}}')
    assert await l1(target) == before


async def test_the_console_edits_and_clears_profiles(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    edited = await console(harness, "/profile/edit", {"space": G1, "target": "speaker", "sender_id": "u2",
                                                      "fields": {"name": "Bob", "traits": ["tall", "Tall", "calm"]}})
    assert edited["ok"] is True and edited["profile"]["traits"] == ["Tall", "calm"]
    session = await console(harness, "/profile/edit", {"space": G1, "target": "session",
                                                       "fields": {"notes": "line one\nline two"}})
    assert session["profile"]["notes"] == "line one\nline two"
    listed = await console(harness, "/profiles", {"space": G1})
    assert listed["speaker_profiles"]["u2"]["name"] == "Bob"
    assert (await console(harness, "/profile/clear", {"space": G1, "target": "speaker", "sender_id": "u2"}))["cleared"]
    assert not (await console(harness, "/profile/clear", {"space": G1, "target": "speaker",
                                                          "sender_id": "u2"}))["cleared"]
    admin = open_chat(harness, "g1", sender_id="u1")
    assert await l1_audit(admin) == [("profile_edit", "speaker_profile", "u2"),
                                     ("profile_edit", "session_profile", "session"),
                                     ("profile_clear", "speaker_profile", "u2")]


async def test_a_list_value_without_a_real_item_is_refused_and_the_list_kept(harness: PluginHarness) -> None:
    """Separators only (",", "，", "、") or an item list of nulls and blanks name no item: on every surface
    they are refused, naming the field and the way to empty it, and the list stays as it was."""
    await harness.create_memory_kb()
    admin = open_chat(harness, "g1", sender_id="u1")
    await admin.run("!memory profile set traits meets on Saturdays, owns two kayaks")
    await admin.run("!memory profile set preferences green tea --speaker u2")
    before = await l1(admin)
    for value in (",", "，", "、", " , ，、 "):
        reply = await admin.run(f"!memory profile set traits {value}")
        assert "traits has no item with text" in reply and "remove the field or clear the profile" in reply, reply
        assert "preferences has no item with text" in await admin.run(f"!memory profile remove preferences {value} "
                                                                       "--speaker u2")
    for items in ([None], [""], ["  ", None], ["，"]):
        refused = await console(harness, "/profile/edit", {"space": G1, "target": "session",
                                                           "fields": {"traits": items}})
        assert refused["ok"] is False and "traits has no item with text" in refused["error"], refused
    via_tool = await tool(harness, Place("group", "g1"), "update_profile",
                          {"scope": "session", "traits": [None], "mode": "replace"}, sender="u1")
    assert via_tool["ok"] is False and via_tool["code"] == "invalid_input" and "traits" in via_tool["error"]
    assert await l1(admin) == before
    assert [e for e in await l1_audit(admin) if e[0] != "profile_edit"] == []
    assert len(await l1_audit(admin)) == 2  # the two edits above; nothing refused was audited
    # Emptying stays possible, explicitly: `remove <field>`, and an empty list from the console.
    assert "traits cleared" in await admin.run("!memory profile remove traits")
    emptied = await console(harness, "/profile/edit", {"space": G1, "target": "speaker", "sender_id": "u2",
                                                       "fields": {"preferences": []}})
    assert emptied["ok"] is True and emptied["profile"]["preferences"] == []
