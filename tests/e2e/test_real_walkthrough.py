"""The README's walkthrough, word for word, in the real LangBot 4.11.2 WebUI (issues 36 and 45).

A person follows "Set up" in README.md at 1440x900, as a new user meets the WebUI: LangBot's user
guides are skipped and its Workspace assistant collapsed (they cover the chat box), then Processors in
the sidebar, the processor "LongTermMemory (devhost)", its "Configure & debug" page with the Debug Chat
panel, Session Type Group Chat. The messages are the README's own, read from its numbered walkthrough
(`walkthrough_messages`): three memories, a question, list, health, forget the projector one, and the
consolidation preview, which drafts a summary of the two memories left; then Plugin Pages -> Memory
Console, the Debug Chat's Group Chat space, its Review tab with the draft (screenshot), and Approve.
The plugin setting is the local run's (`command_admin_only_in_groups` off, what devhost/cli.py sets:
LangBot cannot make the debug chat a bot admin), so nothing is refused.
Then the WebUI is switched to 日本語 and 繁體中文 (LangBot reloads the page): the console keeps the space
that was open and speaks that language by itself, and a reply does once `reply_language` is set to it.
Last, LangBot's and the plugin runtime's logs of the whole walkthrough hold no `[ERROR]` line of this
plugin's making (`plugin_error_lines`). Settings are restored afterwards. Screenshots go to
tests/artifacts/webui/ (not committed).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from devhost import cli, langbot_setup
from devhost.lbclient import LTM_PLUGIN
from tests.e2e.test_real_langbot import CHROMIUM, CHROMIUM_ARGS
from tests.e2e.test_real_webui_replies import ARTIFACTS, sync_playwright_or_skip

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
README = Path(__file__).resolve().parents[2] / "README.md"
# The WebUI's words the README tells a person to click, in the order it says them (checked against it).
CLICKED = ("Workspace assistant", "Skip", "Processors", langbot_setup.PIPELINE_NAME, "Configure & debug",
           "Debug Chat", "Session Type", "Group Chat", "Plugin Pages", "Memory Console",
           "Debug Chat · Group Chat (LangBot WebUI)", "Review", "Approve")
# Error entries LangBot writes on its own, whatever the plugin does (devhost/README.md, "Log lines that look
# alarming but are harmless"), matched against the whole entry (its first line and any traceback):
# - the plugin runtime, when it stops a plugin's worker to restart it (every save of a plugin's settings) and
#   when it shuts down;
# - LangBot's HTTP API, when the WebUI asks for a plugin's icon or page files while that restart is under
#   way: LangBot's check of the plugin's installation finds it stale, or the runtime answers the old
#   installation's request with a binding error or a closed connection, and LangBot answers 500 (reproduced
#   by asking for the icon during a settings save; the plugin takes no part in any of the three).
LANGBOT_OWN_ERRORS = (
    re.compile(r"stdio\.py \(\d+\) - \[ERROR\] : Error receiving message: "
               r"(Unexpected error in reading|标准输出流已关闭。|标准输出流意外关闭。)$"),
    re.compile(r"\[ERROR\] : Unhandled HTTP error request_id=\S+ method=GET "
               r"path=/api/v1/plugins/[^/\s]+/[^/\s]+/authenticated-(icon|assets/\S+)\n"
               r"(?s:.*)\n(langbot_plugin\.entities\.io\.errors\.ActionCallError: "
               r"(ValueError: Plugin installation binding cannot change generation, revision, or artifact"
               r"|ConnectionClosedError: Connection closed by local runtime)"
               r"|ValueError: Cannot register a stale plugin installation binding)$"),
)
# A log entry starts with its time stamp in brackets (after a colour code); other lines continue it.
_ENTRY_START = re.compile(r"^(\x1b\[[\d;]*m)?\[\d")
_COLOUR = re.compile(r"\x1b\[[\d;]*m")


def walkthrough_messages() -> list[str]:
    """The messages of the README's walkthrough, in its order, up to the consolidation preview."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("The walkthrough, in the Debug Chat's Group Chat"):text.index("**Who you are in the Debug Chat.**")]
    said = [m for m in re.findall(r"`([^`]+)`", section) if m.startswith(("remember ", "when ", "!memory "))]
    return said[:said.index("!memory consolidate preview") + 1]


LOGS = ("langbot.log", "plugin-runtime.log")


def log_sizes(logs: Path) -> dict[str, int]:
    """Where each log ends now: the walkthrough reads only what it wrote (the session's stack is shared with
    tests that stop plugins and LangBot on purpose, whose lines are theirs)."""
    return {name: (logs / name).stat().st_size if (logs / name).exists() else 0 for name in LOGS}


