"""LongTermMemory on a real chat platform adapter: LangBot 4.11.2's OneBot v11 adapter (`onebot-v11`, QQ).

The protocol endpoint is scripted (devhost/onebot.py, a stand-in for NapCat): it pushes OneBot v11
message events and notices and answers LangBot's API calls; LangBot, its adapter, the pipeline, this
plugin and the test Runner are real, and the scripted local model answers (devhost/model_server.py).
Two bots share one pipeline that keeps LangBot's default group rules (`@` the bot): one connected by
forward WebSocket (LangBot dials the endpoint), one by reverse WebSocket (the endpoint dials
LangBot's port). The first has LangBot's per-bot admin list set: the person Ali and the group
"Night shift". The test plugin EventProbe (tests/e2e/event_plugin) reports the platform message ids
its EventListener sees and, once bound to the bot as an event processor, every recall and
member-leave event (docs/HOST-FACTS.md section 14). Then LongTermMemory's own event processor
(components/event_processor) is bound to the first bot: a recalled message's memory is withdrawn (the next
model request no longer holds it, the audit names the recall, another group is byte-identical), and a member
who leaves is erased from that group with `erase_members_who_leave` on (the erasure checker finds nothing of
them there), nothing with it off. The last test restarts LangBot.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import pytest

from devhost.chat import ltm_block
from devhost.langbot_setup import build_plugin, ensure_pipeline, install_plugin
from devhost.lbclient import LTM_PLUGIN, LangBotClient, LangBotError
from devhost.onebot import OneBotEndpoint, Sent
from devhost.onebot_setup import bind_event_processor, create_onebot_bot, reverse_ws_url
from tests.e2e.onebot_chat import PROBE_DIR, PROBE_PLUGIN, PROBE_RUNNER, log_mark, probe_records, wait_probe, wait_route
from tests.e2e.test_real_langbot import EPISODE_ID, SCRIPTED, unique
from tests.erasure_check import ErasureCheck, Installation

FWD_ID, REV_ID = 90001, 90002  # the bots' QQ accounts
ALI, BO, CY, DEE = 1001, 1002, 1003, 1004
GARDEN, NIGHT = 5001, 5002
PEOPLE = {ALI: "Ali", BO: "Bo", CY: "Cy", DEE: "Dee"}
GROUPS = {GARDEN: ("Garden club", [(ALI, "Ali (garden)"), (BO, ""), (CY, "Cy")]),
          NIGHT: ("Night shift", [(ALI, ""), (BO, ""), (DEE, "")])}
ADMINS: list[tuple[str, str | int]] = [("person", ALI), ("group", NIGHT)]
PIPELINE = "LongTermMemory (OneBot e2e)"
COMMAND_REGEXP = r"^\s*[!！]memory\b"
LTM_RUNNER = "plugin:langbot-ltm/LongTermMemory/platform_events"


@dataclasses.dataclass
class OneBotChat:
    e2e: Any
    pipeline: str
    fwd: OneBotEndpoint
    rev: OneBotEndpoint
    fwd_bot: str
    rev_bot: str
    memory_processor: str = ""  # LongTermMemory's event processor, once bound to the forward bot

    @property
    def client(self) -> LangBotClient:
        return self.e2e.client

    @property
    def runtime_log(self) -> Any:
        return self.e2e.stack.logs / "plugin-runtime.log"

    def group(self, ep: OneBotEndpoint, group_id: int, user_id: int, text: str,
              at_bot: bool = True) -> tuple[int, Sent, list[dict[str, Any]]]:
        """One group message and the bot's reply: (its message id, the reply, the model requests of the turn)."""
        mark = self.e2e.model_log.mark()
        message_id, reply = ep.ask_group(group_id, user_id, text, at_bot=at_bot)
        return message_id, reply, self.e2e.model_log.chats_since(mark)

    def private(self, ep: OneBotEndpoint, user_id: int, text: str) -> tuple[int, Sent, list[dict[str, Any]]]:
        mark = self.e2e.model_log.mark()
        message_id, reply = ep.ask_private(user_id, text)
        return message_id, reply, self.e2e.model_log.chats_since(mark)


