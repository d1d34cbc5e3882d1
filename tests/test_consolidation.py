"""Consolidation (K1-K8) on the test host: `!memory consolidate` through the SDK's command dispatch, the
Memory Console's review endpoints through the Page dispatch, and the host's scripted LLM (`llm_script`,
a fake that answers what the test writes, reached through the real `invoke_llm` action).

The cascade tests list every other scope (records of every status, pending drafts, consolidation
storage) before and after, and require them unchanged. The retention test keeps similar but
unrelated facts next to each other through both consolidation paths.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
from langbot_plugin.entities.io.errors import ActionCallError

from ltm import LISTED_STATUSES, Identity, MemoryScope, MemoryService
from ltm.consolidation.prompt import SYSTEM_PROMPT
from testhost import PluginHarness
from tests.chat import BOT, Chat, open_chat
from tests.test_console_api import api, ok, refused

LLM = "llm-1"
ON = {"consolidation_enabled": True, "consolidation_model_uuid": LLM}
PROPOSAL = re.compile(r"Summary draft ([0-9a-f-]{36}) over")


def sources_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    user = str(messages[-1]["content"])
    body = user.partition("<sources>\n")[2].partition("\n</sources>")[0]
    return list(json.loads(body))


def one_statement(text: str = "") -> Any:
    def reply(messages: list[dict[str, Any]], payload: dict[str, Any]) -> str:
        found = sources_of(messages)
        return json.dumps({"statements": [{"text": text or " and ".join(s["text"] for s in found),
                                           "sources": [s["id"] for s in found]}]})
    return reply


def per_source(messages: list[dict[str, Any]], payload: dict[str, Any]) -> str:
    return json.dumps({"statements": [{"text": f"Noted: {s['text']}", "sources": [s["id"]]}
                                      for s in sources_of(messages)]})


def service(harness: PluginHarness) -> MemoryService:
    memory: MemoryService = harness.plugin.memory
    return memory


async def stored(harness: PluginHarness, chat: Chat) -> list[dict[str, Any]]:
    """Every record of the chat's space, any status (the chat export does not fit a message here)."""
    memory = service(harness)
    found = await memory.memory_kb()
    assert found is not None
    return [e.to_public() for e in await memory.all_episodes(await memory.scope_for(chat_identity(chat)))]


def chat_identity(chat: Chat) -> Identity:
    return Identity.build(launcher_type="group", launcher_id=chat.launcher_id, bot_uuid=BOT, sender_id=chat.sender_id)


async def preview_id(chat: Chat) -> str:
    reply = await chat.run("!memory consolidate preview")
    match = PROPOSAL.search(reply)
    assert match, reply
    return match.group(1)


