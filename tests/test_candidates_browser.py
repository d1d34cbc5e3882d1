"""The candidate queue in the Memory Console's Review tab, in headless Chromium (M2, Q2).

Same setup as tests/test_console_browser.py (the page in a sandboxed `blob:` iframe, its API
answered by the plugin's real Page dispatch), but on a memory KB with candidate extraction on
and candidates proposed by real NormalMessageResponded events.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from testhost import FakeLangBotHost, PluginHarness, make_backend, make_session
from tests.console_bridge import PageHostServer, attach_page_api
from tests.test_console_browser import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, Console, missing_browser_parts

pytestmark = pytest.mark.slow


async def _propose(h: PluginHarness, host: FakeLangBotHost, query_id: int, launcher: tuple[str, str], sender: str,
                   name: str, text: str) -> None:
    kb = next(iter(host.kbs))
    host.open_query(query_id, bot_uuid="bot-1", launcher_type=launcher[0], launcher_id=launcher[1],
                    sender_id=sender, sender_name=name, message_text=text, pipeline_kbs=[kb])
    event = {"launcher_type": launcher[0], "launcher_id": launcher[1], "sender_id": sender,
             "session": make_session(launcher[0], launcher[1], sender_id=sender), "prefix": "",
             "response_text": "ok", "finish_reason": "stop", "funcs_called": [], "reply_message_chain": None}
    await h.emit_event("NormalMessageResponded", event, query_id=query_id)
    await h.settle()
    host.close_query(query_id)


@pytest.fixture
async def console(tmp_path: Path) -> AsyncIterator[Console]:
    missing = missing_browser_parts()
    if missing:
        message = "browser tests need " + " and ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message + "; CI is set, so they may not be skipped")
        pytest.skip(message)
    from playwright.async_api import async_playwright

    host = FakeLangBotHost(make_backend("chroma", tmp_path))
    host.add_embedding_model("emb-1")
    harness = PluginHarness(host)
    await harness.start()
    server = PageHostServer().start()
    try:
        kb = await harness.create_memory_kb(candidate_extraction_enabled=True)
        await _propose(harness, host, 1, ("group", "g1"), "u1", "Alice",
                       "Remember that the picnic is on Saturday. I love hiking.")
        await _propose(harness, host, 2, ("person", "p2"), "p2", "Bob", "Remember that my dentist visit is Monday.")
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page(viewport={"width": 1280, "height": 900})
                page.set_default_timeout(TIMEOUT_MS)
                env = Console(harness, host, page, server.origin, kb, {})
                page.on("console", lambda msg: env.console_errors.append(f"console.{msg.type}: {msg.text}")
                        if msg.type in ("error", "assert") else None)
                page.on("pageerror", lambda exc: env.console_errors.append(f"pageerror: {exc}"))
                page.on("request", lambda req: None if req.url.startswith((server.origin, "blob:", "data:"))
                        else env.outside_requests.append(req.url))
                await attach_page_api(page, harness, calls=env.api_calls)
                yield env
                env.assert_clean()
            finally:
                await browser.close()
    finally:
        server.stop()
        await harness.stop()
        await host.close()


def _queue(host: FakeLangBotHost, chat_key: str) -> list[dict[str, object]]:
    raw = host.storage.get(f"v2/candidates/{chat_key.replace(':', '%3A')}")
    return json.loads(raw)["items"] if raw else []


async def test_review_tab_accepts_and_rejects_candidates(console: Console) -> None:
    c, fr = console, console.frame
    await c.open()
    await c.tab("review")
    await fr.locator("#review-candidates .empty", has_text="Select a memory space").wait_for()
    assert "Summary drafts" in await fr.locator("#review-drafts").inner_text()  # the drafts part renders beside it

    await c.select_space("bot-1:group_g1")
    cards = fr.locator("#candidate-list article.ep")
    await cards.first.wait_for()
    assert await cards.count() == 2
    assert await fr.locator("#candidate-counts").inner_text() == "2 pending · 0 accepted · 0 rejected"
    queue = "\n".join(await cards.all_inner_texts())
    assert "the picnic is on Saturday" in queue and "hiking" in queue and "dentist" not in queue
    assert "from Alice" in queue and "query:1" in queue
    await c.shot("desktop-light-review-candidates")

    episode = fr.locator("#candidate-list article.ep[data-kind=episode]")
    await episode.locator("[data-action=accept]").click()
    await fr.locator("#dialog-title", has_text="Accept this candidate?").wait_for()
    await c.confirm()
    await fr.locator("#review-candidates .alert.ok", has_text="Accepted and stored.").wait_for()
    await fr.locator("#candidate-counts", has_text="1 pending · 1 accepted · 0 rejected").wait_for()
    assert await cards.count() == 1

    profile = fr.locator("#candidate-list article.ep[data-kind=profile]")
    await profile.locator("[data-action=reject]").click()
    await c.confirm()
    await fr.locator("#candidate-counts", has_text="0 pending · 1 accepted · 1 rejected").wait_for()
    await fr.locator("#review-candidates .empty", has_text="No candidates are waiting").wait_for()

    await fr.locator("#candidates-all").check()
    await fr.locator("#candidate-list article.ep[data-status=accepted]").wait_for()
    accepted = await fr.locator("#candidate-list article.ep[data-status=accepted]").inner_text()
    assert "Applied as" in accepted and "by console" in accepted
    assert await fr.locator("#candidate-list article.ep[data-status=rejected] [data-action]").count() == 0
    statuses = {item["status"] for item in _queue(c.host, "bot-1:group_g1")}
    assert statuses == {"accepted", "rejected"}

    # The accepted candidate is an episode of the space now (the episodes tab was invalidated).
    await c.tab("episodes")
    await fr.locator("#episode-list article.ep", has_text="the picnic is on Saturday").wait_for()

    # Another space has its own queue; Chinese texts; a narrow window does not overflow.
    await c.select_space("bot-1:person_p2")
    await c.tab("review")
    await fr.locator("#candidate-list article.ep", has_text="dentist").wait_for()
    await c.context("dark", "zh-Hans")
    await fr.locator("#review-candidates h3", has_text="候选记忆队列").wait_for()
    assert "接受" in await fr.locator("#candidate-list [data-action=accept]").inner_text()
    await c.page.set_viewport_size({"width": 420, "height": 900})
    await c.no_horizontal_overflow("review tab, narrow")
    await c.shot("narrow-dark-zh-review-candidates")
    await c.context("light", "en-US")

    used = {call["endpoint"] for call in c.api_calls}
    assert {"/review", "/candidates", "/candidate/accept", "/candidate/reject"} <= used
    assert all(call["result"]["data"]["ok"] for call in c.api_calls)