def log_entries(written: str) -> list[str]:
    """The log's entries: each starting line with the lines that continue it (a traceback), colour codes out."""
    entries: list[list[str]] = []
    for line in written.splitlines():
        if entries and not _ENTRY_START.match(line):
            entries[-1].append(line)
        else:
            entries.append([line])
    return ["\n".join(_COLOUR.sub("", line).rstrip() for line in entry).strip() for entry in entries]


def plugin_error_lines(logs: Path, since: dict[str, int] | None = None) -> list[str]:
    """`[ERROR]` entries of LangBot's and the plugin runtime's logs that are not LangBot's own (after `since`),
    each with its traceback."""
    found = []
    for name in LOGS:
        with (logs / name).open("rb") as handle:
            handle.seek((since or {}).get(name, 0))
            written = handle.read().decode("utf-8", errors="replace")
        for entry in log_entries(written):
            if "[ERROR]" in entry and not any(known.search(entry) for known in LANGBOT_OWN_ERRORS):
                found.append(f"{name}: {entry}")
    return found


CONSOLE = "/home/plugin-pages?id=langbot-ltm%2FLongTermMemory%2Fconsole"
DEBUG_GROUP = 'button.scope-btn[data-scope-key="websocket-proxy-bot:group_websocketgroup"]'
BOT_BUBBLES = "div.rounded-bl-none"  # the bot's bubbles in the debug chat (the user's are rounded-br-none)


def _local_only(route: Any) -> None:
    url = route.request.url
    if re.match(r"^(blob:|data:|[a-z]+://(127\.0\.0\.1|localhost)[:/])", url):
        route.continue_()
    else:  # the WebUI asks LangBot's cloud for releases and the marketplace: never leave the machine
        route.abort()


def _dismiss_overlays(page: Any, wait_ms: int = 0) -> None:
    """The README's words: Skip on each user guide, the assistant collapsed with its ⌄ (the button's name).
    A guide opens a moment after its page: `wait_ms` gives it that moment."""
    skip = page.get_by_role("button", name=re.compile(r"^\s*Skip\s*$"))
    if wait_ms:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            skip.first.wait_for(timeout=wait_ms)
        except PlaywrightTimeout:  # no guide on this page (or it was skipped before)
            pass
    for overlay in (skip, page.get_by_role("button", name="Collapse workspace assistant")):
        if overlay.count() and overlay.first.is_visible():
            overlay.first.click()
            page.wait_for_timeout(300)


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


def _open_group_chat(page: Any, base: str) -> None:
    """The README's words: guides skipped, the sidebar's Processors, the processor, its Configure & debug
    page with the Debug Chat panel, Session Type Group Chat."""
    page.goto(base + "/home", wait_until="domcontentloaded")
    page.get_by_text("Processors", exact=True).first.wait_for(timeout=90000)  # slow on 2 busy cores
    _dismiss_overlays(page, wait_ms=20000)
    page.get_by_text("Processors", exact=True).first.click(timeout=30000)
    _sidebar_entry(page, langbot_setup.PIPELINE_NAME).click(timeout=60000)
    # The processor's page renders its tabs after its own requests: on 2 busy cores that took over 30 s once.
    page.get_by_text("Configure & debug", exact=True).first.wait_for(timeout=90000)
    _dismiss_overlays(page, wait_ms=20000)
    page.get_by_text("Configure & debug", exact=True).first.click(timeout=30000)
    page.get_by_text("Debug Chat", exact=True).first.wait_for(timeout=30000)
    page.get_by_text("Session Type", exact=True).first.wait_for(timeout=30000)
    page.get_by_role("button", name="Group Chat").first.click(timeout=60000)
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


def _console_from_sidebar(page: Any) -> Any:
    """The README's words: Plugin Pages -> Memory Console in the sidebar."""
    page.get_by_text("Plugin Pages", exact=True).first.wait_for(timeout=30000)
    page.get_by_text("Memory Console", exact=True).first.click(timeout=30000)
    frame = page.frame_locator("iframe[title*='LongTermMemory']")
    frame.locator(DEBUG_GROUP).wait_for(timeout=90000)
    _dismiss_overlays(page)
    return frame


def test_the_readme_names_what_the_walkthrough_clicks_and_types() -> None:
    text = README.read_text(encoding="utf-8")
    setup = " ".join(text[text.index("## Set up"):text.index("**Who you are in the Debug Chat.**")].split())
    at = [setup.find(word) for word in CLICKED]
    assert -1 not in at, [w for w, i in zip(CLICKED, at) if i == -1]
    assert at == sorted(at), [w for _, w in sorted(zip(at, CLICKED))]  # the README's order
    assert walkthrough_messages() == [
        "remember that the demo is on Friday", "remember that the demo is in room 4",
        "remember that the demo needs a projector", "when is the demo?", "!memory list", "!memory health",
        "!memory forget <id>", "!memory consolidate preview"]


