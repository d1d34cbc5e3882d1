"""What an operator sees in the Memory Console after using it (issue 36, round 2), in headless Chromium.

The candidate fixture of tests/test_candidates_browser.py (two chats of bot-1 with proposed candidates),
plus the two chats LangBot's WebUI debug chat makes (bot `websocket-proxy-bot`: its Group Chat
`websocketgroup` and a Private Chat visit `websocket_<connection>`) and one injection in group g1:
- the space list follows an accept without pressing Refresh;
- the debug chat's spaces read as LangBot's Debug Chat, not as id tails;
- an English operation badge stays inside its Audit column;
- People counts chats and episode spaces, not "memory spaces" of both kinds together;
- the Injection tab says what its query id is.
"""

from __future__ import annotations

import re

from testhost import make_session
from tests.test_candidates_browser import console  # noqa: F401 - the fixture
from tests.test_console_browser import Console

DEBUG_BOT = "websocket-proxy-bot"
VISIT = "websocket_3f9a2c1e-8b7d-4e2f-9a61-0c5d7e8f1a2b"


async def _debug_chat_spaces(c: Console) -> None:
    """One memory in the debug Group Chat and one in a debug Private Chat visit, as LangBot sends them."""
    for query_id, launcher_type, launcher_id in ((11, "group", "websocketgroup"), (12, "person", VISIT)):
        c.host.open_query(query_id, bot_uuid=DEBUG_BOT, launcher_type=launcher_type, launcher_id=launcher_id,
                          sender_id=VISIT, sender_name="User", message_text="remember that the demo is on Friday")
        out = await c.harness.call_tool("remember", {"content": "the demo is on Friday"}, query_id=query_id,
                                        session=make_session(launcher_type, launcher_id, sender_id=VISIT,
                                                             bot_uuid=DEBUG_BOT))
        assert out["ok"], out
        c.host.close_query(query_id)


async def _inject_once(c: Console) -> None:
    c.host.open_query(20, bot_uuid="bot-1", launcher_type="group", launcher_id="g1", sender_id="u1",
                      sender_name="Alice", message_text="when is the picnic?", pipeline_kbs=[c.kb_id])
    await c.harness.emit_event("PromptPreProcessing", {"session_name": "group_g1", "default_prompt": [], "prompt": []},
                               query_id=20)
    c.host.close_query(20)


async def test_console_after_use_reads_right_and_stays_current(console: Console) -> None:  # noqa: F811 - the imported fixture, taken by name
    c, fr = console, console.frame
    await _debug_chat_spaces(c)
    await _inject_once(c)
    await c.open(width=1280, height=900)

    # Readable names for LangBot's debug chat; other chats keep kind, id and bot.
    labels = {await b.get_attribute("data-scope-key"): await b.locator(".label").inner_text()
              for b in await fr.locator("#scope-list .scope-btn").all()}
    assert labels[f"{DEBUG_BOT}:group_websocketgroup"] == "Debug Chat · Group Chat (LangBot WebUI)", labels
    assert labels[f"{DEBUG_BOT}:person_{VISIT}"] == "Debug Chat · Private Chat, visit …7e8f1a2b (LangBot WebUI)", labels
    assert labels["bot-1:group_g1"] == "Group chat group g1 (g1) · bot bot-1", labels  # the test host names it "group g1"
    assert not any("…ketgroup" in text or "…roxy-bot" in text for text in labels.values()), labels

    # Accepting a candidate updates the space's counts in the list at once (no Refresh pressed).
    group = fr.locator('.scope-btn[data-scope-key="bot-1:group_g1"] .sub')
    assert "2 pending" in await group.inner_text()
    await c.select_space("bot-1:group_g1")
    await c.tab("review")
    await fr.locator("#candidate-list article.ep[data-kind=episode] [data-action=accept]").click()
    await c.confirm()
    await fr.locator("#candidate-counts", has_text="1 pending · 1 accepted").wait_for()
    await group.filter(has_text="1 pending").wait_for()
    assert re.search(r"\b1 episode\b", await group.inner_text()), await group.inner_text()

    # Audit, English, 1280 px: every operation badge ends inside its own column.
    await c.tab("audit")
    await fr.locator("#audit-table").wait_for()
    spill = await fr.locator("#audit-table td.op").evaluate_all(
        """cells => cells.map(td => { const b = td.querySelector('.badge').getBoundingClientRect();
             const r = td.getBoundingClientRect(); return [td.textContent, b.right - r.right]; })
             .filter(x => x[1] > 0.5)""")
    assert spill == [], spill
    assert "Candidate proposed" in await fr.locator("#audit-table").inner_text()

    # People: one group chat where u1 spoke is one chat and one episode space.
    await c.tab("people")
    await fr.locator("#people-sender").fill("u1")
    await fr.locator("#people-form [type=submit]").click()
    summary = await fr.locator("#people-summary").inner_text()
    found = next(call["result"]["data"] for call in reversed(c.api_calls) if call["endpoint"] == "/person/find")
    kinds = [s["kind"] for s in found["spaces"]]
    assert kinds.count("l2") == 1, found["spaces"]
    assert f"Kept in chats (profiles, candidates, snapshots): {kinds.count('l1')};" in summary, summary
    assert "in episode spaces: 1." in summary, summary
    assert "memory space(s)" not in summary, summary

    # Injection: the query id is named and explained next to the time of the message.
    await c.select_space("bot-1:group_g1")
    await c.tab("injection")
    await fr.locator("#injection-query-help").wait_for()
    stats = await fr.locator("#panel-injection .stats").inner_text()
    assert "LangBot query id" in stats and "20" in stats, stats
    assert "query=" in await fr.locator("#injection-query-help").inner_text()

    # The same in Japanese and Traditional Chinese (LangBot's own words for its debug chat).
    await c.context("light", "ja-JP")
    await fr.locator('.scope-btn[data-scope-key="websocket-proxy-bot:group_websocketgroup"] .label',
                     has_text="チャットデバッグ · グループチャット").wait_for()
    await c.context("light", "zh-Hant")
    await fr.locator('.scope-btn[data-scope-key="websocket-proxy-bot:group_websocketgroup"] .label',
                     has_text="對話除錯 · 群聊").wait_for()
    await c.shot("operator-round2-zh-hant")
