"""Consolidation (K3, K4, K7) inside a real LangBot 4.11.2, end to end.

The e2e memory KB is created with `consolidation_enabled=true` and the local chat model as its
`consolidation_model_uuid`; that model is the scripted fake of devhost/model_server.py, which
answers a consolidation request with a valid draft labeled "[scripted draft]". The request log
shows exactly what the plugin sent to the model through LangBot's `invoke_llm`.

1. `!memory consolidate preview` then `run <proposal_id>` through the WebUI debug chat.
2. Asking for a draft and approving it in the Memory Console's Review tab, in headless Chromium.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest

from tests.e2e.page_api_log import PageApiLog
from tests.e2e.test_real_langbot import CHROMIUM, CHROMIUM_ARGS, remember, turn, unique

MARKER = "LongTermMemory consolidation request"
PROPOSAL = re.compile(r"Summary draft ([0-9a-f-]{36}) over")
SUMMARY = re.compile(r"Summary ([0-9a-f-]{36}) is active")
# A chat reply shows quoted text inside its quotation marks with its brackets as typed, as the console
# and the README do (a bracket pair becomes full-width only where it could make a Markdown link).
IN_REPLY = "[scripted draft]"


def consolidation_requests(e2e: Any, mark: int) -> list[dict[str, Any]]:
    return [r for r in e2e.model_log.chats_since(mark)
            if str((r["messages"] or [{}])[0].get("content") or "").startswith(MARKER)]


def test_preview_then_run_through_the_debug_chat(e2e):
    facts = [f"the {unique('kayak')} club paddles on Saturdays",
             f"the {unique('kayak')} club stores its boats at the north pier"]
    with e2e.chat("person") as chat:
        ids = [remember(e2e, chat, fact) for fact in facts]
        mark = e2e.model_log.mark()
        reply = chat.send("!memory consolidate preview")
        match = PROPOSAL.search(reply)
        assert match, reply
        pid = match.group(1)
        for expected in (*ids, *facts, IN_REPLY, f"!memory consolidate run {pid}"):
            assert expected in reply, reply
        [request] = consolidation_requests(e2e, mark)
        # The sources travel as quoted data in the user message; the instructions are the system message.
        user = request["messages"][-1]["content"]
        data = json.loads(user.partition("<sources>\n")[2].partition("\n</sources>")[0])
        assert [d["id"] for d in data] == ids and [d["text"] for d in data] == facts
        assert all(fact not in request["messages"][0]["content"] for fact in facts)

        reply, requests = turn(e2e, chat, f"!memory consolidate run {pid}")
        assert requests == [], "running a reviewed draft calls no model"
        match = SUMMARY.search(reply)
        assert match and "stay active" in reply, reply
        summary_id = match.group(1)
        reply, _ = turn(e2e, chat, f"!memory show {summary_id}")
        assert "Status: active" in reply and "claim type inference" in reply and IN_REPLY in reply, reply
        assert f"Derived from: {ids[0]}, {ids[1]}" in reply and f"Source ref: consolidation:{pid}" in reply, reply
        listed, _ = turn(e2e, chat, "!memory list")
        assert all(i in listed for i in (*ids, summary_id)), listed
        reply, _ = turn(e2e, chat, f"!memory consolidate run {pid}")
        assert "already used" in reply, reply

        # K5: forgetting a source removes the summary built from it; the other source stays.
        turn(e2e, chat, f"!memory forget {ids[0]}")
        listed, _ = turn(e2e, chat, "!memory list")
        assert summary_id not in listed and ids[1] in listed and ids[0] not in listed, listed


def test_approval_in_the_console_review_tab(e2e, tmp_path):
    if os.environ.get("CI"):
        from playwright import sync_api
        assert os.path.exists(CHROMIUM), f"{CHROMIUM} missing: scripts/install-browser.sh did not run"
    else:
        sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package (test extras)")
        if not os.path.exists(CHROMIUM):
            pytest.skip(f"{CHROMIUM} not installed (scripts/install-browser.sh)")
    facts = [f"the {unique('quilt')} circle meets in the old school hall",
             f"the {unique('quilt')} circle shares fabric every first Monday"]
    with e2e.chat("group") as group:
        ids = [remember(e2e, group, fact) for fact in facts]

    base = e2e.info.base_url
    page_errors: list[str] = []
    frame_errors: list[str] = []
    page_api = PageApiLog()

    def route(r: Any) -> None:
        url = r.request.url
        host = re.match(r"^[a-z]+://([^/:]+)", url)
        if url.startswith(("blob:", "data:")) or (host and host.group(1) in ("127.0.0.1", "localhost")):
            r.continue_()
        else:  # the WebUI asks LangBot's cloud for releases/marketplace: never leave the machine
            r.abort()

    def on_console(msg: Any) -> None:
        url = (msg.location or {}).get("url") or ""
        if msg.type == "error" and (url.startswith("blob:") or "page-sdk" in url):
            frame_errors.append(f"{msg.text} @ {url}")

    mark = e2e.model_log.mark()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.route("**/*", route)
            page = context.new_page()
            page.on("console", on_console)
            page.on("pageerror", lambda err: page_errors.append(str(err)))
            page.on("response", page_api.on_response)
            page.goto(base + "/", wait_until="domcontentloaded")
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
                if overlay.count():
                    overlay.first.click()
            scope.click(timeout=10000)
            frame.locator("#tab-review").click(timeout=10000)
            frame.locator("#draft-preview").click(timeout=30000)
            card = frame.locator("#draft-list article.draft").first
            card.wait_for(timeout=60000)
            text = card.inner_text()
            assert "[scripted draft]" in text and all(f in text for f in facts), text
            proposal = card.get_attribute("data-proposal-id")
            card.locator("[data-action=approve]").click(timeout=10000)
            frame.locator("#dialog-ok").click(timeout=10000)
            frame.locator("#review-drafts .alert.ok", has_text="is active").wait_for(timeout=60000)
            page.screenshot(path=str(tmp_path / "review.png"))
        finally:
            browser.close()

    assert consolidation_requests(e2e, mark), "the console's preview did not reach the model"
    assert page_api.answered and page_api.failures() == [], (page_api.failures(), page_api.unreadable)
    assert page_errors == [] and frame_errors == [], (page_errors, frame_errors)
    with e2e.chat("group") as group:
        listed, _ = turn(e2e, group, "!memory list")
    assert IN_REPLY in listed and all(i in listed for i in ids), listed
    assert proposal
