"""The Review tab's summary drafts in a real headless Chromium (the test host's page bridge, as in
tests/test_console_browser.py): ask for a draft, compare statement by statement, approve, discard,
and see a rejected answer reported. Needs /usr/bin/chromium and the playwright package (see there).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ltm import Identity
from testhost import FakeLangBotHost, PluginHarness, make_backend
from tests.chat import open_chat
from tests.console_bridge import PageHostServer, attach_page_api
from tests.test_console_browser import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, Console, missing_browser_parts

pytestmark = pytest.mark.slow
G1_ALICE = Identity.build(launcher_type="group", launcher_id="g1", bot_uuid="bot-1", sender_id="u1")
FACTS = ["The chess club meets on Wednesdays", "The chess club plays in the library annex",
         "The chess club has a spring tournament", "The chess club buys new clocks in May"]


def sources_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    body = str(messages[-1]["content"]).partition("<sources>\n")[2].partition("\n</sources>")[0]
    return list(json.loads(body))


def per_source(messages: list[dict[str, Any]], payload: dict[str, Any]) -> str:
    return json.dumps({"statements": [{"text": f"Reviewed: {s['text']}", "sources": [s["id"]]}
                                      for s in sources_of(messages)]})


@pytest.fixture
async def review_console(tmp_path: Path) -> AsyncIterator[Console]:
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
        kb = await harness.create_memory_kb(consolidation_enabled=True, consolidation_model_uuid="llm-1")
        chat = open_chat(harness)
        ids = {fact: await chat.remember(fact) for fact in FACTS[:2]}
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page(viewport={"width": 1280, "height": 900})
                page.set_default_timeout(TIMEOUT_MS)
                env = Console(harness, host, page, server.origin, kb, ids)
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


async def test_review_tab_drafts_compares_approves_and_discards(review_console: Console) -> None:
    c, fr = review_console, review_console.frame
    c.host.llm_script = per_source
    await c.open()
    await c.select_space("bot-1:group_g1")
    await c.tab("review")
    await fr.locator("#draft-empty").wait_for()
    await fr.locator("#draft-preview").click()
    card = fr.locator("#draft-list article.draft")
    await card.wait_for()
    rows = card.locator(".cmp-row")
    assert await rows.count() == 2
    for n, fact in enumerate(FACTS[:2]):
        row = rows.nth(n)
        assert f"Reviewed: {fact}" in await row.locator(".cmp-stmt").inner_text()
        source = row.locator(".src")
        assert await source.get_attribute("data-source-id") == c.ids[fact]
        assert fact in await source.inner_text()
    assert "compare each statement" in await fr.locator("#review-drafts .alert.ok").inner_text()
    await c.shot("review-draft-desktop")
    await c.page.set_viewport_size({"width": 420, "height": 900})
    await c.no_horizontal_overflow("review tab, narrow")
    await c.shot("review-draft-narrow")
    await c.page.set_viewport_size({"width": 1280, "height": 900})

    proposal = await card.get_attribute("data-proposal-id")
    await card.locator("[data-action=approve]").click()
    await c.confirm()
    await fr.locator("#review-drafts .alert.ok", has_text="is active").wait_for()
    await fr.locator("#draft-empty").wait_for()
    memory = c.harness.plugin.memory
    scope = await memory.scope_for(G1_ALICE)
    summaries = [e for e in await memory.all_episodes(scope) if e.source == "consolidation"]
    assert len(summaries) == 1 and summaries[0].fact.source_ref == f"consolidation:{proposal}"
    assert all(e.status.value == "active" for e in await memory.all_episodes(scope))

    # A second draft, discarded.
    chat = open_chat(c.harness)
    for fact in FACTS[2:]:
        await chat.remember(fact)
    await fr.locator("#draft-preview").click()
    await card.wait_for()
    await card.locator("[data-action=discard]").click()
    await c.confirm()
    await fr.locator("#review-drafts .alert.ok", has_text="Draft discarded").wait_for()
    await fr.locator("#draft-empty").wait_for()

    # A malformed answer: reported, nothing stored.
    c.host.llm_script = lambda messages, payload: "{not json"
    await memory.forget(scope, summaries[0].episode_id)  # its sources are offered again
    await fr.locator("#draft-preview").click()
    await fr.locator("#review-drafts .alert.error", has_text="not valid JSON").wait_for()
    assert await memory.consolidation_drafts(scope) == []
    used = {call["endpoint"] for call in c.api_calls}
    assert {"/review", "/review/drafts", "/review/draft/preview", "/review/draft/approve",
            "/review/draft/discard"} <= used

