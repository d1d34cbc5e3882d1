"""A reply that names a command names it with the prefix the user typed (issue 45, point 10).

LangBot 4.12 gives new bots `/` as their command prefix (existing bots keep `!`), and a Chinese or
Japanese keyboard types the full-width `！`. So `/memory list` is answered with `Next: /memory list 2`,
never with a hard-coded `!memory`, in every reply language; a stored memory that itself says
"!memory" is shown as it was stored (only our own texts are rewritten).
"""

from __future__ import annotations

import pytest

from components.commands.args import typed_prefix
from components.common.i18n import LANGUAGES
from testhost import PluginHarness
from tests.chat import open_chat

PREFIXES = ("!", "！", "/")


class _Ctx:
    def __init__(self, full: str, text: str) -> None:
        self.full_command_text, self.command_text = full, text


def test_the_typed_prefix_is_what_the_host_cut_off() -> None:
    assert typed_prefix(_Ctx("/memory list 2", "memory list 2")) == "/"
    assert typed_prefix(_Ctx("！memory", "memory")) == "！"
    assert typed_prefix(_Ctx("!memory help", "memory help")) == "!"
    assert typed_prefix(_Ctx("", "")) == "!"  # a context that does not say
    assert typed_prefix(_Ctx("memory help", "emory help")) == "!"  # a letter is never a prefix


@pytest.fixture(params=LANGUAGES)
async def language(request: pytest.FixtureRequest, harness: PluginHarness) -> str:
    await harness.restart(plugin_config={"reply_language": request.param}, fresh_modules=False)
    return str(request.param)


STORED = "type !memory help to see the commands"  # stored text that names the command


@pytest.mark.parametrize("prefix", PREFIXES)
async def test_every_reply_names_the_command_with_the_typed_prefix(harness: PluginHarness, kb: str, language: str,
                                                                 prefix: str) -> None:
    chat = open_chat(harness, privilege=1)  # a member: the refusals name the command too
    for i in range(11):
        await chat.remember(f"Weekly note number {i}")
    await chat.remember(STORED)
    replies = {text: await chat.run(prefix + text) for text in (
        "memory list", "memory help", "memory help change", "memory lst", "memory settings",
        "memory forget 0123456789abcdef0123456789abcdef", "memory consolidate drafts",
        "memory search see the commands", "memory settings set isolation bot")}
    assert f"{prefix}memory list 2" in replies["memory list"], replies["memory list"]
    assert STORED in replies["memory search see the commands"]  # quoted as stored, not rewritten
    for text, reply in replies.items():
        ours = reply.replace(STORED, "")
        assert f"{prefix}memory" in ours or text.startswith("memory search"), (text, reply)
        assert not [p for p in PREFIXES if p != prefix and f"{p}memory" in ours], (text, reply)


def test_the_readme_says_which_langbot_is_tested_and_what_4_12_changes() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for name in ("README.md", "readme/README_ja_JP.md", "readme/README_zh_Hans.md"):
        text = (root / name).read_text(encoding="utf-8")
        assert "LangBot 4.11.2" in text and "LangBot 4.12.0" in text, name
        versions = text[text.index("LangBot 4.12.0"):][:1500]
        for said in ("`/`", "`/memory list 2`", "Chat"):
            assert said in versions, (name, said)
    english = (root / "README.md").read_text(encoding="utf-8")
    assert "they are **not tested here**" in english
