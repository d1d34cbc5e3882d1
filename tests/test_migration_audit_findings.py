"""The audit log after a migration (issue 43, points 9, 11 and 16): migrated entries keep their older times
and still page without gaps or repeats; a person's erasure removes their words from migrated summaries;
and an erasure changes only the fields that name a sender id, nothing that merely equals it."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ltm._audit import ERASED_PERSON, without_person
from tests.migration_support import ANN, audit, bundle, chat, migrate, plugin, scope_of
from tests.service_helpers import ident


async def _all_pages(memory: Any, scope: Any, size: int) -> list[dict[str, Any]]:
    first = await memory.audit_page(scope, 1, size)
    entries = list(first.entries)
    for page in range(2, first.pages + 1):
        entries += (await memory.audit_page(scope, page, size)).entries
    return entries


def _key(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True)


async def test_pages_over_a_log_holding_migrated_entries_show_every_entry_once():
    async with plugin() as harness:
        memory = harness.plugin.memory
        scope = await scope_of(harness)
        for n in range(12):  # this chat's own changes, today, in both of its logs
            await memory.remember(scope, {"content": f"the fact number {n} of today"})
            await memory.update_profile(scope, "session", {"traits": [f"trait {n}"], "mode": "merge"})
        migrated = [audit(n, summary=f"old entry {n}", day=1 + n % 28) for n in range(40)]
        await migrate(harness, bundle([chat(audit=migrated)]), dry_run=False)
        for n in range(5):  # and more of today after the migration
            await memory.remember(scope, {"content": f"the later fact number {n}"})
        whole = await memory.audit_export(scope)
        for size in (7, 10, 25):
            paged = await _all_pages(memory, scope, size)
            assert Counter(map(_key, paged)) == Counter(map(_key, whole)), size


async def test_erasing_a_person_removes_their_words_from_migrated_summaries():
    entries = [audit(1, summary="Ann said her sister lives by the boathouse"),
               audit(2, summary=f"Bulk deleted the episodes of {ANN}", sender="u2"),
               audit(3, summary="Bo moved the standup", sender="u2")]
    async with plugin() as harness:
        memory = harness.plugin.memory
        await migrate(harness, bundle([chat(audit=entries)]), dry_run=False)
        await memory.erase_person(ANN, dry_run=False)
        log = {e["meta"]["official_audit_id"]: e for e in await memory.audit_export(await scope_of(harness))
               if "official_audit_id" in (e.get("meta") or {})}
        assert "boathouse" not in json.dumps(log) and ERASED_PERSON in log["a00000000001"]["summary"]
        assert log["a00000000001"]["summary_params"]["summary"] == ERASED_PERSON
        assert log["a00000000002"]["summary"] == f"migrated from the official plugin: {ERASED_PERSON}"
        assert log["a00000000003"]["summary"] == "migrated from the official plugin: Bo moved the standup"


async def test_an_erasure_changes_only_fields_that_name_the_sender_id():
    async with plugin() as harness:
        memory = harness.plugin.memory
        bo = await memory.scope_for(ident("remember", bot="bot-a", sender="u2", name="alice"))
        await memory.remember(bo, {"content": "Bo keeps the spare keys"})
        before = await memory.audit_export(bo)
        for sender_id in ("remember", "alice", "bot-a:group_remember", "u9"):  # equal to words, matching no one
            await memory.erase_person(sender_id, dry_run=False)
        after = [e for e in await memory.audit_export(bo) if e["operation"] != "person_erase"]
        assert after == before, (before, after)


def test_the_fields_that_name_a_sender_id_are_the_only_ones_rewritten():
    entry = {"operation": "u1", "target_type": "episode", "target_id": "u1", "chat_key": "u1", "sender_id": "u2",
             "sender_name": "u1", "summary": "u1", "meta": {"decided_by": "u1", "from_scope_key": "u1"}}
    scrubbed = without_person(entry, "u1", set())
    assert scrubbed == {**entry, "meta": {"decided_by": ERASED_PERSON, "from_scope_key": "u1"}}
    profile = {"operation": "profile_clear", "target_type": "speaker_profile", "target_id": "u1", "sender_id": "u1",
               "sender_name": "Ann", "meta": {}}
    assert without_person(profile, "u1", set()) == {**profile, "target_id": ERASED_PERSON,
                                                      "sender_id": ERASED_PERSON, "sender_name": ""}
