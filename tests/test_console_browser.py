"""The Memory Console in a real headless Chromium, loaded the way the LangBot WebUI loads it.

`tests/console_bridge.py` serves a small host page on 127.0.0.1 that turns
index.html into a `blob:` URL inside `<iframe sandbox="allow-scripts allow-forms">`
and answers the page's `langbot:api` messages through the plugin's real Page
dispatch (`PluginHarness.page_api`) on the fake host. The tests click through
every tab, archive/restore/delete, run the health check, clear fences, switch
language and theme, and save screenshots under tests/artifacts/console/.
Any console error, page error or request leaving 127.0.0.1 fails the test.

Needs Debian's chromium at /usr/bin/chromium (scripts/install-browser.sh) and the
`playwright` Python package (never `playwright install`). Without them the tests
skip, unless the CI environment variable is set: then they fail.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction
from langbot_plugin.entities.io.errors import ActionCallTimeoutError

from ltm import Identity
from ltm.spaces import Space
from testhost import FakeLangBotHost, PluginHarness, make_backend, make_session
from testhost.hooks import installation_audit
from tests.console_bridge import PageHostServer, attach_page_api

INSTALLATION_SPACE = Space.installation()
pytestmark = pytest.mark.slow
A = PluginToRuntimeAction
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts" / "console"
CHROMIUM = Path(os.environ.get("LTM_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
TABS = ["profiles", "episodes", "injection", "conversation", "audit", "export", "diagnostics", "review", "people",
        "settings"]
TIMEOUT_MS = 15_000

G1 = make_session("group", "g1", sender_id="u1")
P2 = make_session("person", "p2")
G1_EPISODES = [
    "Alice likes green tea with jasmine",
    "Erin will host the next board game night",
    "Bob moved to Berlin in March",
    "Weekly sync moved to Tuesday 10:00",
    "Carol is allergic to peanuts",
    "Design review of the new logo is pending",
    "The group votes on the picnic place next week",
    "Dave lends his projector for the meetup",
    "The shared budget for snacks is 50 EUR",
    "The team ships version two on Friday",
    "The wiki password rotation is handled by IT",
    "Frank prefers summaries in bullet points",
]


def missing_browser_parts() -> list[str]:
    missing = []
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        missing.append("the playwright Python package (test extras)")
    if not CHROMIUM.exists():
        missing.append(f"{CHROMIUM} (scripts/install-browser.sh)")
    return missing


@dataclass
class Console:
    harness: PluginHarness
    host: FakeLangBotHost
    page: Any
    origin: str
    kb_id: str
    ids: dict[str, str]
    console_errors: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)
    api_calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def frame(self) -> Any:
        return self.page.frame_locator("#plugin-page")

    def page_frame(self) -> Any:
        for frame in self.page.frames:
            if frame.url.startswith("blob:"):
                return frame
        raise AssertionError("the plugin page iframe is not loaded")

    async def open(self, width: int = 1280, height: int = 900) -> None:
        await self.page.set_viewport_size({"width": width, "height": height})
        await self.page.goto(self.origin + "/")
        await self.page.wait_for_function("window.hostReady === true")
        await self.frame.locator("#scope-list .scope-btn").first.wait_for()

    async def context(self, theme: str, language: str) -> None:
        await self.page.evaluate("([t, l]) => window.setHostContext(t, l)", [theme, language])
        frame = self.page_frame()
        await frame.wait_for_function("t => document.documentElement.classList.contains(t)", arg=theme)

    async def select_space(self, chat_key: str) -> None:
        await self.frame.locator(f'.scope-btn[data-scope-key="{chat_key}"]').first.click()
        await self.frame.locator("#current-scope", has_text=chat_key).wait_for()

    async def tab(self, name: str) -> None:
        await self.frame.locator(f"#tab-{name}").click()
        await self.frame.locator(f"#panel-{name}").wait_for(state="visible")

    async def confirm(self, accept: bool = True) -> None:
        dialog = self.frame.locator("#dialog")
        await dialog.wait_for(state="visible")
        await self.frame.locator("#dialog-ok" if accept else "#dialog-cancel").click()
        await dialog.wait_for(state="hidden")

    async def shot(self, name: str, *, full: bool = True) -> Path:
        """Screenshot of the host viewport; `full` grows the viewport to the page's height first."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        size = self.page.viewport_size
        if full:
            height = await self.page_frame().evaluate("document.documentElement.scrollHeight")
            await self.page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(height, 4000))})
            await self.page.wait_for_timeout(50)
        await self.page.screenshot(path=str(path))
        if full:
            await self.page.set_viewport_size(size)
            # The next click must not land while the iframe (100vh) is still being laid out at the old height:
            # a click on the Review tab's accept button was once lost that way in CI.
            await self.page_frame().wait_for_function(f"window.innerHeight === {size['height']}")
            await self.page.wait_for_timeout(50)
        return path

    async def no_horizontal_overflow(self, where: str) -> None:
        widths = await self.page_frame().evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert widths[0] <= widths[1], f"{where}: content is {widths[0]} px wide in a {widths[1]} px page"

    def assert_clean(self) -> None:
        assert self.console_errors == [], self.console_errors
        assert self.outside_requests == [], self.outside_requests
        errors = [c for c in self.api_calls if c["result"]["error"] is not None]
        assert errors == [], errors


