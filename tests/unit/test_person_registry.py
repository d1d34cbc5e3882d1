"""One person across chats on the in-memory ports: find, export and erase everything kept about a
sender id in every space the installation noted, and nothing of anyone else; a fenced space is
reported, not written; the erase cascades to summaries and is audited in each space."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from ltm import MemoryScope, MemoryService, OutcomeUnknown, ValidationError
from ltm._audit import ERASED_PERSON
from ltm.spaces import Space
from testhost.memory_ports import InMemoryPorts, ModelRequest
from tests.unit.support import audit_ops, fenced, ident, memory_with_kb, remember

NO_TURNS = {"conversation_turns": 0, "conversation_summaries": 0}  # no conversation record here


def one_statement(request: ModelRequest) -> str:
    user = request.messages[1].content
    sources = json.loads(user.partition("<sources>\n")[2].partition("\n</sources>")[0])
    return json.dumps({"statements": [{"text": "the team summary", "sources": [s["id"] for s in sources]}]})


class World:
    """Three chats of one bot: groups g1 and g2, and Alice's private chat; Alice, Bob and Carol speak."""

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory
        self.scopes: dict[str, MemoryScope] = {}
        self.alice: set[str] = set()  # ids of every record of Alice's
        self.summary = ""

    async def scope(self, chat: str, sender: str) -> MemoryScope:
        kind = "person" if chat.startswith("p") else "group"
        return await self.memory.scope_for(ident(chat, kind=kind, sender=sender))

    async def build(self, fake: InMemoryPorts) -> World:
        m = self.memory
        a1, b1, a2, c2, ap = (await self.scope("g1", "alice"), await self.scope("g1", "bob"),
                              await self.scope("g2", "alice"), await self.scope("g2", "carol"),
                              await self.scope("p-alice", "alice"))
        old = await remember(m, a1, "Alice's desk is by the window")
        new = (await m.remember(a1, {"content": "Alice's desk is by the door", "supersedes": [old.episode_id]})).episode
        bob = await remember(m, b1, "Bob runs the Friday demo")
        kept = await remember(m, a2, "Alice brings the cake on Fridays")
        await m.archive(a2, kept.episode_id)
        carol = await remember(m, c2, "Carol books the room")
        private = await remember(m, ap, "Alice sees the dentist on Tuesday")
        self.alice = {old.episode_id, new.episode_id, kept.episode_id, private.episode_id}
        self.alice_in = {"g1": {old.episode_id, new.episode_id}, "g2": {kept.episode_id}, "p": {private.episode_id}}
        self.others = {bob.episode_id, carol.episode_id}
        await m.update_profile(a1, "speaker", {"traits": ["left-handed"]})
        await m.update_profile(ap, "speaker", {"name": "Ali"})
        await m.update_profile(b1, "speaker", {"name": "Bobby"})
        await m.update_profile(a1, "session", {"name": "the office"})
        for turn, (scope, text) in enumerate(((a2, "I'm vegetarian"), (c2, "I'm allergic to nuts")), start=1):
            assert scope.identity is not None
            live = dataclasses.replace(scope, identity=dataclasses.replace(scope.identity, query_id=turn))
            assert (await m.propose_candidates(live, text)).added
        # A summary of Alice's and Bob's g1 episodes: it goes with Alice's erasure (K5).
        fake.llm.script = one_statement
        preview = await m.consolidation_preview(b1)
        assert preview.draft is not None
        run = await m.consolidation_run(b1, preview.draft.proposal_id)
        assert run.summary is not None and new.episode_id in run.summary.derived_from
        self.summary = run.summary.episode_id
        await m.save_snapshot(a1, {"speaker": {"id": "alice", "name": "Alice"}, "episodes": []})
        await m.save_snapshot(c2, {"speaker": {"id": "carol", "name": "Carol"}, "episodes": []})
        self.scopes = {"g1": b1, "g2": c2, "p": ap}
        return self


@pytest.fixture
async def world(fake: InMemoryPorts) -> World:
    memory = await memory_with_kb(fake, consolidation_enabled=True, consolidation_model_uuid="llm-1",
                                  candidate_extraction_enabled=True)
    return await World(memory).build(fake)


def everything_but(fake: InMemoryPorts, world: World) -> dict[str, Any]:
    """Every record and profile of the installation that is not Alice's (nor derived from hers)."""
    records = {r.record_id: dict(r.fields) for rows in fake.index.kbs.values() for r in
               (row.record for row in rows.values()) if r.record_id not in world.alice | {world.summary}}
    profiles = {k: v for k, v in fake.store.data.items() if "/profile/" in k and not k.endswith("/alice")}
    return {"records": records, "profiles": profiles}


