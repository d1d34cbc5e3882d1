"""Replies in the languages beyond a catalogue's tuple: LangBot's tags map onto ours, and an overlay
text (messages/<language>.json) is what `Catalogue` says in that language, English where it has none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.common.chat_text import Own
from components.common.i18n import Catalogue, language_of, overlay, speaking, term


@pytest.mark.parametrize(("tag", "ours"), [
    ("zh-Hant", "zh_Hant"), ("zh_Hant", "zh_Hant"), ("zh-TW", "zh_Hant"), ("zh-HK", "zh_Hant"),
    ("zh-Hans", "zh_Hans"), ("zh_CN", "zh_Hans"), ("zh", "zh_Hans"),
    ("ja-JP", "ja_JP"), ("ja_JP", "ja_JP"), ("ja", "ja_JP"),
    ("en-US", "en_US"), ("es-ES", "en_US"), ("th_TH", "en_US"), ("vi-VN", "en_US"), ("ru_RU", "en_US"),
    ("jv", "en_US"), ("", "en_US"), (None, "en_US"),
])
def test_a_langbot_tag_maps_onto_a_reply_language(tag: str | None, ours: str) -> None:
    assert language_of(tag) == ours


def test_an_overlaid_language_says_its_overlay_text_with_the_parameters_filled() -> None:
    from components.commands.registry import SAY

    wanted = overlay("zh_Hant")["registry.usage"].replace("{usage}", "!memory list")
    with speaking("zh_Hant"):
        assert SAY("registry.usage", usage=Own("!memory list")) == wanted
    assert wanted.startswith("用法")
    with speaking("zh_Hans"):
        assert SAY("registry.usage", usage=Own("x")) == "用法：x"


def test_a_message_no_overlay_has_yet_is_said_in_english() -> None:
    catalogue = Catalogue({"test_only.fresh": ("A new text {n}", "新的文本 {n}")})
    try:
        with speaking("zh_Hant"):
            assert catalogue("test_only.fresh", n=2) == "A new text 2"
        with speaking("zh_Hans"):
            assert catalogue("test_only.fresh", n=2) == "新的文本 2"
    finally:
        del Catalogue.ALL["test_only.fresh"]  # keep the parity test's English list to the plugin's own


def test_the_vocabulary_speaks_each_language_and_english_where_it_has_no_word() -> None:
    with speaking("zh_Hant"):
        assert term("audit.bulk_deleted") == "被批次刪除"
        assert term("no.such.code", "raw") == "raw"
    with speaking("zh_Hans"):
        assert term("audit.bulk_deleted") == "被批量删除"


# One Japanese term per concept, as the docs' vocabulary names them (ARCHITECTURE: memory space,
# episode, speaker, profile, candidate, draft): the word on the left must appear in no Japanese text of
# the replies, the vocabulary or the console; the one on the right is in use. LangBot's Japanese WebUI
# calls a pipeline プロセッサー, so a health line saying パイプライン would name nothing the operator sees.
JAPANESE_SYNONYMS = {"情景記憶": "エピソード", "発言者": "話者", "プロファイル": "プロフィール", "画像": "プロフィール",
                     "記憶空間": "記憶スペース", "ドラフト": "下書き", "メモリー": "記憶", "パイプライン": "プロセッサー"}


def test_one_japanese_term_per_concept_in_the_replies_the_vocabulary_and_the_console() -> None:
    root = Path(__file__).resolve().parents[1]
    texts = {**{f"reply:{k}": v for k, v in overlay("ja_JP").items()},
             **{f"vocabulary:{k}": v for k, v in json.loads(
                 (root / "components/common/vocabulary/ja_JP.json").read_text(encoding="utf-8")).items()},
             **{f"console:{k}": v for k, v in json.loads(
                 (root / "pages/console/i18n/ja_JP.json").read_text(encoding="utf-8")).items()}}
    for synonym, term_in_use in JAPANESE_SYNONYMS.items():
        assert not sorted(k for k, v in texts.items() if synonym in v), (synonym, term_in_use)
        assert any(term_in_use in v for v in texts.values()), term_in_use