async def _seed(h: PluginHarness, host: FakeLangBotHost) -> tuple[str, dict[str, str]]:
    kb = await h.create_memory_kb()
    host.open_query(1, bot_uuid="bot-1", launcher_type="group", launcher_id="g1", sender_id="u1",
                    sender_name="Alice", message_text="remember this")
    ids: dict[str, str] = {}
    for content in G1_EPISODES:
        extra: dict[str, Any] = {"tags": ["tea"]} if "tea" in content else {}
        if content.startswith("The team ships"):
            extra = {"tags": ["release", "plan"], "importance": 4, "event_at": "2026-12-04T17:00:00+00:00"}
        out = await h.call_tool("remember", {"content": content, **extra}, session=G1, query_id=1)
        assert out["ok"], out
        ids[content] = out["episode_id"]
    for params in ({"scope": "session", "name": "Tea club", "traits": ["friendly", "punctual"],
                    "preferences": ["short answers"], "notes": "Meets every Friday."},
                   {"scope": "speaker", "name": "Alice", "preferences": ["green tea"]}):
        out = await h.call_tool("update_profile", params, session=G1, query_id=1)
        assert out["ok"], out
    out = await h.call_tool("remember", {"content": "Bob's private dentist appointment is Monday"}, session=P2,
                            query_id=2)
    assert out["ok"], out
    ids["private"] = out["episode_id"]
    host.close_query(1)
    host.open_query(3, bot_uuid="bot-1", launcher_type="group", launcher_id="g1", sender_id="u1",
                    sender_name="Alice", message_text="what tea do I like?", pipeline_kbs=[kb])
    await h.emit_event("PromptPreProcessing", {"session_name": "group_g1", "default_prompt": [], "prompt": []},
                       query_id=3)
    return kb, ids


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
        kb, ids = await _seed(harness, host)
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


# ---------------------------------------------------------------------------------------------