def stored(turn: tuple[int, Sent, list[dict[str, Any]]]) -> str:
    """The episode id a "remember that ..." turn reports."""
    _, reply, _ = turn
    match = EPISODE_ID.search(reply.text)
    assert "done: remember" in reply.text and match, reply
    return match.group(1)


def populate(ep: OneBotEndpoint) -> None:
    for user_id, nickname in PEOPLE.items():
        ep.add_person(user_id, nickname)
    for group_id, (name, members) in GROUPS.items():
        ep.add_group(group_id, name, members)


def set_group_rules(client: LangBotClient, pipeline_uuid: str, **rules: Any) -> None:
    """The pipeline's group respond rules (WebUI: the pipeline -> Trigger): `at`, `prefix`, `regexp`, `random`."""
    current = client.pipeline(pipeline_uuid)
    config = current["config"]
    config["trigger"]["group-respond-rules"].update(rules)
    client.put(f"/pipelines/{pipeline_uuid}", {"name": current["name"], "description": current.get("description", ""),
                                               "emoji": current.get("emoji", "🧠"), "config": config})


@pytest.fixture(scope="module")
def chat(e2e: Any) -> Iterator[OneBotChat]:
    client, stack = e2e.client, e2e.stack
    lbp = str(stack.config.lbvenv.resolve() / "bin" / "lbp")
    install_plugin(client, build_plugin(lbp, PROBE_DIR, stack.data_dir / "dist" / "probe"), PROBE_PLUGIN, stack.data_dir)
    # LangBot's own group rules (answer a group message when the bot is @-mentioned), unlike the devhost pipeline.
    pipeline = ensure_pipeline(client, PIPELINE, llm_uuid=e2e.info.llm_model_uuid, kb_uuids=[e2e.info.kb_uuid],
                               plugins=[LTM_PLUGIN, PROBE_PLUGIN], group_respond_all=False,
                               description="OneBot v11 e2e: LangBot's default group rules")
    fwd, rev = OneBotEndpoint(self_id=FWD_ID), OneBotEndpoint(self_id=REV_ID)
    bots: list[str] = []
    try:
        for ep in (fwd, rev):
            populate(ep)
        bots.append(create_onebot_bot(client, "OneBot e2e (forward)", pipeline_uuid=pipeline, access_token=fwd.access_token,
                                      forward_url=fwd.serve(), self_id=FWD_ID, admins=ADMINS))
        bots.append(create_onebot_bot(client, "OneBot e2e (reverse)", pipeline_uuid=pipeline,
                                      access_token=rev.access_token, self_id=REV_ID))
        rev.connect(reverse_ws_url(e2e.info.base_url, bots[1]))
        fwd.wait_connected(60)
        rev.wait_connected(60)
        yield OneBotChat(e2e, pipeline, fwd, rev, *bots)
    finally:
        for bot_uuid in bots:  # a bot left behind would dial the closed endpoint for the rest of the session
            with contextlib.suppress(LangBotError):
                e2e.client.delete_bot(bot_uuid)
        fwd.close()
        rev.close()


# --------------------------------------------------------------------------- connection and replies
def test_forward_and_reverse_websocket_carry_messages_and_replies(chat):
    for ep, bot_uuid, self_id in ((chat.fwd, chat.fwd_bot, FWD_ID), (chat.rev, chat.rev_bot, REV_ID)):
        message_id, reply, requests = chat.group(ep, GARDEN, BO, "hello from the garden")
        assert reply.text.startswith(SCRIPTED) and len(requests) == 1, reply
        # A group reply quotes the message and @-mentions its sender.
        assert reply.segments[0] == {"type": "reply", "data": {"id": str(message_id)}} and reply.at == [str(BO)]
        assert ("get_group_info", {"group_id": GARDEN}) in ep.api_calls, ep.api_calls
        message_id, reply, _ = chat.private(ep, CY, "hello in private")
        assert reply.text.startswith(SCRIPTED) and reply.message_type == "private" and reply.target == CY
        bot = chat.client.bot(bot_uuid)
        assert bot["adapter"] == "onebot-v11" and bot["adapter_runtime_values"]["bot_account_id"] == str(self_id), bot
    # The reverse URL is the one LangBot shows the operator for this bot (its webhook URL + the OneBot path).
    shown = chat.client.bot(chat.rev_bot)["adapter_runtime_values"]["webhook_full_url"]
    assert reverse_ws_url(chat.e2e.info.base_url, chat.rev_bot) == "ws" + shown[len("http"):] + "/onebot/v11/ws"
    assert chat.client.bot(chat.rev_bot)["adapter_config"]["connection_mode"] == "reverse_ws"


