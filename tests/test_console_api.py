"""Memory Console page API (M1-M3, F4, H, K7 in docs/REQUIREMENTS.md) through the SDK's real Page dispatch.

Every call goes `harness.page_api("console", ...)` -> PAGE_API action -> the
`MemoryConsole.handle_api` of the loaded plugin, on Chroma and Qdrant. Plus static
checks of the page HTML (docs/HOST-FACTS.md 9.2, 9.3).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction
from langbot_plugin.entities.io.errors import ActionCallTimeoutError

from ltm.spaces import Space
from testhost import PluginHarness, make_session
from testhost.hooks import installation_audit

INSTALLATION_SPACE = Space.installation()
A = PluginToRuntimeAction
ROOT = Path(__file__).resolve().parents[1]
PAGE_DIR = ROOT / "components" / "pages" / "console"
HTML = (PAGE_DIR / "index.html").read_text(encoding="utf-8")

G1 = make_session("group", "g1", sender_id="u1")
P2 = make_session("person", "p2")
SPACE_G1 = {"scope_key": "bot-1:group_g1", "user_key": "bot-1:group_g1"}
SPACE_P2 = {"scope_key": "bot-1:person_p2", "user_key": "bot-1:person_p2"}


# --------------------------------------------------------------------------- helpers


async def api(h: PluginHarness, endpoint: str, body: Any = None, method: str = "POST") -> dict[str, Any]:
    response = await h.page_api("console", endpoint, method, body)
    # Application errors travel as data: PageResponse.fail would reach the page as "[object Object]".
    assert response["error"] is None, response
    data = response["data"]
    assert isinstance(data, dict) and isinstance(data.get("ok"), bool), data
    json.dumps(data)  # the host sends it to the browser as JSON
    return data


async def ok(h: PluginHarness, endpoint: str, body: Any = None, method: str = "POST") -> dict[str, Any]:
    data = await api(h, endpoint, body, method)
    assert data["ok"] is True, data
    return data


async def refused(h: PluginHarness, endpoint: str, body: Any, code: str, method: str = "POST") -> str:
    data = await api(h, endpoint, body, method)
    assert data["ok"] is False and data["code"] == code, data
    assert isinstance(data["error"], str) and data["error"]
    assert "Traceback" not in data["error"]
    return data["error"]


async def remember(h: PluginHarness, session: dict[str, Any], content: str, **extra: Any) -> str:
    out = await h.call_tool("remember", {"content": content, **extra}, session=session, query_id=1)
    assert out["ok"] is True, out
    return out["episode_id"]


async def statuses_in(h: PluginHarness, space: dict[str, str]) -> dict[str, str]:
    data = await ok(h, "/episodes", {"space": space, "status": "all", "page_size": 50})
    return {e["id"]: e["status"] for e in data["episodes"]}


# --------------------------------------------------------------------------- component


async def test_page_component_is_loaded_with_its_manifest(harness: PluginHarness) -> None:
    from components.pages.console.console import MemoryConsole

    assert isinstance(harness.component("console"), MemoryConsole)
    pages = harness.controller.plugin_container.manifest.manifest["spec"]["pages"]
    (page,) = [page for page in pages if page["id"] == "console"]
    assert page["path"] == "components/pages/console/index.html"
    # Every WebUI language is named (tests/test_i18n_parity.py checks the set); these two are written here.
    assert page["label"]["en_US"] == "Memory Console" and page["label"]["zh_Hans"] == "记忆控制台"
    assert page["label"]["ja_JP"] == "メモリコンソール"
    spec = yaml.safe_load((PAGE_DIR / "console.yaml").read_text(encoding="utf-8"))
    assert spec["kind"] == "Page" and spec["spec"]["path"] == "index.html"
    assert spec["execution"]["python"] == {"path": "console.py", "attr": "MemoryConsole"}


# --------------------------------------------------------------------------- overview, derive


async def test_overview_without_a_memory_kb(harness: PluginHarness) -> None:
    data = await ok(harness, "/overview")
    assert data["kb"] is None and data["scopes"] == [] and data["fences"] == []
    assert (await ok(harness, "/overview", method="GET"))["kb"] is None


async def test_overview_lists_kb_known_scopes_and_fences(harness: PluginHarness) -> None:
    kb = await harness.create_memory_kb(isolation="bot")
    await harness.call_tool("update_profile", {"scope": "session", "name": "Tea club"}, session=G1, query_id=1)
    await remember(harness, P2, "Bob prefers mornings")
    data = await ok(harness, "/overview", {})
    assert data["kb"]["id"] == kb and data["kb"]["settings"]["isolation"] == "bot"
    assert data["isolation"] == "bot"
    by_scope = {s["scope_key"]: s for s in data["scopes"]}
    assert set(by_scope) == {"bot-1:group_g1", "bot-1:person_p2"}
    # In bot isolation the L2 key of a session is the bot's shared key (S4).
    group = by_scope["bot-1:group_g1"]
    assert {k: group[k] for k in ("scope_key", "user_key", "bot_uuid", "session_name")} == {
        "scope_key": "bot-1:group_g1", "user_key": "bot:bot-1", "bot_uuid": "bot-1", "session_name": "group_g1"}
    # What tells the spaces apart (issue 23 item 5): kind, id, last change and who made it, counts; the
    # most recently changed first. Both chats share the bot's episode space, so both count Bob's episode,
    # and the group's last change is its own profile update, not Bob's episode in the shared space.
    assert (group["chat_type"], group["chat_id"], group["episodes"], group["pending_candidates"]) == (
        "group", "g1", 1, 0)
    person = by_scope["bot-1:person_p2"]
    assert (person["chat_type"], person["chat_id"], person["episodes"]) == ("person", "p2", 1)
    assert "" < group["last_activity"] < person["last_activity"]
    assert [s["scope_key"] for s in data["scopes"]] == ["bot-1:person_p2", "bot-1:group_g1"]
    audit = (await ok(harness, "/audit", {"space": {"scope_key": "bot-1:group_g1", "user_key": "bot:bot-1"}}))
    assert group["last_activity"] == max(e["time"] for e in audit["entries"] if e["scope_key"] == "bot-1:group_g1")


async def test_derive_follows_the_plugin_rules(harness: PluginHarness) -> None:
    data = await ok(harness, "/derive", {"bot_uuid": "bot-1", "session_name": "group_g1"})
    assert (data["scope_key"], data["user_key"], data["isolation"]) == ("bot-1:group_g1", "bot-1:group_g1", "session")
    data = await ok(harness, "/derive", {"bot_uuid": "bot-1", "session_name": "group_g1", "isolation": "bot"})
    assert (data["scope_key"], data["user_key"]) == ("bot-1:group_g1", "bot:bot-1")
    # No bot uuid: session_key = session_name, and bot isolation falls back to it.
    data = await ok(harness, "/derive", {"session_name": "person_42", "isolation": "bot"})
    assert (data["scope_key"], data["user_key"]) == ("person_42", "person_42")

    await harness.create_memory_kb(isolation="bot")
    data = await ok(harness, "/derive", {"bot_uuid": "bot-1", "session_name": "group_g1"})
    assert data["user_key"] == "bot:bot-1" and data["note"] == ""
    data = await ok(harness, "/derive", {"bot_uuid": "bot-1", "session_name": "group_g1", "isolation": "session"})
    assert data["user_key"] == "bot-1:group_g1" and "bot isolation" in data["note"]

    assert "session_name is required" in await refused(harness, "/derive", {"bot_uuid": "b"}, "invalid_input")
    assert "group_<id>" in await refused(harness, "/derive", {"session_name": "chan_1"}, "invalid_input")
    assert "isolation" in await refused(harness, "/derive", {"session_name": "group_1", "isolation": "kb"},
                                        "invalid_input")
    assert "bot_uuid must be a string" in await refused(harness, "/derive", {"session_name": "group_1", "bot_uuid": 7},
                                                        "invalid_input")


# --------------------------------------------------------------------------- profiles, episodes, search


async def test_profiles_of_the_selected_space_only(harness: PluginHarness) -> None:
    await harness.call_tool("update_profile", {"scope": "session", "name": "Tea club", "traits": ["friendly"]},
                            session=G1, query_id=1)
    await harness.call_tool("update_profile", {"scope": "speaker", "name": "Alice"}, session=G1, query_id=1)
    await harness.call_tool("update_profile", {"scope": "session", "name": "Bob's DM"}, session=P2, query_id=1)
    data = await ok(harness, "/profiles", {"space": SPACE_G1})
    assert data["session_profile"]["name"] == "Tea club" and data["session_profile"]["traits"] == ["friendly"]
    assert list(data["speaker_profiles"]) == ["u1"] and data["speaker_profiles"]["u1"]["name"] == "Alice"
    assert data["space"]["scope_key"] == "bot-1:group_g1"
    other = await ok(harness, "/profiles", {"space": SPACE_P2})
    assert other["session_profile"]["name"] == "Bob's DM" and other["speaker_profiles"] == {}
    empty = await ok(harness, "/profiles", {"space": {"scope_key": "bot-1:group_nobody", "user_key": "bot-1:group_nobody"}})
    assert empty["session_profile"]["name"] == "" and empty["speaker_profiles"] == {}


async def test_episodes_are_paged_newest_first_with_a_status_filter(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    ids = [await remember(harness, G1, f"group fact number {i}") for i in range(7)]
    await remember(harness, P2, "a private fact")
    first = await ok(harness, "/episodes", {"space": SPACE_G1, "page_size": 3})
    assert (first["page"], first["pages"], first["total"]) == (1, 3, 7)
    assert [e["id"] for e in first["episodes"]] == ids[::-1][:3]
    last = await ok(harness, "/episodes", {"space": SPACE_G1, "page": 3, "page_size": 3})
    assert [e["id"] for e in last["episodes"]] == [ids[0]]
    assert "past the end" in await refused(harness, "/episodes", {"space": SPACE_G1, "page": 4, "page_size": 3},
                                           "invalid_input")

    await ok(harness, "/episode/archive", {"space": SPACE_G1, "episode_id": ids[1]})
    archived = await ok(harness, "/episodes", {"space": SPACE_G1, "status": "archived"})
    assert [e["id"] for e in archived["episodes"]] == [ids[1]] and archived["statuses"] == ["archived"]
    active = await ok(harness, "/episodes", {"space": SPACE_G1, "page_size": 50})
    assert ids[1] not in {e["id"] for e in active["episodes"]} and active["total"] == 6
    everything = await ok(harness, "/episodes", {"space": SPACE_G1, "status": "all", "page_size": 50})
    assert everything["total"] == 7 and everything["statuses"] == ["active", "superseded", "archived"]
    assert {e["content"] for e in everything["episodes"]}.isdisjoint({"a private fact"})

    assert "unknown status 'gone'" in await refused(harness, "/episodes", {"space": SPACE_G1, "status": "gone"},
                                                    "invalid_input")
    assert "page_size must be a whole number from 1 to 50" in await refused(
        harness, "/episodes", {"space": SPACE_G1, "page_size": 500}, "invalid_input")


async def test_search_is_ranked_and_scoped(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    tea = await remember(harness, G1, "Alice likes green tea with jasmine", tags=["tea"])
    await remember(harness, G1, "The team ships version two on Friday")
    secret = await remember(harness, P2, "Bob likes green tea too")
    data = await ok(harness, "/search", {"space": SPACE_G1, "query": "green tea", "top_k": 5})
    ids = [r["id"] for r in data["results"]]
    assert ids[0] == tea and secret not in ids and isinstance(data["results"][0]["score"], float)
    # An exact id of another space never finds that record here (S5).
    crossed = (await ok(harness, "/search", {"space": SPACE_G1, "query": secret}))["results"]
    assert secret not in {r["id"] for r in crossed} and "Bob" not in json.dumps(crossed)
    assert [r["id"] for r in (await ok(harness, "/search", {"space": SPACE_G1, "query": tea}))["results"]] == [tea]

    await ok(harness, "/episode/archive", {"space": SPACE_G1, "episode_id": tea})
    assert tea not in [r["id"] for r in (await ok(harness, "/search", {"space": SPACE_G1, "query": "green tea"}))["results"]]
    data = await ok(harness, "/search", {"space": SPACE_G1, "query": "green tea", "statuses": ["archived"]})
    assert [r["id"] for r in data["results"]] == [tea] and data["results"][0]["status"] == "archived"

    assert "query is required" in await refused(harness, "/search", {"space": SPACE_G1, "query": "  "},
                                                "invalid_input")
    assert "top_k" in await refused(harness, "/search", {"space": SPACE_G1, "query": "x", "top_k": 0}, "invalid_input")
    assert "unknown statuses 'gone'" in await refused(
        harness, "/search", {"space": SPACE_G1, "query": "x", "statuses": "active,gone"}, "invalid_input")


async def test_l2_endpoints_without_a_memory_kb_say_so(harness: PluginHarness) -> None:
    error = await refused(harness, "/episodes", {"space": SPACE_G1}, "no_knowledge_base")
    assert "no memory knowledge base" in error
    await refused(harness, "/search", {"space": SPACE_G1, "query": "x"}, "no_knowledge_base")
    await refused(harness, "/episode/archive", {"space": SPACE_G1, "episode_id": "x"}, "no_knowledge_base")


# --------------------------------------------------------------------------- episode actions


async def test_archive_restore_delete_are_audited(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    eid = await remember(harness, G1, "Carol's birthday is on May 3")
    data = await ok(harness, "/episode/archive", {"space": SPACE_G1, "episode_id": eid})
    assert data["episode"]["id"] == eid and data["episode"]["status"] == "archived"
    assert "cannot archive" in await refused(harness, "/episode/archive", {"space": SPACE_G1, "episode_id": eid},
                                             "invalid_input")
    assert (await ok(harness, "/episode/restore", {"space": SPACE_G1, "episode_id": eid}))["episode"]["status"] == "active"
    assert "cannot restore" in await refused(harness, "/episode/restore", {"space": SPACE_G1, "episode_id": eid},
                                             "invalid_input")
    deleted = await ok(harness, "/episode/delete", {"space": SPACE_G1, "episode_id": eid})
    assert deleted["episode"]["content"] == "Carol's birthday is on May 3"
    assert await statuses_in(harness, SPACE_G1) == {}
    await refused(harness, "/episode/delete", {"space": SPACE_G1, "episode_id": eid}, "not_found")

    audit = await ok(harness, "/audit", {"space": SPACE_G1})
    ops = [(e["operation"], e["target_id"]) for e in audit["entries"]]
    assert ops[:4] == [("forget", eid), ("restore", eid), ("archive", eid), ("remember", eid)]
    console_entry = audit["entries"][0]
    assert console_entry["scope_key"] == "bot-1:group_g1" and console_entry["user_key"] == "bot-1:group_g1"
    assert console_entry["sender_id"] == "" and console_entry["query_id"] is None


async def test_ids_of_another_space_are_not_found(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    mine = await remember(harness, G1, "group plan: picnic on Sunday")
    theirs = await remember(harness, P2, "private: dentist on Monday")
    for endpoint in ("/episode/archive", "/episode/restore", "/episode/delete"):
        error = await refused(harness, endpoint, {"space": SPACE_G1, "episode_id": theirs}, "not_found")
        assert theirs in error and "dentist" not in error
    # Untouched in its own space, and nothing was audited in the wrong one.
    assert await statuses_in(harness, SPACE_P2) == {theirs: "active"}
    assert await statuses_in(harness, SPACE_G1) == {mine: "active"}
    audit = await ok(harness, "/audit", {"space": SPACE_G1})
    assert [e["operation"] for e in audit["entries"]] == ["remember"]
    # A pair the plugin never derives (p2's scope_key with g1's user_key) reaches neither space.
    crossed = {"scope_key": "bot-1:person_p2", "user_key": "bot-1:group_g1"}
    error = await refused(harness, "/episode/delete", {"space": crossed, "episode_id": theirs}, "invalid_input")
    assert "user_key bot-1:group_g1 is not the key" in error and "(bot-1:person_p2)" in error
    assert await statuses_in(harness, SPACE_P2) == {theirs: "active"}


CROSSED_PAIRS = {
    "another chat's user_key": {"scope_key": "bot-1:group_g1", "user_key": "bot-1:group_g2"},
    "the bot-wide key in session isolation": {"scope_key": "bot-1:group_g1", "user_key": "bot:bot-1"},
    "not a chat's key": {"scope_key": "bot-1:anything", "user_key": "bot-1:anything"},
    "an id that skipped the boundary": {"scope_key": "bot-1:group_g\u202e1", "user_key": "bot-1:group_g\u202e1"},
}


SPACELESS_ROUTES = {"/overview", "/derive", "/settings", "/settings/set", "/settings/reset", "/migrate", "/person/find",
                    "/person/export", "/person/erase", "/view"}  # /view: the space last opened, if still one


@pytest.mark.parametrize("space", CROSSED_PAIRS.values(), ids=CROSSED_PAIRS)
async def test_every_endpoint_refuses_a_pair_the_plugin_does_not_derive(harness: PluginHarness,
                                                                        space: dict[str, str]) -> None:
    """One check where the space is resolved (issue 21, finding 3): every endpoint that takes a space,
    reads and writes alike, refuses before doing anything."""
    from components.pages.console.api import ROUTES

    await harness.create_memory_kb()
    await remember(harness, G1, "group plan: picnic on Sunday")
    before = dict(harness.host.storage)
    checked = []
    for path in ROUTES:
        data = await api(harness, path, {"space": space})
        if data["ok"] is False and "unknown field(s): space" in data["error"]:
            continue
        assert data["ok"] is False and data["code"] == "invalid_input", (path, data)
        assert "scope_key" in data["error"], (path, data)
        checked.append(path)
    # Installation-wide endpoints take no space (the overview, derive, settings, the person view).
    assert set(ROUTES) - set(checked) == SPACELESS_ROUTES
    assert harness.host.storage == before


# --------------------------------------------------------------------------- injection, audit, export


async def test_injection_shows_the_latest_snapshot_of_the_scope(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    await remember(harness, G1, "Alice likes green tea")
    assert (await ok(harness, "/injection", {"space": SPACE_G1}))["snapshot"] is None
    harness.host.open_query(5, bot_uuid="bot-1", launcher_type="group", launcher_id="g1", sender_id="u1",
                            sender_name="Alice", message_text="what tea do I like?",
                            pipeline_kbs=list(harness.host.kbs))
    await harness.emit_event("PromptPreProcessing", {"session_name": "group_g1", "default_prompt": [], "prompt": []},
                             query_id=5)
    snap = (await ok(harness, "/injection", {"space": SPACE_G1}))["snapshot"]
    assert snap["query_id"] == 5 and snap["injected"] is True and snap["speaker"] == {"id": "u1", "name": "Alice"}
    assert [e["content"] for e in snap["episodes"]] == ["Alice likes green tea"]
    assert (await ok(harness, "/injection", {"space": SPACE_P2}))["snapshot"] is None


async def test_audit_pages_and_export(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    for i in range(5):
        await remember(harness, G1, f"fact {i}")
    await remember(harness, P2, "private fact")
    page = await ok(harness, "/audit", {"space": SPACE_G1, "page": 2, "page_size": 2})
    assert (page["page"], page["pages"], page["total"]) == (2, 3, 5) and len(page["entries"]) == 2
    assert "past the end" in await refused(harness, "/audit", {"space": SPACE_G1, "page": 9}, "invalid_input")
    assert "page must be a whole number" in await refused(harness, "/audit", {"space": SPACE_G1, "page": "two"},
                                                          "invalid_input")
    exported = (await ok(harness, "/audit/export", {"space": SPACE_G1}))["export"]
    assert exported["scope_key"] == "bot-1:group_g1" and len(exported["entries"]) == 5
    assert all(e["scope_key"] == "bot-1:group_g1" for e in exported["entries"])
    empty = await ok(harness, "/audit", {"space": {"scope_key": "bot-1:group_nobody", "user_key": "bot-1:group_nobody"}})
    assert (empty["entries"], empty["total"], empty["pages"]) == ([], 0, 1)


async def test_export_has_l1_and_l2_of_the_space_only(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    await harness.call_tool("update_profile", {"scope": "session", "name": "Tea club"}, session=G1, query_id=1)
    await harness.call_tool("update_profile", {"scope": "speaker", "traits": ["calm"]}, session=G1, query_id=1)
    keep = await remember(harness, G1, "group fact")
    hidden = await remember(harness, G1, "old group fact")
    await ok(harness, "/episode/archive", {"space": SPACE_G1, "episode_id": hidden})
    await remember(harness, P2, "private fact")
    data = await ok(harness, "/export", {"space": SPACE_G1})
    export = data["export"]
    assert export["l1"]["scope_key"] == "bot-1:group_g1" and export["l1"]["session_profile"]["name"] == "Tea club"
    assert list(export["l1"]["speaker_profiles"]) == ["u1"]
    assert export["l2"]["user_key"] == "bot-1:group_g1"
    assert {e["id"]: e["status"] for e in export["l2"]["episodes"]} == {keep: "active", hidden: "archived"}
    assert "private fact" not in json.dumps(export)
    only_active = (await ok(harness, "/export", {"space": SPACE_G1, "statuses": ["active"]}))["export"]
    assert [e["id"] for e in only_active["l2"]["episodes"]] == [keep]


async def test_export_without_a_kb_still_has_l1(harness: PluginHarness) -> None:
    await harness.call_tool("update_profile", {"scope": "session", "name": "Tea club"}, session=G1, query_id=1)
    data = await ok(harness, "/export", {"space": SPACE_G1})
    assert data["export"]["l1"]["session_profile"]["name"] == "Tea club"
    assert data["export"]["l2"] is None and "no memory knowledge base" in data["l2_error"]


# --------------------------------------------------------------------------- health, fences, review


async def test_health_reports_cards(harness: PluginHarness) -> None:
    report = (await ok(harness, "/health"))["report"]
    assert report["level"] == "red" and report["items"][0]["key"] == "kb"
    kb = await harness.create_memory_kb()
    report = (await ok(harness, "/health", {"space": SPACE_G1}))["report"]
    assert report["level"] == "green"
    assert [i["key"] for i in report["items"]] == ["kb", "embedding", "isolation", "store", "fence", "settings"]
    assert kb in report["items"][0]["message"]
    report = (await ok(harness, "/health", {}))["report"]
    assert "fence" not in [i["key"] for i in report["items"]]
    # The probe cleaned up after itself.
    assert [r for r in await harness.host.dump_kb(kb) if "health-probe" in json.dumps(r)] == []


async def fence_group(h: PluginHarness) -> str:
    h.host.fail_next(A.VECTOR_UPSERT, ActionCallTimeoutError("vector_upsert timed out"))
    out = await h.call_tool("remember", {"content": "write whose outcome is unknown"}, session=G1, query_id=1)
    assert out["ok"] is False
    return out["error"]


async def test_fenced_space_refuses_writes_until_the_fence_is_cleared(harness: PluginHarness) -> None:
    kb = await harness.create_memory_kb()
    eid = await remember(harness, G1, "Alice likes green tea")
    other = await remember(harness, P2, "private fact")
    await fence_group(harness)

    fences = (await ok(harness, "/overview"))["fences"]
    assert [(f["kind"], f["kb_id"], f["user_key"], f["current_kb"]) for f in fences] == [
        ("l2", kb, "bot-1:group_g1", True)]
    health = (await ok(harness, "/health", {"space": SPACE_G1}))["report"]
    assert health["level"] == "amber" and {i["key"]: i["level"] for i in health["items"]}["fence"] == "amber"

    error = await refused(harness, "/episode/archive", {"space": SPACE_G1, "episode_id": eid}, "fenced")
    assert "paused" in error and "Clear Fence in the Diagnostics tab" in error
    await refused(harness, "/episode/delete", {"space": SPACE_G1, "episode_id": eid}, "fenced")
    # Reads keep working, and another space is not blocked (F1, F2).
    assert eid in await statuses_in(harness, SPACE_G1)
    await ok(harness, "/export", {"space": SPACE_G1})
    await ok(harness, "/episode/archive", {"space": SPACE_P2, "episode_id": other})
    # Clearing another space does not lift this fence.
    assert (await ok(harness, "/fence/clear", {"space": SPACE_P2}))["cleared"] == []
    await refused(harness, "/episode/archive", {"space": SPACE_G1, "episode_id": eid}, "fenced")

    assert "space is required" in await refused(harness, "/fence/clear", {}, "invalid_input")
    cleared = await ok(harness, "/fence/clear", {"space": SPACE_G1})
    assert cleared["cleared"] == [f"l2:{kb}:bot-1:group_g1"] and cleared["fenced"] is False
    assert cleared["installation"] is False
    assert (await ok(harness, "/overview"))["fences"] == []
    await ok(harness, "/episode/archive", {"space": SPACE_G1, "episode_id": eid})
    assert (await ok(harness, "/fence/clear", {"space": SPACE_G1}))["cleared"] == []

    entries = (await ok(harness, "/audit", {"space": SPACE_G1}))["entries"]
    assert [e["operation"] for e in entries[:2]] == ["archive", "fence_clear"]
    assert entries[1]["target_type"] == "fence" and entries[1]["target_id"] == f"l2:{kb}:bot-1:group_g1"
    assert [e["operation"] for e in entries].count("fence_clear") == 1


async def test_installation_fence_is_cleared_only_when_named(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    memory = harness.plugin.memory
    await memory.parts.fences.raise_fence(INSTALLATION_SPACE, "kb register", "timed out")
    assert (await ok(harness, "/fence/clear", {"space": SPACE_G1}))["cleared"] == []
    assert [f["kind"] for f in (await ok(harness, "/overview"))["fences"]] == ["installation"]
    assert "installation must be true or false" in await refused(
        harness, "/fence/clear", {"space": SPACE_G1, "installation": "maybe"}, "invalid_input")
    await ok(harness, "/fence/clear", {"space": SPACE_G1, "installation": False})
    assert await memory.parts.fences.get(INSTALLATION_SPACE) is not None

    cleared = await ok(harness, "/fence/clear", {"space": SPACE_G1, "installation": True})
    assert cleared["cleared"] == [INSTALLATION_SPACE.key] and cleared["installation"] is True
    assert await memory.parts.fences.get(INSTALLATION_SPACE) is None
    # Audited in the installation's log (it is no chat's change), not in the selected space's.
    entry = (await installation_audit(memory)).entries[0]
    assert (entry["operation"], entry["target_id"]) == ("fence_clear", INSTALLATION_SPACE.key)
    assert "fence_clear" not in [e["operation"] for e in (await ok(harness, "/audit", {"space": SPACE_G1}))["entries"]]
    # Without a selected space the installation fence can still be cleared (audited on the installation).
    await memory.parts.fences.raise_fence(INSTALLATION_SPACE, "kb register", "timed out")
    assert (await ok(harness, "/fence/clear", {"installation": True}))["cleared"] == [INSTALLATION_SPACE.key]
    assert (await memory.parts.audit.page("installation", 1)).entries[0]["operation"] == "fence_clear"
    # ...which is not offered as a memory space.
    assert [s["scope_key"] for s in (await ok(harness, "/overview"))["scopes"]] == ["bot-1:group_g1"]


async def test_review_reports_both_switches_and_the_spaces_drafts(harness: PluginHarness) -> None:
    data = await ok(harness, "/review", {})
    assert data["enabled"] is True and data["settings"] == {"consolidation_enabled": False,
                                                            "candidate_extraction_enabled": False}
    await harness.create_memory_kb(consolidation_enabled=True)
    data = await ok(harness, "/review", {"space": SPACE_G1})
    assert data["settings"]["consolidation_enabled"] is True and data["drafts"] == []


# --------------------------------------------------------------------------- bad requests


@pytest.mark.parametrize("body", [[1, 2], "space", 3, True])
async def test_non_object_bodies_are_invalid_input(harness: PluginHarness, body: Any) -> None:
    for endpoint in ("/overview", "/episodes", "/episode/archive", "/fence/clear"):
        assert "JSON object" in await refused(harness, endpoint, body, "invalid_input")


async def test_malformed_bodies_name_the_field(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    cases: list[tuple[str, Any, str]] = [
        ("/profiles", {}, "space is required"),
        ("/profiles", {"space": "bot-1:group_g1"}, "space is required"),
        ("/profiles", {"space": {"scope_key": "a"}}, "space.user_key is required"),
        ("/profiles", {"space": {"scope_key": 5, "user_key": "a"}}, "space.scope_key must be a string"),
        ("/profiles", {"space": {**SPACE_G1, "kb_id": "x"}}, "unknown field(s) in space: kb_id"),
        ("/profiles", {"space": {"scope_key": "a\nb", "user_key": "a"}}, "single line"),
        ("/profiles", {"space": {"scope_key": "a\x07b", "user_key": "a"}}, "control characters"),
        ("/profiles", {"space": {"scope_key": "a" * 600, "user_key": "a"}}, "space.scope_key is longer than"),
        ("/episodes", {"space": SPACE_G1, "pagee": 2}, "unknown field(s): pagee"),
        ("/episodes", {"space": SPACE_G1, "page": 0}, "page must be a whole number"),
        ("/episodes", {"space": SPACE_G1, "page": True}, "page must be a whole number"),
        ("/episode/archive", {"space": SPACE_G1}, "episode_id is required"),
        ("/episode/restore", {"space": SPACE_G1, "episode_id": ["a"]}, "episode_id must be a string"),
        ("/episode/delete", {"space": SPACE_G1, "episode_id": "x" * 200}, "episode_id is longer than"),
        ("/export", {"space": SPACE_G1, "statuses": ["active", "nope"]}, "unknown statuses 'nope'"),
        ("/overview", {"space": SPACE_G1}, "unknown field(s): space"),
    ]
    for endpoint, body, message in cases:
        error = await refused(harness, endpoint, body, "invalid_input")
        assert message in error, (endpoint, body, error)


async def test_unknown_endpoints_and_methods(harness: PluginHarness) -> None:
    assert "unknown endpoint" in await refused(harness, "/nope", {}, "unknown_endpoint")
    await refused(harness, "/episode", {}, "unknown_endpoint")
    await refused(harness, "/episode/forget", {}, "unknown_endpoint")
    await refused(harness, "/episode/delete", {"space": SPACE_G1, "episode_id": "x"}, "method_not_allowed", "GET")
    await refused(harness, "/fence/clear", {"space": SPACE_G1}, "method_not_allowed", "GET")
    await refused(harness, "/overview", {}, "method_not_allowed", "DELETE")
    await ok(harness, "/overview/", {})  # a trailing slash is tolerated


async def test_unexpected_errors_never_escape_handle_api(harness: PluginHarness, monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    await harness.create_memory_kb()

    async def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(harness.plugin.memory, "list_episodes", boom)
    error = await refused(harness, "/episodes", {"space": SPACE_G1}, "internal_error")
    assert "secret internals" not in error
    assert "secret internals" in caplog.text  # the trace goes to the plugin log


# --------------------------------------------------------------------------- static checks of index.html


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.attrs: list[tuple[str, str, str | None]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            self.attrs.append((tag, name, value))
        if tag == "script":
            self._script = dict(attrs)
            self.scripts.append((self._script, ""))

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = None


def _parsed() -> _Collector:
    parser = _Collector()
    parser.feed(HTML)
    return parser


def _dictionaries() -> dict[str, dict[str, str]]:
    parser = _parsed()
    blocks = [text for attrs, text in parser.scripts if attrs.get("id") == "ltm-i18n"]
    assert len(blocks) == 1
    return json.loads(blocks[0])


def _code_without_comments(parser: _Collector) -> str:
    code = "\n".join(text for attrs, text in parser.scripts if attrs.get("type") != "application/json")
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.DOTALL)
    return re.sub(r"(^|\s)//[^\n]*", r"\1", code)


def test_html_loads_nothing_from_outside() -> None:
    parser = _parsed()
    url_attrs = [(tag, name, value) for tag, name, value in parser.attrs
                 if name in ("src", "href", "srcset", "action", "poster", "data", "formaction")]
    assert url_attrs == [], "the blob: page cannot resolve relative URLs and must not load external ones"
    assert all(not attrs.get("src") for attrs, _ in parser.scripts)
    assert re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", HTML, re.IGNORECASE) is None
    assert "@import" not in HTML and "url(" not in HTML and "@font-face" not in HTML
    code = _code_without_comments(parser)
    for banned in ("localStorage", "sessionStorage", "document.cookie", "fetch(", "XMLHttpRequest", "window.open",
                   "innerHTML", "eval(", "new Function"):
        assert banned not in code, banned
    for modal in ("alert", "confirm", "prompt"):
        assert re.search(rf"(?<![\w.]){modal}\s*\(|window\.{modal}\s*\(", code) is None, modal


def test_dictionaries_have_the_same_keys_and_no_empty_text() -> None:
    dicts = _dictionaries()
    assert set(dicts) == {"en_US", "zh_Hans", "zh_Hant", "ja_JP"}  # the console's languages, as built
    for lang, entries in dicts.items():
        assert set(entries) == set(dicts["en_US"]), lang
        assert all(isinstance(v, str) and v.strip() for v in entries.values()), lang
        for key, text in dicts["en_US"].items():  # the same placeholders in every language
            assert set(re.findall(r"\{(\w+)\}", text)) == set(re.findall(r"\{(\w+)\}", entries[key])), (lang, key)


def test_every_used_i18n_key_exists() -> None:
    keys = set(_dictionaries()["en_US"])
    parser = _parsed()
    static = {value for _, name, value in parser.attrs if name == "data-i18n"}
    assert static and static <= keys, static - keys
    code = "\n".join(text for attrs, text in parser.scripts if attrs.get("type") != "application/json")
    literal = {key for key in re.findall(r"\bt\('([\w.]+)'", code) if not key.endswith(".")}
    assert literal and literal <= keys, literal - keys
    # Keys built at run time from a prefix and a value.
    dynamic = {f"status.{s}" for s in ("active", "superseded", "archived", "deleted", "all")}
    dynamic |= {f"level.{lv}" for lv in ("green", "amber", "red")}
    dynamic |= {f"item.{i}" for i in ("kb", "embedding", "isolation", "fence", "pipeline", "settings")}
    dynamic |= {f"isolation.{i}" for i in ("session", "bot")}
    dynamic |= {f"origin.{o}" for o in ("creation", "default", "override")}
    dynamic |= {f"chat.{kind}" for kind in ("group", "person")}
    dynamic |= {f"people.outcome.{o}" for o in ("planned", "erased", "fenced", "failed")}
    dynamic |= {f"people.count.{k}" for k in ("episodes", "summaries", "speaker_profiles", "candidates", "snapshots")}
    for kind in ("archive", "restore", "delete"):
        dynamic |= {f"confirm.{kind}", f"confirm.{kind}Title", f"done.{kind}", f"episodes.{kind}"}
    assert dynamic <= keys, dynamic - keys


def test_every_tab_has_a_panel_and_an_accessible_name() -> None:
    parser = _parsed()
    tabs = [value for tag, name, value in parser.attrs if name == "data-tab"]
    assert tabs == ["profiles", "episodes", "injection", "conversation", "audit", "export", "diagnostics", "review",
                    "people", "settings"]
    ids = {value for _, name, value in parser.attrs if name == "id"}
    for tab in tabs:
        assert {f"tab-{tab}", f"panel-{tab}"} <= ids
    assert ('div', 'role', 'tablist') in parser.attrs


async def test_restore_names_the_correction_that_is_still_active(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    old = await remember(harness, G1, "Alice drinks green tea")
    fixed = await harness.call_tool("remember", {"content": "Alice switched to black tea", "supersedes": [old]},
                                    session=G1, query_id=11)
    data = await ok(harness, "/episode/restore", {"space": SPACE_G1, "episode_id": old})
    assert data["previous_status"] == "superseded" and data["episode"]["status"] == "active"
    assert data["episode"]["superseded_by"] == fixed["episode_id"]
    assert data["active_correction"]["id"] == fixed["episode_id"]
    assert data["active_correction"]["content"] == "Alice switched to black tea"