async def test_walk_through_every_tab(console: Console) -> None:
    c, fr = console, console.frame
    await c.open()
    await fr.locator("#panel-profiles .empty").wait_for()
    assert "Select a memory space" in await fr.locator("#panel-profiles").inner_text()
    scopes = await fr.locator("#scope-list .scope-btn").evaluate_all("els => els.map(e => e.dataset.scopeKey)")
    assert sorted(scopes) == ["bot-1:group_g1", "bot-1:person_p2"]
    assert c.kb_id in await fr.locator("#kb-line").inner_text()
    await c.shot("desktop-light-00-start")

    # Profiles
    await c.select_space("bot-1:group_g1")
    await fr.locator("#session-profile", has_text="Tea club").wait_for()
    profiles = await fr.locator("#panel-profiles").inner_text()
    assert "punctual" in profiles and "Speaker u1" in profiles and "green tea" in profiles
    assert await fr.locator(".scope-btn[aria-pressed=true]").get_attribute("data-scope-key") == "bot-1:group_g1"

    # Episodes: paging
    await c.tab("episodes")
    cards = fr.locator("#episode-list article.ep")
    await cards.first.wait_for()
    assert await cards.count() == 10
    assert "Page 1 of 2" in await fr.locator(".pager").inner_text()
    await fr.locator(".pager button", has_text="Next").click()
    await fr.locator(".pager", has_text="Page 2 of 2").wait_for()
    assert await cards.count() == 2
    await fr.locator(".pager button", has_text="Previous").click()
    await fr.locator(".pager", has_text="Page 1 of 2").wait_for()
    release = fr.locator("article.ep", has_text="ships version two")
    assert "#release" in await release.inner_text() and "importance 4" in await release.inner_text()
    assert "2026-12-04 17:00:00 UTC" in await release.inner_text()
    await c.shot("desktop-light-episodes")

    # Archive (with the in-DOM confirm dialog), then restore from the archived filter
    target = fr.locator("article.ep", has_text="Bob moved to Berlin")
    await target.locator("[data-action=archive]").click()
    await fr.locator("#dialog-title", has_text="Archive this episode?").wait_for()
    assert await fr.locator("#dialog-cancel").evaluate("el => el === document.activeElement")
    await c.shot("desktop-light-confirm", full=False)
    await c.confirm()
    await fr.locator("#panel-episodes .alert.ok", has_text="Episode archived.").wait_for()
    await target.wait_for(state="detached")
    await fr.locator("#episode-status").select_option("archived")
    archived = fr.locator("article.ep[data-status=archived]", has_text="Bob moved to Berlin")
    await archived.wait_for()
    assert await fr.locator("#episode-list article.ep").count() == 1
    await archived.locator("[data-action=restore]").click()
    await c.confirm()
    await fr.locator("#panel-episodes .empty").wait_for()
    await fr.locator("#episode-status").select_option("active")
    await fr.locator("article.ep[data-status=active]", has_text="Bob moved to Berlin").wait_for()

    # Delete: Escape cancels; confirming deletes
    victim = fr.locator("article.ep", has_text="wiki password rotation")
    await victim.locator("[data-action=delete]").click()
    await fr.locator("#dialog").wait_for(state="visible")
    await c.page.keyboard.press("Escape")
    await fr.locator("#dialog").wait_for(state="hidden")
    assert await victim.count() == 1
    await victim.locator("[data-action=delete]").click()
    await c.confirm()
    await fr.locator("#panel-episodes .alert.ok", has_text="Episode deleted.").wait_for()
    await fr.locator("article.ep", has_text="wiki password rotation").wait_for(state="detached")

    # Semantic search, scoped to the space
    await fr.locator("#episode-query").fill("green tea")
    await fr.locator("#episode-query").press("Enter")
    await fr.locator("#panel-episodes h2", has_text="green tea").wait_for()
    first = await fr.locator("#episode-list article.ep").first.inner_text()
    assert "Alice likes green tea" in first and "score" in first
    assert "dentist" not in await fr.locator("#panel-episodes").inner_text()
    await c.shot("desktop-light-search")
    await fr.locator("#episode-clear-search").click()
    await fr.locator("#panel-episodes h2", has_text="Episodes").wait_for()

    # Injection snapshot
    await c.tab("injection")
    await fr.locator("#panel-injection .stats").wait_for()
    injection = await fr.locator("#panel-injection").inner_text()
    assert "Alice" in injection and "Yes" in injection and "green tea" in injection
    await c.shot("desktop-light-injection")

    # Audit with export
    await c.tab("audit")
    await fr.locator("#audit-table").wait_for()
    audit = await fr.locator("#audit-table").inner_text()
    shown = await fr.locator("#audit-table [data-operation]").evaluate_all("els => els.map(e => e.dataset.operation)")
    for operation in ("archive", "restore", "forget", "update_profile", "remember"):
        assert operation in shown
    assert "console" in audit  # console actions have no chat sender
    await fr.locator("#audit-export").click()
    exported = json.loads(await fr.locator("#audit-json").input_value())
    assert exported["scope_key"] == "bot-1:group_g1"
    assert [e["operation"] for e in exported["entries"]][-3:] == ["archive", "restore", "forget"]
    await c.shot("desktop-light-audit")

    # Export L1 + L2 with copy
    await c.tab("export")
    await fr.locator("#export-generate").click()
    data = json.loads(await fr.locator("#export-json").input_value())
    assert data["l1"]["session_profile"]["name"] == "Tea club" and list(data["l1"]["speaker_profiles"]) == ["u1"]
    contents = {e["content"] for e in data["l2"]["episodes"]}
    assert contents == set(G1_EPISODES) - {"The wiki password rotation is handled by IT"}
    assert "dentist" not in json.dumps(data)
    await fr.locator("#export-json-copy").click()
    await fr.locator("#toast").wait_for(state="visible")
    assert (await fr.locator("#toast").inner_text()).startswith(("Copied", "The browser blocked copying"))
    await c.shot("desktop-light-export")

    # Diagnostics: health cards
    await c.tab("diagnostics")
    await fr.locator("#health-run").click()
    await fr.locator("#health-cards .hcard").first.wait_for()
    levels = await fr.locator("#health-cards .hcard").evaluate_all(
        "els => els.map(e => [e.dataset.key, e.dataset.level])")
    assert levels == [["kb", "green"], ["embedding", "green"], ["isolation", "green"], ["store", "green"], ["fence", "green"],
                      ["settings", "green"]]
    assert "No fence on this space." in await fr.locator("#panel-diagnostics").inner_text()
    await c.shot("desktop-light-diagnostics")

    # Review
    await c.tab("review")
    await fr.locator("#panel-review #review-candidates .alert.warn").wait_for()
    review = await fr.locator("#panel-review").inner_text()
    assert "Candidate extraction is off" in review and "No consolidation model is set" in review
    # Where both switches live is said once, not under each switch (issue 23 item 6).
    assert review.count("Both switches are settings of the memory knowledge base.") == 1, review
    assert "in the knowledge base settings" not in review, review

    # Host switches to dark + Chinese: theme, labels and rendered panels follow.
    await c.context("dark", "zh-Hans")
    await fr.locator("#tab-profiles", has_text="画像").wait_for()
    assert "未开启候选提取" in await fr.locator("#panel-review").inner_text()
    assert await c.page_frame().evaluate("document.documentElement.lang") == "zh-Hans"
    bg = await c.page_frame().evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg == "rgb(10, 10, 10)"
    await c.shot("desktop-dark-zh-review")
    await c.tab("episodes")
    await fr.locator("#episode-list article.ep").first.wait_for()
    assert await fr.locator("#episode-list [data-action=archive]").first.inner_text() == "归档"
    await c.shot("desktop-dark-zh-episodes")
    await c.context("light", "en-US")
    await fr.locator("#tab-profiles", has_text="Profiles").wait_for()
    assert await c.page_frame().evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"

    used = {call["endpoint"] for call in c.api_calls}
    assert used >= {"/overview", "/profiles", "/episodes", "/search", "/episode/archive", "/episode/restore",
                    "/episode/delete", "/injection", "/audit", "/audit/export", "/export", "/health", "/review"}
    assert all(call["result"]["data"]["ok"] for call in c.api_calls)