# --------------------------------------------------------------------------- memory in groups
def test_remembered_in_a_group_recalled_there_by_another_member(chat):
    word = unique("greenhouse")
    fact = f"the {word} key hangs by the blue door"
    stored(chat.group(chat.fwd, GARDEN, ALI, f"remember that {fact}"))
    message_id, reply, requests = chat.group(chat.fwd, GARDEN, BO, f"where does the {word} key hang?")
    block = ltm_block(requests[0])
    assert fact in block and 'current_speaker: "Bo" (id "1002")' in block, block
    assert f"Memories: {fact}" in reply.text and reply.at == [str(BO)], reply


def test_two_groups_a_private_chat_and_another_bot_are_isolated(chat):
    places = {  # (endpoint, where, who) -> fact
        (chat.fwd, GARDEN, ALI): f"the {unique('shed')} shed code is 4411",
        (chat.fwd, NIGHT, ALI): f"the {unique('shed')} shed code is 5522",
        (chat.fwd, None, ALI): f"the {unique('shed')} shed code is 6633",
        (chat.rev, GARDEN, ALI): f"the {unique('shed')} shed code is 7744",  # same group id, another bot
    }

    def say(ep: OneBotEndpoint, group_id: int | None, user_id: int, text: str) -> Any:
        return chat.group(ep, group_id, user_id, text) if group_id else chat.private(ep, user_id, text)

    for (ep, group_id, user_id), fact in places.items():
        stored(say(ep, group_id, user_id, f"remember that {fact}"))
    for (ep, group_id, user_id), fact in places.items():
        _, _, requests = say(ep, group_id, user_id, "what is the shed code?")
        block = ltm_block(requests[0])
        assert fact in block, block
        assert not any(other in block for other in places.values() if other != fact), block


# --------------------------------------------------------------------------- admin rule
def test_admin_rule_follows_langbots_per_bot_admin_list(chat):
    admins = {(a["launcher_type"], a["launcher_id"]) for a in chat.client.bot_admins(chat.fwd_bot)}
    assert admins == {("person", str(ALI)), ("group", str(NIGHT))}
    garden_episode = stored(chat.group(chat.fwd, GARDEN, BO, f"remember that the {unique('rake')} rake is broken"))
    night_episode = stored(chat.group(chat.fwd, NIGHT, BO, f"remember that the {unique('lamp')} lamp flickers"))

    # A listed person is no admin in a group that is not listed ...
    _, refused, requests = chat.group(chat.fwd, GARDEN, ALI, f"!memory archive {garden_episode}")
    assert requests == [] and "needs a bot admin" in refused.text, refused
    # ... and in a listed group every member is one.
    _, done, _ = chat.group(chat.fwd, NIGHT, BO, f"!memory archive {night_episode}")
    assert f"Archived episode {night_episode}" in done.text, done
    # In a private chat the listed person is an admin, another person is not. (An admin's value is
    # checked after the admin rule and is refused: nothing changes.)
    _, admin, _ = chat.private(chat.fwd, ALI, "!memory settings set auto_recall_top_k lots")
    assert "only bot admins" not in admin.text and "auto_recall_top_k" in admin.text, admin
    _, other, _ = chat.private(chat.fwd, BO, "!memory settings set auto_recall_top_k lots")
    assert "only bot admins change the settings" in other.text, other