# --------------------------------------------------------------------------- the command
async def test_help_lists_the_consolidate_subcommands(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    text = await open_chat(harness).run("!memory help consolidate")
    for usage in ("!memory consolidate preview [--tag T]", "!memory consolidate run [proposal_id]",
                  "discard ＜proposal_id＞"):
        assert usage in text, text
    assert "not available" not in await open_chat(harness).run("!memory consolidate preview")


async def test_preview_then_run_writes_one_summary_next_to_its_active_sources(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    chat = open_chat(harness)
    first = await chat.remember("Alice's team ships the mobile app on Fridays", valid_from="2026-01-01T00:00:00Z")
    second = await chat.remember("Alice's team ships the web app on Mondays", valid_until="2026-12-01T00:00:00Z")
    harness.host.llm_script = one_statement("Alice's team ships the mobile app on Fridays and the web app on Mondays")
    reply = await chat.run("!memory consolidate preview")
    pid = PROPOSAL.search(reply).group(1)  # type: ignore[union-attr]
    for expected in (first, second, "Alice's team ships the mobile app on Fridays",
                     "Alice's team ships the web app on Mondays", f"!memory consolidate run {pid}",
                     "S1. “Alice's team ships the mobile app on Fridays and the web app on Mondays” [sources 1, 2]"):
        assert expected in reply, reply
    [request] = harness.host.llm_requests
    assert request["llm_model_uuid"] == LLM and request["messages"][0]["content"] == SYSTEM_PROMPT
    assert pid in await chat.run("!memory consolidate drafts")

    reply = await chat.run(f"!memory consolidate run {pid}")
    assert "is active" in reply and "stay active" in reply, reply
    episodes = {e["id"]: e for e in await stored(harness, chat)}
    summaries = [e for e in episodes.values() if e["source"] == "consolidation"]
    assert len(summaries) == 1 and len(episodes) == 3
    summary = summaries[0]
    assert summary["status"] == "active" and summary["claim_type"] == "inference"
    assert summary["derived_from"] == [first, second] and summary["source_ref"] == f"consolidation:{pid}"
    assert (summary["valid_from"], summary["valid_until"]) == ("2026-01-01T00:00:00Z", "2026-12-01T00:00:00Z")
    assert episodes[first]["status"] == episodes[second]["status"] == "active"
    assert "already used" in await chat.run(f"!memory consolidate run {pid}")
    operations = [e["operation"] for e in await chat.audit_entries()]
    assert {"consolidation_preview", "consolidation_stage", "consolidation_run"} <= set(operations)
    # The summary is recalled like any other record, and so are its sources.
    listed = await chat.run("!memory search ships the app")
    assert all(i in listed for i in (first, second, summary["id"])), listed


async def test_a_long_draft_fits_one_chat_message_with_its_id_and_commands_first(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    chat = open_chat(harness)
    for n in range(12):
        await chat.remember(f"long fact {n}: " + "detail " * 45)
    harness.host.llm_script = lambda m, p: json.dumps({"statements": [
        {"text": f"Fact {n} has details", "sources": [s["id"]]} for n, s in enumerate(sources_of(m))]})
    reply = await chat.run("!memory consolidate preview")  # Chat.run checks the reply fits one message
    lines = reply.splitlines()
    assert PROPOSAL.search(lines[1]) and lines[2].startswith("Apply: !memory consolidate run ")
    assert "…" in reply  # source texts were shortened for chat; the console shows them in full


REJECTED = {
    "malformed JSON": (lambda m, p: "{not json", "not valid JSON"),
    "extra field": (lambda m, p: json.dumps({**json.loads(per_source(m, p)), "why": "x"}), "unexpected field"),
    "uncovered source": (lambda m, p: json.dumps({"statements": [{"text": "t", "sources": [sources_of(m)[0]["id"]]}]}),
                         "no statement covers"),
    "foreign id": (lambda m, p: json.dumps({"statements": [{"text": "t", "sources": [
        *(s["id"] for s in sources_of(m)), str(uuid.uuid4())]}]}), "not one of the selected sources"),
    "oversized output": (lambda m, p: per_source(m, p) + " " * 8001, "longer than 8000"),
    "timeout": (lambda m, p: ActionCallError("ActionCallTimeoutError: invoke_llm timed out"), "the model call failed"),
}


@pytest.mark.parametrize("case", REJECTED)
async def test_a_rejected_answer_leaves_no_draft(case: str, harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    chat = open_chat(harness)
    await chat.remember("fact one")
    await chat.remember("fact two")
    reply_fn, reason = REJECTED[case]
    harness.host.llm_script = lambda m, p: reply_fn(m, p)
    storage = dict(harness.host.storage)
    reply = await chat.run("!memory consolidate preview")
    assert "Summary draft rejected:" in reply and reason in reply and "no draft was saved" in reply, reply
    assert [k for k in harness.host.storage if k.startswith("v2/draft")] == []
    assert {k: v for k, v in harness.host.storage.items() if "audit" not in k} == \
        {k: v for k, v in storage.items() if "audit" not in k}
    assert "No pending summary drafts" in await chat.run("!memory consolidate drafts")


async def test_run_needs_consolidation_enabled_and_a_refusal_keeps_the_draft(harness: PluginHarness) -> None:
    await harness.create_memory_kb(consolidation_model_uuid=LLM)  # consolidation_enabled stays off
    chat = open_chat(harness, "g1")
    await chat.remember("fact one")
    await chat.remember("fact two")
    harness.host.llm_script = per_source
    pid = await preview_id(chat)  # preview works without consolidation_enabled
    assert "consolidation_enabled is false" in await chat.run(f"!memory consolidate run {pid}")
    assert "consolidation_enabled is false" in await chat.run("!memory consolidate run")
    assert pid in await chat.run("!memory consolidate drafts")
    assert f"Discarded summary draft {pid}" in await chat.run(f"!memory consolidate discard {pid}")
    assert "already discarded" in await chat.run(f"!memory consolidate discard {pid}")


async def test_run_refuses_unknown_and_foreign_proposals(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    chat, other = open_chat(harness, "g1"), open_chat(harness, "g2", sender_id="u9")
    await chat.remember("fact one")
    await chat.remember("fact two")
    harness.host.llm_script = per_source
    pid = await preview_id(chat)
    # Another chat's id answers exactly like an id that exists nowhere (docs/GUARANTEES.md).
    unknown = str(uuid.uuid4())
    for command in ("run", "discard"):
        foreign = await other.run(f"!memory consolidate {command} {pid}")
        nowhere = await other.run(f"!memory consolidate {command} {unknown}")
        assert "no pending proposal" in foreign and "another" not in foreign
        assert foreign.replace(pid, "<id>") == nowhere.replace(unknown, "<id>")
    assert "no pending proposal" in await chat.run(f"!memory consolidate run {uuid.uuid4()}")
    assert "not a proposal id" in await chat.run("!memory consolidate run p-1")
    assert "Usage: !memory consolidate" in await chat.run("!memory consolidate frobnicate")
    assert pid in await chat.run("!memory consolidate drafts")  # refusals elsewhere leave it pending
    assert "is active" in await chat.run(f"!memory consolidate run {pid}")


async def test_archival_preview_and_run_in_chat(harness: PluginHarness) -> None:
    await harness.create_memory_kb(consolidation_enabled=True)
    chat = open_chat(harness)
    old = "2025-01-01T00:00:00Z"
    document = json.dumps([
        {"id": "o1", "content": "the old office was in Lyon", "status": "superseded", "superseded_by": "c1",
         "superseded_at": old, "timestamp": old},
        {"id": "c1", "content": "the office moved to Lille", "supersedes": ["o1"], "timestamp": old},
        {"content": "an old, unimportant active fact", "importance": 1, "timestamp": "2001-01-01T00:00:00Z"},
    ])
    await chat.run(f"!memory import l2 {document}")
    before = await stored(harness, chat)
    reply = await chat.run("!memory consolidate preview")
    assert "1 superseded record superseded over 7 days ago" in reply and "the old office was in Lyon" in reply
    assert "risk: would leave a correction without its original" in reply, reply
    assert "no consolidation model is set" in reply and harness.host.llm_requests == []
    assert await stored(harness, chat) == before
    assert "Archived 1 superseded record" in await chat.run("!memory consolidate run")
    after = {e["content"]: e["status"] for e in await stored(harness, chat)}
    assert after == {"the old office was in Lyon": "archived", "the office moved to Lille": "active",
                     "an old, unimportant active fact": "active"}
    assert "Nothing to archive" in await chat.run("!memory consolidate run")


# --------------------------------------------------------------------------- retention
async def test_no_active_fact_is_lost_or_hidden_by_consolidation(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON, consolidation_min_age_days=0)
    chat = open_chat(harness)
    facts = ["Alice's sister lives in Lyon", "Alice's brother lives in Lyon", "Bob's sister lives in Lyon",
             "Alice's sister lives near Lyon", "Alice's sister lived in Lyon until 2020",
             "Alice's sister does not live in Lyon any more"]
    ids = {fact: await chat.remember(fact) for fact in facts}
    old = await chat.remember("Alice's sister lives in Paris")
    await chat.remember("Alice's sister lives in Lyon, not Paris", supersedes=[old])
    harness.host.llm_script = one_statement("Alice's sister and brother live in Lyon")  # lossy on purpose
    pid = await preview_id(chat)
    await chat.run(f"!memory consolidate run {pid}")
    await chat.run("!memory consolidate run")  # archival: only the superseded Paris record goes
    statuses = {e["id"]: e["status"] for e in await stored(harness, chat)}
    assert all(statuses[i] == "active" for i in ids.values()) and statuses[old] == "archived"
    for fact, episode_id in ids.items():
        hits = await chat.tool("recall_memory", {"query": fact, "top_k": 20})
        assert episode_id in [h["id"] for h in hits["episodes"]], (fact, hits)


# --------------------------------------------------------------------------- cascades (K5)
async def world(harness: PluginHarness, memory: MemoryService, kb: str) -> dict[str, Any]:
    """Everything of every known scope: records of every status, pending drafts, consolidation storage."""
    found = await memory.memory_kb()
    assert found is not None
    state: dict[str, Any] = {}
    for chat_key in await memory.known_scopes():
        scope = MemoryScope.stored(chat_key, chat_key, kb, "session")
        episodes = await memory.export_episodes(scope, LISTED_STATUSES)
        drafts = [d.proposal_id for d in await memory.consolidation_drafts(scope)]
        state[chat_key] = (episodes["episodes"], drafts)
    state["storage"] = {k: v for k, v in harness.host.storage.items()
                        if k.startswith(("v2/draft", "v2/lineage"))}
    return state


def others(state: dict[str, Any], chat_key: str) -> dict[str, Any]:
    storage = {k: v for k, v in state["storage"].items() if chat_key.replace(":", "%3A") not in k}
    return {**{k: v for k, v in state.items() if k not in (chat_key, "storage")}, "storage": storage}


async def summarized_chat(harness: PluginHarness, launcher_id: str, *facts: str, tag: str = ""
                          ) -> tuple[Chat, list[str], str, str]:
    """A chat with a summary over its first two facts and (given two more) a pending draft over the rest."""
    chat = open_chat(harness, launcher_id, sender_id=f"u-{launcher_id}")
    ids = [await chat.remember(facts[0], tags=[tag] if tag else []), await chat.remember(facts[1])]
    harness.host.llm_script = per_source
    await chat.run(f"!memory consolidate run {await preview_id(chat)}")
    summary = next(e["id"] for e in await stored(harness, chat) if e["source"] == "consolidation")
    ids += [await chat.remember(f) for f in facts[2:]]
    pid = await preview_id(chat) if len(facts) >= 4 else ""
    return chat, ids, summary, pid


CASCADE_COMMANDS = {
    "forget": lambda ids: f"!memory forget {ids[0]}",
    "archive": lambda ids: f"!memory archive {ids[0]}",
    "bulk delete": lambda ids: "!memory delete --tag doomed",
}


@pytest.mark.parametrize("how", CASCADE_COMMANDS)
async def test_a_cascade_touches_its_own_scope_only(how: str, harness: PluginHarness) -> None:
    kb = await harness.create_memory_kb(**ON)
    memory = service(harness)
    chat, ids, summary, _ = await summarized_chat(harness, "g1", "source one", "source two", "source three",
                                                  "source four", tag="doomed")
    # A second pending draft over the same space that quotes the first source: cleared with it.
    await memory.archive(chat_scope(chat, kb), summary)  # its sources are offered again while it is not active
    quoting = await preview_id(chat)
    await chat.run(f"!memory restore {summary}")
    for launcher in ("g2", "g3"):
        await summarized_chat(harness, launcher, "source one", "source two", "source three", "source four",
                              tag="doomed")
    before = await world(harness, memory, kb)
    assert {f"{BOT}:group_g2", f"{BOT}:group_g3"} <= set(before) and len(before["storage"]) > 6
    await chat.run(CASCADE_COMMANDS[how](ids))
    after = await world(harness, memory, kb)
    assert others(after, chat.chat_key) == others(before, chat.chat_key)
    episodes, drafts = after[chat.chat_key]
    remaining = {e["id"] for e in episodes}
    assert summary not in remaining and set(ids[1:]) <= remaining
    assert quoting not in drafts and len(drafts) == 1
    assert "already cleared" in await chat.run(f"!memory consolidate run {quoting}")


async def test_a_correction_through_the_tool_removes_the_summary_and_restore_does_not_bring_it_back(
        harness: PluginHarness) -> None:
    kb = await harness.create_memory_kb(**ON)
    memory = service(harness)
    chat, ids, summary, _ = await summarized_chat(harness, "g1", "the demo is on Monday", "the demo is in room 4")
    await summarized_chat(harness, "g2", "the demo is on Monday", "the demo is in room 4")
    before = await world(harness, memory, kb)
    await chat.remember("the demo is on Tuesday", supersedes=[ids[0]])
    after = await world(harness, memory, kb)
    assert others(after, chat.chat_key) == others(before, chat.chat_key)
    assert summary not in {e["id"] for e in after[chat.chat_key][0]}
    await chat.run(f"!memory restore {ids[0]}")
    assert summary not in {e["id"] for e in await stored(harness, chat)}


async def test_bot_isolation_cascade_clears_drafts_of_every_chat_sharing_the_space(harness: PluginHarness) -> None:
    kb = await harness.create_memory_kb(**ON, isolation="bot")
    first, second = open_chat(harness, "g1"), open_chat(harness, "g2", sender_id="u9")
    source = await first.remember("the shared fact")
    await first.remember("another shared fact")
    harness.host.llm_script = per_source
    pid = await preview_id(second)  # drafted in g2 over the bot-wide space
    memory = service(harness)
    assert [d.proposal_id for d in await memory.consolidation_drafts(chat_scope(second, kb, bot=True))] == [pid]
    assert "no pending proposal" in await first.run(f"!memory consolidate run {pid}")  # g2's draft
    await first.run(f"!memory forget {source}")  # from another chat of the same bot
    assert await memory.consolidation_drafts(chat_scope(second, kb, bot=True)) == []
    assert "already cleared" in await second.run(f"!memory consolidate run {pid}")


async def test_document_deletion_removes_summaries_and_drafts_built_from_it(harness: PluginHarness) -> None:
    kb = await harness.create_memory_kb(**ON)
    memory = service(harness)
    payload = {"scope": {"bot_uuid": BOT, "session_name": "group_g1"},
               "episodes": [{"content": "doc fact one"}, {"content": "doc fact two"},
                            {"content": "doc fact three"}, {"content": "doc fact four"}]}
    result = await harness.ingest(kb, "doc-1", "memories.json", json.dumps(payload).encode())
    assert result["status"] == "completed", result
    chat = open_chat(harness, "g1")
    harness.host.llm_script = per_source
    await chat.run(f"!memory consolidate run {await preview_id(chat)}")
    await summarized_chat(harness, "g2", "doc fact one", "doc fact two")
    before = await world(harness, memory, kb)
    assert len(before[chat.chat_key][0]) == 5
    assert await harness.delete_document(kb, "doc-1")
    after = await world(harness, memory, kb)
    assert others(after, chat.chat_key) == others(before, chat.chat_key)
    assert after[chat.chat_key] == ([], [])


async def test_deleting_the_kb_clears_its_drafts(harness: PluginHarness) -> None:
    kb = await harness.create_memory_kb(**ON)
    await summarized_chat(harness, "g1", "fact one", "fact two", "fact three", "fact four")
    assert any(k.startswith("v2/draft/") for k in harness.host.storage)
    await harness.kb_delete(kb)
    assert [k for k in harness.host.storage if k.startswith(("v2/draft", "v2/lineage"))] == []


def chat_scope(chat: Chat, kb: str, *, bot: bool = False) -> MemoryScope:
    return MemoryScope.stored(chat.chat_key, f"bot:{BOT}" if bot else chat.chat_key, kb, "bot" if bot else "session")


# --------------------------------------------------------------------------- Memory Console (K7)
SPACE = {"scope_key": f"{BOT}:group_g1", "user_key": f"{BOT}:group_g1"}


async def test_console_previews_compares_approves_and_discards(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    chat = open_chat(harness)
    first = await chat.remember("The book club meets on Thursdays")
    second = await chat.remember("The book club reads one novel a month")
    harness.host.llm_script = per_source
    data = await ok(harness, "/review/draft/preview", {"space": SPACE})
    draft = data["draft"]
    assert draft and data["rejected"] is False and data["archival"] == []
    assert [s["id"] for s in draft["sources"]] == [first, second]
    assert [s["content"] for s in draft["sources"]] == ["The book club meets on Thursdays",
                                                        "The book club reads one novel a month"]
    assert [st["sources"] for st in draft["statements"]] == [[first], [second]]
    assert "hash" not in draft["sources"][0]
    listed = await ok(harness, "/review/drafts", {"space": SPACE})
    assert [d["proposal_id"] for d in listed["drafts"]] == [draft["proposal_id"]]
    assert listed["settings"] == {"kb": True, "enabled": True, "model": True, "apply_profile_updates": False,
                                  "min_age_days": 7, "max_candidates": 20}
    assert (await ok(harness, "/review", {"space": SPACE}))["drafts"][0]["proposal_id"] == draft["proposal_id"]
    approved = await ok(harness, "/review/draft/approve", {"space": SPACE, "proposal_id": draft["proposal_id"]})
    assert approved["summary"]["status"] == "active" and approved["summary"]["derived_from"] == [first, second]
    assert "already used" in await refused(harness, "/review/draft/approve",
                                           {"space": SPACE, "proposal_id": draft["proposal_id"]}, "proposal_rejected")
    # Audited in the space's log, where the console and the chat both see it.
    operations = [e["operation"] for e in (await ok(harness, "/audit", {"space": SPACE}))["entries"]]
    assert {"consolidation_run", "consolidation_stage", "consolidation_preview"} <= set(operations)

    third = await chat.remember("The book club votes on the next novel")
    fourth = await chat.remember("The book club has twelve members")
    pid = (await ok(harness, "/review/draft/preview", {"space": SPACE}))["draft"]["proposal_id"]
    assert (await ok(harness, "/review/draft/discard", {"space": SPACE, "proposal_id": pid}))["proposal_id"] == pid
    assert (await ok(harness, "/review/drafts", {"space": SPACE}))["drafts"] == []
    assert "draft_discard" in [e["operation"] for e in (await ok(harness, "/audit", {"space": SPACE}))["entries"]]
    statuses = {e["id"]: e["status"] for e in await stored(harness, chat)}
    assert all(statuses[i] == "active" for i in (first, second, third, fourth))


async def test_console_review_refusals(harness: PluginHarness) -> None:
    data = await api(harness, "/review/drafts", {"space": SPACE})
    assert data["ok"] is True and data["drafts"] == [] and data["settings"]["kb"] is False
    await refused(harness, "/review/draft/preview", {"space": SPACE}, "no_knowledge_base")
    await harness.create_memory_kb(consolidation_model_uuid=LLM)
    await refused(harness, "/review/draft/approve", {"space": SPACE, "proposal_id": str(uuid.uuid4())},
                  "consolidation_disabled")
    await refused(harness, "/review/draft/discard", {"space": SPACE}, "invalid_input")
    await refused(harness, "/review/draft/preview", {"space": SPACE, "extra": 1}, "invalid_input")
    data = await api(harness, "/review/draft/approve", {"space": SPACE, "proposal_id": "x"}, "GET")
    assert data["ok"] is False and data["code"] == "method_not_allowed"
    preview = await ok(harness, "/review/draft/preview", {"space": SPACE})
    assert preview["draft"] is None and "nothing new to summarize" in preview["note"]


async def test_console_and_chat_share_the_scope_of_a_draft(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    chat = open_chat(harness)
    await chat.remember("fact one")
    await chat.remember("fact two")
    harness.host.llm_script = per_source
    pid = await preview_id(chat)
    assert [d["proposal_id"] for d in (await ok(harness, "/review/drafts", {"space": SPACE}))["drafts"]] == [pid]
    other = {"scope_key": f"{BOT}:group_g2", "user_key": f"{BOT}:group_g2"}
    assert (await ok(harness, "/review/drafts", {"space": other}))["drafts"] == []
    unknown = str(uuid.uuid4())
    for endpoint in ("/review/draft/approve", "/review/draft/discard"):
        foreign = await refused(harness, endpoint, {"space": other, "proposal_id": pid}, "not_found")
        nowhere = await refused(harness, endpoint, {"space": other, "proposal_id": unknown}, "not_found")
        assert foreign.replace(pid, "<id>") == nowhere.replace(unknown, "<id>") and "another" not in foreign
    await ok(harness, "/review/draft/approve", {"space": SPACE, "proposal_id": pid})
    assert "already used" in await chat.run(f"!memory consolidate run {pid}")



async def test_console_preview_without_a_model_lists_archival_candidates(harness: PluginHarness) -> None:
    await harness.create_memory_kb(consolidation_enabled=True)
    chat = open_chat(harness)
    old = "2025-01-01T00:00:00Z"
    await chat.run("!memory import l2 " + json.dumps([
        {"id": "o1", "content": "the old address", "status": "superseded", "superseded_by": "c1",
         "superseded_at": old, "timestamp": old},
        {"id": "c1", "content": "the new address", "supersedes": ["o1"], "timestamp": old}]))
    before = await stored(harness, chat)
    data = await ok(harness, "/review/draft/preview", {"space": SPACE})
    assert data["draft"] is None and data["rejected"] is False and "no consolidation model" in data["note"]
    [candidate] = data["archival"]
    assert candidate["episode"]["content"] == "the old address" and data["archival_total"] == 1
    assert "would leave a correction without its original" in candidate["notes"][0]["english"]
    assert candidate["notes"][0]["code"] == "risk.original_of_correction"
    assert await stored(harness, chat) == before and harness.host.llm_requests == []
