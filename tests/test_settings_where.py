"""Where a setting lives, said to whoever asks to change it (issue 45, point 3).

`!memory settings set|reset` needs a bot admin in every chat, and the WebUI's debug chat can never
be one (docs/HOST-FACTS.md 4.1), so a refusal names the Memory Console's Settings tab, where the
knowledge base settings are changed from the WebUI. A plugin setting (`reply_language`, ...) is
not a knowledge base setting: the reply says where it is changed instead of refusing it as an
admin matter. An unknown name gets the closest setting (difflib) and where that one lives.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from components.commands.settings import PLUGIN_SETTINGS
from testhost import PluginHarness
from tests.chat import open_chat

ROOT = Path(__file__).resolve().parents[1]
CONSOLE = "Plugin Pages > Memory Console > Settings tab"
PLUGIN_PAGE = "Extensions > Installed > Long-Term Memory > Plugin Configuration"


def test_the_plugin_settings_are_the_manifests() -> None:
    manifest = yaml.safe_load((ROOT / "manifest.yaml").read_text(encoding="utf-8"))
    assert set(PLUGIN_SETTINGS) == {item["name"] for item in manifest["spec"]["config"]}


@pytest.mark.parametrize("privilege", [1, 2], ids=["member", "admin"])
async def test_a_plugin_setting_is_sent_to_the_plugin_page(harness: PluginHarness, privilege: int) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness, "g1", privilege=privilege)
    for command in ("!memory settings set reply_language ja_JP", "!memory settings reset command_admin_only_in_groups"):
        reply = await chat.run(command)
        assert "is a plugin setting, not a knowledge base setting" in reply and PLUGIN_PAGE in reply, reply
        assert "only bot admins" not in reply, reply


@pytest.mark.parametrize("privilege", [1, 2], ids=["member", "admin"])
async def test_an_unknown_name_gets_the_closest_setting_and_where_it_lives(harness: PluginHarness,
                                                                            privilege: int) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness, "g1", privilege=privilege)
    kb = await chat.run("!memory settings set auto_recal_top_k 3")
    assert "Unknown setting “auto_recal_top_k”; did you mean auto_recall_top_k?" in kb, kb
    assert "knowledge base setting: !memory settings set auto_recall_top_k" in kb and CONSOLE in kb, kb
    plugin = await chat.run("!memory settings set reply_langage ja_JP")
    assert "did you mean reply_language? It is a plugin setting" in plugin and PLUGIN_PAGE in plugin, plugin
    nothing = await chat.run("!memory settings set frobnicate 1")
    assert "Unknown setting “frobnicate”. !memory settings lists the knowledge base settings" in nothing, nothing
    assert "3" not in (await chat.run("!memory settings")).split("auto_recall_top_k: ")[1][:1]  # nothing changed


async def test_a_member_is_told_where_a_knowledge_base_setting_can_be_changed(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    member = open_chat(harness, "g1", privilege=1)
    reply = await member.run("!memory settings set auto_recall_top_k 3")
    assert "only bot admins change the settings here" in reply and CONSOLE in reply, reply
