"""Candidate extraction through the SDK's real dispatch (Q1-Q4): the NormalMessageResponded listener,
`!memory candidates` / `candidate accept|reject`, and the console endpoints.

A turn here is what LangBot does: a live query with the user's text in `user_message_text`,
then NormalMessageResponded with the assistant's reply in `response_text`. The listener hands
the work to a background task; `harness.settle()` waits for it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langbot_plugin.entities.io.errors import ActionCallTimeoutError

from components.event_listener.candidate_listener import SeenQueries
from testhost import FakeLangBotHost, PluginHarness
from tests.chat import BOT, Place, open_chat, open_turn, prompt_turn

GROUP = Place("group", "g1")
ON = {"candidate_extraction_enabled": True}


@pytest.fixture
def supported_backend_name() -> str:
    # The queue lives in plugin storage; accepting writes through the ordinary episode path, which
    # the backend tests cover on every store. One backend keeps this module quick.
    return "chroma"


async def responded(harness: PluginHarness, text: str, reply: str = "Sure, noted.", *, place: Place = GROUP,
                    sender: str = "u1", name: str = "Alice", pipeline_kbs: list[str] | None = None,
                    query_id: int | None = None, settle: bool = True) -> tuple[int, dict[str, Any]]:
    """One turn's NormalMessageResponded (a new live query unless `query_id` names an open one)."""
    if query_id is None:
        query_id, _ = open_turn(harness, place, sender, name, text, pipeline_kbs)
    event = {"launcher_type": place.launcher_type, "launcher_id": place.launcher_id, "sender_id": sender,
             "session": place.session("first-speaker"), "prefix": "", "response_text": reply,
             "finish_reason": "stop", "funcs_called": [], "reply_message_chain": None}
    context = await harness.emit_event("NormalMessageResponded", event, query_id=query_id)
    if settle:
        await harness.settle()
    return query_id, context


def queue_records(host: FakeLangBotHost) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for key, value in host.storage.items():
        if key.startswith("v2/candidates/"):
            items.extend(json.loads(value)["items"])
    return items


def listed_candidate_ids(text: str) -> list[str]:
    return [line.split("] ", 1)[1].split(" ", 1)[0] for line in text.splitlines()
            if line[:1] == "[" and "] c-" in line]