async def test_fenced_space_and_clear_fence(console: Console) -> None:
    c, fr = console, console.frame
    memory = c.harness.plugin.memory
    c.host.fail_next(A.VECTOR_UPSERT, ActionCallTimeoutError("vector_upsert timed out"))
    out = await c.harness.call_tool("remember", {"content": "unknown outcome"}, session=G1, query_id=9)
    assert out["ok"] is False
    await memory.parts.fences.raise_fence(INSTALLATION_SPACE, "kb register", "timed out")
    await c.open()
    assert "write fences active in this installation: 2" in await fr.locator("#kb-line").inner_text()

    # Select the space with the Derive form.
    await fr.locator("#derive-bot").fill("bot-1")
    await fr.locator("#derive-session").fill("group_g1")
    await fr.locator("#derive-form button[type=submit]").click()
    await fr.locator("#current-user", has_text="bot-1:group_g1").wait_for()
    assert await fr.locator("#raw-user").input_value() == "bot-1:group_g1"

    # A write is refused with the fence message; the page offers the way to Diagnostics.
    await c.tab("episodes")
    target = fr.locator("article.ep", has_text="Carol is allergic")
    await target.locator("[data-action=archive]").click()
    await c.confirm()
    alert = fr.locator("#panel-episodes .alert.error")
    await alert.wait_for()
    assert "paused" in await alert.inner_text()
    await c.shot("desktop-light-fenced")
    await alert.locator("button", has_text="Open Diagnostics").click()
    await fr.locator("#tab-diagnostics[aria-selected=true]").wait_for()
    assert await fr.locator("#tab-diagnostics").evaluate("el => el === document.activeElement")

    await fr.locator("#health-run").click()
    await fr.locator("#health-cards .hcard[data-key=fence][data-level=amber]").wait_for()
    assert await fr.locator("#health-overall.amber").count() == 1
    here = await fr.locator("#fence-here").inner_text()
    assert "L2 · bot-1:group_g1" in here and "after Remember" in here  # the operation by its label
    assert "installation" in await fr.locator("#panel-diagnostics").inner_text()
    await c.shot("desktop-light-diagnostics-fenced")

    # Clear Fence for the selected space: the installation fence stays.
    assert not await fr.locator("#fence-installation").is_checked()
    await fr.locator("#fence-clear").click()
    await fr.locator("#dialog-extra").wait_for(state="hidden")
    await c.confirm()
    await fr.locator("#panel-diagnostics .alert.ok", has_text=f"l2:{c.kb_id}:bot-1:group_g1").wait_for()
    await fr.locator("#fence-here", has_text="No fence on this space.").wait_for()
    assert await memory.parts.fences.get(INSTALLATION_SPACE) is not None

    # The installation fence only with the explicit checkbox.
    await fr.locator("#fence-installation").check()
    await fr.locator("#fence-clear").click()
    await fr.locator("#dialog-extra", has_text="installation-wide").wait_for()
    await c.confirm()
    await fr.locator("#panel-diagnostics .alert.ok", has_text="Cleared: installation").wait_for()
    assert await memory.parts.fences.get(INSTALLATION_SPACE) is None
    assert not await fr.locator("#fence-installation").is_checked()
    assert "write fence" not in await fr.locator("#kb-line").inner_text()

    # Writes work again, and both clears are audited: the space's in its log (shown here), the
    # installation fence's in the installation log.
    await c.tab("episodes")
    await fr.locator("article.ep", has_text="Carol is allergic").locator("[data-action=archive]").click()
    await c.confirm()
    await fr.locator("#panel-episodes .alert.ok", has_text="Episode archived.").wait_for()
    await c.tab("audit")
    await fr.locator("#audit-table").wait_for()
    shown = await fr.locator("#audit-table [data-operation]").evaluate_all("els => els.map(e => e.dataset.operation)")
    assert shown.count("fence_clear") == 1 and "Fence cleared" in await fr.locator("#audit-table").inner_text()
    assert (await installation_audit(memory)).entries[0]["operation"] == "fence_clear"
    fenced = [call for call in c.api_calls if call["endpoint"] == "/episode/archive"]
    assert [call["result"]["data"].get("code") for call in fenced] == ["fenced", None]


