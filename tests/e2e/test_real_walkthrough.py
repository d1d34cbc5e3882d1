"""The README's walkthrough, word for word, in the real LangBot 4.11.2 WebUI (issue 36, point 7).

A person follows "Set up" in README.md: Processors in the sidebar, the processor
"LongTermMemory (devhost)", its Debug Chat tab, Session Type Group Chat; then remember, ask, list,
health, forget an id from the list, consolidate preview, and the Memory Console's Review tab with the
group's space open. The plugin setting is the local run's (`command_admin_only_in_groups` off, what
devhost/cli.py sets: LangBot cannot make the debug chat a bot admin), so the forget is not refused.
Then the WebUI is switched to 日本語 and 繁體中文: the console speaks that language by itself, and a
reply does once `reply_language` is set to it. Settings are restored afterwards. Screenshots go to
tests/artifacts/webui/ (not committed).
"""

from __future__ import annotations

import re
from typing import Any

from devhost import cli, langbot_setup
from devhost.lbclient import LTM_PLUGIN
from tests.e2e.test_real_langbot import CHROMIUM, CHROMIUM_ARGS
from tests.e2e.test_real_webui_replies import ARTIFACTS, sync_playwright_or_skip

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
CONSOLE = "/home/plugin-pages?id=langbot-ltm%2FLongTermMemory%2Fconsole"
DEBUG_GROUP = 'button.scope-btn[data-scope-key="websocket-proxy-bot:group_websocketgroup"]'
BOT_BUBBLES = "div.rounded-bl-none"  # the bot's bubbles in the debug chat (the user's are rounded-br-none)


def _local_only(route: Any) -> None:
    url = route.request.url
    if re.match(r"^(blob:|data:|[a-z]+://(127\.0\.0\.1|localhost)[:/])", url):
        route.continue_()
    else:  # the WebUI asks LangBot's cloud for releases and the marketplace: never leave the machine
        route.abort()


def _dismiss_overlays(page: Any) -> None:
    for overlay in (page.get_by_role("button", name=re.compile(r"^\s*Skip\s*$")),
                    page.get_by_role("button", name="Collapse workspace assistant")):
        if overlay.count():
            overlay.first.click()


def _send(page: Any, text: str, expect: str) -> str:
    """Type one message in the debug chat; return the bot bubble that answers it (it contains `expect`)."""
    bubbles = page.locator(BOT_BUBBLES)
    before = bubbles.count()
    box = page.locator("textarea:visible").last  # the chat box (the Configuration tab's prompt is hidden)
    box.fill(text)
    box.press("Enter")
    page.wait_for_function(
        "([sel, n, want]) => { const b = document.querySelectorAll(sel);"
        " return b.length > n && b[b.length - 1].innerText.replace(/\\u00a0/g, ' ').includes(want); }",
        arg=[BOT_BUBBLES, before, expect], timeout=90000)
    return bubbles.last.inner_text().replace("\u00a0", " ")


SIDEBAR_EDGE = 240  # px: the WebUI's sidebar is 16rem wide at the 1440 px viewport this test uses


def _sidebar_entry(page: Any, name: str) -> Any:
    """The processor under the sidebar's Processors. The sidebar shows five and folds the rest under "More (n)"
    (the other e2e tests add processors), and the dashboard beside it lists recent executions under the same
    name, so the entry is the one left of the sidebar's edge, after unfolding "More" if it is not shown."""
    def shown() -> Any:
        for entry in page.get_by_text(name, exact=True).all():
            box = entry.bounding_box() if entry.is_visible() else None
            if box and box["x"] < SIDEBAR_EDGE:
                return entry
        return None

    page.wait_for_timeout(500)  # the Processors group renders its entries after the click
    entry = shown()
    if entry is None:
        more = page.get_by_text(re.compile(r"^More \(\d+\)$"))
        if more.count():
            more.first.click(timeout=30000)
            page.wait_for_timeout(500)
        entry = shown()
    assert entry is not None, f"no sidebar entry named {name!r} under Processors"
    return entry


def _open_group_chat(page: Any, base: str, processors: str, debug_chat: str, group_chat: str) -> None:
    """The README's words: the sidebar's Processors, the processor, its Debug Chat tab, Session Type Group Chat."""
    page.goto(base + "/home", wait_until="domcontentloaded")
    page.get_by_text(processors, exact=True).first.click(timeout=90000)  # the WebUI loads slowly on 2 busy cores
    _sidebar_entry(page, langbot_setup.PIPELINE_NAME).click(timeout=60000)
    _dismiss_overlays(page)
    # The processor's page renders its tabs after its own requests: on 2 busy cores that took over 30 s once.
    page.get_by_text(debug_chat, exact=True).first.click(timeout=90000)
    page.get_by_role("button", name=group_chat).first.click(timeout=60000)
    page.locator("textarea:visible:enabled").last.wait_for(timeout=60000)


