"""One person across chats on the real test host (Chroma, Qdrant, Milvus Lite), through the
console's page API and `!memory me` / `!memory forget-me`: the export finds exactly one sender's
records in three chats and nothing of anyone else; the erase removes exactly those (every other
record and profile is listed before and after), removes the summaries built from them and is
audited in each chat; a fenced chat is reported and left as it is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.entities.io.errors import ActionCallTimeoutError

from ltm.langbot import layout
from testhost import PluginHarness
from tests.chat import Chat, Place, open_chat
from tests.test_candidates import responded
from tests.test_consolidation import ON, one_statement, preview_id

G1, G2, P1 = Place("group", "g1"), Place("group", "g2"), Place("person", "p1")

NO_TURNS = {"conversation_turns": 0, "conversation_summaries": 0}  # no conversation record here


def space(chat: Chat, kind: str = "group") -> dict[str, str]:
    key = f"bot-1:{kind}_{chat.launcher_id}"
    return {"scope_key": key, "user_key": key}


async def console(h: PluginHarness, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await h.page_api("console", endpoint, "POST", body)
    assert response["error"] is None, response
    data: dict[str, Any] = response["data"]
    assert data["ok"] is True, data
    return data


async def every_record(h: PluginHarness, kb_id: str) -> dict[str, Any]:
    """Every memory record of the KB straight from the vector store: episode id -> (space, fields)."""
    found: dict[str, Any] = {}
    for row in await h.host.dump_kb(kb_id):
        record = layout.parse(row["metadata"])
        if record is not None:
            found[record.record_id] = (record.space_key, dict(record.fields))
    return found


async def profiles(h: PluginHarness, *spaces: dict[str, str]) -> list[dict[str, Any]]:
    return [await console(h, "/profiles", {"space": s}) for s in spaces]


class Installation:
    """Alice (u1) speaks in groups g1 and g2 and in her private chat p1; Bob (u2) in g1 and g2; Carol
    (u3) in g2. A summary in g1 is built from one of Alice's episodes and one of Bob's."""

    async def build(self, h: PluginHarness) -> Installation:
        self.kb = await h.create_memory_kb(**ON, candidate_extraction_enabled=True)
        self.g1a, self.g1b = open_chat(h, "g1", sender_id="u1", sender_name="Alice"), open_chat(
            h, "g1", sender_id="u2", sender_name="Bob")
        self.g2a, self.g2b, self.g2c = (open_chat(h, "g2", sender_id=s, sender_name=n)
                                        for s, n in (("u1", "Alice"), ("u2", "Bob"), ("u3", "Carol")))
        self.p1 = open_chat(h, "p1", sender_id="u1", sender_name="Alice", launcher_type="person")
        old = await self.g1a.remember("Alice's desk is by the window")
        self.alice = {old, await self.g1a.remember("Alice's desk is by the door", supersedes=[old]),
                      await self.g2a.remember("Alice brings the cake on Fridays"),
                      await self.p1.remember("Alice sees the dentist on Tuesday")}
        self.others = {await self.g1b.remember("Bob runs the Friday demo"),
                       await self.g2c.remember("Carol books the meeting room")}
        await self.g1a.run("!memory profile set traits left-handed --me")
        await self.p1.run("!memory profile set name Ali --me")
        await self.g1b.run("!memory profile set name Bobby --me")
        await self.g1b.run("!memory profile set name The office")
        await responded(h, "I'm vegetarian", place=G2, sender="u1", name="Alice")
        await responded(h, "I'm allergic to nuts", place=G2, sender="u3", name="Carol")
        h.host.llm_script = one_statement("the office summary")
        reply = await self.g1b.run(f"!memory consolidate run {await preview_id(self.g1b)}")
        self.summary = reply.split("Summary ")[1].split()[0]
        return self


async def test_person_export_finds_exactly_that_senders_records_in_three_chats(harness: PluginHarness) -> None:
    world = await Installation().build(harness)
    found = await console(harness, "/person/find", {"sender_id": "u1"})
    assert {(s["kind"], s["key"]) for s in found["spaces"]} == {
        (kind, f"bot-1:{chat}") for kind in ("l1", "l2") for chat in ("group_g1", "group_g2", "person_p1")}
    assert found["counts"] == {"episodes": 4, "summaries": 1, "speaker_profiles": 2, "candidates": 1,
                               "snapshots": 0, **NO_TURNS}
    exported = (await console(harness, "/person/export", {"sender_id": "u1"}))["export"]
    episodes = {e["id"] for s in exported["spaces"] for e in s.get("episodes", [])}
    assert episodes == world.alice
    assert {e["sender_id"] for s in exported["spaces"] for e in s.get("episodes", [])} == {"u1"}
    text = json.dumps(exported)
    for other in ("Bob runs", "Carol books", "Bobby", "nuts", "The office"):
        assert other not in text, other
    candidates = [c for s in exported["spaces"] for c in s.get("candidates", [])]
    assert [(c["sender_id"], c["content"]) for c in candidates] == [("u1", "vegetarian")]
    nobody = await console(harness, "/person/find", {"sender_id": "Alice"})  # a display name is not an id
    assert nobody["spaces"] == [] and nobody["searched"]["l1"] >= 3


async def test_person_erase_removes_exactly_those_records_cascades_and_audits_each_chat(
        harness: PluginHarness) -> None:
    world = await Installation().build(harness)
    chats = (space(world.g1a), space(world.g2a), space(world.p1, "person"))
    records_before = await every_record(harness, world.kb)
    assert world.alice | world.others | {world.summary} <= set(records_before)
    others_before = {k: v for k, v in records_before.items() if k not in world.alice | {world.summary}}
    profiles_before = await profiles(harness, *chats)

    plan = await console(harness, "/person/erase", {"sender_id": "u1"})  # a dry run unless told otherwise
    assert plan["dry_run"] is True and plan["counts"]["episodes"] == 4
    assert await every_record(harness, world.kb) == records_before

    result = await console(harness, "/person/erase", {"sender_id": "u1", "dry_run": False})
    assert result["counts"] == {"episodes": 4, "summaries": 1, "speaker_profiles": 2, "candidates": 1,
                                "snapshots": 0, **NO_TURNS}
    assert {s["outcome"] for s in result["spaces"]} == {"erased"} and result["fenced"] == []
    assert await every_record(harness, world.kb) == others_before
    after = await profiles(harness, *chats)
    for before_one, after_one in zip(profiles_before, after, strict=True):
        assert after_one["session_profile"] == before_one["session_profile"]
        assert after_one["speaker_profiles"] == {k: v for k, v in before_one["speaker_profiles"].items() if k != "u1"}
    assert (await console(harness, "/person/find", {"sender_id": "u1"}))["spaces"] == []
    for chat in chats:
        entries = (await console(harness, "/audit/export", {"space": chat}))["export"]["entries"]
        assert any(e["operation"] == "person_erase" for e in entries), chat
    g1 = (await console(harness, "/audit/export", {"space": chats[0]}))["export"]["entries"]
    assert ("summary_remove", world.summary) in {(e["operation"], e["target_id"]) for e in g1}
    g2_candidates = await console(harness, "/candidates", {"space": chats[1], "all_statuses": True})
    assert [c["sender_id"] for c in g2_candidates["candidates"]] == ["u3"]


async def test_a_fenced_chat_is_reported_and_left_as_it_is(harness: PluginHarness) -> None:
    world = await Installation().build(harness)
    harness.host.fail_next(A.VECTOR_UPSERT, ActionCallTimeoutError("vector_upsert timed out"))
    assert (await world.g2c.tool("remember", {"content": "a write whose outcome is unknown"}))["ok"] is False
    plan = await console(harness, "/person/erase", {"sender_id": "u1", "dry_run": True})
    assert plan["fenced"] == ["bot-1:group_g2"]
    result = await console(harness, "/person/erase", {"sender_id": "u1", "dry_run": False})
    assert result["fenced"] == ["bot-1:group_g2"]
    left = await console(harness, "/person/find", {"sender_id": "u1"})
    assert [(s["kind"], s["key"]) for s in left["spaces"]] == [("l2", "bot-1:group_g2")]


@pytest.mark.plugin_config({"self_service_erasure_everywhere": False})
async def test_a_speaker_sees_and_erases_their_own_memory_in_one_chat(harness: PluginHarness) -> None:
    world = await Installation().build(harness)
    mine = await world.g2a.run("!memory me")
    assert mine.startswith("What this chat keeps about you (Alice, u1):"), mine
    assert "Episodes you said: 1 (1 active" in mine and "Candidates from your messages: 1" in mine
    assert "Elsewhere in this installation: 3 episodes, 1 summary built from them, 2 speaker profiles" in mine
    assert "Bob" not in mine and "Carol" not in mine

    refused = await world.g2a.run("!memory forget-me --everywhere")
    assert "off in this installation (plugin setting self_service_erasure_everywhere)" in refused
    plan = await world.g2a.run("!memory forget-me")
    assert plan.startswith("This would erase from this chat: 1 episode, 1 candidate. Nothing is erased yet."), plan
    records = await every_record(harness, world.kb)
    erased = await world.g2a.run("!memory forget-me --confirm")
    assert erased.startswith("Erased from this chat: 1 episode, 1 candidate."), erased
    gone = set(records) - set(await every_record(harness, world.kb))
    assert len(gone) == 1 and gone <= world.alice
    left = await console(harness, "/person/find", {"sender_id": "u1"})
    assert {s["key"] for s in left["spaces"]} == {"bot-1:group_g1", "bot-1:person_p1"}
    # Bob, who is no admin, erases only his own records, never Alice's or Carol's.
    bob = open_chat(harness, "g2", sender_id="u2", privilege=1)
    assert (await bob.run("!memory forget-me --confirm")).startswith("Nothing is kept about you in this chat.")
    # Her erasure is audited in the chat, and the log no longer names her, not even as who asked.
    entries = await world.g2a.audit_entries()
    erased = [e for e in entries if e["operation"] == "person_erase"]
    assert erased and {(e["sender_id"], e["sender_name"]) for e in erased} == {("(erased)", "")}
    assert "u1" not in {e["sender_id"] for e in entries} and "Alice" not in json.dumps(entries)


@pytest.mark.plugin_config({"self_service_erasure_everywhere": True})
async def test_everywhere_when_the_installation_allows_it(harness: PluginHarness) -> None:
    world = await Installation().build(harness)
    assert "!memory forget-me --everywhere" in await world.p1.run("!memory me")
    plan = await world.p1.run("!memory forget-me --everywhere")
    assert plan.startswith("This would erase from every chat of this installation: 4 episodes"), plan
    await world.p1.run("!memory forget-me --everywhere --confirm")
    assert (await console(harness, "/person/find", {"sender_id": "u1"}))["spaces"] == []
    assert world.others <= set(await every_record(harness, world.kb))
