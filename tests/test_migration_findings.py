"""The move from the official plugin held against what an operator and an attacker did to it (issue 43):
each test is one finding, through the surfaces an operator uses (the console's `/migrate`, a memory KB
upload, `!memory import`). The audit findings (paging, erasure) are in
`tests/test_migration_audit_findings.py`, the extractor's in `tests/test_export_official_hostile.py`."""

from __future__ import annotations

import json
from typing import Any

from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.entities.io.errors import ActionCallError

from tests.migration_support import (
    ANN,
    BOT,
    CHAT,
    audit,
    bundle,
    candidate,
    chat,
    chat_of,
    migrate,
    plugin,
    record,
    scope_of,
    stored_text,
)

API_KEY = "sk-proj-abcdefghijklmnop1234567890ABCDEF"
TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
PASSWORD = "password: hunter2hunter2"


async def _stored(harness: Any, launcher: str = "1") -> dict[str, dict[str, Any]]:
    """original id -> the stored episode, every status."""
    scope = await scope_of(harness, launcher)
    return {e.original_id: e for e in await harness.plugin.memory.all_episodes(scope)}


# ----------------------------------------------------------------------------------------- 2: no entry lost
async def test_audit_entries_over_this_plugins_limits_are_kept_with_their_whole_values():
    long_target = f"{BOT}:group_" + "9" * 240  # a chat key as the official plugin names it: 250 characters
    huge = "t" * 2500
    summary = "remembered " + "a long official summary " * 100
    entries = [audit(1, target=long_target), audit(2, target=huge), audit(3, "x" * 80), audit(4, summary=summary)]
    async with plugin() as harness:
        dry = chat_of(await migrate(harness, bundle([chat(audit=entries)]), dry_run=True))
        assert dry["audit"]["skipped"] == [] and dry["audit"]["write"] == 4, dry["audit"]
        done = chat_of(await migrate(harness, bundle([chat(audit=entries)]), dry_run=False))
        assert done["audit"]["write"] == 4
        log = {e["meta"]["official_audit_id"]: e for e in await harness.plugin.memory.audit_export(
            await scope_of(harness)) if "official_audit_id" in e.get("meta", {})}
        assert log["a00000000001"]["target_id"] == long_target
        assert log["a00000000002"]["target_id"].endswith("…") and log["a00000000002"]["meta"]["full_values"][
            "target_id"] == huge
        assert log["a00000000003"]["operation"] == "x" * 80
        assert log["a00000000004"]["meta"]["full_values"]["summary"] == " ".join(summary.split())


# ------------------------------------------------------------------------------ 3: what was forgotten stays so
def _forgetting_bundle() -> dict[str, Any]:
    episodes = [record(1, "the code of the side door"), record(2, "the old phone number"),
                record(3, "the venue of the party"), record(4, "the standup is at 10am")]
    entries = [audit(10, "forget", "Deleted episode e00000000001", target="e00000000001", day=2),
               audit(11, "delete_l2_bulk", "Bulk deleted 1 L2 episodes", target=CHAT, day=3,
                     metadata={"episode_ids": ["e00000000002"]}),
               audit(12, "deleted", "Set episode status to deleted", target="e00000000003", day=4),
               audit(13, "restore", "Set episode status to active", target="e00000000003", day=5)]
    return bundle([chat(episodes=episodes, audit=entries)])


async def test_a_record_the_official_plugin_was_told_to_forget_is_listed_and_not_brought_back():
    async with plugin() as harness:
        dry = chat_of(await migrate(harness, _forgetting_bundle(), dry_run=True))
        reasons = {s["at"]: s["reason"] for s in dry["episodes"]["skipped"]}
        assert set(reasons) == {0, 1} and all("asked to remove it" in r for r in reasons.values()), dry
        assert "forget on 2025-06-02" in reasons[0] and "delete_l2_bulk" in reasons[1]
        await migrate(harness, _forgetting_bundle(), dry_run=False)
        assert set(await _stored(harness)) == {"e00000000003", "e00000000004"}  # restored after its delete
        back = chat_of(await migrate(harness, _forgetting_bundle(), dry_run=False, include_forgotten=True))
        assert back["episodes"]["write"] == 2 and (await _stored(harness))["e00000000001"].status.value == "active"


