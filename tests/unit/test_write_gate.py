"""The write gate (F1-F4): per-space serialization, fences on unknown outcomes only, clearing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from ltm import (
    DeleteCriteria,
    EpisodeStatus,
    FencedError,
    HostError,
    Level,
    LTMError,
    MemoryScope,
    MemoryService,
    NoKnowledgeBase,
    OutcomeUnknown,
    PartialWrite,
    Space,
    parse_records,
)
from ltm._audit import AuditLog
from ltm._bookkeeping import Bookkeeping
from ltm._fences import FenceRegistry
from ltm._gate import WriteGate
from ltm._storage import fence_key
from ltm.wording import Said
from testhost.hooks import installation_audit
from testhost.memory_ports import Call, InMemoryPorts
from tests.unit.support import KB, audit_ops, fenced, kv_json, l1, l2, remember, stored

GUARD_S = 30.0  # a hang guard only; never a timing assertion



def NOTE(step: str) -> Said:
    # An undeclared summary: declaring a Phrase here would add a test-only code to the core's
    # vocabulary for the whole run, and tests/test_vocabulary.py checks every declared code has words.
    return Said("test.step", {"step": step})


async def settle() -> None:
    """Let every runnable task take its next steps."""
    for _ in range(50):
        await asyncio.sleep(0)


def upsert_in(space_user_key: str) -> Callable[[Call], bool]:
    return lambda call: call.args["space_key"] == space_user_key


# --------------------------------------------------------------------------- F1 serialization
async def test_writes_to_one_space_queue_while_other_spaces_and_reads_proceed(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope, bob: MemoryScope,
        stranger: MemoryScope) -> None:
    existing = await remember(memory, alice, "the kettle is broken")
    pause = fake.faults.pause("index.upsert", where=upsert_in(alice.space_key))
    first = asyncio.create_task(remember(memory, alice, "first write of the space"))
    await pause.wait_reached()
    second = asyncio.create_task(remember(memory, bob, "second write of the same space"))
    await settle()
    # The second write of the space waits for the lock: it has not even embedded its text.
    assert not second.done()
    assert fake.calls.count("embedder.embed") == 1 + 1  # the existing record's and the first write's
    assert len(fake.calls.of("index.upsert")) == 2
    # Another space writes, and the busy space can be read, while the lock is held.
    other = await asyncio.wait_for(remember(memory, stranger, "another space writes meanwhile"), GUARD_S)
    assert other.space_key == stranger.space_key
    assert [h.episode.episode_id for h in await asyncio.wait_for(memory.recall(alice, "kettle"), GUARD_S)] == [
        existing.episode_id]
    await asyncio.wait_for(memory.update_profile(alice, "session", {"name": "kitchen"}), GUARD_S)  # L1 space
    pause.release()
    done = await asyncio.wait_for(asyncio.gather(first, second), GUARD_S)
    assert {e.episode_id for e in done} <= set(stored(fake, alice))
    assert await fenced(memory) == []


# --------------------------------------------------------------------------- F2 fences
@dataclass(frozen=True)
class WriteCase:
    """One write of the service and the port operation that carries its change."""

    op: str
    where: Callable[[Call], bool] | None
    space: Callable[[MemoryScope], Space]
    run: Callable[[MemoryService, MemoryScope, str], Awaitable[Any]]
    operation: str = ""  # the gate's operation name, when it differs from the case's name


def _key_starts(prefix: str) -> Callable[[Call], bool]:
    return lambda call: str(call.args["key"]).startswith(prefix)


async def _doc_ingest(m: MemoryService, s: MemoryScope, _: str) -> Any:
    return (await m.ingest_document(s, parse_records([{"content": "document line"}]), "doc-1")).episodes


async def _doc_delete(m: MemoryService, s: MemoryScope, _: str) -> Any:
    return await m.delete_document(KB, "doc-0")


WRITES: dict[str, WriteCase] = {
    "remember": WriteCase("index.upsert", None, l2, lambda m, s, i: remember(m, s, "a new fact")),
    "supersede": WriteCase("index.upsert", None, l2,
                           lambda m, s, i: remember(m, s, "a corrected fact", supersedes=[i]), "remember"),
    "archive": WriteCase("index.upsert", None, l2, lambda m, s, i: m.archive(s, i)),
    "forget": WriteCase("index.delete", None, l2, lambda m, s, i: m.forget(s, i)),
    "bulk_delete": WriteCase("index.delete", None, l2, lambda m, s, i: m.bulk_delete(s, DeleteCriteria(tag="seed"))),
    "import": WriteCase("index.upsert", None, l2,
                        lambda m, s, i: m.import_episodes(s, parse_records([{"content": "imported"}]))),
    "document_import": WriteCase("store.set", _key_starts("v2/doc/"), l2, _doc_ingest),
    "document_delete": WriteCase("index.delete", None, l2, _doc_delete),
    "update_profile": WriteCase("store.set", _key_starts("v2/profile/"), l1,
                                lambda m, s, i: m.update_profile(s, "session", {"name": "Group"})),
    "kb_register": WriteCase("store.set", _key_starts("kb_configs"), lambda s: Space.installation(),
                             lambda m, s, i: m.register_kb(KB, {"embedding_model_uuid": "emb-1"})),
}


async def _seed(memory: MemoryService, scope: MemoryScope) -> str:
    seed = await remember(memory, scope, "seeded fact", tags=["seed"])
    await memory.ingest_document(scope, parse_records([{"content": "seeded document line"}]), "doc-0")
    return seed.episode_id


@pytest.mark.parametrize("after_apply", [False, True], ids=["lost-before", "lost-after"])
@pytest.mark.parametrize("name", WRITES, ids=list(WRITES))
async def test_unknown_outcome_of_any_write_fences_exactly_its_space(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope, stranger: MemoryScope, name: str,
        after_apply: bool) -> None:
    case = WRITES[name]
    seed_id = await _seed(memory, alice)
    fake.faults.fail(case.op, OutcomeUnknown("no answer"), where=case.where, after_apply=after_apply)
    with pytest.raises(OutcomeUnknown) as lost:
        await case.run(memory, alice, seed_id)
    assert lost.value.details["space"] == case.space(alice).describe()
    assert await fenced(memory) == [case.space(alice).key]
    assert kv_json(fake, fence_key(case.space(alice).key))["operation"] == (case.operation or name)
    with pytest.raises(FencedError):
        await case.run(memory, alice, seed_id)
    # Every other space still takes writes.
    await remember(memory, stranger, "another chat is not fenced")
    if case.space(alice).kind.value != "l1":
        await memory.update_profile(alice, "session", {"notes": "L1 is another space"})
    if case.space(alice).kind.value != "l2":
        await remember(memory, alice, "L2 is another space")


async def test_fence_survives_a_new_service_on_the_same_store(fake: InMemoryPorts, memory: MemoryService,
                                                              alice: MemoryScope) -> None:
    fake.faults.fail("index.upsert", OutcomeUnknown("no answer"))
    with pytest.raises(OutcomeUnknown):
        await remember(memory, alice, "lost in transit")
    restarted = MemoryService(fake.ports)
    scope = await restarted.scope_for(alice.identity)  # type: ignore[arg-type]
    with pytest.raises(FencedError) as refused:
        await remember(restarted, scope, "after a restart")
    assert refused.value.details["operation"] == "remember"
    assert [f.space.key for f in await restarted.list_fences()] == [l2(alice).key]


async def test_fenced_space_refuses_every_write_while_reads_go_on(fake: InMemoryPorts, memory: MemoryService,
                                                                  alice: MemoryScope) -> None:
    kept = await remember(memory, alice, "the boat leaves at dawn", tags=["boat"])
    fake.faults.fail("index.upsert", OutcomeUnknown("no answer"))
    with pytest.raises(OutcomeUnknown):
        await remember(memory, alice, "a write with a lost answer")
    before = fake.state()
    for write in (lambda: remember(memory, alice, "refused"), lambda: memory.archive(alice, kept.episode_id),
                  lambda: memory.forget(alice, kept.episode_id),
                  lambda: memory.bulk_delete(alice, DeleteCriteria(tag="boat")),
                  lambda: memory.import_episodes(alice, parse_records([{"content": "x"}]))):
        with pytest.raises(FencedError):
            await write()
    assert fake.state() == before
    assert [h.episode.episode_id for h in await memory.recall(alice, "boat dawn")] == [kept.episode_id]
    assert (await memory.get_episode(alice, kept.episode_id)).episode_id == kept.episode_id
    assert (await memory.list_episodes(alice)).total == 1
    assert len((await memory.export_episodes(alice, (EpisodeStatus.ACTIVE,)))["episodes"]) == 1
    assert {i.key: i.level for i in (await memory.health(alice)).items}["fence"] is Level.AMBER


# --------------------------------------------------------------------------- F3 no fence on known outcomes
@pytest.mark.parametrize("name", WRITES, ids=list(WRITES))
async def test_authoritative_refusal_never_fences(fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope,
                                                  name: str) -> None:
    case = WRITES[name]
    seed_id = await _seed(memory, alice)
    before = fake.state()
    fake.faults.fail(case.op, HostError("refused by the host"), where=case.where)
    with pytest.raises(HostError):
        await case.run(memory, alice, seed_id)
    assert await fenced(memory) == []
    # Nothing changed except audit entries of what the operation itself applied and undid.
    after = fake.state()
    assert after.index == before.index
    assert {k: v for k, v in after.kv.items() if not k.startswith("v2/audit/")} == {
        k: v for k, v in before.kv.items() if not k.startswith("v2/audit/")}
    await case.run(memory, alice, seed_id)  # and the next attempt goes through


async def test_failed_read_inside_a_write_never_fences(fake: InMemoryPorts, memory: MemoryService,
                                                       alice: MemoryScope) -> None:
    kept = await remember(memory, alice, "read before write")
    fake.faults.fail("index.get", OutcomeUnknown("read timed out"))
    with pytest.raises(OutcomeUnknown):
        await memory.archive(alice, kept.episode_id)
    assert await fenced(memory) == []
    assert (await memory.archive(alice, kept.episode_id)).status.value == "archived"


async def test_embedding_timeout_writes_nothing_and_never_fences(fake: InMemoryPorts, memory: MemoryService,
                                                                 alice: MemoryScope) -> None:
    before = fake.state()
    fake.faults.fail("embedder.embed", OutcomeUnknown("embedding timed out"))
    with pytest.raises(OutcomeUnknown):
        await remember(memory, alice, "never embedded")
    assert fake.state() == before
    assert await fenced(memory) == []
    assert fake.calls.count("index.upsert") == 0


async def test_cancellation_while_waiting_for_the_lock_never_fences(fake: InMemoryPorts, memory: MemoryService,
                                                                    alice: MemoryScope) -> None:
    pause = fake.faults.pause("index.upsert")
    holder = asyncio.create_task(remember(memory, alice, "holds the lock"))
    await pause.wait_reached()
    waiter = asyncio.create_task(remember(memory, alice, "waits for the lock"))
    await settle()
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    pause.release()
    kept = await asyncio.wait_for(holder, GUARD_S)
    assert await fenced(memory) == []
    assert list(stored(fake, alice)) == [kept.episode_id]
    await remember(memory, alice, "the space still takes writes")


@pytest.mark.parametrize("after_apply", [False, True], ids=["before-apply", "after-apply"])
async def test_cancellation_while_a_write_is_with_the_host_fences(fake: InMemoryPorts, memory: MemoryService,
                                                                  alice: MemoryScope, after_apply: bool) -> None:
    pause = fake.faults.pause("index.upsert", after_apply=after_apply)
    task = asyncio.create_task(remember(memory, alice, "in flight when cancelled"))
    await pause.wait_reached()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await fenced(memory) == [l2(alice).key]
    assert "cancelled" in kv_json(fake, fence_key(l2(alice).key))["reason"]
    with pytest.raises(FencedError):
        await remember(memory, alice, "refused until cleared")
    # The step in flight was never confirmed, so it is not audited: the fence stands for it.
    assert await audit_ops(memory, alice) == []
    assert len(stored(fake, alice)) == (1 if after_apply else 0)


# --------------------------------------------------------------------------- F4 clearing
async def test_clear_fences_audits_and_reopens_the_space(fake: InMemoryPorts, memory: MemoryService,
                                                         alice: MemoryScope) -> None:
    fake.faults.fail("index.upsert", OutcomeUnknown("no answer"))
    with pytest.raises(OutcomeUnknown):
        await remember(memory, alice, "lost")
    assert await memory.clear_fences(alice) == [l2(alice).key]
    assert await fenced(memory) == []
    assert kv_json(fake, fence_key(l2(alice).key)) is None
    assert ("fence_clear", l2(alice).key) in await audit_ops(memory, alice)
    await remember(memory, alice, "writes again")
    assert await memory.clear_fences(alice) == []  # nothing left to clear, nothing audited twice
    assert [op for op, _ in await audit_ops(memory, alice)].count("fence_clear") == 1


async def test_installation_fence_is_cleared_only_when_named(fake: InMemoryPorts, memory: MemoryService,
                                                             alice: MemoryScope) -> None:
    fake.faults.fail("store.set", OutcomeUnknown("no answer"), where=_key_starts("kb_configs"))
    with pytest.raises(OutcomeUnknown):
        await memory.register_kb(KB, {"embedding_model_uuid": "emb-1"})
    assert await memory.clear_fences(alice) == []
    assert await fenced(memory) == ["installation"]
    assert await memory.clear_fences(None, installation=True) == ["installation"]
    assert ("fence_clear", "installation") in [(e["operation"], e["target_id"])
                                               for e in reversed((await installation_audit(memory, 1, 100)).entries)]
    await memory.register_kb(KB, {"embedding_model_uuid": "emb-1"})


async def test_fence_that_could_not_be_persisted_refuses_now_and_is_persisted_later(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope) -> None:
    fake.faults.fail("index.upsert", OutcomeUnknown("no answer"))
    fake.faults.fail("store.set", HostError("storage down"), where=_key_starts("v2/fence/"))
    with pytest.raises(OutcomeUnknown):
        await remember(memory, alice, "lost, and its fence too")
    assert kv_json(fake, fence_key(l2(alice).key)) is None
    with pytest.raises(FencedError):
        await remember(memory, alice, "refused by the in-process fence")
    assert kv_json(fake, fence_key(l2(alice).key))["operation"] == "remember"


# --------------------------------------------------------------------------- the gate itself
def _gate(fake: InMemoryPorts) -> tuple[WriteGate, AuditLog, FenceRegistry]:
    store = Bookkeeping(fake.ports.store)
    fences = FenceRegistry(store)
    audit = AuditLog(store)
    return WriteGate(store, fake.ports.index, fences, audit), audit, fences


async def test_gate_turns_a_refusal_after_an_applied_step_into_a_partial_write(fake: InMemoryPorts) -> None:
    gate, audit, fences = _gate(fake)
    space = Space.l1("chat")
    with pytest.raises(PartialWrite) as partial:
        async with gate.write(None, space, "two_steps") as tx:
            await tx.call("step one", lambda: fake.ports.store.set("one", b"1"))
            tx.applied("two_steps", "thing", "one", NOTE(step="first step"))
            fake.faults.fail("store.set", HostError("refused"))
            await tx.call("step two", lambda: fake.ports.store.set("two", b"2"))
            tx.applied("two_steps", "thing", "two", NOTE(step="second step"))
    assert partial.value.details["applied"] == ["thing:one"]
    assert [e["target_id"] for e in await audit.export(space.key)] == ["one"]
    assert await fences.all() == []


async def test_gate_does_not_report_a_reverted_step_as_applied(fake: InMemoryPorts) -> None:
    gate, audit, _ = _gate(fake)
    with pytest.raises(HostError):
        async with gate.write(None, Space.l1("chat"), "undo") as tx:
            tx.applied("undo", "thing", "one", NOTE(step="did"))
            tx.reverted("undo_rollback", "thing", "one", NOTE(step="undid"))
            raise HostError("the second step was refused")
    assert [e["operation"] for e in await audit.export("l1:chat")] == ["undo", "undo_rollback"]


async def test_gate_serializes_one_space_and_not_two(fake: InMemoryPorts) -> None:
    gate, _, _ = _gate(fake)
    order: list[str] = []
    release = asyncio.Event()

    async def hold(space: Space, name: str) -> None:
        async with gate.write(None, space, name):
            order.append(f"{name} in")
            if name == "a1":
                await release.wait()
            order.append(f"{name} out")

    tasks = [asyncio.create_task(hold(Space.l1("a"), "a1")), asyncio.create_task(hold(Space.l1("a"), "a2")),
             asyncio.create_task(hold(Space.l1("b"), "b1"))]
    await settle()
    assert order == ["a1 in", "b1 in", "b1 out"]
    release.set()
    await asyncio.wait_for(asyncio.gather(*tasks), GUARD_S)
    assert order == ["a1 in", "b1 in", "b1 out", "a1 out", "a2 in", "a2 out"]


async def test_gate_errors_are_ltm_errors(fake: InMemoryPorts) -> None:
    gate, _, _ = _gate(fake)
    fake.faults.fail("store.set", OutcomeUnknown("lost"))
    with pytest.raises(LTMError) as lost:
        async with gate.write(None, Space.l1("chat"), "w") as tx:
            await tx.call("write", lambda: fake.ports.store.set("k", b"v"))
    assert isinstance(lost.value, OutcomeUnknown) and lost.value.details["applied"] == []


async def test_a_chats_write_takes_its_space_from_the_scope(fake: InMemoryPorts, alice: MemoryScope,
                                                            bob: MemoryScope) -> None:
    """write_l1/write_l2 lock the scope's own spaces and audit the write there; a chat's space named beside
    a scope (where the two could disagree) is refused before anything is locked or written."""
    gate, audit, _ = _gate(fake)
    async with gate.write_l2(alice, "w") as tx:
        assert tx.space == Space.l2(alice.l2) and tx.space.key == f"l2:{KB}:{alice.space_key}"
        tx.applied("w", "thing", "one", NOTE(step="l2"))
    async with gate.write_l1(alice, "w") as tx:
        assert tx.space == Space.l1(alice.chat_key)
        tx.applied("w", "thing", "two", NOTE(step="l1"))
    assert [e["target_id"] for e in await audit.export(Space.l2(alice.l2).key)] == ["one"]
    assert [e["target_id"] for e in await audit.export(f"l1:{alice.chat_key}")] == ["two"]
    for space in (Space.l2(bob.l2), Space.l1(bob.chat_key), Space.l2(alice.l2)):
        with pytest.raises(ValueError):
            gate.write(alice, space, "w")
    before = fake.state()
    with pytest.raises(NoKnowledgeBase):
        async with gate.write_l2(alice.with_kb(""), "w"):
            pass
    assert fake.state() == before