def test_the_readme_walkthrough_in_the_real_webui_in_three_languages(e2e: Any) -> None:
    sync_api = sync_playwright_or_skip()
    client, base = e2e.client, e2e.info.base_url
    before = client.plugin_config(*LTM_PLUGIN)
    logged = log_sizes(e2e.stack.logs)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        langbot_setup.hold_plugin_settings(client, LTM_PLUGIN, cli.LOCAL_RUN_PLUGIN_SETTINGS)
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                # A new user's browser: logged in, nothing else (LangBot's guides and assistant will open).
                context = browser.new_context(viewport={"width": 1440, "height": 900})
                context.route("**/*", _local_only)
                page = context.new_page()
                page.goto(base + "/", wait_until="domcontentloaded")
                page.evaluate("""token => {
                    localStorage.setItem('token', token);
                    localStorage.setItem('langbot_language', 'en-US');
                }""", e2e.info.token)

                try:
                    _open_group_chat(page, base)
                except Exception:
                    page.screenshot(path=str(ARTIFACTS / "walkthrough-failed-to-open.png"))  # what the page showed
                    raise
                said: dict[str, str] = {}  # the README's message -> the reply to it
                expect = {"when is the demo?": "[scripted local model]", "!memory list": "the demo needs a projector",
                          "!memory health": "Memory health", "!memory consolidate preview": "Consolidation preview"}
                for written in walkthrough_messages():
                    typed, wanted = written, expect.get(written, "done: remember")
                    if written == "!memory forget <id>":  # the id of the projector memory, from the list
                        lines = said["!memory list"].splitlines()
                        at = next(i for i, line in enumerate(lines) if "the demo needs a projector" in line)
                        ids = UUID.findall(" ".join(lines[max(0, at - 2):at + 1]))
                        assert ids, said["!memory list"]
                        typed, wanted = f"!memory forget {ids[-1]}", ids[-1]
                    said[written] = _send(page, typed, wanted)
                assert all("It worked" in said[m] for m in said if m.startswith("remember")), said
                assert "the demo is on Friday" in said["when is the demo?"], said
                assert "Memory health: GREEN" in said["!memory health"], said["!memory health"]
                assert not any("only bot admins" in reply for reply in said.values()), said
                preview = said["!memory consolidate preview"]
                assert "Summary draft" in preview and "[scripted draft]" in preview, preview
                assert "the demo needs a projector" not in preview, preview  # forgotten before the draft
                page.locator(BOT_BUBBLES).last.scroll_into_view_if_needed()
                page.screenshot(path=str(ARTIFACTS / "walkthrough-group-chat.png"))

                frame = _console_from_sidebar(page)
                group = frame.locator(DEBUG_GROUP)
                assert "Debug Chat · Group Chat (LangBot WebUI)" in group.inner_text()
                group.click(timeout=10000)
                frame.locator("#tab-review").click(timeout=10000)
                draft = frame.locator("#review-drafts article.draft")
                draft.first.wait_for(timeout=60000)
                assert "[scripted draft]" in draft.first.inner_text(), draft.first.inner_text()
                page.screenshot(path=str(ARTIFACTS / "walkthrough-console-review.png"))
                draft.first.locator("[data-action=approve]").click(timeout=10000)
                frame.locator("#dialog-ok").click(timeout=10000)
                frame.locator("#review-drafts article.draft").wait_for(state="detached", timeout=60000)
                page.screenshot(path=str(ARTIFACTS / "walkthrough-console-approved.png"))

                # 日本語 and 繁體中文: LangBot reloads the page; the console keeps its space and follows the
                # WebUI; replies follow reply_language.
                for webui, reply_language, label, group_chat, title in (
                        ("ja-JP", "ja_JP", "チャットデバッグ · グループチャット", "グループチャット", "記憶のヘルス"),
                        ("zh-Hant", "zh_Hant", "對話除錯 · 群聊", "群聊", "記憶健康狀況")):
                    _console(page, base)  # back in the console (the last reply was in the debug chat)
                    page.evaluate("lang => { localStorage.setItem('langbot_language', lang); location.reload(); }",
                                  webui)
                    frame = page.frame_locator("iframe[title*='LongTermMemory']")
                    frame.locator(DEBUG_GROUP, has_text=label).wait_for(timeout=90000)
                    frame.locator("#current-scope", has_text="websocket-proxy-bot:group_websocketgroup").wait_for(
                        timeout=30000)  # the space that was open, without choosing it again
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
    errors = plugin_error_lines(e2e.stack.logs, logged)
    assert errors == [], "\n".join(errors)
