"""The installation's memory knowledge base (S8, F4): one per installation; removing it clears
its vectors, document indexes and L2 fences, and nothing else."""

from __future__ import annotations

import pytest

from ltm import (
    HostError,
    Isolation,
    MemoryScope,
    MemoryService,
    NoKnowledgeBase,
    OutcomeUnknown,
    ValidationError,
    parse_records,
)
from ltm._storage import document_key
from testhost.hooks import installation_audit
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import KB, MODEL, fenced, ident, kv_json, l1, l2, remember


async def test_one_memory_kb_per_installation(fake: InMemoryPorts, memory: MemoryService) -> None:
    before = fake.state()
    with pytest.raises(ValidationError, match="already has a memory knowledge base"):
        await memory.register_kb("kb-2", {"embedding_model_uuid": MODEL})
    assert fake.state() == before
    assert (await memory.memory_kb()) is not None and (await memory.memory_kb())[0] == KB  # type: ignore[index]
    # Registering the same KB again is accepted (the host may repeat its create call).
    await memory.register_kb(KB, {"embedding_model_uuid": MODEL, "isolation": "bot"})
    assert kv_json(fake, "kb_configs")["order"] == [KB]
    assert (await memory.scope_for(ident())).isolation is Isolation.BOT


async def test_registration_survives_a_restart_and_is_audited(fake: InMemoryPorts, memory: MemoryService) -> None:
    restarted = MemoryService(fake.ports)
    found = await restarted.memory_kb()
    assert found is not None and found[0] == KB and found[1].embedding_model_uuid == MODEL
    assert [(e["operation"], e["target_id"]) for e in reversed((await installation_audit(restarted, 1, 100)).entries)] == [("kb_register", KB)]


async def test_episodes_need_a_memory_kb_while_profiles_do_not(fake: InMemoryPorts) -> None:
    memory = MemoryService(fake.ports)
    scope = await memory.scope_for(ident())
    assert scope.kb_id == ""
    with pytest.raises(NoKnowledgeBase):
        await remember(memory, scope, "no KB yet")
    with pytest.raises(NoKnowledgeBase):
        await memory.recall(scope, "anything")
    assert (await memory.update_profile(scope, "session", {"name": "works"})).name == "works"


async def test_unregister_clears_that_kbs_vectors_documents_and_l2_fences_only(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope, stranger: MemoryScope) -> None:
    await remember(memory, alice, "to be removed with the KB")
    await memory.ingest_document(alice, parse_records([{"content": "from a document"}]), "doc-1")
    for scope in (alice, stranger):  # two L2 fences of this KB
        fake.faults.fail("index.upsert", OutcomeUnknown("no answer"))
        with pytest.raises(OutcomeUnknown):
            await remember(memory, scope, "lost")
    fake.faults.fail("store.set", OutcomeUnknown("no answer"), where=lambda c: str(c.args["key"]).startswith("v2/profile/"))
    with pytest.raises(OutcomeUnknown):
        await memory.update_profile(alice, "session", {"name": "lost"})
    fake.store.data[document_key("kb-other", "doc-9")] = b'{"user_key": "u", "scope_key": "s", "ids": []}'
    assert sorted(await fenced(memory)) == sorted([l2(alice).key, l2(stranger).key, l1(alice).key])

    assert await memory.unregister_kb(KB) is True
    assert await fenced(memory) == [l1(alice).key]  # the L1 fence is not the KB's
    assert fake.index.records(KB) == []
    assert kv_json(fake, document_key(KB, "doc-1")) is None and kv_json(fake, document_key("kb-other", "doc-9")) is not None
    assert await memory.memory_kb() is None
    audit = [(e["operation"], e["target_id"]) for e in reversed((await installation_audit(memory, 1, 100)).entries)]
    assert ("kb_unregister", KB) in audit
    assert {t for op, t in audit if op == "fence_clear"} == {l2(alice).key, l2(stranger).key}
    # A restarted plugin agrees, and a new memory KB can now be registered.
    restarted = MemoryService(fake.ports)
    assert [f.space.key for f in await restarted.list_fences()] == [l1(alice).key]
    await restarted.register_kb("kb-2", {"embedding_model_uuid": MODEL})


async def test_unregister_goes_on_when_the_installation_is_fenced_or_the_vectors_cannot_be_dropped(
        fake: InMemoryPorts, memory: MemoryService) -> None:
    fake.faults.fail("store.set", OutcomeUnknown("no answer"), where=lambda c: c.args["key"] == "kb_configs")
    with pytest.raises(OutcomeUnknown):
        await memory.register_kb(KB, {"embedding_model_uuid": MODEL})
    fake.faults.fail("index.drop_kb", HostError("refused"))
    assert await memory.unregister_kb(KB) is True
    assert kv_json(fake, "kb_configs")["order"] == []
    assert await fenced(memory) == ["installation"]  # only an explicit clear lifts the installation fence


async def test_unregister_of_an_unknown_kb_changes_no_configuration(fake: InMemoryPorts,
                                                                    memory: MemoryService) -> None:
    configs = kv_json(fake, "kb_configs")
    assert await memory.unregister_kb("kb-unknown") is False
    assert kv_json(fake, "kb_configs") == configs
    assert fake.calls.count("index.drop_kb") == 1  # the host removes it anyway: wipe what is there