async def test_a_user_message_yields_a_pending_candidate_and_leaves_the_reply_alone(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    query_id, context = await responded(harness, "Remember that the design review moved to Friday.")
    assert context["is_prevent_default"] is False and context["is_prevent_postorder"] is False
    assert context["event"]["reply_message_chain"] is None and context["event"]["response_text"] == "Sure, noted."
    (record,) = queue_records(harness.host)
    assert record["status"] == "pending" and record["kind"] == "episode"
    assert record["source_ref"] == f"query:{query_id}" and record["claim_type"] == "user_statement"
    assert record["speaker"]["sender_id"] == "u1" and record["speaker"]["bot_uuid"] == BOT
    chat = open_chat(harness)
    listing = await chat.run("!memory candidates")
    assert listing.startswith("Memory candidates (pending) · page 1/1 · 1 total")
    assert record["id"] in listing and "the design review moved to Friday" in listing
    assert "!memory candidate accept ＜id＞" in listing
    assert await chat.run("!memory list") == "No active episodes in this chat's memory."


async def test_the_assistant_reply_is_never_a_source(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON, candidate_model_uuid="llm-1")
    statement = "My name is Bob. Remember that the launch is on Friday. I love hiking."
    await responded(harness, "", reply=statement)
    await responded(harness, "   ", reply=statement)
    await responded(harness, "ok", reply=statement)  # the model path sees the user's "ok" only
    assert queue_records(harness.host) == []
    for request in harness.host.llm_requests:
        assert "Bob" not in json.dumps(request["messages"]) and "hiking" not in json.dumps(request["messages"])
    assert len(harness.host.llm_requests) == 1  # empty texts are not even sent


async def test_streaming_double_events_create_one_set(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    query_id, _ = await responded(harness, "My name is Tom. I'm a vegetarian.", settle=False)
    await responded(harness, "My name is Tom. I'm a vegetarian.", reply="…more", query_id=query_id, settle=False)
    await responded(harness, "My name is Tom. I'm a vegetarian.", reply="…done", query_id=query_id)
    records = queue_records(harness.host)
    assert sorted(r["content"] for r in records) == ["Tom", "vegetarian"]
    assert {r["query_id"] for r in records} == {query_id}


async def test_streaming_double_events_extract_once(harness: PluginHarness) -> None:
    # With a model each extraction is a request: the repeated events of one query make exactly one.
    await harness.create_memory_kb(**ON, candidate_model_uuid="llm-1")
    harness.host.llm_script = lambda messages, payload: json.dumps({"candidates": []})
    query_id, _ = await responded(harness, "We ship on Friday.", settle=False)
    for reply in ("…more", "…done"):
        await responded(harness, "We ship on Friday.", reply=reply, query_id=query_id, settle=False)
    await harness.settle()
    await responded(harness, "We ship on Friday.")  # a new query is a new turn
    assert len(harness.host.llm_requests) == 2


@pytest.mark.parametrize("settings, attached", [({}, True), (ON, False)], ids=["off", "kb-not-attached"])
async def test_nothing_happens_when_off_or_when_the_kb_is_not_attached(
        harness: PluginHarness, settings: dict[str, Any], attached: bool) -> None:
    kb_id = await harness.create_memory_kb(**settings)
    harness.host.calls.clear()
    await responded(harness, "My name is Tom.", pipeline_kbs=[kb_id] if attached else [])
    assert queue_records(harness.host) == []
    actions = [name for name, _ in harness.host.calls]
    assert "set_plugin_storage" not in actions and "get_bot_uuid" not in actions
    if not settings:
        assert "get_query_vars" not in actions  # off: not one host call


async def test_background_work_needs_no_live_query_in_an_installed_plugin(supported_host: FakeLangBotHost
                                                                            ) -> None:
    # An installed worker binds each request to an invocation that ends with the handler; the background
    # task must run in a fresh context and must not use the query (it is closed right away here).
    harness = PluginHarness(supported_host, installed_mode=True)
    await harness.start()
    try:
        await harness.create_memory_kb(**ON)
        query_id, _ = await responded(harness, "Remember that the offsite is in Lisbon next month.", settle=False)
        supported_host.close_query(query_id)
        await harness.settle()
        (record,) = queue_records(supported_host)
        assert record["source_ref"] == f"query:{query_id}" and "Lisbon" in record["content"]
    finally:
        await harness.stop()


async def test_accept_makes_the_candidate_a_remembered_episode(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    query_id, _ = await responded(harness, "Remember that the quarterly offsite is in Lisbon.")
    (record,) = queue_records(harness.host)
    chat = open_chat(harness, sender_id="admin-1", sender_name="Ada")
    reply = await chat.run(f"!memory candidate accept {record['id']}")
    assert reply.startswith(f"Accepted candidate {record['id']}: stored episode ")
    episode_id = reply.split("stored episode ", 1)[1].split(" ", 1)[0]
    shown = await chat.run(f"!memory show {episode_id}")
    assert "Content: “the quarterly offsite is in Lisbon”" in shown
    assert f"Source ref: query:{query_id}" in shown and "claim type user statement" in shown
    assert "Source: candidate" in shown and "Sender: Alice (u1)" in shown
    assert len(await chat.export_l2()) == 1
    ops = [e["operation"] for e in await chat.audit_entries()]
    assert ops.count("remember") == 1 and ops.count("candidate_accept") == 1
    assert "No pending memory candidates" in await chat.run("!memory candidates")
    decided = await chat.run("!memory candidates --all-statuses")
    assert "[accepted]" in decided and f"applied as episode {episode_id}" in decided
    again = await chat.run(f"!memory candidate accept {record['id']}")
    assert "already accepted" in again and len(await chat.export_l2()) == 1


FORGET_SURFACES = {
    "forget tool": lambda chat, episode_id: chat.tool("forget", {"episode_id": episode_id}),
    "!memory forget": lambda chat, episode_id: chat.run(f"!memory forget {episode_id}"),
    "!memory delete": lambda chat, episode_id: chat.run("!memory delete --speaker u1"),
    "console delete": None,  # /episode/delete, below
}


@pytest.mark.parametrize("surface", FORGET_SURFACES, ids=FORGET_SURFACES)
@pytest.mark.parametrize("isolation", ["session", "bot"])
async def test_forgetting_an_accepted_candidates_memory_redacts_the_candidate(harness: PluginHarness, surface: str,
                                                                               isolation: str) -> None:
    """Issue 21, finding 6: the queue, --all-statuses, the console and storage kept the forgotten text and
    its "said:" quote. In bot isolation the memory may be forgotten from another chat of the bot."""
    await harness.create_memory_kb(**ON, isolation=isolation)
    await responded(harness, "Remember that the offsite is in Lisbon. Remember that the retro is on Monday.")
    first, second = queue_records(harness.host)
    chat = open_chat(harness, sender_id="admin-1", sender_name="Ada")
    accepted = await chat.run(f"!memory candidate accept {first['id']}")
    episode_id = accepted.split("stored episode ", 1)[1].split(" ", 1)[0]
    # The forget tool deletes only the speaker's own episodes (u1 said it); the commands are an admin's.
    forgetter = open_chat(harness, "g2" if isolation == "bot" else "g1",
                          sender_id="u1" if surface == "forget tool" else "admin-1")
    action = FORGET_SURFACES[surface]
    if action is None:
        space_key = f"bot:{BOT}" if isolation == "bot" else forgetter.chat_key
        space = {"scope_key": forgetter.chat_key, "user_key": space_key}
        assert (await api(harness, "/episode/delete", {"space": space, "episode_id": episode_id}))["ok"]
    else:
        await action(forgetter, episode_id)
    assert await chat.export_l2() == []
    redacted, untouched = queue_records(harness.host)
    assert redacted["status"] == "accepted" and redacted["applied_id"] == episode_id
    assert "Lisbon" not in json.dumps(redacted) and redacted["content"].startswith("[redacted")
    assert untouched == second  # the pending candidate of the same message keeps its text
    assert all(b"Lisbon" not in value for key, value in harness.host.storage.items()
               if not key.startswith("v2/snapshot/"))  # the turn's injection snapshot is diagnostics
    listing = await chat.run("!memory candidates --all-statuses")
    assert "Lisbon" not in listing and "[accepted]" in listing and "retro is on Monday" in listing
    console = await api(harness, "/candidates", {"space": SPACE, "all_statuses": True})
    assert "Lisbon" not in json.dumps(console)
    assert "candidate_redact" in [e["operation"] for e in await chat.audit_entries()]
    assert "Lisbon" not in json.dumps(await chat.audit_entries())


async def test_a_memory_forgotten_while_its_candidate_is_being_accepted_takes_the_candidates_text(
        harness: PluginHarness, monkeypatch: pytest.MonkeyPatch) -> None:
    """The forget lands between the accept's episode write and the accept's mark: the forget saw a pending
    candidate (nothing to redact), and the mark then named a deleted episode and kept the words."""
    from ltm.candidates.queue import CandidateQueue
    from ltm.identity import MemoryScope

    kb = await harness.create_memory_kb(**ON)
    await responded(harness, "Remember that the offsite is in Lisbon. Remember that the retro is on Monday.")
    first, second = queue_records(harness.host)
    chat = open_chat(harness, sender_id="admin-1", sender_name="Ada")
    scope = MemoryScope(chat_key=chat.chat_key, space_key=chat.chat_key, kb_id=kb)
    decide = CandidateQueue.decide
    forgotten: list[str] = []

    async def forget_first(self: CandidateQueue, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("applied_id") and not forgotten:
            forgotten.append(kwargs["applied_id"])
            await harness.plugin.memory.forget(scope, kwargs["applied_id"])
        return await decide(self, *args, **kwargs)

    monkeypatch.setattr(CandidateQueue, "decide", forget_first)
    reply = await chat.run(f"!memory candidate accept {first['id']}")
    assert "stored episode" in reply and forgotten, reply
    assert await chat.export_l2() == []
    redacted, untouched = queue_records(harness.host)
    assert redacted["status"] == "accepted" and redacted["applied_id"] == forgotten[0]
    assert "Lisbon" not in json.dumps(redacted) and redacted["content"].startswith("[redacted")
    assert untouched == second
    assert "Lisbon" not in await chat.run("!memory candidates --all-statuses")
    operations = [e["operation"] for e in await chat.audit_entries()]
    assert operations.index("candidate_accept") < operations.index("candidate_redact"), operations
    assert "Lisbon" not in json.dumps(await chat.audit_entries())


@pytest.mark.parametrize("surface", ["!memory forget-me", "console person erase"])
async def test_erasing_a_person_redacts_their_accepted_candidate_even_in_a_fenced_chat(harness: PluginHarness,
                                                                                        surface: str) -> None:
    """Issue 21, finding 6 on the person-erase path: the chat's L1 space is fenced (a write with an unknown
    outcome), so its candidates cannot be erased there; the L2 erase still takes the words of the accepted
    candidate that became the person's episode, as part of its own audited change."""
    from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

    await harness.create_memory_kb(**ON)
    await responded(harness, "Remember that the offsite is in Lisbon.")
    (record,) = queue_records(harness.host)
    admin = open_chat(harness, sender_id="admin-1", sender_name="Ada")
    assert "stored episode" in await admin.run(f"!memory candidate accept {record['id']}")
    harness.host.fail_next(A.SET_PLUGIN_STORAGE, ActionCallTimeoutError("set_plugin_storage timed out"),
                           after_dispatch=True)
    await admin.run("!memory profile set name The office")  # its outcome is unknown: L1 of g1 is fenced
    assert "fence since" in await admin.run("!memory health")
    if surface == "!memory forget-me":
        reply = await open_chat(harness, sender_id="u1").run("!memory forget-me --confirm")
    else:
        reply = json.dumps(await api(harness, "/person/erase", {"sender_id": "u1", "dry_run": False}))
    assert "fence" in reply, reply  # the L1 space is reported as left as it is
    assert await admin.export_l2() == []
    (redacted,) = queue_records(harness.host)
    assert redacted["status"] == "accepted" and redacted["content"].startswith("[redacted")
    assert all(b"Lisbon" not in value for key, value in harness.host.storage.items()
               if not key.startswith("v2/snapshot/"))
    assert "candidate_redact" in [e["operation"] for e in await admin.audit_entries()]


async def test_accepting_a_profile_candidate_updates_the_speakers_profile(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await responded(harness, "Call me Tommy.", sender="u7", name="Tom")
    (record,) = queue_records(harness.host)
    admin = open_chat(harness, sender_id="admin-1", sender_name="Ada")
    reply = await admin.run(f"!memory candidate accept {record['id']}")
    assert "name added to the speaker profile of Tom (u7)" in reply
    tom = open_chat(harness, sender_id="u7", sender_name="Tom")
    assert "Name: “Tommy”" in await tom.run("!memory profile")
    assert "Name: “Tommy”" not in await admin.run("!memory profile")


async def test_reject_writes_nothing_and_stays_listed(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await responded(harness, "Remember that the demo is on Friday.")
    (record,) = queue_records(harness.host)
    chat = open_chat(harness)
    upserts = harness.host.count("vector_upsert")
    reply = await chat.run(f"!memory candidate reject {record['id']}")
    assert reply.startswith(f"Rejected candidate {record['id']}; nothing was stored")
    assert harness.host.count("vector_upsert") == upserts and await chat.export_l2() == []
    assert "[rejected]" in await chat.run("!memory candidates --all-statuses")
    assert "candidate_reject" in [e["operation"] for e in await chat.audit_entries()]


async def test_group_members_who_are_not_admins_cannot_decide(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await responded(harness, "Remember that the demo is on Friday.")
    (record,) = queue_records(harness.host)
    member = open_chat(harness, sender_id="u2", sender_name="Bea", privilege=1)
    assert record["id"] in await member.run("!memory candidates")  # reading is fine
    for action in ("accept", "reject"):
        reply = await member.run(f"!memory candidate {action} {record['id']}")
        assert "only bot admins can change it" in reply
    assert queue_records(harness.host)[0]["status"] == "pending"


async def test_in_a_private_chat_the_user_decides(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    me = Place("person", "u5")
    await responded(harness, "I love hiking.", place=me, sender="u5", name="Eve")
    (record,) = queue_records(harness.host)
    chat = open_chat(harness, "u5", sender_id="u5", sender_name="Eve", privilege=1, launcher_type="person")
    assert "preferences added" in await chat.run(f"!memory candidate accept {record['id']}")


async def test_a_candidate_of_another_chat_is_not_found(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await responded(harness, "Remember that the demo is on Friday.")
    (record,) = queue_records(harness.host)
    other = open_chat(harness, "g2")
    for action in ("accept", "reject"):
        found = await other.run(f"!memory candidate {action} {record['id']}")
        unknown = await other.run(f"!memory candidate {action} c-00000000")
        assert found == unknown.replace("c-00000000", record["id"])
        assert "not found in this scope" in found
    assert "No pending memory candidates" in await other.run("!memory candidates")
    assert queue_records(harness.host)[0]["status"] == "pending"


async def test_help_and_usage(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    chat = open_chat(harness)
    assert "candidates — candidates to review; candidate accept|reject" in await chat.run("!memory help")
    help_text = await chat.run("!memory help candidates")
    assert "!memory candidates [page] [--status pending|accepted|rejected | --all-statuses]" in help_text
    assert "!memory candidate accept ＜id＞ / !memory candidate reject ＜id＞" in help_text
    assert (await chat.run("!memory candidate")).startswith("Error: say accept or reject.  \nUsage: !memory candidate")
    assert (await chat.run("!memory candidate accept")).startswith("Error: a candidate id is required.")
    assert (await chat.run("!memory candidates 0")).startswith("Error: page must be a whole number")
    assert (await chat.run("!memory candidates --all")).startswith("Error: unknown option --all")
    off = open_chat(harness, "g9")
    assert "No pending memory candidates in this chat." in await off.run("!memory candidates")


async def test_extraction_off_is_said_in_the_listing(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    assert "candidate extraction is off" in await open_chat(harness).run("!memory candidates")


async def test_listing_pages(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON, candidate_max_per_turn=10)
    facts = ". ".join(f"Remember that room {n} is booked" for n in range(4))
    for turn in range(3):
        await responded(harness, facts.replace("room", f"hall{turn} room"))
    chat = open_chat(harness)
    first = await chat.run("!memory candidates")
    assert "page 1/2 · 12 total" in first and "Next: !memory candidates 2" in first
    second = await chat.run("!memory candidates 2")
    assert len(listed_candidate_ids(first)) == 10 and len(listed_candidate_ids(second)) == 2
    assert not set(listed_candidate_ids(first)) & set(listed_candidate_ids(second))


async def test_auto_apply_accepts_rule_candidates_at_once(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON, candidate_auto_apply=True)
    await responded(harness, "Remember that the demo is on Friday.")
    (record,) = queue_records(harness.host)
    assert record["status"] == "accepted" and record["decided_by"] == "auto"
    chat = open_chat(harness)
    (episode,) = await chat.export_l2()
    assert episode["id"] == record["applied_id"] and episode["source_ref"] == record["source_ref"]
    assert "candidate_auto_apply" in [e["operation"] for e in await chat.audit_entries()]


# ------------------------------------------------------------------------------------- the model path
def model_answer(*quotes: str) -> str:
    return json.dumps({"candidates": [{"kind": "episode", "evidence_quote": q} for q in quotes]})


async def test_model_candidates_stay_pending_even_with_auto_apply(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON, candidate_auto_apply=True, candidate_model_uuid="llm-1")
    harness.host.llm_script = [model_answer("the launch slipped to May 3")]
    query_id, _ = await responded(harness, "fyi the launch slipped to May 3, sadly", reply="Noted: May 3.")
    (record,) = queue_records(harness.host)
    assert record["status"] == "pending" and record["claim_type"] == "inference" and record["origin"] == "model"
    assert record["content"] == "the launch slipped to May 3" and record["source_ref"] == f"query:{query_id}"
    (request,) = harness.host.llm_requests
    assert request["llm_model_uuid"] == "llm-1"
    sent = json.dumps(request["messages"], ensure_ascii=False)
    assert "fyi the launch slipped to May 3, sadly" in sent and "Noted: May 3." not in sent
    assert await open_chat(harness).export_l2() == []


async def test_a_credential_never_reaches_the_model_or_storage(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON, candidate_model_uuid="llm-1")
    secret = "sk-proj-9fQ2xLmN8pR7tVb3cD5eF6gH"
    await responded(harness, f"my openai key is {secret}, please remember it")
    assert harness.host.llm_requests == []
    (record,) = queue_records(harness.host)
    assert record["kind"] == "ignore" and record["content"].startswith("[redacted")
    assert all(secret.encode() not in value for value in harness.host.storage.values())
    listing = await open_chat(harness).run("!memory candidates")
    assert "ignore (looked like a credential" in listing and secret not in listing


GLUED_KEY_MESSAGE = "our billing note: acctsk_live_51HqLyjWDarjtT1zdp7dcXYZ0123 for the shop"
QUOTED_KEY = "sk_live_51HqLyjWDarjtT1zdp7dcXYZ0123"


async def test_a_credential_the_model_quotes_is_never_queued(harness: PluginHarness) -> None:
    """The key glued to a word passes the whole-message check; the model's quote of it alone does not."""
    await harness.create_memory_kb(**ON, candidate_model_uuid="llm-1")
    harness.host.llm_script = [json.dumps({"candidates": [
        {"kind": "episode", "evidence_quote": QUOTED_KEY},
        {"kind": "profile", "target": "speaker", "field": "preferences", "evidence_quote": QUOTED_KEY + " for"},
        {"kind": "episode", "evidence_quote": "for the shop"},
    ]})]
    await responded(harness, GLUED_KEY_MESSAGE)
    assert len(harness.host.llm_requests) == 1  # the message itself was not refused
    records = queue_records(harness.host)
    assert sorted(r["kind"] for r in records) == ["episode", "ignore"]
    (ignored,) = [r for r in records if r["kind"] == "ignore"]
    assert ignored["content"] == "[redacted: looks like an API key]" and ignored["evidence"] == ""
    assert all(b"51HqLyjWDarjtT1zdp7dcXYZ0123" not in value for value in harness.host.storage.values())
    for listing in (await open_chat(harness).run("!memory candidates"),
                    await open_chat(harness).run("!memory candidates --all-statuses")):
        assert "51HqLyjWDarjtT1zdp7dcXYZ0123" not in listing and "for the shop" in listing
    console = await api(harness, "/candidates", {"space": SPACE, "all_statuses": True})
    assert "51HqLyjWDarjtT1zdp7dcXYZ0123" not in json.dumps(console)


@pytest.mark.parametrize("failure", [
    ActionCallTimeoutError("no answer within 30 s"),
    "not json at all",
    json.dumps({"candidates": [{"kind": "episode", "evidence_quote": "the launch slipped to June"}]}),
    json.dumps({"candidates": [{"kind": "episode", "evidence_quote": "the launch", "why": "x"}]}),
], ids=["timeout", "malformed", "not-verbatim", "extra-field"])
async def test_a_failed_model_result_stores_nothing(harness: PluginHarness, failure: Any) -> None:
    await harness.create_memory_kb(**ON, candidate_model_uuid="llm-1")
    harness.host.llm_script = [failure]
    await responded(harness, "Remember that the launch slipped to May 3.")
    assert len(harness.host.llm_requests) == 1
    assert queue_records(harness.host) == []  # and the rules, which would find this one, are not used


# ------------------------------------------------------------------------------------- the console
async def api(harness: PluginHarness, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await harness.page_api("console", endpoint, "POST", body)
    assert response["error"] is None, response
    data: dict[str, Any] = response["data"]
    return data


SPACE = {"scope_key": f"{BOT}:group_g1", "user_key": f"{BOT}:group_g1"}


async def test_console_lists_accepts_and_rejects(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await responded(harness, "Remember that the demo is on Friday. Remember that the retro is on Monday.")
    data = await api(harness, "/candidates", {"space": SPACE})
    assert data["ok"] and data["total"] == 2 and data["settings"]["enabled"] is True and data["limit"] == 200
    first, second = data["candidates"]
    assert {first["status"], second["status"]} == {"pending"} and first["sender_id"] == "u1"
    accepted = await api(harness, "/candidate/accept", {"space": SPACE, "candidate_id": first["id"]})
    assert accepted["ok"] and accepted["candidate"]["status"] == "accepted"
    assert accepted["candidate"]["decided_by"] == "console" and accepted["candidate"]["applied_type"] == "episode"
    rejected = await api(harness, "/candidate/reject", {"space": SPACE, "candidate_id": second["id"]})
    assert rejected["ok"] and rejected["candidate"]["status"] == "rejected"
    episodes = await api(harness, "/episodes", {"space": SPACE})
    assert [e["id"] for e in episodes["episodes"]] == [accepted["candidate"]["applied_id"]]
    assert episodes["episodes"][0]["sender_id"] == "u1"
    assert (await api(harness, "/candidates", {"space": SPACE}))["total"] == 0
    everything = await api(harness, "/candidates", {"space": SPACE, "all_statuses": True})
    assert everything["counts"] == {"pending": 0, "accepted": 1, "rejected": 1}


async def test_console_refuses_foreign_ids_and_bad_bodies(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await responded(harness, "Remember that the demo is on Friday.")
    (record,) = queue_records(harness.host)
    other = {"scope_key": f"{BOT}:group_g2", "user_key": f"{BOT}:group_g2"}
    for endpoint in ("/candidate/accept", "/candidate/reject"):
        data = await api(harness, endpoint, {"space": other, "candidate_id": record["id"]})
        assert data["ok"] is False and data["code"] == "not_found"
        data = await api(harness, endpoint, {"space": SPACE, "candidate_id": record["id"], "why": 1})
        assert data["ok"] is False and data["code"] == "invalid_input" and "unknown field" in data["error"]
        data = await api(harness, endpoint, {"space": SPACE})
        assert data["ok"] is False and "candidate_id is required" in data["error"]
    data = await api(harness, "/candidates", {"space": SPACE, "page_size": 500})
    assert data["ok"] is False and "page_size" in data["error"]
    assert queue_records(harness.host)[0]["status"] == "pending"


async def test_console_cannot_accept_a_candidate_into_another_chats_memory(harness: PluginHarness) -> None:
    """Issue 21, finding 3: g1's scope_key with g2's user_key answered ok and wrote g1's text into g2."""
    await harness.create_memory_kb(**ON)
    await responded(harness, "Remember that the demo is on Friday.")
    (record,) = queue_records(harness.host)
    crossed = {"scope_key": f"{BOT}:group_g1", "user_key": f"{BOT}:group_g2"}
    data = await api(harness, "/candidate/accept", {"space": crossed, "candidate_id": record["id"]})
    assert data["ok"] is False and data["code"] == "invalid_input"
    assert f"user_key {BOT}:group_g2 is not the key this plugin derives" in data["error"]
    g2 = {"scope_key": f"{BOT}:group_g2", "user_key": f"{BOT}:group_g2"}
    assert (await api(harness, "/episodes", {"space": g2}))["total"] == 0
    assert queue_records(harness.host)[0]["status"] == "pending"


def test_seen_queries_is_bounded_and_expires() -> None:
    now = [0.0]
    seen = SeenQueries(ttl=10.0, limit=3, clock=lambda: now[0])
    assert seen.first_time("a") and not seen.first_time("a")
    assert all(seen.first_time(key) for key in "bcd")
    assert len(seen) == 3 and seen.first_time("a")  # the oldest ("a") was forgotten to stay within the bound
    assert not seen.first_time("d")
    now[0] = 10.0
    assert seen.first_time("d") and len(seen) == 1  # everything older than the TTL expired


async def test_the_reply_event_is_handled_only_while_the_kb_extracts_candidates(harness: PluginHarness) -> None:
    """Every event the plugin handles makes LangBot's runtime send LangBot the plugin's whole manifest while
    the host holds the reply: with extraction off, NormalMessageResponded is not handled at all. Each turn's
    PromptPreProcessing (which comes first) follows the KB's setting, also after it changes."""
    await harness.create_memory_kb()  # extraction off by default
    await prompt_turn(harness, GROUP, "u1", "Alice", "hello there")
    await responded(harness, "Remember that the design review moved to Friday.")
    assert harness.last_event_emitted is False and queue_records(harness.host) == []
    reply = await open_chat(harness).run("!memory settings set candidate_extraction_enabled true")
    assert "candidate_extraction_enabled" in reply, reply
    await prompt_turn(harness, GROUP, "u1", "Alice", "hello again")
    await responded(harness, "Remember that the design review moved to Friday.")
    assert harness.last_event_emitted is True and [r["status"] for r in queue_records(harness.host)] == ["pending"]
    await open_chat(harness).run("!memory settings set candidate_extraction_enabled false")
    await prompt_turn(harness, GROUP, "u1", "Alice", "and again")
    await responded(harness, "Remember that the standup moved to Monday.")
    assert harness.last_event_emitted is False and len(queue_records(harness.host)) == 1
