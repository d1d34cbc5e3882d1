"""The Memory Console's Conversation tab in a real headless Chromium (V4): a chat's recorded turns and
summary shown, the summary edited, the record cleared; the shared browser fixture of
tests/test_console_browser.py (its host page, its checks for console errors and outside requests)."""

from __future__ import annotations

import asyncio
import json

import pytest

from ltm._storage import conversation_key
from tests.chat import Place
from tests.test_console_browser import Console, console  # noqa: F401  # `console` is the shared browser fixture
from tests.test_conversation_hooks import turn

pytestmark = pytest.mark.slow
G1 = Place("group", "g1")


async def recorded(c: Console, turns: int) -> None:
    """Until the chat's record holds `turns` turns (this fixture's harness also runs tasks that never end,
    so `settle` cannot be the wait)."""
    for _ in range(500):
        raw = c.host.storage.get(conversation_key("bot-1:group_g1"))
        if raw is not None and json.loads(raw)["next_seq"] > turns:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"turn {turns} was not recorded")


async def test_the_conversation_tab_shows_edits_and_clears_a_chats_record(console: Console) -> None:  # noqa: F811 - the imported fixture, taken by name
    c, fr = console, console.frame
    for name, value in (("conversation_enabled", True), ("conversation_max_turns", 4)):
        done = await c.harness.page_api("console", "/settings/set", "POST", {"name": name, "value": value})
        assert done["data"]["ok"] is True, done
    for n, (sender, name) in enumerate((("u1", "Alice"), ("u2", "Bob"), ("u3", "Carol"), ("u1", "Alice")), 1):
        await turn(c.harness, f"harbour plan part {n}", f"reply {n}", place=G1, sender=sender, name=name,
                   settle=False)
        await recorded(c, n)
    await c.open()
    await c.select_space("bot-1:group_g1")
    await c.tab("conversation")
    turns = fr.locator("#conversation-turns article.ep")
    await turns.first.wait_for()
    # Four turns on a budget of four: the fourth made a fold due, which folded the first two into the summary.
    assert await turns.count() == 2
    assert "harbour plan part 4" in await turns.first.inner_text()  # newest first
    summary = fr.locator("#conversation-summary")
    assert "harbour plan part 1" in await summary.inner_text() and "short lines, no model" in await summary.inner_text()
    await c.shot("desktop-light-conversation")

    await summary.locator("[data-action=edit]").click()
    await fr.locator("#conversation-summary-text").fill("Alice and Bob planned the harbour trip.\nCarol steers.")
    await fr.locator("#conversation-summary-form [data-action=save]").click()
    await fr.locator("#panel-conversation .alert.ok", has_text="Summary saved.").wait_for()
    await fr.locator("#conversation-summary", has_text="Carol steers.").wait_for()
    stored = json.loads(c.host.storage[conversation_key("bot-1:group_g1")])
    assert stored["summary"]["text"] == "Alice and Bob planned the harbour trip.\nCarol steers."
    assert stored["summary"]["source"] == "edited"

    await fr.locator("#conversation-clear").click()
    await c.confirm()
    await fr.locator("#panel-conversation .alert.ok", has_text="Conversation record cleared (2 turns).").wait_for()
    await fr.locator("#panel-conversation .empty", has_text="No turns recorded.").wait_for()
    assert conversation_key("bot-1:group_g1") not in c.host.storage
    audit = [e["operation"] for e in (await c.harness.page_api("console", "/audit/export", "POST", {
        "space": {"scope_key": "bot-1:group_g1", "user_key": "bot-1:group_g1"}}))["data"]["export"]["entries"]]
    assert audit[-2:] == ["conversation_edit", "conversation_clear"]