# --------------------------------------------------------------------------- !memory in groups
def test_memory_command_in_groups_under_langbots_default_rules(chat):
    client, ep, bot_uuid = chat.client, chat.rev, chat.rev_bot
    # @bot !memory: LangBot's at-bot rule removes the @, so the text is a command.
    _, listed, requests = chat.group(ep, GARDEN, BO, "!memory list")
    assert requests == [] and listed.text.startswith("[bot] Episodes"), listed
    # QQ shows text as it is: no line ends with the two spaces of a Markdown line break (issue 41, point 4).
    assert "\n" in listed.text and not [line for line in listed.text.split("\n") if line.endswith(" ")], listed

    # Without @ the default routes drop it before any pipeline.
    mark, sent = log_mark(client, bot_uuid), ep.mark()
    ep.group_message(GARDEN, BO, "!memory list")
    wait_route(client, bot_uuid, mark, "message.received", "not_matched")
    assert ep.sent_since(sent) == []

    routes = client.bot(bot_uuid)["event_bindings"]
    command_route = {"event_pattern": "message.received", "target_type": "pipeline", "target_uuid": chat.pipeline,
                     "enabled": True, "description": "!memory in groups without @",
                     "filters": [{"field": "chat_type", "operator": "eq", "value": "group"},
                                 {"field": "message_text", "operator": "regex", "value": COMMAND_REGEXP}]}
    try:
        connections = ep.connections
        client.update_bot(bot_uuid, {"event_bindings": [*routes, command_route]})  # the bot reloads
        ep.wait_connected(60, after=connections)
        # A route alone is not enough: the pipeline's group rule (at, prefix "ai") still stops it.
        alone = ep.group_message(GARDEN, BO, "!memory list")
        wait_probe(chat.runtime_log, lambda r: r.get("event") == "GroupMessageReceived" and r.get("message_id") == alone)
        _, reply, _ = chat.group(ep, GARDEN, BO, "and now with an at")
        assert not any(s.segments[0]["data"].get("id") == str(alone) for s in ep.sent_since(sent)), ep.sent_since(sent)
        # The route plus a group rule regexp for the command: reachable without @.
        set_group_rules(client, chat.pipeline, regexp=[COMMAND_REGEXP])
        _, listed, requests = chat.group(ep, GARDEN, BO, "!memory list", at_bot=False)
        assert requests == [] and listed.text.startswith("[bot] Episodes"), listed
        # A pipeline that answers every group message without the at-bot rule keeps the @ in the text:
        # "@<account> !memory list" is no command and goes to the model.
        set_group_rules(client, chat.pipeline, at=False, random=1.0)
        _, answered, requests = chat.group(ep, GARDEN, BO, "!memory list")
        assert len(requests) == 1 and answered.text.startswith(SCRIPTED), answered
    finally:
        set_group_rules(client, chat.pipeline, at=True, random=0.0, regexp=[])
        client.update_bot(bot_uuid, {"event_bindings": routes})


# --------------------------------------------------------------------------- who is speaking
def test_speaker_as_langbot_delivers_it_id_stable_name_from_the_card(chat):
    ep, log = chat.fwd, chat.runtime_log

    def spoken(message_id: int) -> dict[str, Any]:
        ingress = f"platform:{chat.fwd_bot}:{message_id}"
        return wait_probe(log, lambda r: r.get("event") == "PromptPreProcessing" and r.get("ingress_event_id") == ingress)

    first, _, requests = chat.group(ep, GARDEN, ALI, "good morning")
    assert spoken(first)["var_sender_name"] == "Ali (garden)" and spoken(first)["var_sender_id"] == ALI
    assert 'current_speaker: "Ali (garden)" (id "1001")' in ltm_block(requests[0])
    try:
        ep.set_card(GARDEN, ALI, "Ali the gardener")
        second, _, requests = chat.group(ep, GARDEN, ALI, "good evening")
        assert spoken(second)["var_sender_name"] == "Ali the gardener" and spoken(second)["var_sender_id"] == ALI
        assert 'current_speaker: "Ali the gardener" (id "1001")' in ltm_block(requests[0])
    finally:
        ep.set_card(GARDEN, ALI, "Ali (garden)")
    private, _, _ = chat.private(ep, ALI, "good night")
    assert spoken(private)["var_sender_name"] == "Ali"  # a private chat: the nickname


