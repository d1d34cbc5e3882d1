"""Memory that follows the chat (X1-X3 in docs/REQUIREMENTS.md), through the SDK's real dispatch on the
test host: the plugin's Runner gets each platform event as LangBot hands it to a bound event processor
(`PluginHarness.run_processor`, the RunnerContext of docs/HOST-FACTS.md 14.4), and turns carry the platform
message id the way LangBot names it (`_ingress_event_id`, 14.7).

- Provenance: every episode, candidate and profile change of a turn names its message and chat.
- A recall withdraws what came only from that message, audited; hostile events change nothing: unknown
  chats, people and messages, another chat's message id, a replay, malformed event JSON.
- A recall that arrives before the turn's own write: the late write is refused.
- A member who leaves: erased from that group with the setting on, nothing with it off.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

from ltm import Identity, MessageRecalled, SpokenTurn
from testhost import PluginHarness
from tests.chat import BOT, Chat, Place, open_chat, prompt_turn, tool
from tests.erasure_check import ErasureCheck, Installation, capture
from tests.test_candidates import responded

RUNNER = "platform_events"
G1, G2 = Place("group", "g1"), Place("group", "g2")


@pytest.fixture
def supported_backend_name() -> str:
    return "chroma"  # the events act through the ordinary episode writes, which every store's suite covers


def recall(message_id: Any, chat_id: Any = "g1", chat_type: str = "group", **more: Any) -> dict[str, Any]:
    """A `message.deleted` as LangBot's OneBot v11 adapter builds it (docs/HOST-FACTS.md 14.2)."""
    return {"type": "message.deleted", "message_id": message_id, "chat_type": chat_type, "chat_id": chat_id,
            "group": {"id": chat_id, "name": ""} if chat_type == "group" else None, "operator": {"id": "u1"},
            "bot_uuid": BOT, "adapter_name": "onebot-v11", "timestamp": 1700000000, **more}


def member_left(member: Any, group: Any = "g1", **more: Any) -> dict[str, Any]:
    return {"type": "group.member_left", "group": {"id": group, "name": ""}, "member": {"id": member, "nickname": ""},
            "is_kicked": False, "operator": {"id": member}, "bot_uuid": BOT, "adapter_name": "onebot-v11",
            "timestamp": 1700000000, **more}


async def deliver(h: PluginHarness, event: dict[str, Any]) -> None:
    results = await h.run_processor(RUNNER, event)
    assert [r["type"] for r in results] == ["run.completed"], results


def memory_storage(h: PluginHarness) -> dict[str, bytes]:
    """Plugin storage without the bookkeeping of the event itself (the per-bot note)."""
    return {k: v for k, v in h.host.storage.items() if not k.startswith("v2/platform/")}


def audit(h: PluginHarness, operation: str) -> list[dict[str, Any]]:
    """Every audit entry of `operation` in plugin storage (all logs, oldest chunk first)."""
    return [e for k, v in sorted(h.host.storage.items()) if k.startswith("v2/audit/") and not k.endswith("/head")
            for e in json.loads(v) if e["operation"] == operation]


async def says(h: PluginHarness, chat: Chat, text: str) -> None:
    """The chat's turn ends: its user message `text` answered (candidate extraction runs after the reply)."""
    h.host.queries[chat.query_id].variables.update(user_message_text=text, _knowledge_base_uuids=list(h.host.kbs))
    await responded(h, text, place=Place("group", chat.launcher_id), sender=chat.sender_id, query_id=chat.query_id)


async def remember(h: PluginHarness, place: Place, sender: str, content: str, message_id: Any) -> str:
    chat = open_chat(h, place.launcher_id, sender_id=sender, sender_name=sender.title(), message_id=message_id)
    return await chat.remember(content)


