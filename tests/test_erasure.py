"""An erasure leaves no trace (issue 35), on every store of the test host, through every surface that
erases: `!memory forget-me --everywhere`, the console's `/person/erase`, the `forget` tool, `!memory
delete` and the removal of the memory KB, and an erase killed part-way, then run again after a restart.
`tests/erasure_check.py` reads everything the plugin keeps before and after.

The installation: Erin (the person erased) speaks in groups g1 and g2 and in her private chat; Bob and
Carol in the groups. In g1 the three also talk with the conversation record on: their turns, and a model's
summary of the oldest that names all three (issue 42). A summary in g1 is built from one of Erin's episodes and one of Bob's, and was
injected into Carol's turn there (issue 35, finding 2); g2 holds more than 200 records, so its word
index is saved in plugin storage (finding 3); one of Erin's episodes has a tag (finding 4). Every
place of that list holds Erin's words before the erase (`witnesses`), so the check sees each one.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

from ltm import Identity
from testhost import PluginHarness
from testhost.hooks import index_space
from tests.chat import Chat, Place, open_chat, prompt_turn
from tests.erasure_check import ErasureCheck, Installation, capture
from tests.test_candidates import responded
from tests.test_consolidation import ON, one_statement, preview_id
from tests.test_crash_marker import Killer, relaunch

# One of issue 35's three proofs: it also runs on SeekDB and pgvector in the default run (tests/stores.py).
pytestmark = pytest.mark.stores_slice

ERIN, ERIN_NAME = "erin-7f3a", "Erinys Quartermaine"
G1, G2, PRIVATE = Place("group", "g1"), Place("group", "g2"), Place("person", "p-erin")
FILLERS = 205  # g2 above 200 records: its word index is saved in plugin storage
# Each of Erin's episodes has words of its own, so a check can look for exactly one of them.
ERIN_SAYS = {
    "g1": "Erin keeps the zephyrine marmalade in the blue tin",
    "g1_tagged": "Erin parks the tangerine-viaduct bicycle by the gate",
    "g2": "Erin bakes the nebulon cake for the quiz night",
    "private": "Erin sees the orrery dentist on Tuesdays",
}
TAG = "lighthouse-kite"
ERIN_TURN = "gooseberry-quasar"  # what she says in g1's conversation record
ERIN_PROFILE = "quokkaberry juggler"


def chat_space(place: Place) -> dict[str, str]:
    key = f"bot-1:{place.session_name}"
    return {"scope_key": key, "user_key": key}


CHATS = (chat_space(G1), chat_space(G2), chat_space(PRIVATE))


class World:
    async def build(self, h: PluginHarness) -> World:
        self.h = h
        self.kb = await h.create_memory_kb(**ON, candidate_extraction_enabled=True)
        self.erin: dict[str, Chat] = {p.launcher_id: open_chat(h, p.launcher_id, sender_id=ERIN, sender_name=ERIN_NAME,
                                              launcher_type=p.launcher_type) for p in (G1, G2, PRIVATE)}
        bob1, bob2 = (open_chat(h, g, sender_id="u2", sender_name="Bob") for g in ("g1", "g2"))
        carol2 = open_chat(h, "g2", sender_id="u3", sender_name="Carol")
        self.ids = {"g1": await self.erin["g1"].remember(ERIN_SAYS["g1"]),
                    "g1_tagged": await self.erin["g1"].remember(ERIN_SAYS["g1_tagged"], tags=[TAG]),
                    "g2": await self.erin["g2"].remember(ERIN_SAYS["g2"]),
                    "private": await self.erin["p-erin"].remember(ERIN_SAYS["private"])}
        await bob1.remember("Bob runs the Friday demo")
        await carol2.remember("Carol books the meeting room")
        await self.erin["g1"].run(f"!memory profile set traits {ERIN_PROFILE} --me")
        await bob1.run("!memory profile set name Bobby --me")
        await responded(h, "I'm vegetarian", place=G2, sender=ERIN, name=ERIN_NAME)
        await responded(h, "I'm allergic to nuts", place=G2, sender="u3", name="Carol")
        fillers = [{"content": f"pelican ledger line {i} of the budget"} for i in range(FILLERS)]
        imported = await bob2.run(f"!memory import l2 {json.dumps(fillers)}")
        assert f"{FILLERS}" in imported, imported
        # g1: a summary of Erin's zephyrine episode and Bob's demo, quoting both.
        h.host.llm_script = one_statement("zephyrine marmalade tin and the Friday demo")
        self.summary = (await bob1.run(f"!memory consolidate run {await preview_id(bob1)}")).split("Summary ")[1].split()[0]
        # Carol's turn in g1 recalls the summary (finding 2); Bob's in g2 recalls Erin's cake; Erin's own turn.
        await prompt_turn(h, G1, "u3", "Carol", "what about the zephyrine marmalade tin and the demo?")
        await prompt_turn(h, G2, "u2", "Bob", "who bakes the nebulon cake?")
        await prompt_turn(h, PRIVATE, ERIN, ERIN_NAME, "when is the orrery dentist?")
        await self.converse()
        memory = h.plugin.memory
        scope = await memory.scope_for(Identity.from_host(launcher_type="group", launcher_id="g2", bot_uuid="bot-1"))
        await index_space(memory, scope)
        await memory.parts.episodes.save_word_indexes()  # now, not 30 s after the last write
        await memory.parts.store.writes_landed()  # the turns' snapshots too, not 10 s after each turn
        assert any(k.startswith("v2/wordindex/") and ERIN_SAYS["g2"].encode() in v for k, v in h.host.storage.items())
        return self

    async def converse(self) -> None:
        """g1's conversation record: Erin, Bob and Carol take turns; the chat model folds the oldest into a
        summary that names all three (so her erasure must rebuild it without her); her last turn and
        Carol's stay in the record."""
        for name, value in (("conversation_enabled", True), ("conversation_max_turns", 4)):
            done = await self.h.page_api("console", "/settings/set", "POST", {"name": name, "value": value})
            assert done["data"]["ok"] is True, done
        self.h.host.llm_script = lambda messages, payload: (
            f"{ERIN_NAME} keeps the {ERIN_TURN} jar; Bob trims the jib; Carol coils the ropes.")
        erin = (ERIN, ERIN_NAME, f"the {ERIN_TURN} jar stays with me")
        bob, carol = ("u2", "Bob", "I trim the jib before we leave"), ("u3", "Carol", "I coil the ropes at the harbour")
        for sender, name, text in (erin, bob, carol, erin, bob, carol, erin):  # the last two stay as turns
            await responded(self.h, text, "Okay.", place=G1, sender=sender, name=name)
        record = await self.h.plugin.memory.conversation(
            await self.h.plugin.memory.scope_for(Identity.from_host(launcher_type="group", launcher_id="g1",
                                                                    bot_uuid="bot-1")))
        assert record.summary.source.value == "model" and ERIN_NAME in record.summary.text
        assert {t.sender_id for t in record.turns} == {ERIN, "u3"}

    @property
    def erin_marks(self) -> list[str]:
        return [ERIN, ERIN_NAME, TAG, ERIN_PROFILE, "zephyrine", "tangerine-viaduct", "nebulon", "orrery", ERIN_TURN]

    async def state(self, *, removed_kb: bool = False) -> Installation:
        return await capture(self.h.host, [self.kb], None if removed_kb else self.h, CHATS, ERIN)


