"""The real LangBot 4.11.2 hands the WebUI every label and description of the plugin in all eight WebUI
languages (issue 36 point 8): the installed plugin's manifest, its settings, and the memory engine's
creation and retrieval settings as LangBot's HTTP API serves them to the WebUI, `ru_RU` included (the
SDK's `I18nString` model has no such field; the host must pass the manifest as written).
"""

from __future__ import annotations

from typing import Any

from devhost.lbclient import LTM_PLUGIN
from tests.test_i18n_parity import WEBUI_LANGUAGES, i18n_objects


def lacking(node: Any, where: str) -> list[str]:
    return [f"{place}: {[lang for lang in WEBUI_LANGUAGES if not obj.get(lang)]}"
            for place, obj in i18n_objects(node, where) if not all(obj.get(lang) for lang in WEBUI_LANGUAGES)]


def test_the_host_serves_every_label_in_the_eight_webui_languages(e2e):
    plugin = e2e.client.plugin(*LTM_PLUGIN)
    assert plugin is not None
    manifest = (plugin.get("manifest") or {}).get("manifest") or plugin["manifest"]
    assert manifest["metadata"]["label"]["ja_JP"] == "長期記憶" and manifest["metadata"]["label"]["ru_RU"]
    components = [c["manifest"]["manifest"] for c in plugin["components"]]
    engine = next(e for e in e2e.client.knowledge_engines() if e["plugin_id"] == "langbot-ltm/LongTermMemory")
    served = {"plugin": manifest["metadata"], "settings": manifest["spec"]["config"],
              "components": [c["metadata"] for c in components],
              "creation_schema": engine["creation_schema"], "retrieval_schema": engine["retrieval_schema"]}
    found = [place for place, _ in i18n_objects(served, "served")]
    assert len(found) > 60, found  # every setting, option and component, not a lucky few
    problems = lacking(served, "served")
    assert not problems, "\n".join(problems)