# ------------------------------------------------------------------------------------------- provenance
async def test_every_record_of_a_turn_names_its_message_and_chat(harness: PluginHarness) -> None:
    await harness.create_memory_kb(candidate_extraction_enabled=True)
    chat = open_chat(harness, "g1", sender_id="u1", message_id=812)
    episode_id = await chat.remember("the shed key hangs by the blue door")
    assert (await chat.tool("update_profile", {"scope": "speaker", "traits": ["gardener"]}))["ok"]
    await says(harness, chat, "Remember that the demo is on Friday.")
    ref = {"message_id": "812", "scope_key": f"{BOT}:group_g1"}
    (exported,) = await chat.export_l2()
    assert exported["id"] == episode_id and exported["message"] == ref
    assert "Message: 812 in bot-1:group_g1" in await chat.run(f"!memory show {episode_id}")
    space = {"scope_key": f"{BOT}:group_g1", "user_key": f"{BOT}:group_g1"}
    listed = await harness.page_api("console", "/episodes", "POST", {"space": space})
    assert [e["message"] for e in listed["data"]["episodes"]] == [ref], listed  # what the console shows
    profile = json.loads(harness.host.storage[f"v2/profile/{BOT}%3Agroup_g1/speaker/u1"])
    assert [s["message"] for s in profile["sources"]] == [ref]
    assert profile["sources"][0]["changes"] == {"traits": {"added": ["gardener"], "removed": []}}
    (queue,) = [json.loads(v) for k, v in harness.host.storage.items() if k.startswith("v2/candidates/")]
    assert queue["items"][0]["speaker"]["message_id"] == "812"
    assert {e["meta"].get("message_id") for op in ("remember", "update_profile") for e in audit(harness, op)} == {"812"}
    # A turn without a message id (the WebUI debug chat) makes records without one.
    debug = open_chat(harness, "g1", sender_id="u2")
    plain = await debug.remember("the hose is in the garage")
    assert "message" not in next(e for e in await debug.export_l2() if e["id"] == plain)


async def test_an_export_keeps_the_message_and_an_import_brings_it_back(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness, "g1", message_id="m-1")
    await chat.remember("the ladder is in the loft")
    exported = await chat.run_json("!memory export l2")
    other = open_chat(harness, "g2", message_id="m-2")
    assert "1" in await other.run("!memory import l2 " + json.dumps(exported))
    (imported,) = await other.export_l2()
    # The record keeps the message it came from, in its own chat: a recall in g2 of m-1 is another message.
    assert imported["message"] == {"message_id": "m-1", "scope_key": f"{BOT}:group_g1"}
    await deliver(harness, recall("m-1", "g2"))
    assert [e["id"] for e in await other.export_l2()] == [imported["id"]]