async def erased_without_trace(world: World, check: ErasureCheck, before: Installation,
                               witnesses: set[str]) -> Installation:
    """The check itself: nothing holds a mark, and nobody else's data changed."""
    assert witnesses <= check.witnesses(before), check.witnesses(before)  # the check saw each kind
    after = await world.state()
    assert check.traces(after) == []
    assert check.others_changed(before, after) == []
    return after


EVERY_KIND = {"vector row", "audit", "profile", "snapshot", "candidates", "wordindex", "conversation"}


@pytest.mark.plugin_config({"self_service_erasure_everywhere": True})
async def test_forget_me_everywhere_leaves_no_trace(harness: PluginHarness) -> None:
    world = await World().build(harness)
    check = ErasureCheck(world.erin_marks, {*world.ids.values(), world.summary})
    before = await world.state()
    reply = await world.erin["g2"].run("!memory forget-me --everywhere --confirm")
    assert reply.startswith("Erased from every chat of this installation: 4 episodes, 1 summary"), reply
    assert "injection snapshot" in reply  # Carol's snapshot quoting the summary counts (finding 2)
    await erased_without_trace(world, check, before, EVERY_KIND)


async def test_the_consoles_person_erase_leaves_no_trace(harness: PluginHarness) -> None:
    world = await World().build(harness)
    check = ErasureCheck(world.erin_marks, {*world.ids.values(), world.summary})
    before = await world.state()
    result = await harness.page_api("console", "/person/erase", "POST", {"sender_id": ERIN, "dry_run": False})
    data = result["data"]
    assert data["counts"]["episodes"] == 4 and data["counts"]["summaries"] == 1, data
    assert data["counts"]["snapshots"] == 3, data  # g1 (the summary), g2 (her cake) and her own chat
    assert data["failed"] == [] and data["fenced"] == []
    await erased_without_trace(world, check, before, EVERY_KIND)


