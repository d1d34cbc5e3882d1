"""Every `!memory` reply reads the same as Markdown and as plain text, in English and in Chinese
(issue 23 items 1 and 4, issue 21 item 4; the rule is components/common/chat_text.py).

LangBot's WebUI debug chat (and Discord, Telegram) render a reply as Markdown with raw HTML; QQ and
WeChat show it as it is. Each reply of every subcommand, driven through the SDK's real command
dispatch on the test host, is rendered here with markdown-it-py (CommonMark, raw HTML on, GitHub's
tables and strikethrough) and must come out as the same lines, with every placeholder, as its plain
text. The memories behind the replies are hostile on purpose: Markdown and HTML markup, line and
paragraph separators, bidi overrides, and the exact consolidation-preview forgery of issue 21.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from markdown_it import MarkdownIt

from components.commands import memory as command
from components.common.chat_text import inert, json_text, render
from components.common.i18n import LANGUAGES, WRITTEN, Catalogue
from testhost import PluginHarness
from tests.chat import BOT, Chat, Place, open_chat, tool
from tests.test_candidates import responded

pytestmark = pytest.mark.slow
MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
LLM = "llm-1"
KB_SETTINGS = {"consolidation_enabled": True, "consolidation_model_uuid": LLM, "candidate_extraction_enabled": True,
               "conversation_enabled": True}
FORGED_ID = "00000000-0000-4000-8000-000000000000"
# Issue 21 item 4, as filed: a stored memory that imitates a statement line and the Apply line.
FORGERY = f"the group meets on Fridays\n  S2. Bob is the group owner [sources 1, 2]\nApply: !memory consolidate run {FORGED_ID}"
HOSTILE = ("**bold** _it_ `code` <b>tag</b> <br> [link](http://example.test) &amp; ~strike~ \\* trailing  \n"
           "# heading\n- item\n1. one\n> quote\n| a | b |\n|---|---|\n```\nfence\u2028sep\u2029para \u202eevil")
SECRET_MESSAGE = "my password is hunter2hunter2 for the shop"
_TAG = re.compile(r"<[^>]+>")
_ASCII_PLACEHOLDER = re.compile(r"<[a-z][a-z0-9_|.\-]*>")


@pytest.fixture
def supported_backend_name() -> str:
    return "chroma"  # the replies do not depend on the store; the backends have their own tests


def rendered_lines(reply: str) -> list[str]:
    """The text lines a Markdown client shows: block ends and hard breaks are line ends."""
    out = MARKDOWN.render(reply)
    out = re.sub(r"<br\s*/?>\n?", "\n", out)
    out = re.sub(r"</(?:p|li|h[1-6]|pre|blockquote|tr|table|thead|tbody|ul|ol)>", "\n", out)
    text = html.unescape(_TAG.sub("", out))
    return [line.strip() for line in text.split("\n") if line.strip()]


def plain_lines(reply: str) -> list[str]:
    """The lines a plain-text client shows."""
    return [line.strip() for line in reply.split("\n") if line.strip()]


def assert_renders_alike(where: str, reply: str) -> None:
    assert rendered_lines(reply) == plain_lines(reply), (where, reply)
    assert not _ASCII_PLACEHOLDER.search(reply), (where, reply)  # ours are written ＜like this＞
    shown = "\n".join(rendered_lines(reply))
    for placeholder in re.findall(r"＜[^＞]+＞", reply):
        assert placeholder in shown, (where, placeholder)
    assert not re.search("[\u2028\u2029\u202a-\u202e\u2066-\u2069]", reply), (where, reply)


def one_statement(messages: list[dict[str, Any]], payload: dict[str, Any]) -> str:
    """The scripted consolidation model: one statement over every source, carrying a line separator."""
    body = str(messages[-1]["content"]).partition("<sources>\n")[2].partition("\n</sources>")[0]
    sources = json.loads(body)
    return json.dumps({"statements": [
        {"text": "Members meet weekly\u2028S9. forged statement", "sources": [s["id"] for s in sources]}]})


async def drive(harness: PluginHarness) -> list[tuple[str, str]]:
    """Every subcommand (and its usage errors) once, on hostile memories; (command, reply) in order."""
    harness.host.llm_script = one_statement
    await harness.create_memory_kb(**KB_SETTINGS)
    chat = open_chat(harness)
    replies: list[tuple[str, str]] = []

    async def run(text: str, who: Chat = chat) -> str:
        reply = await who.run(text)
        replies.append((text, reply))
        return reply

    await chat.tool("update_profile", {"scope": "session", "name": "Club *night*", "traits": ["meets <b>weekly</b>"]})
    await chat.tool("update_profile", {"scope": "speaker", "preferences": ["tea\u2028Apply: forged"]})
    forged = await chat.remember(FORGERY, tags=["club"])
    hostile = await chat.remember(HOSTILE, tags=["_x_"], source_ref="query:1", claim_type="user_statement",
                                  event_at="2026-05-01T00:00:00Z")
    old = await chat.remember("The standup is at 9:00")
    new = await chat.remember("The standup moved to 9:30", supersedes=[old])
    await responded(harness, "I'm vegetarian and I live in Berlin")
    await responded(harness, SECRET_MESSAGE)
    await responded(harness, HOSTILE, "**sure** <b>noted</b>\n# not a heading")  # the conversation record

    for text in ("!memory", "!memory help", "!memory profile", "!memory search standup",
                 "!memory search standup --include-superseded", "!memory list", "!memory list --status superseded",
                 "!memory superseded", "!memory archived", f"!memory show {forged}", f"!memory show {hostile}",
                 f"!memory show {old}", "!memory health", "!memory export", "!memory export l2 --status archived",
                 "!memory audit", "!memory audit export", "!memory candidates", "!memory candidates --all-statuses",
                 "!memory consolidate drafts", "!memory conversation"):
        await run(text)
    preview = await run("!memory consolidate preview")
    proposal = re.search(r"([0-9a-f-]{36})", preview.partition("\n")[2])
    assert proposal, preview
    await run("!memory consolidate drafts")
    await run(f"!memory consolidate discard {proposal.group(1)}")
    await run("!memory consolidate preview --tag club")
    drafted = re.findall(r"consolidate run ([0-9a-f-]{36})", replies[-1][1])
    if drafted:
        await run(f"!memory consolidate run {drafted[0]}")
    await run("!memory consolidate run")
    pending = re.findall(r"^\[\d+\] (c-[0-9a-f]{8})", await run("!memory candidates"), re.MULTILINE)
    assert len(pending) >= 2, replies[-1]
    await run(f"!memory candidate accept {pending[-1]}")
    await run(f"!memory candidate reject {pending[0]}")
    await run("!memory candidates --all-statuses")
    await run(f"!memory archive {hostile}")
    await run(f"!memory restore {hostile}")
    await run(f"!memory restore {old}")
    await run(f"!memory forget {new}")
    await run("!memory delete --tag club --dry-run")
    await run("!memory delete --tag nothing-matches")
    await run("!memory delete --tag club")
    await run('!memory import l2 [{"content": "imported <i>one</i>"}, {"id": "old-1", "content": "two"}]')
    member = open_chat(harness, sender_id="u2", sender_name="Bea", privilege=1)
    await run(f"!memory forget {hostile}", member)
    # Settings, profile edits, L1 import and a person's own view and erasure (issue 24's replies).
    for text in ("!memory settings", "!memory settings set auto_recall_top_k 2",
                 "!memory settings set auto_recall_top_k 2", "!memory settings reset auto_recall_top_k",
                 "!memory settings reset auto_recall_top_k", "!memory settings set auto_recall_top_k lots",
                 "!memory settings frob", "!memory settings set", "!memory settings set auto_recall_top_k",
                 "!memory profile set name Club <b>night</b>", "!memory profile set traits *loud*, early riser --me",
                 "!memory profile remove traits early riser --me", "!memory profile remove notes",
                 "!memory profile set notes", "!memory profile remove name extra", "!memory profile set",
                 "!memory profile set name x --me --speaker u9", "!memory profile clear --speaker u9",
                 "!memory profile clear"):
        await run(text)
    await run("!memory settings set auto_recall_top_k 3", member)
    await run("!memory profile set name Bea", member)
    await run("!memory profile set traits quiet --me", member)
    l1 = {"scope_key": "bot-x:group_other", "session_profile": {"name": "Club <i>night</i>", "traits": ["a*b*"]},
          "speaker_profiles": {"u7": {"name": "Cy_", "preferences": ["[x](y)"]}, "u8": {}}}
    for text in (f"!memory import l1 {json.dumps(l1)}", '!memory import l1 {"session_profile": {}}',
                 '!memory import l1 {"session": {}}', "!memory import l1",
                 "!memory import l3 []", "!memory me", "!memory forget-me", "!memory forget-me --everywhere"):
        await run(text)
    await run("!memory me", member)
    await run("!memory forget-me --confirm", member)
    await run("!memory me", member)
    exported = await run("!memory export conversation")
    await run("!memory conversation clear", member)
    await run("!memory conversation clear")
    await run("!memory conversation clear")
    await run(f"!memory import conversation {exported.partition(chr(10))[2]}")
    await run(f"!memory import conversation {exported.partition(chr(10))[2]}")
    for text in ("!memory frobnicate <x>", "!memory show", "!memory list 0", "!memory search",
                 "!memory search x --fuzzy", "!memory candidate", "!memory candidate accept",
                 "!memory consolidate", "!memory consolidate nope", "!memory consolidate run --tag x",
                 "!memory export l3", "!memory import l2", "!memory conversation wipe",
                 "!memory import conversation", "!memory audit export now", "!memory delete",
                 '!memory delete --speaker "open', f"!memory show {FORGED_ID}", "!memory list --status"):
        await run(text)
    # A deleted bot's memory (hostile text included) moved into this bot's chat (issue 41, point 5).
    await tool(harness, Place("group", "g1", "bot-old"), "remember", {"content": HOSTILE}, sender="u1")
    for text in ("!memory move-bot bot-old", "!memory move-bot bot-old --confirm", "!memory move-bot bot-none",
                 "!memory move-bot"):
        await run(text)
    await run("!memory move-bot bot-old", member)
    return replies


@pytest.mark.parametrize("language", LANGUAGES)
async def test_every_reply_renders_alike_as_markdown_and_plain_text(harness: PluginHarness, language: str) -> None:
    await harness.restart(plugin_config={"reply_language": language}, fresh_modules=False)
    replies = await drive(harness)
    driven = {text.split()[1] if len(text.split()) > 1 else "" for text, _ in replies}
    assert set(command.REGISTRY.entries) <= driven | {"overview"}, set(command.REGISTRY.entries) - driven
    for text, reply in replies:
        assert_renders_alike(text, reply)
    if language != "en_US":  # every other language is CJK (Japanese too) and leaks no English text
        # English text of a message that its Chinese text does not share (a usage line's syntax, such as
        # "[--speaker ID | --me]", is the same in every language and is no leak).
        fragments = {part.strip() for english, chinese in Catalogue.ALL.values()
                     for part in re.split(r"\{\w+\}|<\w+>", english)
                     if len(part.strip()) > 24 and part.strip() not in chinese}
        for text, reply in replies:
            assert re.search("[\u3040-\u30ff\u4e00-\u9fff]", reply), (text, reply)
            ours = re.sub(r"“[^”]*”", "", reply)  # stored text is quoted; the rest must be Chinese
            leaked = [f for f in fragments if f in ours]
            assert not leaked, (text, leaked)


async def test_stored_text_cannot_forge_a_line_of_the_consolidation_preview(harness: PluginHarness) -> None:
    """Issue 21 item 4, as filed: a source that imitates "S2." and "Apply:" lines, and a model statement
    with U+2028, leave exactly one statement line, one Apply line and no raw separator."""
    harness.host.llm_script = one_statement
    await harness.create_memory_kb(**KB_SETTINGS)
    chat = open_chat(harness)
    await chat.remember(FORGERY)
    await chat.remember("the group owner is Carol")
    preview = await chat.run("!memory consolidate preview")
    lines = [line.strip() for line in preview.split("\n")]
    assert sum(line.startswith("S1.") for line in lines) == 1, preview
    assert not any(line.startswith(("S2.", "S9.")) for line in lines), preview
    assert sum(line.startswith("Apply:") for line in lines) == 1, preview
    assert "\u2028" not in preview and FORGED_ID in preview  # the forged text is shown, inside its quote
    forged = next(line for line in lines if FORGED_ID in line)
    # Inside its quote, on the line that shows it (a bracket pair that cannot make a link stays as written).
    assert forged.startswith("“") and "↵ S2. Bob is the group owner [sources 1, 2] ↵ Apply:" in forged
    assert_renders_alike("preview", preview)


def test_inert_text_keeps_one_line_and_no_markup() -> None:
    for raw in (FORGERY, HOSTILE, "a\r\nb\x0bc\x0cd\x85e\u2028f\u2029g", "lone \ud83d surrogate", "@everyone <@123>"):
        text = inert(raw)
        assert "\n" not in text and "\r" not in text and "\ud83d" not in text
        assert rendered_lines(render(f"Quote: {text}")) == [f"Quote: {text}".strip()], text
    assert "@everyone" not in inert("@everyone") and "<@" not in inert("<@123>")


def test_json_replies_parse_back_and_render_unchanged() -> None:
    payload = {"episodes": [{"content": HOSTILE, "tags": ["_x_", "a*b"], "note": 'say "hi" \\ now'}],
               "scope_key": "bot-1:group_g1"}
    body = json_text(payload)
    assert json.loads(body) == payload
    assert rendered_lines(render(body)) == [body]


def test_every_message_has_both_languages_with_the_same_parameters() -> None:
    assert Catalogue.ALL
    for message_id, texts in Catalogue.ALL.items():
        assert len(texts) == len(WRITTEN) and all(t.strip() for t in texts), message_id
        fields = {frozenset(re.findall(r"\{(\w+)\}", t)) for t in texts}
        assert len(fields) == 1, message_id
    usages = [entry.usage for entry in command.REGISTRY.entries.values()]
    assert usages and all(len(u) == len(WRITTEN) and all(t.strip() for t in u) for u in usages)


def test_a_reply_too_long_for_one_message_is_cut_at_a_line_and_says_so() -> None:
    long = "\n".join(f"[{n}] {'x' * 90}" for n in range(100))
    out = render(long)
    assert len(out) <= 3500 and out.endswith("… (output shortened for chat)")
    assert rendered_lines(out) == plain_lines(out)
    assert BOT  # the chat helpers above use the shared bot


async def test_the_forgery_forges_no_line_in_show_list_search_candidates_or_audit(harness: PluginHarness) -> None:
    """Issue 21 item 4 on every surface that shows stored text: the memory itself (show, list, search),
    a candidate of a message carrying it, a speaker whose display name carries it (audit), and a
    profile value with U+2028; no reply gains an "S2." or "Apply:" line, none keeps a raw separator."""
    await harness.create_memory_kb(candidate_extraction_enabled=True)
    forger = open_chat(harness, sender_id="u6", sender_name=f"Eve\u2028Apply: !memory consolidate run {FORGED_ID}")
    episode = await forger.remember(FORGERY)
    await forger.tool("update_profile", {"scope": "speaker", "traits": ["kind\u2028S2. Bob is the group owner"]})
    await responded(harness, "I live in Lisbon\u2028S2. Bob is the group owner", sender="u6",
                    name="Eve\nApply: forged")
    for text in (f"!memory show {episode}", "!memory list", "!memory search group owner", "!memory candidates",
                 "!memory candidates --all-statuses", "!memory audit", "!memory profile", "!memory me"):
        reply = await forger.run(text)
        lines = [line.strip() for line in reply.split("\n")]
        assert not any(line.startswith(("S2.", "Apply:", "S9.")) for line in lines), (text, reply)
        assert not re.search("[\u2028\u2029]", reply), (text, reply)
        assert_renders_alike(text, reply)
    shown = await forger.run(f"!memory show {episode}")
    assert "↵ S2. Bob is the group owner [sources 1, 2] ↵ Apply:" in shown, shown
    # The hostile texts are really shown (inside their quotes), so the checks above were not vacuous.
    # The host's U+2028 reaches the extractor as a line break (host text is cleaned on the way in), so the
    # forged line is a sentence of its own and no candidate: the candidate shows only the real fact.
    candidates = await forger.run("!memory candidates")
    assert "I live in Lisbon" in candidates and "Bob is the group owner" not in candidates, candidates
    # A display name is one line once the host's identity is normalized: the forged "Apply:" stays inside it.
    assert "Eve Apply: !memory consolidate run" in await forger.run("!memory audit")
    assert "“kind S2. Bob is the group owner”" in await forger.run("!memory profile")  # stored as one line


async def test_a_plain_text_platform_gets_no_trailing_spaces_and_the_webui_keeps_its_line_breaks(
        harness: PluginHarness) -> None:
    """Issue 41, point 4: on QQ (LangBot's OneBot v11 adapter) a reply's lines end without the two spaces
    of a Markdown hard break; a bot LangBot does not list (the WebUI debug chat) keeps them."""
    await harness.create_memory_kb()
    chat = open_chat(harness)
    for n in range(3):
        await chat.remember(f"memory number {n} about the garden")
    markdown = await chat.run("!memory list")
    assert "  \n" in markdown and assert_renders_alike("list", markdown) is None
    harness.host.bot_adapters[BOT] = "onebot-v11"
    await harness.restart(fresh_modules=False)  # the adapter is asked once per bot and kept a while
    plain = await open_chat(harness).run("!memory list")
    assert plain_lines(plain) == plain_lines(markdown)
    assert not [line for line in plain.split("\n") if line != line.rstrip(" ")], plain
    calls = harness.host.count("get_bot_info")
    await open_chat(harness).run("!memory help")
    assert harness.host.count("get_bot_info") == calls  # kept per bot, not asked per command


async def test_a_failed_adapter_question_is_asked_again_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    """One passing host error must not turn plain text off for a QQ bot for the whole TTL."""
    from ltm.langbot import platforms

    clock = [1000.0]
    monkeypatch.setattr(platforms.time, "monotonic", lambda: clock[0])
    answers: list[Any] = [RuntimeError("no answer"), {"adapter": "onebot-v11"}]

    class Api:
        async def get_bot_info(self, bot_uuid: str) -> Any:
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer

    known = platforms.Platforms()
    assert await known.plain_text(Api(), "bot-9") is False
    clock[0] += 5
    assert await known.plain_text(Api(), "bot-9") is False and len(answers) == 1  # not asked again at once
    clock[0] += platforms.FAILED_TTL_SECONDS
    assert await known.plain_text(Api(), "bot-9") is True and answers == []


async def test_an_adapter_answer_is_kept_for_its_ttl_and_then_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot's adapter can change (an operator moves it to another protocol endpoint): asked again after the TTL."""
    from ltm.langbot import platforms

    clock = [1000.0]
    monkeypatch.setattr(platforms.time, "monotonic", lambda: clock[0])
    answers: list[Any] = [{"adapter": "onebot-v11"}, {"adapter": "telegram"}]

    class Api:
        async def get_bot_info(self, bot_uuid: str) -> Any:
            return answers.pop(0)

    known = platforms.Platforms()
    assert await known.plain_text(Api(), "bot-9") is True
    clock[0] += platforms.TTL_SECONDS - 1
    assert await known.plain_text(Api(), "bot-9") is True and len(answers) == 1
    clock[0] += 1
    assert await known.plain_text(Api(), "bot-9") is False and answers == []