# ------------------------------------------------------------------------------------------- a recall
async def test_a_recall_withdraws_what_came_only_from_that_message(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    gone = await remember(harness, G1, "u1", "the gate is painted green", 812)
    stays = await remember(harness, G1, "u1", "the shed is painted red", 813)
    elsewhere = await remember(harness, G2, "u1", "the barn is painted blue", 812)  # the same id in another chat
    g2_before = {k: v for k, v in harness.host.storage.items() if "group_g2" in k}

    await deliver(harness, recall(812, "g1"))

    chat = open_chat(harness, "g1")
    assert [e["id"] for e in await chat.export_l2()] == [stays]
    assert gone not in {e["id"] for e in await chat.export_l2("--all-statuses")}
    withdrawn = audit(harness, "message_withdraw")
    assert [(e["target_id"], e["summary"]) for e in withdrawn] == [(gone, "withdrawn: message 812 recalled")]
    turn = await prompt_turn(harness, G1, "u2", "Bo", "what colour is the gate?")
    assert "green" not in turn.memory_text and "painted red" in turn.memory_text
    # The other group is byte-identical, and its record of message 812 is still there.
    assert {k: v for k, v in harness.host.storage.items() if "group_g2" in k} == g2_before
    assert [e["id"] for e in await open_chat(harness, "g2").export_l2()] == [elsewhere]


async def test_a_recall_rejects_pending_candidates_and_sets_a_profile_back(harness: PluginHarness) -> None:
    await harness.create_memory_kb(candidate_extraction_enabled=True)
    first = open_chat(harness, "g1", sender_id="u1", message_id=1)
    await first.tool("update_profile", {"field": "preferences", "action": "set", "fact_key": "coffee",
                                        "value": "likes coffee"})
    second = open_chat(harness, "g1", sender_id="u1", message_id=2)
    await second.tool("update_profile", {"field": "preferences", "action": "set", "fact_key": "coffee",
                                         "value": "no coffee"})
    await second.tool("update_profile", {"scope": "session", "name": "Garden club"})
    await says(harness, second, "Remember that the demo is on Friday.")
    key = f"v2/profile/{BOT}%3Agroup_g1/speaker/u1"
    assert json.loads(harness.host.storage[key])["preferences"] == ["no coffee"]

    await deliver(harness, recall(2, "g1"))

    profile = json.loads(harness.host.storage[key])
    assert profile["preferences"] == ["likes coffee"]
    assert profile["facts"]["preferences"]["coffee"]["value"] == "likes coffee"
    assert [s["message"]["message_id"] for s in profile["sources"]] == ["1"]
    session = json.loads(harness.host.storage[f"v2/profile/{BOT}%3Agroup_g1/session"])
    assert session["name"] == ""
    (queue,) = [json.loads(v) for k, v in harness.host.storage.items() if k.startswith("v2/candidates/")]
    assert [(c["status"], c["decided_by"]) for c in queue["items"]] == [("rejected", "recalled")]
    summaries = {e["summary"] for e in audit(harness, "message_withdraw")}
    assert "withdrawn: message 2 recalled" in summaries
    assert any(s.startswith("withdrawn: message 2 recalled; ") for s in summaries), summaries


async def test_what_an_admin_confirmed_or_changed_since_stays_and_the_audit_says_so(harness: PluginHarness) -> None:
    await harness.create_memory_kb(candidate_extraction_enabled=True)
    turn = open_chat(harness, "g1", sender_id="u1", message_id=7)
    archived = await turn.remember("the boat is blue")
    await says(harness, turn, "Remember that the demo is on Friday.")
    admin = open_chat(harness, "g1", sender_id="admin", message_id=8)
    (candidate,) = [c["id"] for k, v in harness.host.storage.items() if k.startswith("v2/candidates/")
                    for c in json.loads(v)["items"]]
    assert "accepted" in (await admin.run(f"!memory candidate accept {candidate}")).lower()
    await admin.run(f"!memory archive {archived}")
    before = {e["id"] for e in await admin.export_l2("--all-statuses")}

    await deliver(harness, recall(7, "g1"))

    assert {e["id"] for e in await admin.export_l2("--all-statuses")} == before
    kept = [e["summary"] for e in audit(harness, "message_withdraw")]
    assert "kept although message 7 was recalled: an admin confirmed it since" in kept
    assert "kept although message 7 was recalled: changed since (archived)" in kept


# ------------------------------------------------------------------------------------------- hostile events
async def test_events_about_unknown_chats_people_or_messages_change_nothing(harness: PluginHarness) -> None:
    await harness.create_memory_kb(erase_members_who_leave=True)
    await remember(harness, G1, "u1", "the gate is painted green", 812)
    before = memory_storage(harness)
    for event in (recall(999, "g1"),  # a message that made nothing
                  recall(812, "g404"),  # a chat that holds no memory
                  recall(812, "u1", chat_type="private"),  # the same id in a private chat
                  recall(812, "g1", bot_uuid="another-bot"),  # another bot's chat
                  member_left("nobody", "g1"),  # a person the group holds nothing of
                  member_left("u1", "g404"),  # a chat that holds no memory
                  {"type": "message.deleted", "bot_uuid": BOT},  # fields missing
                  recall(None, "g1"), recall(True, "g1"), recall({"id": 812}, "g1"), recall(812, None),
                  recall(812, "g1", chat_type="channel"),
                  {**recall(812, "g1"), "bot_uuid": None},
                  {**member_left("u1"), "member": "u1", "group": None},
                  {"type": "group.member_joined", "bot_uuid": BOT, "group": {"id": "g1"}, "member": {"id": "u1"}}):
        await deliver(harness, event)
    assert memory_storage(harness) == before


async def test_a_recall_replayed_twice_changes_nothing_the_second_time(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    await remember(harness, G1, "u1", "the gate is painted green", 812)
    await deliver(harness, recall(812, "g1"))
    after_first = memory_storage(harness)
    await deliver(harness, recall(812, "g1"))
    assert memory_storage(harness) == after_first


async def test_a_recall_before_the_turns_write_refuses_the_late_write(harness: PluginHarness) -> None:
    await harness.create_memory_kb(candidate_extraction_enabled=True, candidate_auto_apply=True)
    await remember(harness, G1, "u2", "the hose is in the garage", 1)  # the chat holds memory already
    before = memory_storage(harness)
    turn = open_chat(harness, "g1", sender_id="u1", message_id=900)
    await deliver(harness, recall(900, "g1"))  # the recall arrives while the turn is still running
    late = await turn.tool("remember", {"content": "the gate is painted green"})
    assert late["ok"] is False and late["code"] == "message_recalled", late
    profile = await turn.tool("update_profile", {"scope": "speaker", "traits": ["gardener"]})
    assert profile["ok"] is False and profile["code"] == "message_recalled", profile
    await says(harness, turn, "Remember that the demo is on Friday.")
    assert memory_storage(harness) == before
    # Another message of the same chat, and a turn without a message id, still write.
    assert await open_chat(harness, "g1", sender_id="u1", message_id=901).remember("the rake is broken")
    assert await open_chat(harness, "g1", sender_id="u1").remember("the lamp flickers")


async def test_a_recall_that_arrives_while_its_messages_write_is_with_the_host_withdraws_it(
        harness: PluginHarness) -> None:
    """The race the other way round: the turn's `remember` holds the space and its vector write is out when
    the recall comes. The withdrawal waits for the space, then finds the record and takes it back."""
    await harness.create_memory_kb()
    stays = await remember(harness, G1, "u2", "the hose is in the garage", 1)  # the chat holds memory already
    routes = harness.host._routes  # white-box: hold the host's vector writes until released
    plain, reached, release = routes[A.VECTOR_UPSERT.value], asyncio.Event(), asyncio.Event()

    async def held(data: Any) -> Any:
        reached.set()
        await release.wait()
        return await plain(data)

    routes[A.VECTOR_UPSERT.value] = held
    try:
        turn = open_chat(harness, "g1", sender_id="u1", message_id=950)
        writing = asyncio.create_task(turn.tool("remember", {"content": "the gate is painted green"}))
        await asyncio.wait_for(reached.wait(), 10)
        recalling = asyncio.create_task(deliver(harness, recall(950, "g1")))
        await asyncio.sleep(0.1)
        assert not recalling.done()  # it waits for the space the write holds
    finally:
        release.set()
        routes[A.VECTOR_UPSERT.value] = plain
    written = await writing
    await recalling
    assert written["ok"] is True, written  # the write got in first ...
    chat = open_chat(harness, "g1")
    assert [e["id"] for e in await chat.export_l2("--all-statuses")] == [stays]  # ... and was taken back
    assert [e["target_id"] for e in audit(harness, "message_withdraw")] == [written["episode_id"]]


async def test_withdraw_recalled_messages_off_leaves_memory_as_it_is(harness: PluginHarness) -> None:
    await harness.create_memory_kb(withdraw_recalled_messages=False)
    await remember(harness, G1, "u1", "the gate is painted green", 812)
    before = memory_storage(harness)
    await deliver(harness, recall(812, "g1"))
    assert memory_storage(harness) == before


# ------------------------------------------------------------------------------------------- a member leaves
async def test_a_member_who_leaves_is_erased_from_that_group_only_with_the_setting_on(harness: PluginHarness) -> None:
    kb = await harness.create_memory_kb()
    await remember(harness, G1, "u1", "Ali keeps the trowelish shed key", 1)
    await remember(harness, G1, "u2", "Bo waters the roses", 2)
    await remember(harness, G2, "u1", "Ali brings the ladder", 3)
    await open_chat(harness, "g1", sender_id="u1", message_id=4).tool(
        "update_profile", {"scope": "speaker", "traits": ["gardener"]})
    before = memory_storage(harness)
    await deliver(harness, member_left("u1", "g1"))  # off by default
    assert memory_storage(harness) == before

    chat = open_chat(harness, "g1", sender_id="admin")
    assert "erase_members_who_leave" in await chat.run("!memory settings set erase_members_who_leave true")
    g2_before = {k: v for k, v in harness.host.storage.items() if "group_g2" in k}
    check = ErasureCheck(["trowelish", '"u1"', "speaker/u1"])
    in_g1 = await group_state(harness, kb, "g1")
    assert check.traces(in_g1), "the check must see the member's records before"
    await deliver(harness, member_left("u1", "g1"))
    after = await group_state(harness, kb, "g1")
    assert check.traces(after) == [] and check.others_changed(in_g1, after) == []
    replayed = memory_storage(harness)
    await deliver(harness, member_left("u1", "g1"))  # the same event again: nothing of theirs is left to erase
    assert memory_storage(harness) == replayed
    assert [e["sender_id"] for e in await chat.export_l2("--all-statuses")] == ["u2"]
    assert {k: v for k, v in harness.host.storage.items() if "group_g2" in k} == g2_before
    assert [e["sender_id"] for e in await open_chat(harness, "g2").export_l2()] == ["u1"]
    assert audit(harness, "person_erase")


async def group_state(h: PluginHarness, kb: str, group: str) -> Installation:
    """What the plugin keeps of one group of `BOT` (its storage records, its episode rows), for the
    erasure checker."""
    state = await capture(h.host, [kb])
    key = f"{BOT}:group_{group}"
    return Installation({k: v for k, v in state.storage.items() if key in k or key.replace(":", "%3A") in k},
                        {k: r for k, r in state.rows.items() if key in json.dumps(r, ensure_ascii=False)})


# ------------------------------------------------------------------------------------------- health
async def test_health_says_whether_the_bots_events_reach_the_plugin(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness, "g1")
    assert "no platform event received from this bot yet" in await chat.run("!memory health")
    await deliver(harness, recall(1, "g1"))
    assert "the event processor is bound (last: message.deleted at " in await chat.run("!memory health")


async def test_a_bug_in_handling_an_event_is_logged_with_its_traceback_and_the_run_still_completes(
        harness: PluginHarness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    await harness.create_memory_kb()
    await remember(harness, G1, "u1", "the gate is painted green", 812)

    async def broken(event: Any) -> Any:
        raise RuntimeError("a bug in the withdrawal")

    monkeypatch.setattr(harness.plugin.memory, "message_recalled", broken)
    with caplog.at_level("WARNING", logger="LongTermMemory"):
        await deliver(harness, recall(812, "g1"))  # run.completed: the adapter goes on with its next event
    logged = [r for r in caplog.records if "platform event message.deleted not applied" in r.getMessage()]
    assert logged and logged[0].exc_info is not None and "a bug in the withdrawal" in str(logged[0].exc_info[1])


# ------------------------------------------------------------------------------------------- who spoke
async def test_memories_name_their_speaker_by_id_across_a_card_change(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    await open_chat(harness, "g1", sender_id="1001", sender_name="Ali (garden)", message_id=1).remember(
        "the rake in the shed is broken")
    await open_chat(harness, "g1", sender_id="1002", sender_name="Bo", message_id=2).remember(
        "the rake for leaves is in the barn")
    turn = await prompt_turn(harness, G1, "1001", "Ali the gardener", "where is the rake?", message_id=3)
    block = turn.memory_text
    assert 'current_speaker: "Ali the gardener" (id "1001")' in block
    assert 'speaker "Ali (garden)" (id "1001", the current speaker)' in block, block
    assert 'speaker "Bo" (id "1002")' in block and "the same id is the same person" in block
    renamed = open_chat(harness, "g1", sender_id="1001", sender_name="Ali the gardener", message_id=4)
    found = await renamed.tool("recall_memory", {"query": "rake"})
    senders = {e["sender"]["id"]: e["sender"] for e in found["episodes"]}
    assert senders["1001"] == {"id": "1001", "name": "Ali (garden)", "current_name": "Ali the gardener"}
    assert senders["1002"] == {"id": "1002", "name": "Bo"} and "message" not in found["episodes"][0]


# ------------------------------------------------------------------------------------------- a re-created bot
async def test_an_admin_moves_a_deleted_bots_memory_into_the_new_bot_dry_run_first(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    old = Place("group", "g1", "bot-old")
    for content in ("the gate is painted green", "the shed is painted red"):
        await tool(harness, old, "remember", {"content": content}, sender="u1", sender_name="Ali")
    await tool(harness, old, "update_profile", {"scope": "session", "name": "Garden club"}, sender="u1")
    admin = open_chat(harness, "g1", sender_id="admin")
    before = memory_storage(harness)
    plan = await admin.run("!memory move-bot bot-old")
    assert "Dry run, nothing written" in plan and "bot-old:group_g1 -> bot-1:group_g1: 2 episodes, 1 profile" in plan
    assert "--confirm" in plan and memory_storage(harness) == before
    member = open_chat(harness, "g1", sender_id="u2", privilege=1)
    assert "only bot admins" in await member.run("!memory move-bot bot-old --confirm")
    done = await admin.run("!memory move-bot bot-old --confirm")
    assert "copied into bot bot-1" in done, done
    moved = await admin.export_l2()
    assert sorted((e["content"], e["sender_id"], e["sender_name"]) for e in moved) == [
        ("the gate is painted green", "u1", "Ali"), ("the shed is painted red", "u1", "Ali")]
    assert "Garden club" in await admin.run("!memory profile")
    again = await admin.run("!memory move-bot bot-old --confirm")
    assert "0 episodes (2 there already)" in again and len(await admin.export_l2()) == 2
    assert "no memory of" in await admin.run("!memory move-bot bot-none")


async def test_a_recall_also_takes_its_turn_out_of_the_conversation_record(harness: PluginHarness) -> None:
    await harness.create_memory_kb(conversation_enabled=True)
    await remember(harness, G1, "u1", "the gate is painted green", 812)  # the chat holds memory
    memory = harness.plugin.memory
    scope = await memory.scope_for(Identity.build(launcher_type="group", launcher_id="g1", bot_uuid=BOT,
                                                  sender_id="u1", sender_name="Ali"))
    for message_id, text in ((811, "good morning"), (812, "the gate is green now")):
        await memory.record_turn(scope, SpokenTurn(text, "noted", message_id=str(message_id)))
    await deliver(harness, recall(812, "g1"))
    record = await memory.conversation(scope)
    assert [t.message_id for t in record.turns] == ["811"], record.turns
    assert "turn of message 812 withdrawn: it was recalled" in {e["summary"] for e in audit(harness, "message_withdraw")}
    # The turn's recording after the recall (its reply came late) is refused: the record stays as it is.
    of_812 = replace(scope, identity=replace(scope.identity, message_id="812"))
    with pytest.raises(MessageRecalled):
        await memory.record_turn(of_812, SpokenTurn("the gate is green now", "noted", message_id="812"))
    assert [t.message_id for t in (await memory.conversation(scope)).turns] == ["811"]


async def test_a_recorded_turn_names_its_message_and_a_recall_takes_it_out_of_the_record(
        harness: PluginHarness) -> None:
    """The conversation record's turn carries the platform message it answered (V1 with X1), so recalling
    that message takes the turn out of the chat's record (X2); the chat's other turn stays."""
    from tests.test_conversation_hooks import ON, record, responded_event

    await harness.create_memory_kb(**ON)
    for text, message_id in (("the dinghy is blue", 501), ("the mast is oak", 502)):
        turn = await prompt_turn(harness, G1, "u1", "Alice", text, message_id=message_id)
        await harness.emit_event("NormalMessageResponded", responded_event(G1, "u1", "Noted."),
                                 query_id=turn.query_id)
        await harness.settle()
    assert [(t["user_text"], t["message_id"]) for t in record(harness)["turns"]] == [
        ("the dinghy is blue", "501"), ("the mast is oak", "502")]

    await deliver(harness, recall(501, "g1"))
    assert [t["user_text"] for t in record(harness)["turns"]] == ["the mast is oak"]
