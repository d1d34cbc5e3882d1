"""Bad migration bundles through the two surfaces an operator uses (issue 34, "Done means"): the Memory
Console's `/migrate` page API (asked to import, not to dry-run) and a memory KB document upload. A cut
bundle, another version, another installation's, a 20 MB file and hostile unicode each get a clear
error naming the problem, and the plugin makes no write at all: no storage row, no vector."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

from tests import official_install as oi
from tests.service_helpers import ident
from tests.test_migration_bundle import extract

WRITES = (A.VECTOR_UPSERT, A.VECTOR_DELETE, A.SET_PLUGIN_STORAGE, A.DELETE_PLUGIN_STORAGE,
          A.SET_WORKSPACE_STORAGE, A.DELETE_WORKSPACE_STORAGE)


def _edit(change: Callable[[dict[str, Any]], None]) -> Callable[[str], str]:
    def mangle(text: str) -> str:
        bundle = json.loads(text)
        change(bundle)
        return json.dumps(bundle, ensure_ascii=False)
    return mangle


def _pad(bundle: dict[str, Any]) -> None:
    bundle["padding"] = "x" * (20 * 1024 * 1024)  # well-formed JSON of 20 MB


def _other_bots(bundle: dict[str, Any]) -> None:
    bundle["source"]["bots"] = ["bot-of-another-langbot"]


def _lookalike_plugin(bundle: dict[str, Any]) -> None:
    bundle["source"]["plugin"] = "langbot-team/LongTermMem\u043ery"  # a Cyrillic o


def _reversed_format(bundle: dict[str, Any]) -> None:
    bundle["format"] = "\u202eltm-official-migration"  # a right-to-left override in front


BAD = {
    "cut": (lambda text: text[: len(text) // 2], "malformed JSON"),
    "version": (lambda text: text.replace('"version": 1', '"version": 2', 1), "version 2 of the migration bundle"),
    "another installation": (_edit(_other_bots), "another LangBot installation"),
    "20 MB": (_edit(_pad), "MiB"),
    "lookalike plugin": (_edit(_lookalike_plugin), "does not name the official plugin"),
    "direction override": (_edit(_reversed_format), "not a migration bundle"),
}


async def _state(harness: Any) -> dict[str, Any]:
    memory = harness.plugin.memory
    spaces = [ident("1", bot=oi.BOT), ident("2", bot=oi.BOT, kind="person"), ident("3", bot=oi.BOT),
              ident("77", bot=oi.BOT)]
    episodes = {}
    for identity in spaces:
        scope = await memory.scope_for(identity)
        episodes[scope.space_key] = sorted(e.content for e in await memory.all_episodes(scope))
    return {"episodes": episodes, "settings": (await memory.settings()).value("recency_half_life_days").value,
            "storage": dict(harness.host.storage), "workspace": dict(harness.host.workspace_storage)}


@pytest.fixture(scope="module")
def bundle_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One extracted bundle for the module: every test mangles its own copy of the text."""
    return json.dumps(extract(tmp_path_factory.mktemp("official"), "chroma"))


async def _prepared(harness: Any, text: str) -> tuple[str, dict[str, Any]]:
    harness.host.bots = [oi.BOT]
    memory = harness.plugin.memory
    await memory.remember(await memory.scope_for(ident("77", bot=oi.BOT)), {"content": "group 77's own memory"})
    await harness.settle()
    harness.host.reset_counts()
    return text, await _state(harness)


def _no_writes(harness: Any) -> None:
    assert {a.value: harness.host.count(a) for a in WRITES} == {a.value: 0 for a in WRITES}


@pytest.mark.parametrize("kind", list(BAD))
async def test_the_console_refuses_a_bad_bundle_and_writes_nothing(harness, kb, bundle_text, kind):
    text, before = await _prepared(harness, bundle_text)
    mangle, message = BAD[kind]
    response = await harness.page_api("console", "/migrate", "POST", {"bundle": mangle(text), "dry_run": False})
    assert response["error"] is None, response
    assert response["data"]["ok"] is False and message in response["data"]["error"], response["data"]
    assert "nothing was imported" in response["data"]["error"] or kind == "cut"
    _no_writes(harness)
    assert await _state(harness) == before


