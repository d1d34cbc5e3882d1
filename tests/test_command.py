"""`!memory` (C, A, H in docs/REQUIREMENTS.md) through the SDK's real command dispatch.

Every test runs on Chroma and Qdrant (`harness` fixture); the health test also
runs on the fixed-schema store. Replies are checked as an operator reads them:
one message, IDs visible, "page x/y", usage on bad input.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.entities.io.errors import ActionCallError, ActionCallTimeoutError

from components.commands.text import MAX_REPLY_CHARS
from components.common.i18n import vocabulary
from ltm.langbot import layout
from testhost import FakeLangBotHost, PluginHarness
from testhost.vectors.seekdb import SeekDBBackend
from tests.chat import BOT, STALE_SENDER, Chat, listed_ids, open_chat

PROVENANCE = ("content", "status", "timestamp", "importance", "tags", "sender_id", "sender_name", "source",
              "event_at", "valid_from", "valid_until", "source_ref", "claim_type")


async def two_chats(harness: PluginHarness) -> tuple[Chat, Chat, str]:
    kb = await harness.create_memory_kb()
    return open_chat(harness, "g1"), open_chat(harness, "g2", sender_id="u9", sender_name="Zed"), kb


# --------------------------------------------------------------------------- dispatch, overview, help

async def test_overview_shows_scope_isolation_kb_counts_and_fence(harness: PluginHarness) -> None:
    chat, _, kb = await two_chats(harness)
    first = await chat.remember("Team offsite is in Lisbon")
    await chat.remember("Budget review on Friday")
    await chat.run(f"!memory archive {first}")

    text = await chat.run("!memory")
    assert f"Session key (L1): {BOT}:group_g1" in text
    assert f"Memory space (L2 user_key): {BOT}:group_g1 (session isolation)" in text
    assert f"Knowledge base: {kb}" in text
    assert "Episodes: 1 active · 0 superseded · 1 archived" in text
    assert "Writes: open (no fence)" in text
    # The current speaker comes from the query, not from the cached session.
    assert "Speaker: Alice (u1)" in text and STALE_SENDER not in text
    assert await chat.run("!memory overview") == text


async def test_overview_and_episode_commands_without_a_memory_kb(harness: PluginHarness) -> None:
    chat = open_chat(harness)
    assert "none configured" in await chat.run("!memory")
    assert "no memory knowledge base configured" in await chat.run("!memory list")
    health = await chat.run("!memory health")
    assert health.startswith("Memory health: RED") and "no memory knowledge base configured" in health


async def test_help_unknown_subcommand_and_features_not_in_this_version(harness: PluginHarness) -> None:
    chat, _, _ = await two_chats(harness)
    help_text = await chat.run("!memory help")
    for word in ("search", "list", "show", "forget", "archive", "restore", "health", "export", "import",
                 "delete", "audit"):
        assert word in help_text
    details = await chat.run("!memory help transfer") + await chat.run("!memory help change")
    for word in ("export l2", "import l2", "audit export", "delete [--speaker"):
        assert word in details
    unknown = await chat.run("!memory frobnicate 1 2")
    assert unknown == "Unknown subcommand “frobnicate”. “!memory help” lists them."
    # A registered-looking token still lands in the one "*" handler (the SDK would shift it away otherwise).
    assert (await chat.run("!memory *")).startswith("Unknown subcommand")


async def test_overview_in_bot_isolation_shares_l2_but_not_l1(harness: PluginHarness) -> None:
    await harness.create_memory_kb(isolation="bot")
    first, second = open_chat(harness, "g1"), open_chat(harness, "g2", sender_id="u9", sender_name="Zed")
    shared = await first.remember("Shared across the bot's chats")
    text = await second.run("!memory")
    assert f"Session key (L1): {BOT}:group_g2" in text
    assert f"Memory space (L2 user_key): bot:{BOT} (bot isolation)" in text
    assert "Episodes: 1 active" in text and shared in await second.run("!memory list")
    # A change to the shared L2 space is audited where every sharing chat sees it; L1 stays per chat.
    assert "Audit entries: 1" in text
    await first.tool("update_profile", {"scope": "session", "name": "first group only"})
    assert "Audit entries: 1" in await second.run("!memory")
    assert [e["operation"] for e in await second.audit_entries()] == ["remember"]
    assert [e["operation"] for e in await first.audit_entries()] == ["remember", "update_profile"]


async def test_host_failures_and_fences_give_one_clear_reply(harness: PluginHarness,
                                                             supported_backend_name: str) -> None:
    chat, other, _ = await two_chats(harness)
    note = await chat.remember("Survives host trouble")
    host = harness.host
    # The page's records are read by key: a list on Chroma and SeekDB, one search on the stores that count
    # every filtered list (Qdrant, Milvus, pgvector; see `Traits.keyed_by_search`).
    read, said = (A.VECTOR_LIST, "vector list") if supported_backend_name in ("chroma", "seekdb") else (
        A.VECTOR_SEARCH, "vector search")
    host.fail_next(read, ActionCallError("backend down"), after_dispatch=False)
    assert (await chat.run("!memory list")) == f"!memory list: host error on {said}: backend down"
    host.fail_next(read, RuntimeError("boom"), after_dispatch=False)
    assert "internal error" in await chat.run("!memory list")

    # A write whose outcome is unknown fences this space (F2): writes refused, reads and other chats fine.
    host.fail_next(A.VECTOR_UPSERT, ActionCallTimeoutError, after_dispatch=True)
    assert "writes to this memory are paused" in await chat.run(f"!memory archive {note}")
    assert "Writes: L2 paused since" in await chat.run("!memory")
    assert "paused" in await chat.run(f"!memory forget {note}")
    assert note in await chat.run("!memory list --include-archived")
    assert "AMBER fence" in await chat.run("!memory health")
    assert "Writes: open (no fence)" in await other.run("!memory")


async def test_command_without_live_query_uses_the_session_identity(harness: PluginHarness) -> None:
    chat, _, _ = await two_chats(harness)
    harness.host.close_query(chat.query_id)
    text = await chat.run("!memory")
    assert f"Speaker: {STALE_SENDER}" in text
    health = await chat.run("!memory health")
    assert "processor:" not in health  # no live query: the processor check is skipped, not failed


# --------------------------------------------------------------------------- profile

async def test_profile_shows_session_and_current_speaker_profile(harness: PluginHarness) -> None:
    chat, other, _ = await two_chats(harness)
    assert (await chat.tool("update_profile", {"scope": "session", "name": "Hiking club",
                                               "traits": ["meets on Sundays"]}))["ok"]
    assert (await chat.tool("update_profile", {"scope": "speaker", "preferences": ["tea"]}))["ok"]
    await other.tool("update_profile", {"scope": "session", "name": "Other group"})

    text = await chat.run("!memory profile")
    assert f"Session profile ({BOT}:group_g1):" in text
    assert "Name: “Hiking club”" in text and "Traits: “meets on Sundays”" in text
    assert "Speaker profile of Alice (u1):" in text and "Preferences: “tea”" in text
    assert "Other group" not in text
    bob = open_chat(harness, "g1", sender_id="u2", sender_name="Bob")
    assert "Speaker profile of Bob (u2): (empty)" in await bob.run("!memory profile")
    assert "Error: unexpected argument" in await chat.run("!memory profile extra")


# --------------------------------------------------------------------------- search

async def test_search_ranks_shows_ids_and_respects_status_flags(harness: PluginHarness) -> None:
    chat, other, _ = await two_chats(harness)
    lisbon = await chat.remember("The team offsite is in Lisbon in June", tags=["travel"])
    await chat.remember("Alice prefers green tea in the morning")
    foreign = await other.remember("The team offsite is in Lisbon in June")

    text = await chat.run("!memory search Lisbon offsite")
    assert text.splitlines()[1].startswith(f"[1] {lisbon}")
    assert foreign not in text

    await chat.run(f"!memory archive {lisbon}")
    assert lisbon not in await chat.run("!memory search Lisbon offsite")
    included = await chat.run("!memory search Lisbon offsite --include-archived")
    assert lisbon in included and "[archived]" in included
    only = await chat.run("!memory search Lisbon --status archived")
    assert lisbon in only and "(archived)" in only
    assert "no matching episodes" in await chat.run("!memory search Lisbon --status superseded")

    bad = await chat.run("!memory search Lisbon --status nope")
    assert "unknown status 'nope'" in bad and "Usage: !memory search" in bad
    assert "a search query is required" in await chat.run("!memory search --include-archived")
    assert "unknown option --fuzzy" in await chat.run("!memory search x --fuzzy")


# --------------------------------------------------------------------------- list, superseded, archived

async def test_list_pages_and_bad_pages(harness: PluginHarness) -> None:
    chat, other, _ = await two_chats(harness)
    ids = [await chat.remember(f"Weekly note number {i}") for i in range(12)]
    await other.remember("A note in another chat")

    first = await chat.run("!memory list")
    assert first.startswith("Episodes (active) · page 1/2 · 12 total")
    assert ids[-1] in first and "Next: !memory list 2" in first  # newest first
    second = await chat.run("!memory list 2")
    assert second.startswith("Episodes (active) · page 2/2 · 12 total") and ids[0] in second
    assert "[11] " in second and "Next:" not in second

    zero = await chat.run("!memory list 0")
    assert "page must be a whole number from 1 to 1000000" in zero and "Usage: !memory list" in zero
    assert "page 3 is past the end (last page is 2)" in await chat.run("!memory list 3")
    assert "page must be a whole number" in await chat.run("!memory list two")
    assert "unexpected argument" in await chat.run("!memory list 1 2")


async def test_list_status_flags(harness: PluginHarness) -> None:
    chat, _, _ = await two_chats(harness)
    old = await chat.remember("Meeting room is B2")
    new = await chat.remember("Meeting room moved to C4", supersedes=[old])
    hidden = await chat.remember("Parking is free on weekends")
    await chat.run(f"!memory archive {hidden}")

    assert listed_ids(await chat.run("!memory list")) == [new]
    everything = await chat.run("!memory list --include-superseded --include-archived")
    assert listed_ids(everything) == [hidden, new, old] and "3 total" in everything  # newest first
    assert f"superseded by {new}" in everything
    by_status = await chat.run("!memory list --status superseded,archived")
    assert listed_ids(by_status) == [hidden, old]
    assert "No deleted episodes" in await chat.run("!memory list --status deleted")
    assert "unknown status" in await chat.run("!memory list --status gone")
    assert "--status needs a value" in await chat.run("!memory list --status")


async def test_superseded_and_archived_views(harness: PluginHarness) -> None:
    chat, _, _ = await two_chats(harness)
    assert "No superseded episodes" in await chat.run("!memory superseded")
    assert "No archived episodes" in await chat.run("!memory archived")
    old = await chat.remember("Standup at 9:00")
    new = await chat.remember("Standup moved to 9:30", supersedes=[old])
    hidden = await chat.remember("Old wiki lives on the file server")
    await chat.run(f"!memory archive {hidden}")

    superseded = await chat.run("!memory superseded")
    assert superseded.startswith("Episodes (superseded) · page 1/1 · 1 total")
    assert old in superseded and f"superseded by {new}" in superseded and hidden not in superseded
    archived = await chat.run("!memory archived 1")
    assert hidden in archived and old not in archived and "[archived]" in archived

    assert "page must be a whole number from 1 to 1000000" in await chat.run("!memory archived 0")
    assert "past the end" in await chat.run("!memory superseded 2")
    assert "page must be a whole number" in await chat.run("!memory superseded last")


# --------------------------------------------------------------------------- show / forget / archive / restore

async def test_show_has_status_sender_source_tags_supersede_and_provenance(harness: PluginHarness) -> None:
    chat, other, _ = await two_chats(harness)
    old = await chat.remember("Release is planned for May 3")
    new = await chat.remember(
        "Release moved to May 10", supersedes=[old], tags=["release", "plan"], importance=4,
        event_at="2026-05-10T09:00:00+02:00", valid_from="2026-04-01T00:00:00Z", valid_until="2026-06-01T00:00:00Z",
        source_ref="meeting:42", claim_type="user_statement",
    )
    text = await chat.run(f"!memory show {new}")
    for line in (f"Episode {new}", "Status: active", "Content: “Release moved to May 10”", "Sender: Alice (u1)",
                 "Source: tool · importance 4 · claim type user statement", "Tags: release, plan",
                 "Event at: 2026-05-10T07:00:00Z", "Valid from: 2026-04-01T00:00:00Z",
                 "Valid until: 2026-06-01T00:00:00Z", "Source ref: meeting:42", f"Supersedes: {old}"):
        assert line in text, line
    shown_old = await chat.run(f"!memory show {old}")
    assert "Status: superseded" in shown_old and f"Superseded by: {new}" in shown_old
    assert "Fact time / provenance: unknown" in shown_old

    foreign = await other.remember("A secret plan of another group")
    assert f"episode {foreign} not found in this scope" in await chat.run(f"!memory show {foreign}")
    assert "not found in this scope" in await chat.run(f"!memory show {uuid.uuid4()}")
    missing = await chat.run("!memory show")
    assert "an episode id is required" in missing and "Usage: !memory show ＜id＞" in missing
    assert "unexpected argument" in await chat.run(f"!memory show {new} {old}")


async def test_forget_deletes_only_in_this_scope(harness: PluginHarness) -> None:
    chat, other, _ = await two_chats(harness)
    mine = await chat.remember("Temporary door code policy discussion")
    foreign = await other.remember("Other group's note")

    text = await chat.run(f"!memory forget {mine}")
    assert text.startswith(f"Deleted episode {mine} (active)")
    assert "not found in this scope" in await chat.run(f"!memory show {mine}")
    assert "not found in this scope" in await chat.run(f"!memory forget {mine}")

    assert f"episode {foreign} not found in this scope" in await chat.run(f"!memory forget {foreign}")
    assert f"Episode {foreign}" in await other.run(f"!memory show {foreign}")
    assert "an episode id is required" in await chat.run("!memory forget")


async def test_archive_and_restore_lifecycle_and_scope(harness: PluginHarness) -> None:
    chat, other, _ = await two_chats(harness)
    note = await chat.remember("Office closes at 18:00")
    old = await chat.remember("Lunch at noon")
    await chat.remember("Lunch at 12:30", supersedes=[old])
    foreign = await other.remember("Other group's schedule")

    archived = await chat.run(f"!memory archive {note}")
    assert archived.startswith(f"Archived episode {note}") and f"!memory restore {note}" in archived
    assert "is archived; cannot archive it" in await chat.run(f"!memory archive {note}")
    assert "Status: archived" in await chat.run(f"!memory show {note}")
    assert f"Restored episode {note} (was archived)" in await chat.run(f"!memory restore {note}")
    assert "is active; cannot restore it" in await chat.run(f"!memory restore {note}")
    assert f"Restored episode {old} (was superseded)" in await chat.run(f"!memory restore {old}")
    assert "Status: active" in await chat.run(f"!memory show {old}")

    for verb in ("archive", "restore"):
        assert f"episode {foreign} not found in this scope" in await chat.run(f"!memory {verb} {foreign}")
        assert "an episode id is required" in await chat.run(f"!memory {verb}")
    assert "Status: active" in await other.run(f"!memory show {foreign}")


# --------------------------------------------------------------------------- health

async def test_health_green_with_pipeline_state(harness: PluginHarness) -> None:
    kb = await harness.create_memory_kb()
    attached = open_chat(harness, "g1", pipeline_kbs=[kb])
    kept = await attached.remember("A real memory that the probe must not touch")
    text = await attached.run("!memory health")
    assert text.startswith("Memory health: GREEN")
    assert "GREEN isolation: search, list and delete stay inside one scope" in text
    assert "GREEN processor:" in text and "GREEN fence:" in text
    detached = open_chat(harness, "g1")
    assert "AMBER processor: memory knowledge base is not attached" in await detached.run("!memory health")
    records = await harness.host.dump_kb(kb)
    assert [layout.parse(r["metadata"]).record_id for r in records] == [kept]
    assert "unexpected argument" in await attached.run("!memory health now")


STORE_KINDS = {
    "chroma": "keeps and filters plugin metadata", "qdrant": "keeps and filters plugin metadata",
    "milvus": "scores by similarity (like Milvus)", "milvus-insert": "scores by similarity (like Milvus)",
    "fixed": "scores by distance (like pgvector)", "valkey": "filters on file_id only (like Valkey Search)",
    "seekdb": "keeps and filters plugin metadata", "pgvector": "scores by distance (like pgvector)",
}


@contextlib.asynccontextmanager
async def _health(host: FakeLangBotHost) -> AsyncIterator[tuple[str, str]]:
    """A new memory KB on `host` and the first `!memory health` in a chat of it."""
    plugin = PluginHarness(host)
    await plugin.start()
    try:
        kb = await plugin.create_memory_kb()
        yield kb, await open_chat(plugin, "g1", pipeline_kbs=[kb]).run("!memory health")
    finally:
        await plugin.stop()


@pytest.mark.stores_slice
async def test_health_on_every_backend_names_the_store_and_leaves_no_probes(
    host: FakeLangBotHost, backend_name: str
) -> None:
    # `host` runs on every backend of the test host (real Chroma, Qdrant, Milvus Lite, SeekDB, pgvector;
    # stand-ins for pgvector's schema, a Milvus cluster's insert-only rows and Valkey Search).
    async with _health(host) as (kb, text):
        assert "GREEN isolation: search, list and delete stay inside one scope" in text, text
        store = next(line for line in text.splitlines() if " store: " in line)
        assert STORE_KINDS[backend_name] in store, store
        if backend_name == "valkey":
            assert text.startswith("Memory health: AMBER"), text
            assert store.startswith("AMBER store:") and "Cannot: open one memory by its key" in store, store
            assert "deletes one memory by moving it" in store, store
        else:
            assert text.startswith("Memory health: GREEN"), text
            assert "opens and deletes one memory by its key" in store, store
        if backend_name in ("milvus", "milvus-insert", "fixed", "pgvector"):
            assert "writing the new row under its second key, then deleting the old row" in store, store
        # Qdrant and Milvus ignore the mode, pgvector refuses it.
        text_search = backend_name in ("chroma", "seekdb", "valkey")
        assert ("full-text matches" in store) is text_search and ("no full-text search" in store) is not text_search
        assert await host.dump_kb(kb) == []  # every probe record removed


@pytest.mark.slow
async def test_health_waits_for_a_store_that_indexes_in_the_background() -> None:
    """Real SeekDB without the test host's wait for its index (testhost/vectors/seekdb.py): a row written
    a moment ago is missing from vector search for 0.2-1.5 s, as under LangBot 4.11.2, where health was
    RED ("search filtered on a scope did not return that scope's record"). The probe tells that lag from
    a store that loses or leaks rows."""
    host = FakeLangBotHost(SeekDBBackend(settle=False))
    host.add_embedding_model("emb-1")
    try:
        async with _health(host) as (kb, text):
            assert "GREEN isolation: search, list and delete stay inside one scope" in text, text
            assert text.startswith("Memory health: GREEN"), text
            assert await host.dump_kb(kb) == []
    finally:
        await host.close()


# --------------------------------------------------------------------------- export

async def test_export_l1_covers_exactly_this_session(harness: PluginHarness) -> None:
    chat, other, _ = await two_chats(harness)
    await chat.tool("update_profile", {"scope": "session", "name": "Hiking club"})
    await chat.tool("update_profile", {"scope": "speaker", "name": "Alice A."})
    await other.tool("update_profile", {"scope": "session", "name": "Chess club"})

    data = await chat.run_json("!memory export")
    assert data["scope_key"] == f"{BOT}:group_g1"
    assert data["session_profile"]["name"] == "Hiking club"
    assert list(data["speaker_profiles"]) == ["u1"] and data["speaker_profiles"]["u1"]["name"] == "Alice A."
    assert "Chess club" not in json.dumps(data)
    assert await chat.run_json("!memory export l1") == data
    assert "unknown export “l3”" in await chat.run("!memory export l3")
    assert "unexpected argument" in await chat.run("!memory export l1 --status active")


async def test_export_l2_status_flags_and_bad_input(harness: PluginHarness) -> None:
    chat, other, _ = await two_chats(harness)
    old = await chat.remember("Deadline is March 1")
    new = await chat.remember("Deadline is March 8", supersedes=[old])
    hidden = await chat.remember("Retired project codename Falcon")
    await chat.run(f"!memory archive {hidden}")
    await other.remember("Not part of this export")

    def ids(data: dict[str, Any]) -> set[str]:
        return {e["id"] for e in data["episodes"]}

    # A backup keeps history: every status by default, like the console's Export tab; --status narrows it.
    default = await chat.run_json("!memory export l2")
    assert default["user_key"] == f"{BOT}:group_g1" and default["statuses"] == ["active", "superseded", "archived"]
    assert ids(default) == {old, new, hidden}
    console = await harness.page_api("console", "/export", "POST", {"space": {
        "scope_key": chat.chat_key, "user_key": chat.chat_key}})
    assert {e["id"] for e in console["data"]["export"]["l2"]["episodes"]} == ids(default)
    assert ids(await chat.run_json("!memory export l2 --status active")) == {new}
    assert ids(await chat.run_json("!memory export l2 --status active --include-archived")) == {new, hidden}
    assert ids(await chat.run_json("!memory export l2 --include-superseded --include-archived")) == {old, new, hidden}
    assert ids(await chat.run_json("!memory export l2 --status superseded")) == {old}
    assert ids(await chat.run_json("!memory export l2 --status=archived")) == {hidden}

    assert "unknown status 'bogus'" in await chat.run("!memory export l2 --status bogus")
    assert "unknown option --all" in await chat.run("!memory export l2 --all")
    assert "unexpected argument" in await chat.run("!memory export l2 now")


async def test_long_export_is_summarized_never_cut(harness: PluginHarness) -> None:
    chat, _, _ = await two_chats(harness)
    for i in range(14):
        await chat.remember(f"Long meeting minutes part {i}: " + "detail " * 30)
    archived = await chat.remember("The only archived note")
    await chat.run(f"!memory archive {archived}")

    text = await chat.run("!memory export l2 --include-archived")
    assert "too long for chat" in text and "15 episodes" in text
    assert "By status: 14 active, 1 archived" in text
    assert "Memory Console Export tab" in text and "--status" in text
    assert '{"' not in text  # no JSON fragment
    narrowed = await chat.run_json("!memory export l2 --status archived")
    assert [e["id"] for e in narrowed["episodes"]] == [archived]


# --------------------------------------------------------------------------- import

async def test_import_forces_current_scope_new_ids_and_keeps_raw_text(harness: PluginHarness) -> None:
    chat, other, _ = await two_chats(harness)
    original = str(uuid.uuid4())
    batch = {"user_key": other.chat_key, "episodes": [
        {"id": original, "user_key": other.chat_key, "content": "Imported   with  spaces", "tags": ["x"]},
        {"content": "Second imported note", "status": "archived"},
    ]}
    # A pasted JSON with newlines and runs of spaces must reach the parser intact.
    text = await chat.run("!memory import l2\n" + json.dumps(batch, indent=2))
    assert text.startswith(f"Imported 2 episodes into {BOT}:group_g1 (1 active, 1 archived)")
    assert f"user_key {other.chat_key} in the JSON was ignored" in text

    mine = await chat.export_l2()
    assert {e["content"] for e in mine} == {"Imported   with  spaces", "Second imported note"}
    imported = next(e for e in mine if e["content"].startswith("Imported"))
    assert imported["id"] != original and imported["original_id"] == original
    assert f"{original} -> {imported['id']}" in text
    assert await other.export_l2() == []  # nothing landed in the scope the file named


async def test_import_bad_input_writes_nothing(harness: PluginHarness) -> None:
    chat, _, _ = await two_chats(harness)
    kept = await chat.remember("Existing memory")

    malformed = await chat.run('!memory import l2 [{"content": "a"')
    assert "malformed JSON" in malformed and "Usage: !memory import l2" in malformed
    naive = await chat.run('!memory import l2 [{"content": "b", "event_at": "2026-05-01T09:00"}]')
    assert "Error: no record can be stored: [0] event_at has no timezone" in naive
    assert "[0] status deleted: a deleted episode is not kept" in await chat.run(
        '!memory import l2 [{"content": "c", "status": "deleted"}]')
    assert "[0] unknown status" in await chat.run('!memory import l2 [{"content": "c", "status": "gone"}]')
    assert '"episodes" must be a list' in await chat.run('!memory import l2 {"episodes": "x"}')
    assert "no episodes" in await chat.run("!memory import l2 []")
    assert "paste the JSON" in await chat.run("!memory import l2")
    assert "import l2" in await chat.run('!memory import [{"content": "x"}]')

    assert [e["id"] for e in await chat.export_l2()] == [kept]


async def test_export_import_round_trip_between_scopes(harness: PluginHarness) -> None:
    a, b, _ = await two_chats(harness)
    await a.remember("Conference talk accepted", tags=["work", "talk"], importance=5,
                     event_at="2026-09-14T10:00:00.250+02:00", valid_from="2026-06-01T00:00:00Z",
                     valid_until="2026-10-01T00:00:00Z", source_ref="email:cfp-7", claim_type="user_statement")
    old = await a.remember("Flight leaves at 07:00", tags=["travel"])
    await a.remember("Flight leaves at 09:15", supersedes=[old], tags=["travel"], claim_type="inference")
    shelved = await a.remember("Hotel shortlist: three options", importance=1)
    await a.run(f"!memory archive {shelved}")
    back = await a.remember("Visa form: printed")
    await a.run(f"!memory archive {back}")
    await a.run(f"!memory restore {back}")  # active again, with the time its status last changed

    exported_text = await a.run("!memory export l2")  # every status by default
    exported = json.loads(exported_text.partition("\n")[2])["episodes"]
    assert sorted(e["status"] for e in exported) == ["active", "active", "active", "archived", "superseded"]
    assert all(e.get("status_changed_at") for e in exported if e["id"] in (old, shelved, back))

    reply = await b.run("!memory import l2 " + json.dumps(exported))
    assert reply.startswith(f"Imported 5 episodes into {BOT}:group_g2 (3 active, 1 superseded, 1 archived)"), reply
    imported = await b.export_l2()
    by_original = {e["original_id"]: e for e in imported}
    assert set(by_original) == {e["id"] for e in exported}
    new_ids = {e["id"] for e in imported}
    for source in exported:
        copy = by_original[source["id"]]
        assert copy["id"] != source["id"]
        for key in (*PROVENANCE, "superseded_at", "status_changed_at"):
            assert copy.get(key) == source.get(key), key
    # Supersede links are re-pointed at the new IDs of the same batch.
    new_of = {e["original_id"]: e["id"] for e in imported}
    for source in exported:
        copy = by_original[source["id"]]
        assert copy.get("supersedes", []) == [new_of[i] for i in source.get("supersedes", [])]
        if "superseded_by" in source:
            assert copy["superseded_by"] == new_of[source["superseded_by"]] and copy["superseded_by"] in new_ids

    assert await a.export_l2() == exported  # the source scope is unchanged


# --------------------------------------------------------------------------- bulk delete

async def test_delete_filters_scope_and_counts(harness: PluginHarness) -> None:
    alice, other, _ = await two_chats(harness)
    bob = open_chat(harness, "g1", sender_id="u2", sender_name="Bob")
    a1 = await alice.remember("Alice likes the window seat", tags=["seat"])
    b1 = await bob.remember("Bob takes the aisle seat", tags=["seat"])
    b2 = await bob.remember("Bob's train is at noon", tags=["travel"])
    foreign = await other.remember("Zed also likes the window seat", tags=["seat"])

    dry = await alice.run("!memory delete --tag seat --dry-run")
    assert dry.startswith("Dry run: 2 episodes matching --tag seat (any status)") and a1 in dry and b1 in dry
    assert len(await alice.export_l2()) == 3

    # --speaker is the sender id: a display name matches nothing (documented behaviour).
    assert "No episodes match --speaker Bob" in await alice.run("!memory delete --speaker Bob --tag seat")
    assert (await alice.run("!memory delete --speaker u2 --tag seat")).startswith(
        "Deleted 1 episode matching --speaker u2 --tag seat")
    remaining = {e["id"] for e in await alice.export_l2()}
    assert remaining == {a1, b2}
    assert (await alice.run('!memory delete --speaker "u2"')).startswith("Deleted 1 episode")
    assert "No episodes match --status archived" in await alice.run("!memory delete --status archived")
    assert "Deleted 1 episode" in await alice.run("!memory delete --before 2999-01-01T00:00:00+08:00")
    assert await alice.export_l2() == []
    assert [e["id"] for e in await other.export_l2()] == [foreign]  # the other chat is untouched


async def test_delete_bad_input_deletes_nothing(harness: PluginHarness) -> None:
    chat, _, _ = await two_chats(harness)
    kept = await chat.remember("Keep me", tags=["keep"])
    naive = await chat.run("!memory delete --before 2030-01-01T00:00:00")
    assert "--before has no timezone" in naive and "Usage: !memory delete" in naive
    assert "not an ISO-8601 time" in await chat.run("!memory delete --before yesterday")
    assert "unknown status 'gone'" in await chat.run("!memory delete --status gone")
    assert "give at least one filter" in await chat.run("!memory delete")
    assert "give at least one filter" in await chat.run("!memory delete --dry-run")
    assert "unknown option --all" in await chat.run("!memory delete --all")
    assert "--tag needs a value" in await chat.run("!memory delete --tag")
    assert "unbalanced double quote" in await chat.run('!memory delete --speaker "Alice')
    assert "unexpected argument" in await chat.run("!memory delete everything --tag keep")
    assert [e["id"] for e in await chat.export_l2()] == [kept]


# --------------------------------------------------------------------------- audit

async def test_audit_pages_and_bad_pages(harness: PluginHarness) -> None:
    chat, _, _ = await two_chats(harness)
    assert "No audit entries for this chat yet." in await chat.run("!memory audit")
    ids = [await chat.remember(f"Audit me {i}") for i in range(11)]
    first = await chat.run("!memory audit")
    assert first.startswith("Audit log · page 1/2 · 11 entries · newest first")
    assert f"Remember · episode {ids[-1]} · by Alice" in first and "Next: !memory audit 2" in first
    assert ids[0] in await chat.run("!memory audit 2")
    assert "page must be a whole number from 1 to 1000000" in await chat.run("!memory audit 0")
    assert "past the end (last page is 2)" in await chat.run("!memory audit 3")
    assert "page must be a whole number" in await chat.run("!memory audit latest")
    assert "unexpected argument" in await chat.run("!memory audit export now")
    assert "too long for chat" in await chat.run("!memory audit export")


async def _audited(chat: Chat, other: Chat, command: str) -> tuple[str, list[dict[str, Any]]]:
    """Run a command; return its reply and the audit entries it added (the other scope must not change)."""
    before, other_before = await chat.audit_entries(), await other.audit_entries()
    reply = await chat.run(command)
    after = await chat.audit_entries()
    assert after[: len(before)] == before
    assert await other.audit_entries() == other_before
    return reply, after[len(before):]


async def test_every_mutating_subcommand_audits_each_changed_record(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    other = open_chat(harness, "g9", sender_id="u9", sender_name="Zed")
    await other.remember("The other chat's only memory")

    def fresh(name: str) -> Chat:
        return open_chat(harness, f"audit-{name}")

    async def check(chat: Chat, command: str, operation: str, targets: set[str]) -> None:
        _, added = await _audited(chat, other, command)
        assert sorted((e["operation"], e["target_id"]) for e in added) == sorted((operation, t) for t in targets)
        for entry in added:
            assert entry["scope_key"] == chat.chat_key and entry["user_key"] == chat.chat_key
            assert entry["sender_id"] == "u1" and entry["sender_name"] == "Alice"
            assert entry["query_id"] == chat.query_id
        page = await chat.run("!memory audit")
        for target in targets:
            assert f"{vocabulary('en_US')['op.' + operation]} · episode {target}" in page

    chat = fresh("forget")
    victim = await chat.remember("Forget me")
    await check(chat, f"!memory forget {victim}", "forget", {victim})

    chat = fresh("archive")
    note = await chat.remember("Archive then restore me")
    await check(chat, f"!memory archive {note}", "archive", {note})
    await check(chat, f"!memory restore {note}", "restore", {note})

    chat = fresh("import")
    await check(chat, "!memory import l2 []", "import", set())  # rejected: nothing written, nothing audited
    _, added = await _audited(chat, other, '!memory import l2 [{"content": "one"}, {"content": "two"}]')
    new_ids = {e["id"] for e in await chat.export_l2()}
    assert sorted(e["target_id"] for e in added) == sorted(new_ids) and {e["operation"] for e in added} == {"import"}

    chat = fresh("delete")
    doomed = {await chat.remember("Drop me", tags=["drop"]), await chat.remember("Drop me too", tags=["drop"])}
    await chat.remember("Stay", tags=["stay"])
    await check(chat, "!memory delete --tag drop", "bulk_delete", doomed)
    await check(chat, "!memory delete --tag nothing-matches", "bulk_delete", set())

    # Read-only subcommands never audit.
    for command in ("!memory", "!memory list", "!memory search drop", "!memory export l2", "!memory health",
                    "!memory delete --tag stay --dry-run"):
        _, added = await _audited(chat, other, command)
        assert added == [], command
    assert len(await chat.run("!memory audit export")) <= MAX_REPLY_CHARS


# --------------------------------------------------------------------------- who may change group memory

async def test_group_members_without_admin_rights_cannot_change_memory(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    admin = open_chat(harness, "g1")
    member = open_chat(harness, "g1", sender_id="u2", sender_name="Bea", privilege=1)
    episode = await admin.remember("Team offsite is in Lisbon")
    for text in (f"!memory forget {episode}", f"!memory archive {episode}", f"!memory restore {episode}",
                 "!memory delete --tag x", '!memory import l2 [{"content": "x"}]'):
        assert "only bot admins can change it" in await member.run(text)
    assert episode in listed_ids(await member.run("!memory list"))  # reading stays open
    assert (await admin.audit_entries())[-1]["operation"] == "remember"  # nothing changed


async def test_private_chats_and_the_opt_out_allow_changes(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    query_id = 4242
    harness.host.open_query(query_id, bot_uuid=BOT, launcher_type="person", launcher_id="u5", sender_id="u5",
                            sender_name="Cy")
    person = Chat(harness, query_id, {"launcher_type": "person", "launcher_id": "u5", "sender_id": "u5",
                                       "bot_uuid": BOT}, "u5", "u5", privilege=1)
    own = await person.remember("my own note")
    assert (await person.run(f"!memory forget {own}")).startswith(f"Deleted episode {own}")
    await harness.restart({"command_admin_only_in_groups": False}, fresh_modules=False)
    member = open_chat(harness, "g1", sender_id="u2", privilege=1)
    episode = await member.remember("group note")
    assert (await member.run(f"!memory archive {episode}")).startswith(f"Archived episode {episode}")


async def test_restoring_a_superseded_episode_names_the_still_active_correction(harness: PluginHarness) -> None:
    """Documented: restore makes a superseded record active again; the reply says that its correction
    is still active (two versions are now recalled) and the record keeps its link to it."""
    chat, _, _ = await two_chats(harness)
    old = await chat.remember("Standup at 9:00")
    new = await chat.remember("Standup moved to 9:30", supersedes=[old])
    reply = await chat.run(f"!memory restore {old}")
    assert reply.startswith(f"Restored episode {old} (was superseded); it is active again.")
    assert f"the correction that superseded it, {new}, is still active" in reply
    assert "both versions are now recalled" in reply and f"!memory archive {new}" in reply
    shown = await chat.run(f"!memory show {old}")
    assert "Status: active" in shown and f"Was superseded by: {new}" in shown
    listed = await chat.run("!memory list")
    assert old in listed and new in listed and f"restored; was superseded by {new}" in listed
    # With the correction archived, a later restore has no active correction to name.
    await chat.run(f"!memory archive {old}")
    await chat.run(f"!memory archive {new}")
    again = await chat.run(f"!memory restore {old}")
    assert "still active" not in again and f"superseded by {new}, which is no longer active" in again
