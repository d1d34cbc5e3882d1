"""`!memory` replies in the real WebUI debug chat's default Markdown view (issue 23 item 1).

LangBot 4.11.2's pipeline page embeds the debug chat; a bot message is rendered as Markdown unless
"Show Raw" is pressed. Before the rendering rule (components/common/chat_text.py) the view joined
single lines into one paragraph and dropped every `<id>` placeholder as an HTML tag. Here the same
three replies are read twice: as sent (the debug-chat WebSocket, what a plain-text client shows) and
as the WebUI renders them (the DOM text of the bot bubble); every line and every placeholder of the
first must be a line of the second. Screenshots go to tests/artifacts/webui/ (not committed).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_real_langbot import CHROMIUM, CHROMIUM_ARGS, remember, unique

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "webui"
PLACEHOLDER = re.compile(r"＜[^＞]+＞")


def sync_playwright_or_skip() -> Any:
    if os.environ.get("CI"):
        from playwright import sync_api
        assert os.path.exists(CHROMIUM), f"{CHROMIUM} missing: scripts/install-browser.sh did not run"
        return sync_api
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package (test extras)")
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not installed (scripts/install-browser.sh)")
    return sync_api


def text_lines(text: str) -> list[str]:
    """Lines as a reader sees them: no-break spaces are spaces, blank lines and edges dropped."""
    return [" ".join(line.replace("\u00a0", " ").split()) for line in text.split("\n") if line.strip()]


def test_help_health_and_show_keep_every_line_and_placeholder_in_the_markdown_view(e2e: Any) -> None:
    sync_api = sync_playwright_or_skip()
    fact = f"the ferry leaves from pier {unique('p')} at 7"
    commands: list[str] = ["!memory help", "!memory health"]
    sent: dict[str, str] = {}
    with e2e.chat("group") as group:
        episode_id = remember(e2e, group, fact)
        commands.append(f"!memory show {episode_id}")
        for command in commands:
            sent[command] = group.send(command)
    assert PLACEHOLDER.search(sent["!memory help"]), sent["!memory help"]

    base = e2e.info.base_url
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    rendered: dict[str, str] = {}
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1440, "height": 1000})
            # Only this machine: the WebUI also asks LangBot's cloud for releases and the marketplace.
            context.route("**/*", lambda r: r.continue_() if re.match(
                r"^(blob:|data:|[a-z]+://(127\.0\.0\.1|localhost)[:/])", r.request.url) else r.abort())
            page = context.new_page()
            page.goto(base + "/", wait_until="domcontentloaded")
            # Logged in, with the product tours marked done the way the WebUI remembers them (they
            # overlay the page and dim the chat).
            page.evaluate("""token => {
                localStorage.setItem('token', token);
                for (const guide of ['sidebar', 'pipeline_setup', 'plugin_processor_setup', 'runner_setup'])
                    localStorage.setItem('langbot_' + guide + '_guide_v1', 'completed');
                localStorage.setItem('langbot-assistant-panel-open', 'false');
            }""", e2e.info.token)
            page.goto(f"{base}/home/pipelines?id={e2e.info.pipeline_uuid}", wait_until="domcontentloaded")
            group_button = page.get_by_role("button", name="Group Chat")
            group_button.first.wait_for(timeout=90000)  # the WebUI loads slowly on a loaded 2-core machine
            for overlay in (page.get_by_role("button", name=re.compile(r"^\s*Skip\s*$")),
                            page.get_by_role("button", name="Collapse workspace assistant")):
                if overlay.count():
                    overlay.first.click()
            group_button.first.click()
            box = page.locator("textarea[placeholder*='Group Chat']")
            box.wait_for(timeout=30000)
            page.wait_for_function("() => !document.querySelector(\"textarea[placeholder*='Group Chat']\").disabled",
                                   timeout=30000)
            bubbles = page.locator("div.rounded-bl-none")  # the bot's bubbles (the user's are rounded-br-none)
            for index, command in enumerate(commands):
                before = bubbles.count()
                box.fill(command)
                box.press("Enter")
                first = text_lines(sent[command])[0]
                page.wait_for_function(
                    "([n, first]) => { const b = document.querySelectorAll('div.rounded-bl-none');"
                    " return b.length > n && b[b.length - 1].innerText.replace(/\\u00a0/g, ' ').includes(first); }",
                    arg=[before, first], timeout=60000)
                bubble = bubbles.last
                assert "Show Raw" in (bubble.inner_text() or "")  # the default view: rendered Markdown
                rendered[command] = bubble.locator(":scope > :first-child").inner_text()
                bubble.scroll_into_view_if_needed()
                page.screenshot(path=str(ARTIFACTS / f"{index + 1}-{command.split()[1]}.png"))
        finally:
            browser.close()

    for command in commands:
        shown = text_lines(rendered[command])
        expected = text_lines(sent[command])
        # A group reply may start with a mention of the sender; the rest is line for line.
        assert shown[-len(expected):][1:] == expected[1:], (command, expected, shown)
        assert shown[-len(expected)].endswith(expected[0]), (command, expected[0], shown)
        for placeholder in PLACEHOLDER.findall(sent[command]):
            assert placeholder in rendered[command], (command, placeholder)
    show = rendered[f"!memory show {episode_id}"]
    assert episode_id in show and fact in show, show
    assert any(line.startswith("GREEN kb") for line in text_lines(rendered["!memory health"]))