async def test_find_names_exactly_that_senders_records_in_every_space(world: World) -> None:
    found = await world.memory.find_person("alice")
    episodes = {e.episode_id for s in found.spaces for e in s.episodes}
    assert episodes == world.alice
    assert {(s.kind.value, s.key) for s in found.spaces} == {
        ("l2", "bot-1:group_g1"), ("l2", "bot-1:group_g2"), ("l2", "bot-1:person_p-alice"),
        ("l1", "bot-1:group_g1"), ("l1", "bot-1:group_g2"), ("l1", "bot-1:person_p-alice")}
    counts = found.counts()
    assert counts == {"episodes": 4, "summaries": 1, "speaker_profiles": 2, "candidates": 1,
                      "snapshots": 1, **NO_TURNS}
    exported = found.export()
    assert exported["format"] == "longterm-memory-person-export" and exported["sender_id"] == "alice"
    text = json.dumps(exported)
    assert "Bob runs" not in text and "Carol books" not in text and "Bobby" not in text and "nuts" not in text
    assert {s["key"]: s["statuses"] for s in exported["spaces"] if s["kind"] == "l2"}["bot-1:group_g1"] == {
        "active": 1, "superseded": 1}
    assert (await world.memory.find_person("nobody-here")).spaces == ()
    with pytest.raises(ValidationError, match="sender_id is required"):
        await world.memory.find_person("  ")


async def test_a_dry_run_counts_and_writes_nothing(world: World, fake: InMemoryPorts) -> None:
    before = fake.state()
    plan = await world.memory.erase_person("alice", dry_run=True)
    assert plan.counts() == {"episodes": 4, "summaries": 1, "speaker_profiles": 2, "candidates": 1,
                             "snapshots": 1, **NO_TURNS}
    assert {s.outcome.value for s in plan.spaces} == {"planned"}
    assert fake.state() == before


async def test_erase_removes_exactly_that_person_cascades_and_audits_each_space(
        world: World, fake: InMemoryPorts) -> None:
    others = everything_but(fake, world)
    result = await world.memory.erase_person("alice", dry_run=False)
    assert result.counts() == {"episodes": 4, "summaries": 1, "speaker_profiles": 2, "candidates": 1,
                               "snapshots": 1, **NO_TURNS}
    assert {s.outcome.value for s in result.spaces} == {"erased"}
    assert everything_but(fake, world) == others
    left = {r.record_id for rows in fake.index.kbs.values() for r in (row.record for row in rows.values())}
    assert not left & (world.alice | {world.summary}) and world.others <= left
    assert (await world.memory.find_person("alice")).spaces == ()
    # Each chat's own logs (its L1 and L2 space) record what went there, and the cascade.
    erased = {key: {i for op, i in await audit_ops(world.memory, world.scopes[key]) if op == "person_erase"}
              for key in ("g1", "g2", "p")}
    # + her profile (the log names it "(erased)" now, not her id) and the snapshot
    assert erased["g1"] == world.alice_in["g1"] | {ERASED_PERSON, "bot-1:group_g1"}
    assert erased["p"] == world.alice_in["p"] | {ERASED_PERSON}
    assert erased["g2"] - world.alice_in["g2"] and world.alice_in["g2"] <= erased["g2"]  # + the candidate
    assert ("summary_remove", world.summary) in await audit_ops(world.memory, world.scopes["g1"])
    pending = await world.memory.candidate_page(world.scopes["g2"], all_statuses=True)
    assert [c.speaker.sender_id for c in pending.candidates] == ["carol"]
    assert await world.memory.snapshot(world.scopes["g2"]) is not None  # Carol's turn stays
    assert await world.memory.snapshot(world.scopes["g1"]) is None  # Alice's turn goes


async def test_a_fenced_space_is_reported_and_the_others_are_erased(world: World, fake: InMemoryPorts) -> None:
    g2 = await world.scope("g2", "carol")
    fake.faults.fail("index.upsert", OutcomeUnknown("no answer"))
    with pytest.raises(OutcomeUnknown):
        await remember(world.memory, g2, "this write is lost")
    assert Space.l2(g2.l2).key in await fenced(world.memory)
    plan = await world.memory.erase_person("alice", dry_run=True)
    assert [s.key for s in plan.spaces if s.outcome.value == "fenced"] == [g2.space_key]
    result = await world.memory.erase_person("alice", dry_run=False)
    assert [(s.kind.value, s.key) for s in result.spaces if s.outcome.value == "fenced"] == [("l2", g2.space_key)]
    left = await world.memory.find_person("alice")
    assert [(s.kind.value, s.key) for s in left.spaces] == [("l2", g2.space_key)]
    assert {e.episode_id for s in left.spaces for e in s.episodes} == world.alice & {
        e.episode_id for e in await world.memory.all_episodes(g2)}


async def test_one_chat_only_erases_that_chats_spaces(world: World, fake: InMemoryPorts) -> None:
    g2 = await world.scope("g2", "alice")
    here = await world.memory.find_person("alice", chat=g2)
    assert {(s.kind.value, s.key) for s in here.spaces} == {("l2", g2.space_key), ("l1", g2.chat_key)}
    await world.memory.erase_person("alice", dry_run=False, chat=g2, actor=g2.identity)
    left = await world.memory.find_person("alice")
    assert {s.key for s in left.spaces} == {"bot-1:group_g1", "bot-1:person_p-alice"}
    # Audited in the chat's logs, which no longer name her, not even as who asked; the other chats' logs,
    # where her records stay, still do.
    entries = [e for e in await world.memory.audit_export(g2) if e["operation"] == "person_erase"]
    assert entries and {e["sender_id"] for e in entries} == {ERASED_PERSON}
    assert "alice" in {e["sender_id"] for e in await world.memory.audit_export(await world.scope("g1", "alice"))}
