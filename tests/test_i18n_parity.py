"""Every catalogue has the same keys in every language, with the same `{placeholders}` (issue 36 point 8).

Three catalogues: the reply texts (every `Catalogue`'s English, the `!memory` usage lines and the counted
nouns, as `scripts/i18n_zh_hant.py` collects them) against `components/common/vocabulary/messages/<language>.json` for the languages beyond the tuple), the
vocabulary (`components/common/vocabulary/<language>.json`) and the console
(`pages/console/i18n/<language>.json`). And every label and description in manifest.yaml and the component
YAMLs (the WebUI shows them: plugin, settings, KB creation and retrieval settings, tools, commands, page) names
all eight languages of LangBot 4.11's WebUI, under the keys it reads (`ja_JP`, `ru_RU`, ...).
The SDK's `I18nString` model has no `ru_RU` field, but the runtime hands the WebUI the manifest dict as
written (`ComponentManifest.model_dump()` keeps `manifest`), and the WebUI's label lookup reads `ru_RU`.
Tool parameter descriptions and `llm_prompt` are not labels: JSON Schema wants one string, the model reads
it, and the WebUI lists only the parameter names; they stay English.

A failure names, per catalogue and language, exactly the missing keys, the extra keys and the keys whose
placeholders differ from English: the list to translate. zh_Hant comes from `scripts/i18n_zh_hant.py`;
ja_JP is written by hand.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.common.i18n import LANGUAGES, MESSAGES_DIR, OVERLAID, VOCABULARY_DIR

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("i18n_zh_hant", ROOT / "scripts" / "i18n_zh_hant.py")
hant = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hant)
CONSOLE = ROOT / "pages" / "console" / "i18n"
WEBUI_LANGUAGES = ("en_US", "zh_Hans", "zh_Hant", "ja_JP", "es_ES", "th_TH", "vi_VN", "ru_RU")
_FIELD = re.compile(r"\{(\w+)\}")


def english_replies() -> dict[str, str]:
    return {key: english for key, (english, _) in hant.reply_sources().items()}


def load(path: Path) -> dict[str, str]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def differences(name: str, english: Mapping[str, str], other: Mapping[str, str]) -> list[str]:
    """What `other` lacks, adds, or words with other placeholders than `english`, in one line each."""
    missing = sorted(set(english) - set(other))
    extra = sorted(set(other) - set(english))
    fields = sorted(k for k in set(english) & set(other)
                    if sorted(set(_FIELD.findall(english[k]))) != sorted(set(_FIELD.findall(other[k]))))
    empty = sorted(k for k, v in other.items() if not str(v).strip())
    return [f"{name}: {what} {keys}" for what, keys in
            (("missing", missing), ("extra", extra), ("placeholders differ", fields), ("empty", empty)) if keys]


def catalogues() -> Iterator[tuple[str, dict[str, str], dict[str, str]]]:
    replies = english_replies()
    for language in OVERLAID:
        yield f"replies {language} (messages/{language}.json)", replies, load(MESSAGES_DIR / f"{language}.json")
    words = load(VOCABULARY_DIR / "en_US.json")
    for language in LANGUAGES[1:]:
        yield f"vocabulary {language}", words, load(VOCABULARY_DIR / f"{language}.json")
    console = load(CONSOLE / "en_US.json")
    for language in LANGUAGES[1:]:
        yield f"console {language}", console, load(CONSOLE / f"{language}.json")


def test_every_catalogue_has_the_same_keys_and_placeholders_in_every_language() -> None:
    problems = [line for name, english, other in catalogues() for line in differences(name, english, other)]
    assert not problems, "\n" + "\n".join(problems)


def test_the_difference_lists_exactly_what_is_missing_extra_or_changed() -> None:
    english = {"a": "Hello {name}", "b": "Bye", "c": "Count {n}"}
    other = {"a": "こんにちは {who}", "c": "件数 {n}", "d": "余分"}
    assert differences("x", english, other) == ["x: missing ['b']", "x: extra ['d']", "x: placeholders differ ['a']"]


def i18n_objects(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every {en_US: ...} mapping in a YAML document (a label, a description, an option's label)."""
    if isinstance(node, dict):
        if "en_US" in node:
            yield where, node
        for key, value in node.items():
            yield from i18n_objects(value, f"{where}.{key}")
    elif isinstance(node, list):
        for n, value in enumerate(node):
            name = value.get("name", n) if isinstance(value, dict) else n
            yield from i18n_objects(value, f"{where}[{name}]")


YAMLS = [ROOT / "manifest.yaml", *sorted((ROOT / "components").rglob("*.yaml"))]


@pytest.mark.parametrize("path", YAMLS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_label_and_description_speaks_every_webui_language(path: Path) -> None:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    found = list(i18n_objects(document, path.name))
    assert found
    problems = [f"{where}: missing {[lang for lang in WEBUI_LANGUAGES if not str(obj.get(lang) or '').strip()]}"
                for where, obj in found if any(not str(obj.get(lang) or "").strip() for lang in WEBUI_LANGUAGES)]
    assert not problems, "\n" + "\n".join(problems)