# ------------------------------------------------------------------------------ 5: credentials, every field
async def test_a_credential_in_any_migrated_field_is_never_stored_nor_echoed():
    straddling = "x " * 73 + API_KEY  # the key starts before the 160-character cut of a carried summary
    slot = {"city": {"value": "lives in Berlin", "updated_at": "2026-02-01T10:00:00Z",
                     "history": [{"value": "lives in Paris", "timestamp": "2025-11-01T10:00:00Z",
                                  "status": "superseded", "reason": PASSWORD}]}}
    profile = {"type": "speaker", "scope_key": CHAT, "sender_id": ANN,
               "profile": {"name": "Ann", "traits": ["lives in Berlin"], "freeform_traits": [],
                           "profile_slots": {"traits": slot}, "updated_at": "2026-02-01T10:00:00Z"}}
    entries = [audit(1, TOKEN), audit(2, target_type="AKIAIOSFODNN7EXAMPLE"), audit(3, summary=straddling)]
    settings = {"vector_weight": API_KEY, TOKEN: 1, "retrieval": {"api_key=abcdef123456": 2},
                "isolation": PASSWORD}
    data = bundle([chat(audit=entries, profiles=[profile])], settings=settings)
    async with plugin() as harness:
        for dry_run in (True, False):
            report = json.dumps(await migrate(harness, data, dry_run=dry_run))
            for secret in (API_KEY[:12], TOKEN[:12], "hunter2", "AKIAIOSF", "abcdef123456"):
                assert secret not in report, (secret, report)
            assert len(chat_of(json.loads(report))["audit"]["skipped"]) == 3
        for secret in (API_KEY[:12], TOKEN[:12], "hunter2", "AKIAIOSF", "abcdef123456"):
            assert secret not in stored_text(harness), secret
        # The L1 import of the official export reads the fact history the same way.
        reply = await harness.plugin.memory.import_profiles(await scope_of(harness, "2"), {
            "version": 1, "exported_at": "2026-03-01T00:00:00Z", "profiles": [profile]})
        assert any("reason" in s.reason and "looks like" in s.reason for s in reply.skipped), reply.skipped
        assert "hunter2" not in stored_text(harness)


# ------------------------------------------------------------------------------ 6: the dry run is the import
async def test_the_dry_run_says_the_isolation_change_the_import_refuses_and_the_candidates_it_writes():
    pending = [candidate(n) for n in range(205)]  # more than the queue keeps pending: the rest does not fit
    async with plugin() as harness:
        memory = harness.plugin.memory
        await memory.remember(await scope_of(harness, "77"), {"content": "group 77 already holds a memory"})
        data = bundle([chat(candidates=pending)], settings={"isolation": "bot"})
        dry = await migrate(harness, data, dry_run=True)
        done = await migrate(harness, data, dry_run=False)
        isolation = [next(s for s in r["settings"] if s["name"] == "isolation") for r in (dry, done)]
        assert [s["action"] for s in isolation] == ["refused", "refused"], isolation
        assert chat_of(dry)["candidates"] == chat_of(done)["candidates"], (chat_of(dry), chat_of(done))
        assert chat_of(done)["candidates"]["write"] == 200


# ------------------------------------------------------------------------------ 7: the per-import limit
async def test_a_chat_of_more_than_5000_episodes_is_written_in_writes_of_at_most_5000(monkeypatch):
    from ltm.episodes.transfer import EpisodeTransfer

    sizes: list[int] = []
    real = EpisodeTransfer.import_episodes

    async def counted(self: Any, scope: Any, settings: Any, records: Any, **kw: Any) -> Any:
        sizes.append(len(records))
        return await real(self, scope, settings, records, **kw)

    monkeypatch.setattr(EpisodeTransfer, "import_episodes", counted)
    episodes = [record(n, f"fact number {n} of the long chat") for n in range(5003)]
    episodes[0] = record(0, "the first plan of the long chat", "superseded", superseded_by="e00000005002")
    async with plugin() as harness:
        done = chat_of(await migrate(harness, bundle([chat(episodes=episodes)]), dry_run=False))
        assert done["episodes"]["write"] == 5003 and max(sizes) <= 5000, (done["episodes"]["write"], sizes)
        stored = await _stored(harness)
        assert stored["e00000000000"].superseded_by == stored["e00000005002"].episode_id  # a link across writes