async def test_the_forget_tool_leaves_no_trace_of_the_memory(harness: PluginHarness) -> None:
    world = await World().build(harness)
    check = ErasureCheck(["zephyrine"], {world.ids["g1"], world.summary})
    before = await world.state()
    result = await world.erin["g1"].tool("forget", {"episode_id": world.ids["g1"]})
    assert result["ok"], result
    await erased_without_trace(world, check, before, {"vector row", "snapshot"})
    tagged = ErasureCheck([TAG, "tangerine-viaduct"], {world.ids["g1_tagged"]})
    before = await world.state()
    assert (await world.erin["g1"].tool("forget", {"episode_id": world.ids["g1_tagged"]}))["ok"]
    await erased_without_trace(world, tagged, before, {"vector row"})  # no audit entry held the tag (finding 4)


async def test_a_bulk_delete_leaves_no_trace_of_the_memories(harness: PluginHarness) -> None:
    world = await World().build(harness)
    check = ErasureCheck(["nebulon"], {world.ids["g2"]})
    before = await world.state()
    admin = open_chat(harness, "g2", sender_id="u2", sender_name="Bob")
    reply = await admin.run(f"!memory delete --speaker {ERIN}")
    assert "1" in reply, reply
    await erased_without_trace(world, check, before, {"vector row", "snapshot", "wordindex"})


async def test_removing_the_memory_kb_leaves_nothing_of_it(harness: PluginHarness) -> None:
    world = await World().build(harness)
    words = ["zephyrine", "tangerine-viaduct", "nebulon", "orrery", "pelican ledger", "Friday demo",
             "meeting room", TAG]
    check = ErasureCheck(words)
    before = await world.state()
    assert {"vector row", "snapshot", "wordindex", "draft"} & check.witnesses(before)
    await harness.kb_delete(world.kb)
    after = await world.state(removed_kb=True)
    assert check.traces(after) == []
    assert [k for k in after.storage if f"/{world.kb}/" in k and not k.startswith("v2/audit/")] == []
    assert [k for k, v in after.storage.items() if k.startswith("v2/profile/")] == [
        k for k in before.storage if k.startswith("v2/profile/")]  # the chats' profiles are no part of the KB


async def test_an_erase_killed_part_way_leaves_no_trace_once_run_again_after_a_restart(
        harness: PluginHarness) -> None:
    world = await World().build(harness)
    check = ErasureCheck(world.erin_marks, {*world.ids.values(), world.summary})
    before = await world.state()
    host = harness.host
    killer = Killer(host, lambda action, _: action == A.VECTOR_DELETE.value)  # lands, then the process dies
    task = asyncio.ensure_future(harness.page_api("console", "/person/erase", "POST",
                                                  {"sender_id": ERIN, "dry_run": False}))
    await asyncio.wait_for(killer.reached.wait(), timeout=60)
    await relaunch(harness, killer, task)
    overview = (await harness.page_api("console", "/overview", "POST", {}))["data"]
    fenced = [f["space"] for f in overview["fences"]]
    assert fenced and all(f["reason"] == "the plugin stopped during person_erase" for f in overview["fences"])
    for chat in CHATS:  # the operator checks and clears the fence, then erases again
        await harness.page_api("console", "/fence/clear", "POST", {"space": chat})
    again = (await harness.page_api("console", "/person/erase", "POST", {"sender_id": ERIN, "dry_run": False}))
    assert again["data"]["failed"] == [] and again["data"]["fenced"] == [], again
    await erased_without_trace(world, check, before, EVERY_KIND)