@pytest.mark.parametrize("width", [360, 1280], ids=["360px", "1280px"])
async def test_layout_themes_and_keyboard(console: Console, width: int) -> None:
    c, fr = console, console.frame
    await c.open(width=width, height=780)
    narrow = width < 800
    toggle = fr.locator("#sidebar-toggle")
    assert await toggle.is_visible() is narrow
    await c.no_horizontal_overflow(f"{width}px start")
    await c.shot(f"w{width}-light-00-start")

    # Keyboard only: reach a space, then move through the tabs with the arrow keys.
    await fr.locator('.scope-btn[data-scope-key="bot-1:group_g1"]').focus()
    await c.page.keyboard.press("Enter")
    await fr.locator("#session-profile").wait_for()
    if narrow:
        assert await fr.locator("#layout").get_attribute("data-sidebar") == "closed"
        assert await toggle.get_attribute("aria-expanded") == "false"
        assert await fr.locator("#tab-profiles").evaluate("el => el === document.activeElement")
    else:
        await fr.locator("#tab-profiles").focus()
    for theme in ("light", "dark"):
        await c.context(theme, "en-US")
        await fr.locator("#tab-profiles").focus()
        await c.page.keyboard.press("Home")
        for index, tab in enumerate(TABS):
            if index:
                await c.page.keyboard.press("ArrowRight")
            selected = fr.locator(f"#tab-{tab}[aria-selected=true]")
            await selected.wait_for()
            assert await selected.evaluate("el => el === document.activeElement")
            panel = fr.locator(f"#panel-{tab}")
            if tab == "diagnostics":
                await fr.locator("#health-run").click()
                await fr.locator("#health-cards .hcard").first.wait_for()
            elif tab == "export":
                await fr.locator("#export-generate").click()
                await fr.locator("#export-json").wait_for()
            else:
                await panel.locator(".panel-head, .empty, .toolbar").first.wait_for()
            await fr.locator("#panel-" + tab + " [role=status]", has_text="Loading").wait_for(state="detached")
            await c.no_horizontal_overflow(f"{width}px {theme} {tab}")
            await c.shot(f"w{width}-{theme}-{index + 1}-{tab}")
            await fr.locator(f"#tab-{tab}").focus()  # back to the tab list after using the panel
        await c.page.keyboard.press("End")
        await fr.locator(f"#tab-{TABS[-1]}[aria-selected=true]").wait_for()

    # Focus is visible on keyboard focus (outline from :focus-visible).
    await fr.locator("#tab-episodes").focus()
    await c.page.keyboard.press("ArrowLeft")
    await c.page.keyboard.press("ArrowRight")
    outline = await fr.locator("#tab-episodes").evaluate("el => getComputedStyle(el).outlineStyle")
    assert outline != "none"

    # The confirm dialog fits the width and traps focus.
    await fr.locator("#episode-list [data-action=archive]").first.click()
    await fr.locator("#dialog").wait_for(state="visible")
    await c.page.keyboard.press("Tab")
    assert await fr.locator("#dialog-ok").evaluate("el => el === document.activeElement")
    await c.page.keyboard.press("Tab")
    assert await fr.locator("#dialog-cancel").evaluate("el => el === document.activeElement")
    await c.no_horizontal_overflow(f"{width}px dialog")
    await c.shot(f"w{width}-dark-dialog", full=False)
    await c.page.keyboard.press("Escape")
    await fr.locator("#dialog").wait_for(state="hidden")

    if narrow:
        await toggle.click()
        await fr.locator("#sidebar").wait_for(state="visible")
        await c.context("light", "zh-Hans")
        await fr.locator("#sidebar-toggle", has_text="记忆空间").wait_for()
        await c.no_horizontal_overflow("360px zh sidebar")
        await c.shot("w360-light-zh-sidebar")


