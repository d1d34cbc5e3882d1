"""LongTermMemory inside a real LangBot 4.11.2 (SQLite + embedded Chroma, or Milvus Lite with
LTM_E2E_VDB=milvus), end to end.

The plugin is installed from its built `.lbpkg` through LangBot's HTTP API; the chat goes
through the WebUI debug-chat WebSocket, LangBot's pipeline (PromptPreProcessing, command
handling, the runner), the plugin runtime and the test Runner plugin
(tests/e2e/runner_plugin) to the scripted local model (devhost/model_server.py), whose
request log shows exactly which prompt the model received.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from typing import Any

import pytest

from devhost.chat import ltm_block, ltm_context, system_texts
from devhost.langbot_setup import ensure_pipeline
from devhost.lbclient import CONSUMER_PLUGIN, LTM_PLUGIN, RUNNER_ID, RUNNER_PLUGIN
from tests.e2e.health_lines import health_checks
from tests.e2e.page_api_log import PageApiLog

SCRIPTED = "[scripted local model]"
EPISODE_ID = re.compile(r'episode id ([0-9a-f-]{36})')


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def turn(e2e: Any, chat: Any, text: str) -> tuple[str, list[dict[str, Any]]]:
    """Send one message; return the reply and the chat requests the model received for it."""
    mark = e2e.model_log.mark()
    reply = chat.send(text)
    return reply, e2e.model_log.chats_since(mark)


def remember(e2e: Any, chat: Any, fact: str) -> str:
    reply, requests = turn(e2e, chat, f"remember that {fact}")
    assert reply.startswith(SCRIPTED) or SCRIPTED in reply, reply
    assert "done: remember" in reply and "It worked" in reply, reply
    calls = [c for r in requests for c in (r["reply"].get("tool_calls") or [])]
    assert [c["function"]["name"] for c in calls] == ["remember"], requests
    assert json.loads(calls[0]["function"]["arguments"]) == {"content": fact}
    match = EPISODE_ID.search(reply)
    assert match, reply
    return match.group(1)


def every_text(requests: list[dict[str, Any]]) -> str:
    return json.dumps([r["messages"] for r in requests], ensure_ascii=False)


# --------------------------------------------------------------------------- install / setup
def test_every_listener_is_loopback(e2e):
    listeners = e2e.stack.our_listeners()
    ports = {port for _, port, _ in listeners}
    assert {e2e.stack.ports["webui"], e2e.stack.ports["runtime"], e2e.stack.ports["runtime_debug"],
            e2e.stack.ports["model"]} <= ports, listeners
    assert e2e.stack.wildcard_listeners() == [], listeners


def test_plugins_installed_from_lbpkg(e2e):
    client = e2e.client
    for author, name in (LTM_PLUGIN, RUNNER_PLUGIN):
        plugin = client.plugin(author, name)
        assert plugin is not None, f"{author}/{name} not installed"
        assert plugin["install_source"] == "local" and plugin["debug"] is False, plugin
        assert plugin["status"] == "initialized", plugin
    ltm = client.plugin(*LTM_PLUGIN)
    kinds = {(c["manifest"]["manifest"]["kind"], c["manifest"]["manifest"]["metadata"]["name"])
             for c in ltm["components"]}
    assert {("Tool", "remember"), ("Tool", "recall_memory"), ("Tool", "update_profile"), ("Tool", "forget"),
            ("EventListener", "memory_injector"), ("KnowledgeEngine", "memory_engine")} <= kinds, kinds
    runners = json.dumps(client.get("/pipelines/_/metadata"))
    assert RUNNER_ID in runners


def test_memory_kb_uses_the_plugin_engine(e2e):
    client = e2e.client
    engines = {engine["plugin_id"]: engine for engine in client.knowledge_engines()}
    assert "langbot-ltm/LongTermMemory" in engines
    schema = engines["langbot-ltm/LongTermMemory"]["creation_schema"]
    schema = schema.get("schema", []) if isinstance(schema, dict) else schema
    schema = [item["name"] for item in schema]
    assert "embedding_model_uuid" in schema
    bases = {kb["uuid"]: kb for kb in client.get("/knowledge/bases")["bases"]}
    kb = bases[e2e.info.kb_uuid]
    assert kb["knowledge_engine_plugin_id"] == "langbot-ltm/LongTermMemory", kb
    assert kb["creation_settings"]["embedding_model_uuid"] == e2e.info.embedding_model_uuid


# --------------------------------------------------------------------------- memory in chat
def test_remembered_in_one_session_recalled_there_only(e2e):
    person_fact = f"the offsite for project {unique('kiwi')} is in Lisbon"
    group_fact = f"the demo of project {unique('plum')} moved to Thursday"
    with e2e.chat("person") as person, e2e.chat("group") as group:
        person_id = remember(e2e, person, person_fact)
        group_id = remember(e2e, group, group_fact)
        assert person_id != group_id

        # A later turn of the same session: the memory is in the prompt the model receives.
        reply, requests = turn(e2e, person, f"where is the offsite for {person_fact.split()[4]}?")
        assert len(requests) == 1, requests
        block = ltm_block(requests[0])
        assert person_fact in block, system_texts(requests[0])
        assert group_fact not in every_text(requests)
        assert reply.startswith(SCRIPTED) and "[LongTermMemory] context: yes" in reply, reply

        reply, requests = turn(e2e, group, f"when is the demo of {group_fact.split()[4]}?")
        assert group_fact in ltm_block(requests[0]), system_texts(requests[0])
        assert person_fact not in every_text(requests)

        # The other session asks about the first one's memory: it never reaches its prompt.
        reply, requests = turn(e2e, group, f"where is the offsite for {person_fact.split()[4]}?")
        assert requests and person_fact not in every_text(requests)

    # A new person (a new debug-chat connection) sees neither.
    with e2e.chat("person") as stranger:
        reply, requests = turn(e2e, stranger, f"where is the offsite for {person_fact.split()[4]}?")
        text = every_text(requests)
        assert person_fact not in text and group_fact not in text
        assert "I see 0 memory lines" in reply, reply


def test_update_profile_then_profile_in_system_prompt(e2e):
    name = unique("Ada")
    with e2e.chat("person") as chat:
        reply, requests = turn(e2e, chat, f"my name is {name}")
        calls = [c for r in requests for c in (r["reply"].get("tool_calls") or [])]
        assert [c["function"]["name"] for c in calls] == ["update_profile"], requests
        assert json.loads(calls[0]["function"]["arguments"]) == {"field": "name", "action": "set", "value": name}
        assert "done: update_profile" in reply and "error" not in reply.lower(), reply

        reply, requests = turn(e2e, chat, "hello again")
        block = ltm_block(requests[0])
        profile_line = next((line for line in block.splitlines() if line.startswith("speaker_profile:")), "")
        assert name in profile_line, block
        context = ltm_context(requests[0])
        assert context is not None and context["speaker_profile"]["name"] == name, context
        assert name in reply  # the scripted model echoes the speaker profile line

    with e2e.chat("person") as other:
        reply, requests = turn(e2e, other, "hello")
        assert name not in every_text(requests)


def test_ltm_context_reaches_the_runner(e2e):
    fact = f"the shuttle code word is {unique('orchid')}"
    with e2e.chat("person") as chat:
        _, first = turn(e2e, chat, "hello")
        context = ltm_context(first[0])
        assert context is not None, system_texts(first[0])  # present (empty) before anything is stored
        assert context["episodes"] == [] and context["speaker"]["id"] == chat.sender_id, context
        remember(e2e, chat, fact)
        reply, requests = turn(e2e, chat, f"what is the shuttle code word? ({fact.split()[-1]})")
        context = ltm_context(requests[0])
        assert context is not None, system_texts(requests[0])
        assert fact in [episode["content"] for episode in context["episodes"]], context
        assert context["speaker"]["id"] == chat.sender_id, context
        assert "_ltm_context: yes" in reply, reply


def test_a_chat_with_no_memory_yet_is_told_who_is_speaking(e2e):
    """Issue 34 point 6: before anything is stored, the model's request already names the current
    speaker (and the date), because the memory KB is attached to the pipeline."""
    with e2e.chat("person") as chat:
        _, requests = turn(e2e, chat, "hi, this is my very first message here")
        assert requests, "the message must reach the model"
        block = ltm_block(requests[0])
        speaker = next((line for line in block.splitlines() if line.startswith("current_speaker:")), "")
        assert f'(id "{chat.sender_id}")' in speaker, system_texts(requests[0])
        assert "Current date and time:" in block and "memory 1 (" not in block, block


# --------------------------------------------------------------------------- !memory command
def test_memory_command_list_show_forget_health(e2e):
    fact = f"the lab key is kept at desk {unique('m')}"
    with e2e.chat("person") as chat:
        episode_id = remember(e2e, chat, fact)

        reply, requests = turn(e2e, chat, "!memory list")
        assert requests == [], "a !memory command must not reach the model"
        assert episode_id in reply and fact in reply, reply

        reply, requests = turn(e2e, chat, f"!memory show {episode_id}")
        assert requests == []
        assert episode_id in reply and fact in reply, reply

        reply, requests = turn(e2e, chat, "!memory health")
        assert requests == []
        lines = [line.rstrip() for line in reply.splitlines()]
        assert lines and lines[0].endswith("Memory health: GREEN"), reply
        # Every line green, like a LocalAgent pipeline: the runner declares knowledge retrieval,
        # so the host lists the attached memory KB for this pipeline.
        for key in ("kb", "processor", "embedding", "isolation", "store", "fence"):
            assert any(line.startswith(f"GREEN {key}") for line in lines), reply
        items = health_checks(reply)
        assert all(line.startswith("GREEN ") for line in items), reply
        # The store line names what the probe found in the store LangBot is configured with.
        store = next(line for line in lines if line.startswith("GREEN store"))
        # SeekDB keeps and filters metadata like Chroma; pgvector keeps the fixed columns and a distance.
        kind = {"milvus": "like Milvus", "pgvector": "like pgvector"}.get(e2e.stack.config.vdb, "like Chroma")
        assert kind in store, store
        assert ("full-text matches" in store) is (e2e.stack.config.vdb in ("chroma", "seekdb")), store

        reply, requests = turn(e2e, chat, f"!memory forget {episode_id}")
        assert requests == []
        assert episode_id in reply and re.search(r"delet|forg", reply, re.I), reply

        reply, _ = turn(e2e, chat, "!memory list")
        assert episode_id not in reply, reply
        reply, requests = turn(e2e, chat, f"what about the lab key at desk {fact.split()[-1]}?")
        assert fact not in ltm_block(requests[0])


def test_memory_command_is_scoped_to_the_session(e2e):
    fact = f"the group mascot is a {unique('heron')}"
    with e2e.chat("group") as group:
        episode_id = remember(e2e, group, fact)
        reply, _ = turn(e2e, group, "!memory list")
        assert episode_id in reply, reply
    with e2e.chat("person") as person:
        reply, _ = turn(e2e, person, "!memory list")
        assert episode_id not in reply, reply
        reply, _ = turn(e2e, person, f"!memory show {episode_id}")
        assert fact not in reply, reply
        reply, _ = turn(e2e, person, f"!memory forget {episode_id}")
        assert not re.search(r"^Deleted episode", reply), reply
    with e2e.chat("group") as group:
        reply, _ = turn(e2e, group, f"!memory show {episode_id}")
        assert fact in reply, reply


# --------------------------------------------------------------------------- explicit retrieval
def kb_results(request: dict[str, Any]) -> dict[str, Any] | None:
    """What the test Runner retrieved this turn ("KB_RESULTS: <json>"), or None."""
    for text in system_texts(request):
        if text.startswith("KB_RESULTS: "):
            return json.loads(text[len("KB_RESULTS: "):])
    return None


def test_runner_is_granted_the_memory_kb(e2e):
    """The host lists the attached memory KB in `_knowledge_base_uuids` (the plugin injects)
    and grants it to the runner, which can retrieve from it."""
    fact = f"the ferry leaves from pier {unique('p')}"
    with e2e.chat("person") as chat:
        remember(e2e, chat, fact)
        _, requests = turn(e2e, chat, f"which pier does the ferry leave from? [kb? {fact.split()[-1]}]")
    results = kb_results(requests[0])
    assert results is not None and results["kbs"] == [e2e.info.kb_uuid], system_texts(requests[0])


def test_explicit_retrieval_of_the_memory_kb_in_the_same_turn(e2e):
    fact = f"the spare badge for lab {unique('q')} is in the blue drawer"
    code = fact.split()[5]
    with e2e.chat("person") as chat:
        remember(e2e, chat, fact)
        reply, requests = turn(e2e, chat, f"where is the spare badge? [kb? spare badge for lab {code}]")
        assert len(requests) == 1, requests
        # Injected once by the listener ...
        assert fact in ltm_block(requests[0]), system_texts(requests[0])
        results = kb_results(requests[0])
        assert results is not None, system_texts(requests[0])
        # ... the runner's automatic retrieval of the same message gets nothing (no double recall),
        # and its explicit retrieval with its own query text in the same turn gets the memory.
        assert results["automatic"] == [], results
        assert fact in results["explicit"], results
        assert f"kb results: 0 automatic, {len(results['explicit'])} explicit" in reply, reply

        # A later explicit retrieval with the same query is served again (only one retrieval per
        # injected turn is dropped, and only the one with the turn's own message).
        _, requests = turn(e2e, chat, f"and again? [kb? spare badge for lab {code}]")
        assert fact in kb_results(requests[0])["explicit"]

    # Another person's runner retrieving the same memory KB gets nothing of this chat.
    with e2e.chat("person") as stranger:
        _, requests = turn(e2e, stranger, f"where is the spare badge? [kb? spare badge for lab {code}]")
        results = kb_results(requests[0])
        assert results is not None and fact not in json.dumps(results, ensure_ascii=False), results


# --------------------------------------------------------------------------- _ltm_context consumer
@pytest.fixture(scope="module")
def consumer_pipelines(e2e) -> dict[str, str]:
    """Pipelines with the test consumer plugin (installed after LongTermMemory) bound:
    - memory: the memory KB attached and LongTermMemory bound (memory active);
    - no_kb: LongTermMemory bound but the memory KB not attached (memory inactive there);
    - no_ltm: the memory KB attached but LongTermMemory not bound (its listener never runs)."""
    client = e2e.client
    llm = e2e.info.llm_model_uuid
    kb = e2e.info.kb_uuid
    return {
        "memory": ensure_pipeline(client, "e2e consumer (memory)", llm_uuid=llm, kb_uuids=[kb],
                                  plugins=[LTM_PLUGIN, CONSUMER_PLUGIN]),
        "no_kb": ensure_pipeline(client, "e2e consumer (no memory KB)", llm_uuid=llm, kb_uuids=[],
                                 plugins=[LTM_PLUGIN, CONSUMER_PLUGIN]),
        "no_ltm": ensure_pipeline(client, "e2e consumer (LongTermMemory not bound)", llm_uuid=llm, kb_uuids=[kb],
                                  plugins=[CONSUMER_PLUGIN]),
    }


def consumer_record(request: dict[str, Any]) -> dict[str, Any]:
    """What the consumer plugin read ("LTM_CONSUMER: <json>"); fails when it did not run."""
    records = [json.loads(t[len("LTM_CONSUMER: "):]) for t in system_texts(request) if t.startswith("LTM_CONSUMER: ")]
    assert len(records) == 1, system_texts(request)
    return records[0]


def test_consumer_plugin_sees_profile_and_episodes(e2e, consumer_pipelines):
    fact = f"the choir rehearses in room {unique('r')}"
    with e2e.chat("person", consumer_pipelines["memory"]) as chat:
        reply, requests = turn(e2e, chat, "my trait is 喜欢幽默")
        calls = [c for r in requests for c in (r["reply"].get("tool_calls") or [])]
        assert [json.loads(c["function"]["arguments"]) for c in calls] == [
            {"field": "traits", "action": "add", "value": "喜欢幽默"}], requests
        assert "done: update_profile" in reply and "It worked" in reply, reply
        remember(e2e, chat, fact)

        _, requests = turn(e2e, chat, f"where does the choir rehearse? {fact.split()[-1]}")
        record = consumer_record(requests[0])
        # The consumer got the same dict the runner got, and the documented lines work on it.
        assert record["ltm"] == ltm_context(requests[0]), (record, ltm_context(requests[0]))
        assert record["ltm"]["speaker"]["id"] == chat.sender_id
        assert record["traits"] == ["喜欢幽默"] and record["profile"]["traits"] == ["喜欢幽默"], record
        assert fact in [episode["content"] for episode in record["ltm"]["episodes"]], record
        # The documented example's decision reaches the model.
        assert record["style"] == "Use a humorous and playful tone.", record
        assert "Use a humorous and playful tone." in system_texts(requests[0])
        assert "error" not in record, record


def test_consumer_plugin_memory_active_but_no_data_yet(e2e, consumer_pipelines):
    with e2e.chat("person", consumer_pipelines["memory"]) as chat:
        _, requests = turn(e2e, chat, "hello")
    record = consumer_record(requests[0])
    ltm = record["ltm"]
    # Present with empty fields (not None): "memory plugin active, no data yet".
    assert isinstance(ltm, dict), record
    assert ltm["speaker"]["id"] == chat.sender_id and ltm["episodes"] == [], ltm
    for profile in (ltm["session_profile"], ltm["speaker_profile"]):
        assert profile["name"] == "" and profile["traits"] == [] and profile["preferences"] == [], ltm
        assert profile["notes"] == "", ltm
    assert record["traits"] == [] and record["style"] is None, record


def test_consumer_plugin_in_a_pipeline_without_the_memory_kb_reads_none(e2e, consumer_pipelines):
    """LongTermMemory is bound but has no memory KB here: memory is inactive, and the variable is
    None, so the documented consumer takes its "not installed or inactive" branch without error."""
    with e2e.chat("person", consumer_pipelines["no_kb"]) as chat:
        reply, _ = turn(e2e, chat, "my trait is 偏好简洁")
        assert "done: update_profile" in reply, reply  # tools still work
        _, requests = turn(e2e, chat, "hello")
    record = consumer_record(requests[0])
    assert record["ltm"] is None and record["profile"] is None and record["style"] is None, record
    assert "error" not in record, record
    assert ltm_context(requests[0]) is None and ltm_block(requests[0]) == ""


def test_consumer_plugin_where_longterm_memory_never_runs(e2e, consumer_pipelines):
    """The "not installed" stand-in: LongTermMemory is not bound, so nothing sets the variable.
    On LangBot 4.11.2 the documented `get_query_var("_ltm_context")` then raises (the host indexes
    a missing key) and the host drops the turn: no reply. That is host behaviour for any consumer,
    recorded here because the README tells consumer authors to read the variable with
    `get_query_vars().get("_ltm_context")` for that reason."""
    from devhost.chat import ChatError

    with e2e.chat("person", consumer_pipelines["no_ltm"]) as chat:
        mark = e2e.model_log.mark()
        with pytest.raises(ChatError, match="no final reply"):
            chat.send("hello", timeout=20)
        assert e2e.model_log.chats_since(mark) == []  # the model was never asked


# --------------------------------------------------------------------------- Memory Console page
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def test_memory_console_lists_episode_in_real_webui(e2e, tmp_path):
    # A developer without the browser may skip; CI (scripts/test.sh installs both) must not.
    if os.environ.get("CI"):
        from playwright import sync_api
        assert os.path.exists(CHROMIUM), f"{CHROMIUM} missing: scripts/install-browser.sh did not run"
    else:
        sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package (test extras)")
        if not os.path.exists(CHROMIUM):
            pytest.skip(f"{CHROMIUM} not installed (scripts/install-browser.sh)")
    fact = f"the console shows {unique('lantern')}"
    with e2e.chat("group") as group:
        remember(e2e, group, fact)

    base = e2e.info.base_url
    page_errors: list[str] = []
    frame_console_errors: list[str] = []
    host_console_errors: list[str] = []
    page_api = PageApiLog()
    blocked: list[str] = []

    def route(r: Any) -> None:
        url = r.request.url
        host = re.match(r"^[a-z]+://([^/:]+)", url)
        if url.startswith(("blob:", "data:")) or (host and host.group(1) in ("127.0.0.1", "localhost")):
            r.continue_()
        else:  # the WebUI asks LangBot's cloud for releases/marketplace: never leave the machine
            blocked.append(url)
            r.abort()

    def on_console(msg: Any) -> None:
        if msg.type != "error":
            return
        url = (msg.location or {}).get("url") or ""
        (frame_console_errors if url.startswith("blob:") or "page-sdk" in url else host_console_errors).append(
            f"{msg.text} @ {url}")

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            context.route("**/*", route)
            page = context.new_page()
            page.on("console", on_console)
            page.on("pageerror", lambda err: page_errors.append(str(err)))
            page.on("response", page_api.on_response)
            page.goto(base + "/", wait_until="domcontentloaded")
            # Log in, and skip the first-login product tour and the workspace assistant panel
            # (both overlay the page) the way the WebUI remembers them.
            page.evaluate("""token => {
                localStorage.setItem('token', token);
                localStorage.setItem('langbot_sidebar_guide_v1', 'completed');
                localStorage.setItem('langbot-assistant-panel-open', 'false');
            }""", e2e.info.token)
            page.goto(base + "/home/plugin-pages?id=langbot-ltm%2FLongTermMemory%2Fconsole",
                      wait_until="domcontentloaded")
            frame = page.frame_locator("iframe[title*='LongTermMemory']")
            scope = frame.locator('button.scope-btn[data-scope-key*="group_websocketgroup"]')
            scope.wait_for(timeout=60000)  # the WebUI and the page load slowly on a loaded 2-core machine
            for overlay in (page.get_by_role("button", name=re.compile(r"^\s*Skip\s*$")),
                            page.get_by_role("button", name="Collapse workspace assistant")):
                if overlay.count():  # a WebUI version that ignores the flags above
                    overlay.first.click()
            scope.click(timeout=10000)
            frame.locator("#tab-episodes").click(timeout=10000)
            frame.locator(".ep-content", has_text=fact).first.wait_for(timeout=30000)
            page.wait_for_timeout(500)
            page.screenshot(path=str(tmp_path / "console.png"))
        finally:
            browser.close()

    assert page_api.answered, "the page made no page-api call through the host"
    assert page_api.failures() == [], (page_api.failures(), page_api.unreadable)
    assert page_errors == [], page_errors
    assert frame_console_errors == [], frame_console_errors
    # The WebUI's own errors are only its failed calls to LangBot's cloud (blocked above).
    unexpected = [e for e in host_console_errors if "space.langbot.app" not in e and "releases" not in e]
    assert unexpected == [], (unexpected, blocked)
