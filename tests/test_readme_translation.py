"""The translated READMEs (readme/README_zh_Hans.md, readme/README_ja_JP.md) stay in step with README.md.

LangBot's WebUI shows `readme/README_<lang>.md` to users of that language, so a stale translation
would tell Chinese- or Japanese-reading operators about sections, commands or settings that no longer
match the plugin. The English README is the authoritative one; these tests check that the translation keeps
its skeleton: the same headings (levels and order), the same code blocks byte for byte, and every
backticked identifier, command, setting and path of the English file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ENGLISH = ROOT / "README.md"
CHINESE = ROOT / "readme" / "README_zh_Hans.md"
JAPANESE = ROOT / "readme" / "README_ja_JP.md"

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*$")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")  # a Japanese text has kana; Chinese has none


@dataclass(frozen=True)
class Translation:
    path: Path
    prevails: str  # the first line's "the English version prevails", in the translation's language
    script: re.Pattern[str]  # what the translation's own prose is written in

    @property
    def name(self) -> str:
        return self.path.relative_to(ROOT).as_posix()


TRANSLATIONS = [Translation(CHINESE, "以英文版为准", _CJK), Translation(JAPANESE, "英語版が正", _KANA)]


@dataclass
class Markdown:
    """What the comparison needs from one Markdown file."""

    headings: list[tuple[int, str]] = field(default_factory=list)
    code_blocks: list[tuple[str, str]] = field(default_factory=list)  # (info string, body)
    sections: list[str] = field(default_factory=list)  # prose of each heading's section, code blocks left out
    prose: list[str] = field(default_factory=list)  # paragraphs outside code blocks, lines joined


def parse(text: str) -> Markdown:
    doc = Markdown()
    paragraph: list[str] = []
    section: list[str] = []
    fence: str | None = None
    info = ""
    body: list[str] = []

    def end_paragraph() -> None:
        if paragraph:
            doc.prose.append(" ".join(line.strip() for line in paragraph))
            paragraph.clear()

    for line in text.splitlines():
        if fence is not None:
            closing = _FENCE.match(line)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence) \
                    and not closing.group(2).strip():
                doc.code_blocks.append((info, "\n".join(body)))
                fence = None
            else:
                body.append(line)
            continue
        opening = _FENCE.match(line)
        if opening:
            end_paragraph()
            fence, info, body = opening.group(1), opening.group(2).strip(), []
            continue
        heading = _HEADING.match(line)
        if heading:
            end_paragraph()
            doc.sections.append("\n".join(section))  # sections[0] is the text before the first heading
            section = []
            doc.headings.append((len(heading.group(1)), heading.group(2)))
            doc.prose.append(heading.group(2))
            continue
        section.append(line)
        if line.strip():
            paragraph.append(line)
        else:
            end_paragraph()
    end_paragraph()
    doc.sections.append("\n".join(section))
    assert fence is None, "a fenced code block is never closed"
    return doc


def code_spans(texts: list[str]) -> set[str]:
    return {match.group(2).strip() for text in texts for match in _CODE_SPAN.finditer(text)}


def structure_differences(english: str, chinese: str) -> list[str]:
    """Why the two files' skeletons differ (headings and code blocks); empty when they match."""
    en, zh = parse(english), parse(chinese)
    problems = []
    en_levels = [level for level, _ in en.headings]
    zh_levels = [level for level, _ in zh.headings]
    if en_levels != zh_levels:
        problems.append("heading levels differ:\n  English: " + _outline(en) + "\n  Chinese: " + _outline(zh))
    else:
        for (level, en_title), (_, zh_title) in zip(en.headings, zh.headings):
            if code_spans([en_title]) != code_spans([zh_title]):
                problems.append(f"heading {'#' * level} {en_title!r} is paired with {zh_title!r}: "
                                "their backticked names differ (sections out of order?)")
    if len(en.code_blocks) != len(zh.code_blocks):
        problems.append(f"{len(en.code_blocks)} code blocks in English, {len(zh.code_blocks)} in Chinese")
    for number, (en_block, zh_block) in enumerate(zip(en.code_blocks, zh.code_blocks), start=1):
        if en_block != zh_block:
            problems.append(f"code block {number} differs:\n--- English ({en_block[0]})\n{en_block[1]}\n"
                            f"--- Chinese ({zh_block[0]})\n{zh_block[1]}")
    return problems


def _outline(doc: Markdown) -> str:
    return " | ".join(f"{'#' * level} {title}" for level, title in doc.headings)


