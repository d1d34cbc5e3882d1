"""What an operator sees from `!memory` (issue 36): a help that fits a chat bubble, a did-you-mean for a
typo, and refusals that say what is needed, in both languages the catalogues have.

- `!memory help` is one line per group plus the alias table; `!memory help <group|subcommand|alias>`
  has the usage lines.
- An unknown word gets the closest subcommand or alias (difflib), never the whole help.
- A change of a shared chat's memory by someone who is not a bot admin is refused with what is needed
  and how LangBot makes an admin; argument errors, which say nothing about memory, come first.
- `consolidate preview` by such a caller is the read-only part: no model call, no stored draft.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from components.commands import memory as command
from components.common.i18n import LANGUAGES
from testhost import PluginHarness
from tests.chat import Chat, listed_ids, open_chat
from tests.test_consolidation import ON as CONSOLIDATION
from tests.test_consolidation import one_statement

_spec = importlib.util.spec_from_file_location("i18n_zh_hant", Path(__file__).resolve().parents[1] / "scripts" / "i18n_zh_hant.py")
_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_script)
_HANT = _script.converter()

# Per language: the text each reply must contain (a test of the words an operator reads).
EXPECTED = {
    "en_US": {
        "help_title": "!memory commands by group (this chat only); details:",
        "aliases": "Aliases: h = health · p = profile · s = search · l, ls = list · f, del = forget · e = export",
        "group_title": "!memory help change:",
        "needs_admin_note": "In a shared chat (a group, or any chat in bot isolation) this needs a bot admin.",
        "lst": "Unknown subcommand “lst”; did you mean “list”? “!memory help” lists them.",
        "dell": "Unknown subcommand “dell”; did you mean “del”? “!memory help” lists them.",
        "frobnicate": "Unknown subcommand “frobnicate”. “!memory help” lists them.",
        "help_lst": "No help on “lst”; did you mean “list”?",
        "help_consolidat": "No help on “consolidat”; did you mean “consolidate”?",
        "refusal": "!memory forget needs a bot admin: this chat's memory is shared with other people or chats",
        "refused": "!memory {name} needs a bot admin:",
        "how_admin": "Bots > this bot > Manage Admins",
        "id_required": "Error: an episode id is required.",
        "bad_json": "Error: ",
        "no_filter": "Error: give at least one filter.",
        "draft_withheld": "Summary draft: not made.",
        "run_refused": "!memory consolidate run needs a bot admin",
        "no_drafts": "No pending summary drafts in this chat.",
        "consolidate_admin": "In a shared chat, run and discard need a bot admin.",
    },
    "zh_Hans": {
        "help_title": "!memory 命令分组（只作用于本聊天）；详情：",
        "aliases": "别名：h = health · p = profile · s = search · l, ls = list · f, del = forget · e = export",
        "group_title": "!memory help change：",
        "needs_admin_note": "在共享的聊天中（群聊，或 bot 隔离下的任何聊天）需要机器人管理员。",
        "lst": "未知的子命令“lst”；你是不是想输入“list”？“!memory help”列出所有子命令。",
        "dell": "未知的子命令“dell”；你是不是想输入“del”？“!memory help”列出所有子命令。",
        "frobnicate": "未知的子命令“frobnicate”。“!memory help”列出所有子命令。",
        "help_lst": "没有关于“lst”的帮助；你是不是想输入“list”？",
        "help_consolidat": "没有关于“consolidat”的帮助；你是不是想输入“consolidate”？",
        "refusal": "!memory forget 需要机器人管理员：本聊天的记忆与其他人或其他聊天共享",
        "refused": "!memory {name} 需要机器人管理员：",
        "how_admin": "机器人 > 该机器人 > 配置管理员",
        "id_required": "错误：需要情景记忆的 id。",
        "bad_json": "错误：",
        "no_filter": "错误：请至少给出一个筛选条件。",
        "draft_withheld": "摘要草稿：未生成。",
        "run_refused": "!memory consolidate run 需要机器人管理员",
        "no_drafts": "本聊天没有待审阅的摘要草稿。",
        "consolidate_admin": "在共享的聊天中，run 和 discard 需要机器人管理员。",
    },
    "ja_JP": {
        "help_title": "!memory コマンド（グループ別、この会話のみ）。詳細：",
        "aliases": "別名：h = health · p = profile · s = search · l, ls = list · f, del = forget · e = export",
        "group_title": "!memory help change：",
        "needs_admin_note": "共有の会話（グループ、または bot 分離でのすべての会話）では bot 管理者が必要です。",
        "lst": "不明なサブコマンド「lst」。「list」のことですか？「!memory help」で一覧を表示します。",
        "dell": "不明なサブコマンド「dell」。「del」のことですか？「!memory help」で一覧を表示します。",
        "frobnicate": "不明なサブコマンド「frobnicate」。「!memory help」で一覧を表示します。",
        "help_lst": "「lst」のヘルプはありません。「list」のことですか？",
        "help_consolidat": "「consolidat」のヘルプはありません。「consolidate」のことですか？",
        "refusal": "!memory forget には bot 管理者が必要です：この会話の記憶は他の人や会話と共有されている",
        "refused": "!memory {name} には bot 管理者が必要です：",
        "how_admin": "ボット > このボット > 管理者の設定",
        "id_required": "エラー：エピソード ID が必要です。",
        "bad_json": "エラー：",
        "no_filter": "エラー：フィルタを一つ以上指定してください。",
        "draft_withheld": "要約の下書き：作成していません。",
        "run_refused": "!memory consolidate run には bot 管理者が必要です",
        "no_drafts": "この会話に保留中の要約の下書きはありません。",
        "consolidate_admin": "共有の会話では、run と discard に bot 管理者が必要です。",
    },
}
# Traditional Chinese is generated from Simplified by the project's one converter, so its expectations are too.
EXPECTED["zh_Hant"] = {key: _HANT(text) for key, text in EXPECTED["zh_Hans"].items()}
HELP_LINES = 10  # title, eight groups, aliases: one bubble
HELP_LINE_CHARS = 100


@pytest.fixture(params=LANGUAGES)
async def language(request: pytest.FixtureRequest, harness: PluginHarness) -> str:
    await harness.restart(plugin_config={"reply_language": request.param}, fresh_modules=False)
    return str(request.param)


async def member_and_admin(harness: PluginHarness, **settings: object) -> tuple[Chat, Chat]:
    await harness.create_memory_kb(**settings)
    return open_chat(harness, sender_id="u2", sender_name="Bea", privilege=1), open_chat(harness)


# --------------------------------------------------------------------------- help

async def test_help_is_one_line_per_group_and_fits_a_bubble(harness: PluginHarness, language: str) -> None:
    said = EXPECTED[language]
    chat = open_chat(harness)
    text = await chat.run("!memory help")
    rows = [row.rstrip() for row in text.split("\n")]
    assert len(rows) <= HELP_LINES and all(len(row) <= HELP_LINE_CHARS for row in rows), rows
    assert rows[0].startswith(said["help_title"]) and rows[-1] == said["aliases"]
    assert [row.split("—")[0].split("（")[0].strip() for row in rows[1:-1]] == list(command.REGISTRY.by_group)
    assert "Usage" not in text and "--include-superseded" not in text  # details live in help <group>
    for word in ("-h", "--help", "?"):
        assert await chat.run(f"!memory {word}") == text


async def test_help_on_a_group_a_subcommand_and_an_alias(harness: PluginHarness, language: str) -> None:
    said = EXPECTED[language]
    chat = open_chat(harness)
    group = await chat.run("!memory help change")
    assert group.startswith(said["group_title"])
    for usage in ("!memory forget ＜id＞", "!memory archive ＜id＞", "!memory restore ＜id＞", "!memory delete ["):
        assert usage in group
    assert said["needs_admin_note"] in group
    one = await chat.run("!memory help forget")
    assert one.startswith("!memory forget ＜id＞") and said["needs_admin_note"] in one and "f, del = forget" in one
    assert await chat.run("!memory help del") == one
    assert "archive" not in one
    listing = await chat.run("!memory help ls")
    assert "--include-deleted" in listing and "--all-statuses" in listing and "l, ls = list" in listing
    assert said["needs_admin_note"] not in listing  # reading needs no admin
    assert said["consolidate_admin"] in await chat.run("!memory help consolidate")
    assert (await chat.run("!memory help lst")).startswith(said["help_lst"])
    assert (await chat.run("!memory help consolidat")).startswith(said["help_consolidat"])


# --------------------------------------------------------------------------- unknown words

async def test_an_unknown_subcommand_gets_the_closest_one_not_the_whole_help(harness: PluginHarness,
                                                                            language: str) -> None:
    said = EXPECTED[language]
    chat = open_chat(harness)
    assert await chat.run("!memory lst") == said["lst"]
    assert await chat.run("!memory dell 3") == said["dell"]  # aliases count
    assert await chat.run("!memory frobnicate 1 2") == said["frobnicate"]
    assert (await chat.run("!memory helth")).count("health") == 1


# --------------------------------------------------------------------------- refusals

async def test_a_refused_change_says_what_is_needed_and_changes_nothing(harness: PluginHarness,
                                                                       language: str) -> None:
    said = EXPECTED[language]
    member, admin = await member_and_admin(harness)
    episode = await admin.remember("Team offsite is in Lisbon")
    refused = await member.run(f"!memory forget {episode}")
    assert refused.startswith(said["refusal"]) and said["how_admin"] in refused
    assert "command_admin_only_in_groups" in refused
    # An id that does not exist gets the same refusal: the rule answers before memory is read.
    assert await member.run("!memory forget 00000000-0000-4000-8000-000000000000") == refused
    assert episode in listed_ids(await admin.run("!memory list"))
    assert [e["operation"] for e in await admin.audit_entries()] == ["remember"]


async def test_argument_errors_come_before_the_admin_rule(harness: PluginHarness, language: str) -> None:
    said = EXPECTED[language]
    member, admin = await member_and_admin(harness)
    await admin.remember("Team offsite is in Lisbon")
    assert (await member.run("!memory forget")).startswith(said["id_required"])
    assert (await member.run("!memory f")).startswith(said["id_required"])
    not_json = await member.run("!memory import l2 {not json")
    assert not_json.startswith(said["bad_json"]) and "!memory import ＜" not in not_json.split("\n")[0]
    assert said["refused"].format(name="import") not in not_json
    assert (await member.run("!memory delete")).startswith(said["no_filter"])
    # Well-formed arguments reach the rule, whatever the command.
    for text in ('!memory import l2 [{"content": "x"}]', "!memory delete --tag x", "!memory candidate accept c-1",
                 "!memory archive c-1", "!memory restore c-1"):
        assert (await member.run(text)).startswith(said["refused"].format(name=text.split()[1])), text
    assert [e["operation"] for e in await admin.audit_entries()] == ["remember"]


async def test_a_non_admin_preview_is_read_only_and_says_why_there_is_no_draft(harness: PluginHarness,
                                                                              language: str) -> None:
    said = EXPECTED[language]
    member, admin = await member_and_admin(harness, **CONSOLIDATION)
    await admin.remember("Alice's team ships the mobile app on Fridays")
    await admin.remember("Alice's team ships the web app on Mondays")
    harness.host.llm_script = one_statement()
    preview = await member.run("!memory consolidate preview")
    assert said["draft_withheld"] in preview, preview
    assert harness.host.llm_requests == []  # no model call
    assert (await member.run("!memory consolidate drafts")).startswith(said["no_drafts"])  # reading is open
    assert (await member.run("!memory consolidate run")).startswith(said["run_refused"])
    assert [e["operation"] for e in await admin.audit_entries()] == ["remember", "remember"]
    # The same preview by an admin drafts (so the member's reply was not "nothing to draft").
    drafted = await admin.run("!memory consolidate preview")
    assert said["draft_withheld"] not in drafted and len(harness.host.llm_requests) == 1


async def test_a_preview_without_a_model_is_the_same_for_everyone(harness: PluginHarness) -> None:
    member, admin = await member_and_admin(harness)
    await admin.remember("Standup at 9:00")
    assert await member.run("!memory consolidate preview") == await admin.run("!memory consolidate preview")