# --------------------------------------------------------------------------- platform events
def test_event_processor_receives_recall_and_member_left_with_their_ids(chat):
    client, ep, bot_uuid, log = chat.client, chat.fwd, chat.fwd_bot, chat.runtime_log

    def runner_record(event_type: str, where: Any) -> dict[str, Any]:
        return wait_probe(log, lambda r: r.get("probe") == "runner" and r["event_type"] == event_type and where(r["data"]))

    # Not bound yet: LangBot logs the recall and drops it.
    mark = log_mark(client, bot_uuid)
    ep.recall(ep.group_message(GARDEN, CY, "see you tomorrow"))
    wait_route(client, bot_uuid, mark, "message.deleted", "not_matched")

    connections = ep.connections
    processor = bind_event_processor(client, bot_uuid, PROBE_RUNNER, "EventProbe (OneBot e2e)")
    ep.wait_connected(60, after=connections)
    assert client.bot(bot_uuid)["plugin_processors"] == [{"processor_uuid": processor, "enabled": True}]

    # A message that made a memory: the id a listener sees, the query it started, then its recall.
    mark = log_mark(client, bot_uuid)
    message_id = chat.group(ep, GARDEN, ALI, f"remember that the {unique('hose')} hose leaks")[0]
    received = wait_probe(log, lambda r: r.get("event") == "GroupMessageReceived" and r.get("message_id") == message_id)
    prompt = wait_probe(log, lambda r: r.get("event") == "PromptPreProcessing"
                        and r.get("ingress_event_id") == f"platform:{bot_uuid}:{message_id}")
    assert prompt["query_id"] == received["query_id"]
    ep.recall(message_id, operator_id=ALI)
    deleted = runner_record("message.deleted", lambda d: d["message_id"] == message_id)
    data = deleted["data"]
    assert (data["chat_type"], data["chat_id"], data["group"]["id"], data["operator"]["id"], data["bot_uuid"]) == \
        ("group", GARDEN, GARDEN, ALI, bot_uuid), deleted
    assert deleted["event_id"] == f"platform:{bot_uuid}:message.deleted:{message_id}"
    assert deleted["conversation"]["conversation_id"] == f"group_{GARDEN}" and deleted["typed"] == "MessageDeletedEvent"
    assert deleted["run_storage"].startswith("ok") and deleted["plugin_storage"].startswith("ok"), deleted
    wait_route(client, bot_uuid, mark, "message.deleted", "delivered")

    private_id = chat.private(ep, DEE, "a note for the bot only")[0]
    ep.recall(private_id)
    data = runner_record("message.deleted", lambda d: d["message_id"] == private_id)["data"]
    assert (data["chat_type"], data["chat_id"], data["group"], data["operator"]["id"]) == ("private", DEE, None, DEE)

    ep.member_leaves(GARDEN, CY)
    left = runner_record("group.member_left", lambda d: d["member"]["id"] == CY)
    assert (left["data"]["group"]["id"], left["data"]["is_kicked"], left["data"]["operator"]["id"]) == (GARDEN, False, CY)
    assert left["actor"]["actor_id"] == str(CY) and left["typed"] == "MemberLeftEvent"
    ep.member_leaves(NIGHT, DEE, kicked_by=ALI)
    kicked = runner_record("group.member_left", lambda d: d["member"]["id"] == DEE)["data"]
    assert (kicked["group"]["id"], kicked["is_kicked"], kicked["operator"]["id"]) == (NIGHT, True, ALI)
    # The processor declares only these two events: messages never reach it.
    assert not [r for r in probe_records(log) if r.get("probe") == "runner" and r["event_type"] == "message.received"]
    runs = client.processor_runs(processor)["items"]  # LangBot's own record of the processor's runs
    assert {run["event_id"] for run in runs} >= {deleted["event_id"]}, runs