@pytest.mark.parametrize("kind", list(BAD))
async def test_a_bad_bundle_uploaded_to_the_memory_kb_fails_and_writes_nothing(harness, kb, bundle_text, kind):
    text, before = await _prepared(harness, bundle_text)
    mangle, message = BAD[kind]
    result = await harness.ingest(kb, "doc-bad", "bundle.json", mangle(text).encode("utf-8", "surrogatepass"))
    assert result["status"] == "failed" and result["error_message"], result
    expected = "larger than 8 MiB" if kind == "20 MB" else message  # the upload's reader gives its own limit
    assert expected in result["error_message"], result
    _no_writes(harness)
    assert await _state(harness) == before


async def test_an_upload_that_is_not_utf8_fails_and_writes_nothing(harness, kb, bundle_text):
    text, before = await _prepared(harness, bundle_text)
    data = text.replace("the standup is at 10am", "the standup is at 10am \udcff", 1).encode("utf-8", "surrogateescape")
    result = await harness.ingest(kb, "doc-bad", "bundle.json", data)
    assert result["status"] == "failed" and "not UTF-8 text" in result["error_message"], result
    _no_writes(harness)
    assert await _state(harness) == before


async def test_hostile_characters_in_a_chat_key_skip_that_chat_and_write_nothing_for_it(harness, kb, bundle_text):
    """A key with a direction override, a NUL, a lookalike colon or half a UTF-16 pair is not a key this
    plugin derives: the chat is reported with its reason and nothing is written for it. A zero-width space
    is allowed in a chat id (as in a live chat's), so that key is a space of its own, never group_3's."""
    text, before = await _prepared(harness, bundle_text)
    bundle = json.loads(text)
    g3 = next(c for c in bundle["chats"] if c["key"] == oi.G3)
    hostile = [f"{oi.BOT}:group_\u202e3", f"{oi.BOT}:group_3\u0000", f"{oi.BOT}\uff1agroup_3", f"{oi.BOT}:group_\ud8003"]
    bundle["chats"] = [{**g3, "key": key} for key in [*hostile, f"{oi.BOT}:group_\u200b3"]]
    response = await harness.page_api("console", "/migrate", "POST", {"bundle": json.dumps(bundle), "dry_run": False})
    report = response["data"]
    assert report["ok"] is not False, report
    refused, zero_width = report["chats"][:4], report["chats"][4]
    assert all(chat["problem"] and chat["episodes"]["write"] == 0 for chat in refused), refused
    assert not zero_width["problem"] and zero_width["episodes"]["write"] == 1
    assert (await _state(harness))["episodes"] == before["episodes"]  # group_3 and every other space as before
    assert harness.host.count(A.VECTOR_UPSERT) == 1


async def test_half_a_utf16_pair_in_a_record_skips_that_record_with_its_reason(harness, kb, bundle_text):
    """A JSON escape of half a UTF-16 pair is valid JSON but no character (it cannot be stored as UTF-8):
    that record is skipped and named, the rest of its chat is imported."""
    text, _ = await _prepared(harness, bundle_text)
    hostile = text.replace("the standup is at 10am", "the standup is at 10am \\ud800", 1)
    for surface in ("console", "upload"):
        if surface == "console":
            response = await harness.page_api("console", "/migrate", "POST", {"bundle": hostile, "dry_run": True})
            g1 = next(c for c in response["data"]["chats"] if c["key"] == oi.G1)
            assert {"at": 0, "reason": "content contains an invalid character (a lone UTF-16 surrogate)"} in g1[
                "episodes"]["skipped"], g1
        else:
            result = await harness.ingest(kb, "doc-bundle", "bundle.json", hostile.encode("utf-8"))
            assert result["status"] == "completed" and result["chunks_created"] == 4, result
    scope1 = await harness.plugin.memory.scope_for(ident("1", bot=oi.BOT))
    stored = [e.content for e in await harness.plugin.memory.all_episodes(scope1)]
    assert sorted(stored) == ["the old retreat plan", "the standup is at 9am"]  # not the 10am one