async def test_operator_control_profiles_settings_and_a_persons_erasure(console: Console) -> None:
    """Edit a profile in place, override a setting and reset it, then find, export and erase one person."""
    c, fr = console, console.frame
    memory = c.harness.plugin.memory
    await c.open()
    await c.select_space("bot-1:group_g1")
    session = fr.locator("#session-profile")
    await session.wait_for()
    await session.locator("[data-action=edit]").click()
    form = fr.locator("form.profile-edit[data-profile=session]")
    await form.locator("#pe-name-session").fill("Tea and cake club")
    await form.locator("#pe-traits-session").fill("friendly\nbakes on Fridays")
    await form.locator("[data-action=save]").click()
    await fr.locator("#session-profile", has_text="Tea and cake club").wait_for()
    scope = await memory.scope_for(Identity.build(launcher_type="group", launcher_id="g1", bot_uuid="bot-1"))
    stored = (await memory.profiles(scope)).session
    assert stored.name == "Tea and cake club" and stored.traits == ["friendly", "bakes on Fridays"]
    assert stored.notes == "Meets every Friday."  # an edit replaces only the fields the form holds
    await c.shot("operator-01-profile-edited")
    for value in ("meets at the cafe", "meets at the library"):  # a named fact's earlier value shows on hover
        await memory.update_profile(scope, "session", {"field": "traits", "action": "set", "value": value,
                                                       "fact_key": "venue"})
    await fr.locator("#panel-profiles button", has_text="Refresh").click()
    chip = fr.locator("#session-profile .chip.has-history", has_text="meets at the library")
    await chip.wait_for()
    assert await chip.get_attribute("title") == "venue: \u2190 meets at the cafe"

    await c.tab("settings")
    row = fr.locator("#settings-table tr[data-setting=auto_recall_top_k]")
    await row.wait_for()
    await row.locator("#setting-auto_recall_top_k").fill("2")
    await row.locator("[data-action=set]").click()
    await c.confirm()
    await fr.locator("#settings-table tr[data-setting=auto_recall_top_k][data-origin=override]").wait_for()
    assert (await memory.settings()).value("auto_recall_top_k").value == 2
    await c.shot("operator-02-setting-overridden")
    await fr.locator("#settings-table tr[data-setting=auto_recall_top_k] [data-action=reset]").click()
    await c.confirm()
    await fr.locator("#settings-table tr[data-setting=auto_recall_top_k][data-origin=creation]").wait_for()
    ops = [e["operation"] for e in (await installation_audit(memory, 1, 50)).entries]
    assert ops[:2] == ["settings_reset", "settings_override"]

    await c.tab("people")
    await fr.locator("#people-sender").fill("u1")
    await fr.locator("#people-form [type=submit]").click()
    await fr.locator("#people-spaces").wait_for()
    assert "episodes: 12" in await fr.locator("#people-summary").inner_text()
    await fr.locator("#people-export").click()
    exported = json.loads(await fr.locator("#people-json").input_value())
    assert exported["sender_id"] == "u1" and exported["counts"]["episodes"] == 12
    await c.shot("operator-03-person-found")
    await fr.locator("#people-erase").click()
    dialog = fr.locator("#dialog-body")
    await dialog.wait_for(state="visible")
    assert "episodes: 12" in await dialog.inner_text()
    await c.confirm()
    await fr.locator("#people-erased tr[data-outcome=erased]").first.wait_for()
    await c.shot("operator-04-person-erased")
    assert (await memory.find_person("u1")).spaces == ()
    private = await memory.scope_for(Identity.build(launcher_type="person", launcher_id="p2", bot_uuid="bot-1"))
    assert [e.episode_id for e in await memory.all_episodes(private)] == [c.ids["private"]]  # Bob's stays