def _engine_setting_names() -> set[str]:
    """Every `name:` under the memory engine's spec: creation and retrieval settings and their options."""
    engine = yaml.safe_load((ROOT / "components/knowledge_engine/memory_engine.yaml").read_text(encoding="utf-8"))
    names: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("name"), str):
                names.add(node["name"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(engine["spec"])
    return names


def _plugin_config_names() -> set[str]:
    manifest = yaml.safe_load((ROOT / "manifest.yaml").read_text(encoding="utf-8"))
    return {item["name"] for item in manifest["spec"]["config"]}


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# --- the checker itself --------------------------------------------------------------------------------


SAMPLE_EN = """# Title

Intro with `a_setting`.

## Use

```bash
run --now
```

### The `!x` command
"""

SAMPLE_ZH = """> English: [README.md](../README.md)

# 标题

介绍 `a_setting`。

## 用法

```bash
run --now
```

### `!x` 命令
"""


def test_checker_accepts_a_faithful_translation():
    assert structure_differences(SAMPLE_EN, SAMPLE_ZH) == []


def test_checker_notices_a_section_added_to_one_file_only():
    added = "\n## Extra\n\nMore.\n"
    assert any("heading levels" in p for p in structure_differences(SAMPLE_EN + added, SAMPLE_ZH))
    assert any("heading levels" in p for p in structure_differences(SAMPLE_EN, SAMPLE_ZH + "\n## 新增\n\n更多。\n"))


def test_checker_notices_a_changed_level_reordered_sections_and_changed_code():
    assert structure_differences(SAMPLE_EN.replace("### The", "## The"), SAMPLE_ZH)
    english = "# T\n\n## Reading `_a`\n\n## Writing `_b`\n"
    assert structure_differences(english, "# 标题\n\n## 读取（`_a`）\n\n## 写入（`_b`）\n") == []
    swapped = "# 标题\n\n## 写入（`_b`）\n\n## 读取（`_a`）\n"
    assert any("backticked names differ" in p for p in structure_differences(english, swapped))
    assert any("code block 1 differs" in p for p in structure_differences(
        SAMPLE_EN, SAMPLE_ZH.replace("run --now", "run --later")))
    assert any("code blocks" in p for p in structure_differences(SAMPLE_EN + "\n```\nmore\n```\n", SAMPLE_ZH))


def test_parser_ignores_headings_and_backticks_inside_code_blocks():
    doc = parse("# A\n\n```python\n# not a heading\nx = '`y`'\n```\n\n`z` and\n`w`\n")
    assert doc.headings == [(1, "A")]
    assert doc.code_blocks == [("python", "# not a heading\nx = '`y`'")]
    assert code_spans(doc.prose) == {"z", "w"}


# --- the real files ------------------------------------------------------------------------------------

each_translation = pytest.mark.parametrize("tr", TRANSLATIONS, ids=lambda t: t.path.name)


@each_translation
def test_the_translation_links_the_authoritative_english_one(tr: Translation):
    first_line = next(line for line in _read(tr.path).splitlines() if line.strip())
    assert "English: [README.md](../README.md)" in first_line
    assert tr.prevails in first_line  # "the English version prevails"
    assert (tr.path.parent / "../README.md").resolve() == ENGLISH.resolve()
    assert not first_line.lstrip().startswith("#")  # a note, not an extra heading


def test_the_english_readme_links_every_translation():
    english = _read(ENGLISH)
    assert all(f"]({tr.name})" in english for tr in TRANSLATIONS)


@each_translation
def test_same_headings_and_code_blocks_as_the_english_readme(tr: Translation):
    problems = structure_differences(_read(ENGLISH), _read(tr.path))
    assert not problems, f"{tr.name} is out of step with README.md:\n" + "\n".join(problems)


@each_translation
def test_commands_settings_and_config_names_of_the_english_readme_appear_in_the_translation(tr: Translation):
    en, other = code_spans(parse(_read(ENGLISH)).prose), code_spans(parse(_read(tr.path)).prose)
    commands = {span for span in en if span.startswith("!memory")}
    assert "!memory health" in commands  # the parser really finds the command spans
    settings = _engine_setting_names() & en
    config = _plugin_config_names() & en
    assert "embedding_model_uuid" in settings and config
    for kind, names in (("!memory commands", commands), ("KB settings", settings), ("plugin settings", config)):
        missing = sorted(names - other)
        assert not missing, f"{kind} in README.md but not (backticked) in {tr.name}: {missing}"
    stale = sorted({span for span in other if span.startswith("!memory")} - commands)
    assert not stale, f"!memory commands only in {tr.name} (removed or renamed in English?): {stale}"


@each_translation
def test_every_backticked_identifier_and_path_is_kept_verbatim(tr: Translation):
    en, other = code_spans(parse(_read(ENGLISH)).prose), code_spans(parse(_read(tr.path)).prose)
    missing = sorted(en - other)
    assert not missing, f"inline code of README.md missing from {tr.name}: {missing}"


@each_translation
def test_every_section_of_the_translation_is_translated(tr: Translation):
    doc = parse(_read(tr.path))
    untranslated = [title for (_, title), text in zip(doc.headings, doc.sections[1:]) if not tr.script.search(text)]
    assert not untranslated, f"sections without {tr.path.stem[7:]} prose: {untranslated}"
    assert all(_CJK.search(title) or tr.script.search(title) for _, title in doc.headings), "every heading is translated"
