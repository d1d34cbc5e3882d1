"""What an operator sees in the Memory Console, round 3 (issue 45, points 6 and 9), in headless Chromium.

The candidate fixture of tests/test_candidates_browser.py (two chats of bot-1), plus two visits of
LangBot's WebUI debug chat in its Group Chat (both named "User" by LangBot) and one turn in group g1,
whose platform name is "Team Alpha":
- every operation name of the Audit tab wraps between words, never inside one ("Consolidatio / n run"),
  in English and Japanese, wide and narrow;
- a reload of the page (what LangBot's WebUI does on a language switch) opens the space that was open;
- two debug chat visitors read apart ("User (websocket_…)" with the tail of each one's id);
- a space is named after its chat: the group's name as the platform gave it, and `!memory health` says it.
"""

from __future__ import annotations

import json
from pathlib import Path

from testhost import make_session
from tests.chat import open_chat
from tests.test_candidates_browser import console  # noqa: F401 - the fixture
from tests.test_console_browser import Console

ROOT = Path(__file__).resolve().parents[1]
DEBUG_BOT = "websocket-proxy-bot"
VISITS = ("websocket_3f9a2c1e-8b7d-4e2f-9a61-0c5d7e8f1a2b", "websocket_77d0e6b4-1c2a-4f3e-8d5b-2a9c0e1f4b6d")
DEBUG_GROUP = f"{DEBUG_BOT}:group_websocketgroup"

# Every operation name of a language, each put into an Audit row: a word of one is split over two lines
# when its rectangles sit on more than one line.
SPLIT_WORDS = """labels => {
  const body = document.querySelector('#audit-table tbody'), row = body.querySelector('tr');
  for (const label of labels) {
    const copy = row.cloneNode(true);
    copy.querySelector('td.op .badge').textContent = label;
    body.appendChild(copy);
  }
  const split = [];
  for (const badge of body.querySelectorAll('td.op .badge')) {
    const node = badge.firstChild, text = node.textContent;
    const cell = badge.closest('td').getBoundingClientRect();
    if (badge.getBoundingClientRect().right > cell.right + 0.5) split.push(text + ' (spills)');
    let at = 0;
    for (const word of text.split(/[\\s-]+/)) {  // a line may break after a hyphen (auto-applied)
      const start = text.indexOf(word, at); at = start + word.length;
      if (!word || /[\\u3040-\\u30ff\\u4e00-\\u9fff]/.test(word)) continue;  // CJK wraps between characters
      const range = document.createRange(); range.setStart(node, start); range.setEnd(node, at);
      const tops = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
      if (tops.size > 1) split.push(word);
    }
  }
  return split;
}"""


def operation_names(language: str) -> list[str]:
    vocabulary = json.loads((ROOT / "components" / "common" / "vocabulary" / f"{language}.json").read_text("utf-8"))
    return [text for key, text in vocabulary.items() if key.startswith("op.")]


async def _debug_visits(c: Console) -> None:
    """Two visits of the debug Group Chat, as LangBot sends them: each a new `websocket_…` named "User"."""
    for query_id, visit in enumerate(VISITS, start=31):
        c.host.open_query(query_id, bot_uuid=DEBUG_BOT, launcher_type="group", launcher_id="websocketgroup",
                          sender_id=visit, sender_name="User", group_name="Group",
                          message_text="remember that the demo is on Friday", pipeline_kbs=[c.kb_id])
        out = await c.harness.call_tool("remember", {"content": f"visit {query_id} was here"}, query_id=query_id,
                                        session=make_session("group", "websocketgroup", sender_id=visit,
                                                             bot_uuid=DEBUG_BOT))
        assert out["ok"], out
        c.host.close_query(query_id)


async def _named_turn(c: Console) -> None:
    """One turn in group g1, whose platform name is "Team Alpha" (LangBot's `group_name` variable)."""
    c.host.open_query(40, bot_uuid="bot-1", launcher_type="group", launcher_id="g1", sender_id="u1",
                      sender_name="Alice", group_name="Team Alpha", message_text="when is the picnic?",
                      pipeline_kbs=[c.kb_id])
    await c.harness.emit_event("PromptPreProcessing", {"session_name": "group_g1", "default_prompt": [], "prompt": []},
                               query_id=40)
    c.host.close_query(40)


async def test_audit_names_wrap_between_words_a_reload_keeps_the_space_and_visitors_read_apart(
        console: Console) -> None:  # noqa: F811 - the imported fixture, taken by name
    c, fr = console, console.frame
    await _debug_visits(c)
    await c.open(width=1280, height=900)
    await c.select_space(DEBUG_GROUP)
    await c.tab("audit")
    await fr.locator("#audit-table").wait_for()

    # Two visitors, both "User" to LangBot, read apart by the tail of their ids.
    senders = set(await fr.locator("#audit-table td.sender").all_inner_texts())
    assert senders == {"User (websocket_…7e8f1a2b)", "User (websocket_…0e1f4b6d)"}, senders

    # Every operation name wraps between words, in English and Japanese, wide and narrow.
    for language in ("en_US", "ja_JP"):
        await c.context("light", language.replace("_", "-"))
        await fr.locator("#audit-table").wait_for()
        for width in (1280, 1000, 700):
            await c.page.set_viewport_size({"width": width, "height": 900})
            split = await c.page_frame().evaluate(SPLIT_WORDS, operation_names(language))
            assert split == [], (language, width, split)
            await c.tab("profiles")
            await c.tab("audit")
            await fr.locator("#audit-table").wait_for()

    # LangBot's WebUI reloads the whole page on a language switch: the space that was open opens again.
    await c.open(width=1280, height=900)
    await fr.locator("#current-scope", has_text=DEBUG_GROUP).wait_for()
    c.assert_clean()


async def test_a_space_is_named_after_its_chat(console: Console) -> None:  # noqa: F811 - the imported fixture, taken by name
    c, fr = console, console.frame
    await _named_turn(c)
    await c.open(width=1280, height=900)
    label = await fr.locator('.scope-btn[data-scope-key="bot-1:group_g1"] .label').inner_text()
    assert label == "Group chat Team Alpha (g1) · bot bot-1", label
    person = await fr.locator('.scope-btn[data-scope-key="bot-1:person_p2"] .label').inner_text()
    assert person.startswith("Private chat Bob (p2)"), person
    await fr.locator("#scope-filter").fill("alpha")
    assert await fr.locator("#scope-list .scope-btn").count() == 1
    c.assert_clean()

    health = await open_chat(c.harness, "g1").run("!memory health")
    assert "Chat: group “Team Alpha” (g1)" in health and "Latest speaker: Alice" in health, health