async def test_space_list_chinese_diagnostics_and_audit_at_1440(console: Console) -> None:
    """Issue 23 items 4-5: spaces an admin can tell apart (label, last change, counts, sorted, filter; raw
    keys only under Advanced), Diagnostics and Audit Chinese all through, the Audit table readable at
    1440 px with translated operation names."""
    c, fr = console, console.frame
    await c.harness.call_tool("remember", {"content": "Bob likes rowing"}, session=P2, query_id=2)
    await c.open(width=1440, height=900)
    served = next(call["result"]["data"] for call in reversed(c.api_calls) if call["endpoint"] == "/overview")
    times = [s["last_activity"] for s in served["scopes"]]
    assert times == sorted(times, reverse=True) and all(times), served["scopes"]
    assert [s["scope_key"] for s in served["scopes"]] == ["bot-1:person_p2", "bot-1:group_g1"]
    group = next(s for s in served["scopes"] if s["scope_key"] == "bot-1:group_g1")
    assert group["chat_type"] == "group" and group["chat_id"] == "g1" and group["bot_uuid"] == "bot-1"
    assert group["episodes"] == len(G1_EPISODES) and group["pending_candidates"] == 0

    buttons = fr.locator("#scope-list .scope-btn")
    assert await buttons.evaluate_all("els => els.map(e => e.dataset.scopeKey)") == [s["scope_key"] for s in
                                                                                      served["scopes"]]
    labels = await buttons.locator(".label").all_inner_texts()
    assert labels[1] == "Group chat group g1 (g1) · bot bot-1" and labels[0].startswith("Private chat "), labels
    meta = await buttons.nth(1).locator(".sub").inner_text()
    assert meta.startswith("changed ") and f"{len(G1_EPISODES)} episodes" in meta and "0 pending" in meta, meta
    # Raw keys stay under "Advanced: raw keys".
    assert not await buttons.first.locator(".raw-key").is_visible()
    assert "bot-1:group_g1" not in await fr.locator("#scope-list").inner_text()
    await fr.locator("#raw-details > summary").click()
    await buttons.first.locator(".raw-key").wait_for(state="visible")
    assert "bot-1:group_g1" in await fr.locator("#scope-list").inner_text()
    await fr.locator("#raw-details > summary").click()
    await buttons.first.locator(".raw-key").wait_for(state="hidden")
    # The filter box narrows the list by what the label, the speaker and the keys say.
    await fr.locator("#scope-filter").fill("group g1")
    await fr.locator("#scope-count", has_text="1 of 2").wait_for()
    assert await buttons.count() == 1 and await buttons.get_attribute("data-scope-key") == "bot-1:group_g1"
    await fr.locator("#scope-filter").fill("nothing-like-this")
    await fr.locator("#scope-none").wait_for()
    await fr.locator("#scope-filter").fill("")
    await fr.locator("#scope-count", has_text="2 of 2").wait_for()
    await c.shot("spaces-list-1440")

    await c.context("light", "zh-Hans")
    await fr.locator("#scope-count", has_text="2 个空间").wait_for()
    labels = await buttons.locator(".label").all_inner_texts()
    assert labels[1] == "群聊 group g1 (g1) · 机器人 bot-1" and labels[0].startswith("私聊 "), labels
    await c.shot("spaces-list-zh-1440")

    # Diagnostics in Chinese: every line is worded from its code, none of the server's English shows.
    await c.select_space("bot-1:group_g1")
    await c.tab("diagnostics")
    await fr.locator("#health-run").click()
    await fr.locator("#health-cards .hcard").first.wait_for()
    cards = await fr.locator("#health-cards").inner_text()
    for english in ("memory knowledge base", "embedding model answers", "search, list and delete", "vector store",
                    "no write fence", "creation settings apply", "Claim"):
        assert english not in cards, (english, cards)
    assert re.search("[\u4e00-\u9fff]", cards)
    await c.shot("diagnostics-zh-1440")

    # Audit in Chinese at 1440 px: translated operation names, no name or operation broken mid-word.
    await c.tab("audit")
    await fr.locator("#audit-table").wait_for()
    badges = await fr.locator("#audit-table [data-operation]").evaluate_all(
        "els => els.map(e => [e.dataset.operation, e.textContent])")
    assert badges and all(code != text and re.search("[\u4e00-\u9fff]", text) for code, text in badges), badges
    lines_per_cell = await fr.locator("#audit-table td.sender, #audit-table td.op .badge").evaluate_all(
        """els => els.map(e => { const r = document.createRange(); r.selectNodeContents(e);
             const tops = new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top)));
             return [e.textContent, tops.size]; })""")
    assert all(n == 1 for _, n in lines_per_cell), [cell for cell in lines_per_cell if cell[1] != 1]
    summaries = await fr.locator("#audit-table td.summary").all_inner_texts()
    assert all(re.search("[\u4e00-\u9fff]", s) for s in summaries if s.strip()), summaries
    await c.no_horizontal_overflow("zh audit at 1440 px")
    await c.shot("audit-zh-1440")
