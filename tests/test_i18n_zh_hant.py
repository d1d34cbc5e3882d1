"""Traditional Chinese is generated (`scripts/i18n_zh_hant.py`): the committed zh_Hant files must be what
the script makes from today's Simplified Chinese, so a new zh_Hans text without its zh_Hant fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("i18n_zh_hant", ROOT / "scripts" / "i18n_zh_hant.py")
hant = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hant)


def test_every_committed_zh_hant_file_is_what_the_script_makes() -> None:
    stale = hant.stale(hant.generate())
    assert not stale, f"run `.venv/bin/python scripts/i18n_zh_hant.py` then `python3 scripts/build_console.py`: {stale}"


def test_the_converter_writes_taiwan_wording_with_the_hand_fixes() -> None:
    convert = hant.converter()
    assert convert("审计日志") == "稽核日誌"  # the converter alone writes 審計
    assert convert("声明类型") == "聲明類型"  # ... and a programming 宣告型別
    assert convert("导出设置") == "匯出設定"  # Taiwan phrases from the converter itself
    assert convert("{count}条 !memory --everywhere") == "{count}條 !memory --everywhere"


def test_a_yaml_entry_gets_its_zh_hant_once_and_a_continued_value_whole() -> None:
    text = ("label:\n  en_US: Memory\n  zh_Hans: 记忆\ndescription:\n  en_US: x\n  zh_Hans: 第一行\n    第二行\n"
            "  ja_JP: y\nother: 1\n")
    once = hant._yaml_with_hant(text, hant.converter())
    assert once == ("label:\n  en_US: Memory\n  zh_Hans: 记忆\n  zh_Hant: 記憶\ndescription:\n  en_US: x\n"
                    "  zh_Hans: 第一行\n    第二行\n  zh_Hant: 第一行\n    第二行\n  ja_JP: y\nother: 1\n")
    assert hant._yaml_with_hant(once, hant.converter()) == once
    changed = once.replace("zh_Hans: 记忆", "zh_Hans: 记忆库")
    assert "zh_Hant: 記憶庫\n" in hant._yaml_with_hant(changed, hant.converter())


def test_a_new_chinese_text_without_its_zh_hant_is_named(tmp_path: Path, monkeypatch) -> None:
    console = tmp_path / "i18n"
    console.mkdir()
    (console / "zh_Hans.json").write_text('{"a": "导出", "b": "新的文本"}', encoding="utf-8")
    (console / "zh_Hant.json").write_text('{\n  "a": "匯出"\n}\n', encoding="utf-8")
    monkeypatch.setattr(hant, "CONSOLE", console)
    files = {path: text for path, text in hant.generate().items() if path.parent == console}
    assert hant.stale(files) == [(console / "zh_Hant.json").as_posix()]
    assert files[console / "zh_Hant.json"] == '{\n  "a": "匯出",\n  "b": "新的文本"\n}\n'
