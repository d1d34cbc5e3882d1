"""Overrides of the memory KB's creation settings: validated like creation, stored through the gate in
the installation space, audited there, read from the next call on; the settings that say where and
what the records are change only on an empty KB."""

from __future__ import annotations

import pytest

from ltm import (
    FencedError,
    KBSettings,
    MemoryScope,
    MemoryService,
    OutcomeUnknown,
    SettingOrigin,
    StateError,
    ValidationError,
)
from ltm.spaces import Space
from testhost.hooks import installation_audit
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import KB, fenced, ident, kv_json, remember


async def installation_ops(memory: MemoryService) -> list[tuple[str, str]]:
    page = await installation_audit(memory, 1, 100)
    return [(e["operation"], e["target_id"]) for e in reversed(page.entries)]


async def test_an_override_is_stored_beside_the_creation_settings_and_read_at_once(
        fake: InMemoryPorts, memory: MemoryService) -> None:
    view = await memory.settings()
    assert view.value("auto_recall_top_k").value == 5
    assert view.value("auto_recall_top_k").origin is SettingOrigin.CREATION
    change = await memory.set_setting("auto_recall_top_k", "2")
    assert (change.before, change.after.value, change.after.origin) == (5, 2, SettingOrigin.OVERRIDE)
    found = await memory.memory_kb()
    assert found is not None and found[1].auto_recall_top_k == 2
    # The creation settings stay as they were; the override sits beside them.
    entry = kv_json(fake, "kb_configs")["kbs"][KB]
    assert entry["auto_recall_top_k"] == 5 and entry["overrides"] == {"auto_recall_top_k": 2}
    # A restarted plugin reads the same effective settings.
    restarted = MemoryService(fake.ports)
    assert (await restarted.settings()).value("auto_recall_top_k").value == 2
    assert ("settings_override", "auto_recall_top_k") in await installation_ops(memory)
    [entry_audit] = [e for e in (await installation_audit(memory, 1, 100)).entries
                     if e["operation"] == "settings_override"]
    assert entry_audit["meta"]["before"] == 5 and entry_audit["meta"]["after"] == 2


async def test_a_bad_value_gets_the_creation_message_and_writes_nothing(
        fake: InMemoryPorts, memory: MemoryService) -> None:
    with pytest.raises(ValidationError) as at_creation:
        KBSettings.parse({"embedding_model_uuid": "emb-1", "auto_recall_top_k": "lots"})
    before = fake.state()
    with pytest.raises(ValidationError) as as_override:
        await memory.set_setting("auto_recall_top_k", "lots")
    assert as_override.value.message == at_creation.value.message
    with pytest.raises(ValidationError, match="retrieval_strategy must be one of"):
        await memory.set_setting("retrieval_strategy", "fuzzy")
    with pytest.raises(ValidationError, match="setting must be one of"):
        await memory.set_setting("no_such_setting", "1")
    with pytest.raises(ValidationError, match="needs a value"):
        await memory.set_setting("consolidation_enabled", "")
    assert fake.state() == before


async def test_reset_returns_to_the_creation_value_and_setting_it_again_drops_the_override(
        fake: InMemoryPorts, memory: MemoryService) -> None:
    await memory.set_setting("consolidation_enabled", "on")
    assert (await memory.settings()).value("consolidation_enabled").value is True
    change = await memory.reset_setting("consolidation_enabled")
    assert change.after.value is False and change.after.origin is SettingOrigin.CREATION
    assert "overrides" not in kv_json(fake, "kb_configs")["kbs"][KB]
    await memory.set_setting("recency_half_life_days", 10)
    back = await memory.set_setting("recency_half_life_days", "30")  # the creation value
    assert back.after.origin is SettingOrigin.CREATION and "overrides" not in kv_json(fake, "kb_configs")["kbs"][KB]
    ops = [op for op, _ in await installation_ops(memory)]
    assert ops.count("settings_override") == 3 and ops.count("settings_reset") == 1
    # Setting the value that already applies writes nothing.
    before = fake.state()
    unchanged = await memory.set_setting("recency_half_life_days", 30)
    assert not unchanged.changed and fake.state() == before


async def test_isolation_changes_on_an_empty_kb_and_is_refused_once_it_holds_memories(
        fake: InMemoryPorts, memory: MemoryService) -> None:
    await memory.set_setting("isolation", "bot")
    assert (await memory.scope_for(ident("g1"))).space_key == "bot:bot-1"
    await memory.reset_setting("isolation")
    alice = await memory.scope_for(ident("g1"))
    await remember(memory, alice, "the plan is on Friday")
    before = fake.state()
    with pytest.raises(StateError, match="already holds memories") as refused:
        await memory.set_setting("isolation", "bot")
    assert "nothing was changed" in refused.value.message.lower() and alice.space_key in refused.value.message
    assert fake.state() == before
    assert (await memory.scope_for(ident("g1"))).space_key == alice.space_key


async def test_a_turn_scoped_before_an_isolation_change_writes_nothing(memory: MemoryService) -> None:
    stale = await memory.scope_for(ident("g1"))
    await memory.set_setting("isolation", "bot")
    with pytest.raises(StateError, match="isolation changed"):
        await remember(memory, stale, "lands in a space no chat uses")
    fresh = await memory.scope_for(ident("g1"))
    assert (await remember(memory, fresh, "lands in the bot's space")).space_key == "bot:bot-1"


async def test_the_embedding_model_changes_only_on_an_empty_kb(fake: InMemoryPorts) -> None:
    ports = InMemoryPorts(embedding_models=("emb-1", "emb-2"))
    memory = MemoryService(ports.ports)
    await memory.register_kb(KB, {"embedding_model_uuid": "emb-1"})
    await memory.set_setting("embedding_model_uuid", "emb-2")
    assert (await memory.settings()).value("embedding_model_uuid").value == "emb-2"
    scope = await memory.scope_for(ident("g1"))
    await remember(memory, scope, "embedded by emb-2")
    with pytest.raises(StateError, match="vectors were made by emb-2"):
        await memory.reset_setting("embedding_model_uuid")


async def test_an_override_is_refused_while_the_installation_is_fenced(
        fake: InMemoryPorts, memory: MemoryService) -> None:
    fake.faults.fail("store.set", OutcomeUnknown("no answer"))
    with pytest.raises(OutcomeUnknown):
        await memory.set_setting("auto_recall_top_k", 3)
    assert Space.installation().key in await fenced(memory)
    with pytest.raises(FencedError):
        await memory.set_setting("auto_recall_top_k", 4)
    # What is stored is read again (the lost write may or may not have landed).
    assert (await memory.settings()).value("auto_recall_top_k").value in (3, 5)


async def test_the_chat_that_asked_is_named_in_the_audit(memory: MemoryService, alice: MemoryScope) -> None:
    await memory.set_setting("candidate_max_per_turn", 5, actor=alice)
    [entry] = [e for e in (await installation_audit(memory, 1, 100)).entries if e["operation"] == "settings_override"]
    assert entry["sender_id"] == "alice" and entry["scope_key"] == alice.chat_key
