"""Storage keys built from host identifiers never collide, and a release-0.1 store is migrated
to the escaped layout without loss, once, resumably (issue 11 item 5)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.entities.io.errors import ActionCallError

from testhost import PluginHarness
from testhost.hooks import installation_audit
from tests.chat import open_chat


async def test_a_group_named_like_another_groups_audit_chunk_has_its_own_audit(harness: PluginHarness,
                                                                                kb: str) -> None:
    """Release 0.1 stored group g1's first audit chunk and group "g1:0"'s audit head under one key."""
    g1, g1_0 = open_chat(harness, "g1"), open_chat(harness, "g1:0")
    await g1.remember("g1 plans the picnic")
    await g1_0.remember("g1:0 plans the concert")
    await g1_0.tool("update_profile", {"scope": "session", "name": "colon group"})
    assert [e["operation"] for e in await g1.audit_entries()] == ["remember"]
    assert [e["operation"] for e in await g1_0.audit_entries()] == ["remember", "update_profile"]
    assert "Audit log · page 1/1 · 1 entries" in await g1.run("!memory audit")


async def test_a_group_named_like_a_speaker_key_stays_out_of_another_groups_profiles(harness: PluginHarness,
                                                                                   kb: str) -> None:
    """Release 0.1 listed group "g1:speaker:x"'s session profile as a speaker of group g1."""
    tricky = open_chat(harness, "g1:speaker:x")
    await tricky.tool("update_profile", {"scope": "session", "notes": "private notes of the tricky group"})
    plain = open_chat(harness, "g1")
    export = await plain.run_json("!memory export")
    assert export["speaker_profiles"] == {} and export["session_profile"]["notes"] == ""
    assert (await tricky.run_json("!memory export"))["session_profile"]["notes"] == \
        "private notes of the tricky group"


def _v1_store(kb: str) -> dict[str, Any]:
    """Records exactly as release 0.1 wrote them (key formats of its ltm/profiles, audit, fences, service)."""
    entry = {"operation": "remember", "target_type": "episode", "target_id": "e-1", "scope_key": "bot-1:group_g1",
             "user_key": "bot-1:group_g1", "sender_id": "u1", "sender_name": "Alice", "query_id": 7,
             "summary": "stored episode (20 chars, importance 2)", "meta": {}, "time": "2026-01-02T03:04:05Z"}
    return {
        "profile:bot-1:group_g1:session": {"name": "Team room", "traits": [], "preferences": ["tea"],
                                           "notes": "", "updated_at": "2026-01-01T00:00:00Z"},
        "profile:bot-1:group_g1:speaker:u1": {"name": "Alice", "traits": ["calm"], "preferences": [],
                                              "notes": "", "updated_at": "2026-01-01T00:00:00Z"},
        "audit:bot-1:group_g1": {"count": 2, "chunk": 50},
        "audit:bot-1:group_g1:0": [entry, {**entry, "target_id": "e-2", "time": "2026-01-02T03:04:06Z"}],
        f"fence:l2:{kb}:bot-1:group_g2": {"space": f"l2:{kb}:bot-1:group_g2", "operation": "remember",
                                          "reason": "timeout", "since": "2026-01-03T00:00:00Z"},
        "snapshot:bot-1:group_g1": {"query_id": 9, "injected": True, "episodes": []},
    }


def _write_raw(harness: PluginHarness, records: dict[str, Any]) -> None:
    for key, value in records.items():
        harness.host.storage[key] = json.dumps(value).encode()


async def _check_migrated(harness: PluginHarness, kb: str) -> None:
    memory = harness.plugin.memory
    g1, g2 = open_chat(harness, "g1"), open_chat(harness, "g2")
    profile = await g1.run("!memory profile")
    assert "Team room" in profile and "Preferences: “tea”" in profile and "Traits: “calm”" in profile
    assert [e["target_id"] for e in await g1.audit_entries()] == ["e-1", "e-2"]
    assert "writes to this memory are paused" in await g2.run("!memory forget 00000000-0000-4000-8000-000000000000")
    assert (await memory.snapshot(await memory.scope_for(g1_identity())))["query_id"] == 9
    assert not [k for k in harness.host.storage if k.split(":")[0] in ("profile", "audit", "fence", "snapshot")]
    migrations = [e for e in (await installation_audit(memory, 1, 50)).entries
                  if e["operation"] == "storage_migration"]
    assert len(migrations) == 1 and migrations[0]["meta"]["moved"] == 6


def g1_identity() -> Any:
    from tests.service_helpers import ident
    return ident("g1", sender="u1")


async def test_a_release_01_store_is_migrated_once_without_loss(harness: PluginHarness, kb: str) -> None:
    await harness.stop()
    _write_raw(harness, _v1_store(kb))
    del harness.host.storage["storage_layout"]
    await harness.start()
    await _check_migrated(harness, kb)
    await harness.restart(fresh_modules=False)  # a second start finds the marker and moves nothing again
    await _check_migrated(harness, kb)


async def test_a_migration_interrupted_by_the_host_resumes_on_the_next_access(harness: PluginHarness,
                                                                              kb: str) -> None:
    await harness.stop()
    _write_raw(harness, _v1_store(kb))
    del harness.host.storage["storage_layout"]
    await harness.start()
    # New keys are written, then the third delete of an old key is refused: the migration stops there.
    harness.host.fail_next(A.DELETE_PLUGIN_STORAGE, ActionCallError("[StorageError] busy"), after_dispatch=False)
    chat = open_chat(harness, "g1")
    reply = await chat.run("!memory profile")
    assert "unavailable" in reply or "busy" in reply
    assert "storage_layout" not in harness.host.storage
    await _check_migrated(harness, kb)  # the next access finishes it, nothing lost or doubled


@pytest.mark.parametrize("hostile", ["g1%3A0", "g1/x", "群:聊", "a" * 300, "g1\u200b"])
async def test_hostile_group_ids_keep_their_own_memory(harness: PluginHarness, kb: str, hostile: str) -> None:
    plain, odd = open_chat(harness, "g1"), open_chat(harness, hostile)
    await plain.tool("update_profile", {"scope": "session", "name": "plain"})
    await odd.tool("update_profile", {"scope": "session", "name": "odd"})
    assert "Name: “plain”" in await plain.run("!memory profile")
    assert "Name: “odd”" in await odd.run("!memory profile") and "plain" not in await odd.run("!memory profile")