# --------------------------------------------------------------------------- memory follows the chat (issue 41)
def runtime_log_wait(chat: OneBotChat, text: str, timeout: float = 60.0) -> None:
    """Wait for a line of the plugin runtime's log (what LongTermMemory logs of a platform event)."""
    deadline = time.monotonic() + timeout
    while text not in chat.runtime_log.read_text(errors="replace"):
        if time.monotonic() > deadline:
            raise AssertionError(f"no log line {text!r} within {timeout:.0f}s")
        time.sleep(0.3)


def bound_memory_processor(chat: OneBotChat) -> str:
    """LongTermMemory's event processor, bound to the forward bot once (the bot reconnects)."""
    if not chat.memory_processor:
        connections = chat.fwd.connections
        chat.memory_processor = bind_event_processor(chat.client, chat.fwd_bot, LTM_RUNNER, "LongTermMemory events")
        chat.fwd.wait_connected(60, after=connections)
    return chat.memory_processor


def plugin_storage(chat: OneBotChat, chat_key: str) -> dict[str, object]:
    """What LongTermMemory keeps of one chat in LangBot's database (plugin storage, decoded), read on disk;
    the per-bot note of the last platform event aside (bookkeeping of the event itself)."""
    database = chat.e2e.stack.home / "data" / "langbot.db"
    escaped = chat_key.replace(":", "%3A")
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT key, value FROM binary_storages WHERE owner LIKE '%LongTermMemory%'").fetchall()
    found: dict[str, object] = {}
    for key, value in rows:
        if (chat_key in key or escaped in key) and not key.startswith("v2/platform/"):
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            try:
                found[key] = json.loads(text)
            except ValueError:
                found[key] = text
    return found


def test_health_says_the_processor_is_not_bound_yet_and_a_card_change_keeps_the_speakers_id(chat):
    ep = chat.fwd
    _, health, _ = chat.group(ep, GARDEN, ALI, "!memory health")
    assert "no platform event received from this bot yet" in health.text, health
    word = unique("trellis")
    stored(chat.group(ep, GARDEN, ALI, f"remember that the {word} trellis leans left"))  # card "Ali (garden)"
    try:
        ep.set_card(GARDEN, ALI, "Ali the gardener")
        _, _, requests = chat.group(ep, GARDEN, ALI, f"which way does the {word} trellis lean?")
        block = ltm_block(requests[0])
        assert 'current_speaker: "Ali the gardener" (id "1001")' in block, block
        assert 'speaker "Ali (garden)" (id "1001", the current speaker)' in block, block
    finally:
        ep.set_card(GARDEN, ALI, "Ali (garden)")


def test_a_recalled_message_is_withdrawn_and_another_group_stays_byte_identical(chat):
    ep, bot = chat.fwd, chat.fwd_bot
    bound_memory_processor(chat)
    night = f"{bot}:group_{NIGHT}"
    night_before = plugin_storage(chat, night), chat.group(ep, NIGHT, ALI, "!memory export l2")[1].text
    fact = f"the {unique('pergola')} pergola is painted teal"
    message_id, reply, _ = chat.group(ep, GARDEN, ALI, f"remember that {fact}")
    episode_id = stored((message_id, reply, []))
    _, shown, _ = chat.group(ep, GARDEN, ALI, f"!memory show {episode_id}")
    assert f"Message: {message_id} in {bot}:group_{GARDEN}" in shown.text, shown
    _, _, requests = chat.group(ep, GARDEN, BO, "what colour is the pergola?")
    assert fact in ltm_block(requests[0])

    ep.recall(message_id, operator_id=ALI)
    runtime_log_wait(chat, f"[LongTermMemory] message {message_id} recalled in {bot}:group_{GARDEN}: episodes=1")

    _, _, requests = chat.group(ep, GARDEN, BO, "what colour is the pergola?")
    assert fact not in ltm_block(requests[0]), ltm_block(requests[0])
    _, audit, _ = chat.group(ep, GARDEN, ALI, "!memory audit")
    assert f"withdrawn: message {message_id} recalled" in audit.text and episode_id in audit.text, audit
    _, health, _ = chat.group(ep, GARDEN, ALI, "!memory health")
    assert "the event processor is bound (last: message.deleted at" in health.text, health
    assert (plugin_storage(chat, night), chat.group(ep, NIGHT, ALI, "!memory export l2")[1].text) == night_before