def _open_group_chat_by_address(page: Any, base: str, pipeline_uuid: str, group_chat: str) -> None:
    """The processor's page by its address (its Debug Chat shows there), then Session Type Group Chat."""
    page.goto(f"{base}/home/pipelines?id={pipeline_uuid}", wait_until="domcontentloaded")
    button = page.get_by_role("button", name=group_chat)
    button.first.wait_for(timeout=90000)
    _dismiss_overlays(page)
    button.first.click(timeout=30000)
    page.locator("textarea:visible:enabled").last.wait_for(timeout=30000)


def _console(page: Any, base: str) -> Any:
    page.goto(base + CONSOLE, wait_until="domcontentloaded")
    frame = page.frame_locator("iframe[title*='LongTermMemory']")
    frame.locator(DEBUG_GROUP).wait_for(timeout=90000)
    _dismiss_overlays(page)
    return frame


def test_the_readme_walkthrough_in_the_real_webui_in_three_languages(e2e: Any) -> None:
    sync_api = sync_playwright_or_skip()
    client, base = e2e.client, e2e.info.base_url
    before = client.plugin_config(*LTM_PLUGIN)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        langbot_setup.hold_plugin_settings(client, LTM_PLUGIN, cli.LOCAL_RUN_PLUGIN_SETTINGS)
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                context = browser.new_context(viewport={"width": 1440, "height": 1000})
                context.route("**/*", _local_only)
                page = context.new_page()
                page.goto(base + "/", wait_until="domcontentloaded")
                page.evaluate("""token => {
                    localStorage.setItem('token', token);
                    localStorage.setItem('langbot_language', 'en-US');
                    for (const guide of ['sidebar', 'pipeline_setup', 'plugin_processor_setup', 'runner_setup'])
                        localStorage.setItem('langbot_' + guide + '_guide_v1', 'completed');
                    localStorage.setItem('langbot-assistant-panel-open', 'false');
                }""", e2e.info.token)

                try:
                    _open_group_chat(page, base, "Processors", "Debug Chat", "Group Chat")
                except Exception:
                    page.screenshot(path=str(ARTIFACTS / "walkthrough-failed-to-open.png"))  # what the page showed
                    raise
                stored = _send(page, "remember that the demo is on Friday", "done: remember")
                assert "It worked" in stored, stored
                asked = _send(page, "when is the demo?", "[scripted local model]")
                assert "the demo is on Friday" in asked, asked
                listed = _send(page, "!memory list", "the demo is on Friday")
                lines = listed.splitlines()
                at = next(i for i, line in enumerate(lines) if "the demo is on Friday" in line)
                ids = UUID.findall(" ".join(lines[max(0, at - 2):at + 1]))
                assert ids, listed
                health = _send(page, "!memory health", "Memory health")
                assert "Memory health: GREEN" in health, health
                forgot = _send(page, f"!memory forget {ids[-1]}", ids[-1])
                assert "only bot admins" not in forgot, forgot
                preview = _send(page, "!memory consolidate preview", "Consolidation preview")
                assert "only bot admins" not in preview, preview
                page.screenshot(path=str(ARTIFACTS / "walkthrough-group-chat.png"))

                frame = _console(page, base)
                group = frame.locator(DEBUG_GROUP)
                assert "Debug Chat · Group Chat" in group.inner_text()
                group.click(timeout=10000)
                frame.locator("#tab-review").click(timeout=10000)
                frame.locator("#review-drafts").wait_for(timeout=60000)
                page.screenshot(path=str(ARTIFACTS / "walkthrough-console-review.png"))

                # 日本語 and 繁體中文: the console follows the WebUI; replies follow reply_language.
                for webui, reply_language, label, group_chat, title in (
                        ("ja-JP", "ja_JP", "チャットデバッグ · グループチャット", "グループチャット", "記憶のヘルス"),
                        ("zh-Hant", "zh_Hant", "對話除錯 · 群聊", "群聊", "記憶健康狀況")):
                    page.evaluate("lang => localStorage.setItem('langbot_language', lang)", webui)
                    frame = _console(page, base)
                    frame.locator(DEBUG_GROUP, has_text=label).wait_for(timeout=60000)
                    page.screenshot(path=str(ARTIFACTS / f"walkthrough-console-{webui}.png"))
                    langbot_setup.hold_plugin_settings(client, LTM_PLUGIN, {"reply_language": reply_language})
                    _open_group_chat_by_address(page, base, e2e.info.pipeline_uuid, group_chat)
                    reply = _send(page, "!memory health", title)
                    kana = re.search("[\u3040-\u30ff]", reply)
                    assert title in reply and (bool(kana) == (webui == "ja-JP")), reply  # Japanese, or Chinese only
                    page.locator(BOT_BUBBLES).last.scroll_into_view_if_needed()
                    page.screenshot(path=str(ARTIFACTS / f"walkthrough-reply-{webui}.png"))
            finally:
                browser.close()
    finally:
        # Back to what the other e2e tests expect (the manifest's defaults when nothing was stored).
        langbot_setup.hold_plugin_settings(client, LTM_PLUGIN, {
            "command_admin_only_in_groups": before.get("command_admin_only_in_groups", True),
            "reply_language": before.get("reply_language", "en_US")})