# ------------------------------------------------------------------------------ 8: cut short, run again
async def test_a_migration_cut_short_reports_what_it_wrote_and_the_rerun_leaves_no_dangling_link():
    episodes = [record(n) for n in range(70)]  # more than one vector write (64 records each)
    episodes[0] = record(0, "the first version of the plan", "superseded", superseded_by="e00000000069")
    async with plugin() as harness:
        harness.host.fail_next(A.VECTOR_UPSERT, ActionCallError("refused by the store"), after_dispatch=False, skip=1)
        cut = chat_of(await migrate(harness, bundle([chat(episodes=episodes)]), dry_run=False))
        assert cut["problem"] and cut["episodes"]["write"] == len(await _stored(harness)) == 64, cut
        again = chat_of(await migrate(harness, bundle([chat(episodes=episodes)]), dry_run=False))
        assert not again["problem"] and (again["episodes"]["write"], again["episodes"]["already"]) == (6, 64), again
        stored = await _stored(harness)
        assert stored["e00000000000"].superseded_by == stored["e00000000069"].episode_id


# ------------------------------------------------------------------------------ 10: a key is taken as given
async def test_a_chat_key_with_surrounding_or_line_breaking_white_space_is_never_merged_into_another():
    keys = [f" {CHAT}", f"{CHAT} ", f"{CHAT}\t", f"{CHAT}\n", f"{CHAT}\u2028"]
    async with plugin() as harness:
        report = await migrate(harness, bundle([chat(key, episodes=[record(i)]) for i, key in enumerate(keys)]),
                               dry_run=False)
        assert all(c["problem"] or c["space"] != CHAT for c in report["chats"]), report["chats"]
        assert await _stored(harness) == {}
        upload = [{"content": f"record for {key!r}", "user_key": key} for key in keys]
        result = await harness.ingest(harness.kb, "doc-keys", "memories.json", json.dumps(upload).encode())
        assert result["status"] == "failed" and await _stored(harness) == {}, result


# ------------------------------------------------------------------------------ 13: profiles without a time
async def test_the_same_official_profiles_without_any_time_import_once():
    payload = {"version": 1, "profiles": [{"type": "speaker", "scope_key": CHAT, "sender_id": ANN, "profile": {
        "name": "Ann", "traits": ["plays chess"], "freeform_traits": ["plays chess"],
        "profile_slots": {"traits": {"city": {"value": "lives in Rome", "history": []}}}}}]}
    async with plugin() as harness:
        scope = await scope_of(harness)
        first = await harness.plugin.memory.import_profiles(scope, payload)
        second = await harness.plugin.memory.import_profiles(scope, payload)
        assert len(first.profiles) == 1 and (second.profiles, len(second.unchanged)) == ([], 1), second


# ------------------------------------------------------------------------------ 14: an unknown version
async def test_an_official_l2_export_of_an_unknown_version_is_refused_as_the_l1_export_is():
    from tests.chat import open_chat

    async with plugin() as harness:
        chat_ = open_chat(harness, "1")
        for version in ("99", '"\\ud800"'):
            reply = await chat_.run('!memory import l2 {"version": ' + version + ', "episodes": '
                                    '[{"content": "a memory of another version"}]}')
            assert "only version 1 is known" in reply and "\ud800" not in reply, reply
            l1 = await chat_.run('!memory import l1 {"version": ' + version + ', "profiles": []}')
            assert "only version 1 is known" in l1, l1
        assert await chat_.export_l2() == []


# ------------------------------------------------------------------------------ 15: one way to name a record
async def test_an_import_reply_names_every_record_by_its_json_pointer_and_an_archived_one_as_archived():
    from tests.chat import open_chat

    episodes = [record(1, "the venue is the old hall"), record(2, "gone", "deleted"),
                record(3, "the venue is the old hall"),
                record(4, "the retreat plan of last year", "archived", superseded_by="e00000000001")]
    async with plugin() as harness:
        chat_ = open_chat(harness, "1")
        reply = await chat_.run("!memory import l2 " + json.dumps({"version": 1, "episodes": episodes}))
        assert "/episodes/1: status deleted" in reply and "/episodes/2 (e00000000003) ->" in reply, reply
        assert "[1]" not in reply and "#3" not in reply, reply
        listed = await chat_.run("!memory list --include-archived")
        assert "archived; was superseded by" in listed and "restored;" not in listed, listed


# ------------------------------------------------------------------------------ 4: the report reads as chats
async def test_the_report_names_each_chat_readably_beside_its_key():
    long_key = f"{BOT}:group_" + "7" * 180
    async with plugin() as harness:
        report = await migrate(harness, bundle([chat(long_key, episodes=[record(1)])]), dry_run=True)
        row = chat_of(report, long_key)
        assert row["key"] == long_key and row["label"].startswith("group 777") and len(row["label"]) <= 60, row
