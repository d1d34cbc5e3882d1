"""The Memory Console follows the WebUI into Japanese and Traditional Chinese (issue 36 point 8), in the
real headless Chromium of tests/test_console_browser.py (same fixture, same host page, same checks: no
console error, no request leaving 127.0.0.1). Switching the host context's `language` to `ja-JP` or
`zh-Hant` must turn the page, the server's worded codes (health lines, audit operations) and the
document language into that language, with no English and, for zh-Hant, no Simplified left; a WebUI
language the console has no dictionary for (es-ES) reads English. Screenshots go to
tests/artifacts/console/ (console-ja-*.png, console-zh-hant-*.png).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.test_console_browser import TABS, Console, console  # noqa: F401  # `console` is the shared browser fixture

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
KANA = re.compile("[\u3040-\u30ff]")
# Characters written differently in Simplified and Traditional Chinese, as the console uses them.
SIMPLIFIED_ONLY = re.compile("[记忆态档设删导诊审栏库话]")


def dictionary(language: str) -> dict[str, str]:
    words = json.loads((ROOT / "pages" / "console" / "i18n" / f"{language}.json").read_text(encoding="utf-8"))
    vocabulary = ROOT / "components" / "common" / "vocabulary" / f"{language}.json"
    return {**words, **json.loads(vocabulary.read_text(encoding="utf-8"))}


async def shows_language(c: Console, tag: str, language: str) -> dict[str, str]:
    """Switch the host to `tag` and wait until the page reads `language`'s dictionary."""
    words = dictionary(language)
    await c.context("light", tag)
    await c.frame.locator("h1", has_text=words["app.title"]).wait_for()
    tabs = await c.frame.locator("#tablist [role=tab]").all_inner_texts()
    assert tabs == [words[f"tab.{name}"] for name in TABS], tabs
    return words


async def health_and_audit(c: Console, words: dict[str, str], name: str) -> tuple[str, list[str]]:
    await c.tab("diagnostics")
    await c.frame.locator("#health-run").click()
    await c.frame.locator("#health-cards .hcard").first.wait_for()
    cards = await c.frame.locator("#health-cards").inner_text()
    for english in ("memory knowledge base", "embedding model answers", "search, list and delete", "vector store",
                    "no write fence", "creation settings apply"):
        assert english not in cards, (english, cards)
    await c.shot(f"console-{name}-diagnostics")
    await c.tab("audit")
    await c.frame.locator("#audit-table").wait_for()
    badges = await c.frame.locator("#audit-table [data-operation]").evaluate_all(
        "els => els.map(e => [e.dataset.operation, e.textContent])")
    english = dictionary("en_US")
    assert badges and all(text == words[f"op.{code}"] != english[f"op.{code}"] for code, text in badges), badges
    await c.shot(f"console-{name}-audit")
    return cards, [text for _, text in badges]


async def test_the_console_speaks_japanese_and_traditional_chinese_after_a_language_switch(
        console: Console) -> None:  # noqa: F811  # the imported fixture, requested by name
    c, fr = console, console.frame
    await c.open()
    await c.select_space("bot-1:group_g1")
    await c.tab("episodes")
    await fr.locator("#panel-episodes .ep").first.wait_for()
    english_panel = await fr.locator("#panel-episodes").inner_text()

    words = await shows_language(c, "ja-JP", "ja_JP")
    assert await c.page_frame().evaluate("document.documentElement.lang") == "ja"
    panel = await fr.locator("#panel-episodes").inner_text()
    assert KANA.search(panel) and panel != english_panel
    assert words["episodes.archive"] in panel and words["status.active"] in panel, panel
    await c.shot("console-ja-episodes")
    cards, badges = await health_and_audit(c, words, "ja")
    assert KANA.search(cards) and KANA.search("".join(badges)), (cards, badges)

    words = await shows_language(c, "zh-Hant", "zh_Hant")
    assert await c.page_frame().evaluate("document.documentElement.lang") == "zh-Hant"
    await c.tab("episodes")
    panel = await fr.locator("#panel-episodes").inner_text()
    assert words["episodes.archive"] in panel and not KANA.search(panel), panel
    assert not SIMPLIFIED_ONLY.search(await fr.locator("body").inner_text())
    await c.shot("console-zh-hant-episodes")
    cards, badges = await health_and_audit(c, words, "zh-hant")
    assert not SIMPLIFIED_ONLY.search(cards + "".join(badges)), (cards, badges)

    # A WebUI language without a console dictionary reads English; back to Japanese works again.
    await shows_language(c, "es-ES", "en_US")
    assert await c.page_frame().evaluate("document.documentElement.lang") == "en"
    await shows_language(c, "ja-JP", "ja_JP")


async def test_every_tab_fits_a_narrow_window_in_japanese_and_traditional_chinese(
        console: Console) -> None:  # noqa: F811  # the imported fixture, requested by name
    """The longer CJK labels and texts wrap: no tab of either language scrolls sideways at 360 px."""
    c, fr = console, console.frame
    await c.open(width=360, height=780)
    await fr.locator('.scope-btn[data-scope-key="bot-1:group_g1"]').click()
    await fr.locator("#session-profile").wait_for()
    for tag, language, name in (("ja-JP", "ja_JP", "ja"), ("zh-Hant", "zh_Hant", "zh-hant")):
        words = dictionary(language)
        await c.context("light", tag)
        await fr.locator("#tab-profiles", has_text=words["tab.profiles"]).wait_for()
        for tab in TABS:
            await c.tab(tab)
            await c.no_horizontal_overflow(f"{tag} {tab} at 360px")
        await c.shot(f"console-{name}-360-settings")