def test_a_member_who_leaves_is_erased_from_that_group_only_with_the_setting_on(chat):
    ep, bot = chat.fwd, chat.fwd_bot
    bound_memory_processor(chat)
    garden, trowel, bucket = f"{bot}:group_{GARDEN}", unique("trowel"), unique("bucket")
    stored(chat.group(ep, GARDEN, BO, f"remember that the {trowel} trowel is rusty"))
    stored(chat.group(ep, NIGHT, BO, f"remember that the {bucket} bucket is full"))
    before = plugin_storage(chat, garden)
    ep.member_leaves(GARDEN, BO)  # erase_members_who_leave is off by default
    runtime_log_wait(chat, "platform event group.member_left: erase_members_who_leave is off")
    assert plugin_storage(chat, garden) == before

    _, changed, _ = chat.private(ep, ALI, "!memory settings set erase_members_who_leave true")  # Ali: a bot admin
    assert "erase_members_who_leave: false -> true" in changed.text, changed
    try:
        check = ErasureCheck([trowel, f'"{BO}"', f"speaker/{BO}"])
        in_garden = Installation(before, {})
        assert check.traces(in_garden), "the check must see the member's records before"
        ep.member_leaves(GARDEN, BO)
        runtime_log_wait(chat, f"[LongTermMemory] member {BO} left {garden}")
        after = Installation(plugin_storage(chat, garden), {})
        assert check.traces(after) == [] and check.others_changed(in_garden, after) == []
        chroma = chat.e2e.stack.home / "data" / "chroma" / "chroma.sqlite3"
        with sqlite3.connect(f"file:{chroma}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT string_value FROM embedding_metadata WHERE string_value LIKE ?",
                              (f"%{trowel}%",)).fetchall()
        assert rows == [], rows  # the vector store holds nothing of the trowel either
        _, listed, _ = chat.group(ep, NIGHT, ALI, "!memory list")
        assert bucket in listed.text, listed  # the member's memory of the other group stays
    finally:
        chat.private(ep, ALI, "!memory settings reset erase_members_who_leave")


# --------------------------------------------------------------------------- restart (last: LangBot restarts)
def test_restart_keeps_memory_routes_and_processor_both_modes_reconnect(chat):
    fwd_fact, rev_fact = f"the {unique('ladder')} ladder is in the loft", f"the {unique('ladder')} ladder is red"
    fwd_message = chat.group(chat.fwd, NIGHT, ALI, f"remember that {fwd_fact}")
    stored(fwd_message)
    stored(chat.private(chat.rev, BO, f"remember that {rev_fact}"))
    before = chat.fwd.connections, chat.rev.connections

    chat.e2e.stack.restart_langbot()
    chat.client.wait_plugin(*LTM_PLUGIN)
    chat.fwd.wait_connected(120, after=before[0])  # LangBot dials the endpoint again
    chat.rev.wait_connected(120, after=before[1])  # the endpoint dials LangBot again

    _, reply, requests = chat.group(chat.fwd, NIGHT, BO, "where is the ladder?")
    assert fwd_fact in ltm_block(requests[0]) and reply.at == [str(BO)], requests
    _, reply, requests = chat.private(chat.rev, BO, "which ladder?")
    assert rev_fact in ltm_block(requests[0]), requests
    chat.fwd.recall(fwd_message[0])  # the processor binding is stored with the bot
    wait_probe(chat.runtime_log, lambda r: r.get("probe") == "runner" and r["data"].get("message_id") == fwd_message[0])
