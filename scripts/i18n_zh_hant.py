#!/usr/bin/env python3
"""Regenerate every Traditional Chinese (zh_Hant) text from its Simplified Chinese (zh_Hans) source.

Traditional Chinese is not written by hand here: it is converted with OpenCC (the `opencc` package,
the upstream project's own binding; a test and build dependency, never shipped), profile `s2twp`
(Taiwan characters and Taiwan phrases), then corrected by `HAND_FIXES` where the converter picks a
word a Taiwanese operator would not use. One run writes:

    components/common/vocabulary/zh_Hant.json            from vocabulary/zh_Hans.json
    components/common/vocabulary/messages/zh_Hant.json   from every reply text's Chinese (`reply_sources`)
    pages/console/i18n/zh_Hant.json                      from pages/console/i18n/zh_Hans.json
    manifest.yaml, components/**/*.yaml                  a `zh_Hant:` entry after every `zh_Hans:` one

Then rebuild the console (`python3 scripts/build_console.py`). tests/test_i18n_zh_hant.py fails when a
committed file differs from what this script makes, so a new Chinese text without its zh_Hant is caught.

    .venv/bin/python scripts/i18n_zh_hant.py            write the files
    .venv/bin/python scripts/i18n_zh_hant.py --check    exit 1 and name the stale files
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VOCABULARY = ROOT / "components" / "common" / "vocabulary"
CONSOLE = ROOT / "pages" / "console" / "i18n"

# (what s2twp writes, what Taiwan usage says) applied in this order after the conversion.
HAND_FIXES: tuple[tuple[str, str], ...] = (
    ("宣告型別", "聲明類型"),  # 声明类型 is a claim's kind, not a programming declaration
    ("審計", "稽核"),  # audit (log) in Taiwan
)


def converter() -> Callable[[str], str]:
    import opencc  # a build/test dependency only: imported here so the plugin never needs it

    base = opencc.OpenCC("s2twp")

    def convert(text: str) -> str:
        out = base.convert(text)
        for wrong, right in HAND_FIXES:
            out = out.replace(wrong, right)
        return out

    return convert


def _json(data: dict[str, str]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def _nouns(value: object) -> list[tuple[str, str, str]]:
    """The counted nouns (`Noun`: English singular, English plural, Chinese) inside a module global."""
    if isinstance(value, tuple):
        if (len(value) == 3 and all(isinstance(v, str) for v in value) and _CJK.search(value[2])
                and not _CJK.search(value[0] + value[1])):
            return [value]
        return [noun for item in value for noun in _nouns(item)]
    return []


def reply_sources() -> dict[str, tuple[str, str]]:
    """Every reply text as (English, Simplified Chinese) by its id in the overlays: each catalogue's
    messages, the `!memory` usage lines (`usage.<name>`) and the counted nouns (`noun.<English plural>`)."""
    sys.path.insert(0, str(ROOT))
    import components.commands.memory as memory  # every reply catalogue is declared on import
    from components.common.i18n import Catalogue

    texts = {key: (texts[0], texts[1]) for key, texts in Catalogue.ALL.items()}
    for entry in dict.fromkeys(memory.REGISTRY.entries.values()):
        texts[f"usage.{entry.name}"] = entry.usage
    # Counted nouns live in the command's modules, all imported by `memory`; only those are read, so
    # what else a process imported first cannot change the list.
    for module in [m for name, m in sorted(sys.modules.items()) if name.startswith("components.commands.")]:
        for value in vars(module).values():
            for _, plural, chinese in _nouns(value):
                if texts.setdefault(f"noun.{plural}", (plural, chinese)) != (plural, chinese):
                    raise ValueError(f"the noun {plural!r} has two Chinese forms; give one another English plural")
    return dict(sorted(texts.items()))


_ZH_HANS = re.compile(r"^(?P<indent>[ \t]*)zh_Hans:(?P<rest>.*)$")
_ZH_HANT = re.compile(r"^[ \t]*zh_Hant:")


def _yaml_with_hant(text: str, convert: Callable[[str], str]) -> str:
    """`text` with a converted `zh_Hant:` entry right after each `zh_Hans:` entry (a continued value
    included) and any earlier `zh_Hant:` entry dropped; nothing else changes."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _ZH_HANS.match(line)
        if not m:
            out.append(line)
            i += 1
            continue
        indent = len(m.group("indent"))
        block = [line]
        i += 1
        while i < len(lines) and lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) > indent:
            block.append(lines[i])
            i += 1
        if i < len(lines) and _ZH_HANT.match(lines[i]):  # an earlier generated entry: replaced
            i += 1
            while i < len(lines) and lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) > indent:
                i += 1
        out += block
        out += [convert(block[0].replace("zh_Hans:", "zh_Hant:", 1)), *(convert(b) for b in block[1:])]
    return "".join(out)


def yaml_files() -> list[Path]:
    return [ROOT / "manifest.yaml", *sorted((ROOT / "components").rglob("*.yaml"))]


def generate() -> dict[Path, str]:
    """Every zh_Hant file's content as this script makes it, by path."""
    convert = converter()

    def converted(data: dict[str, str]) -> str:
        return _json({key: convert(value) for key, value in data.items()})

    def load(path: Path) -> dict[str, str]:
        return json.loads(path.read_text(encoding="utf-8"))

    files = {
        VOCABULARY / "zh_Hant.json": converted(load(VOCABULARY / "zh_Hans.json")),
        VOCABULARY / "messages" / "zh_Hant.json": converted({k: zh for k, (_, zh) in reply_sources().items()}),
        CONSOLE / "zh_Hant.json": converted(load(CONSOLE / "zh_Hans.json")),
    }
    for path in yaml_files():
        files[path] = _yaml_with_hant(path.read_text(encoding="utf-8"), convert)
    return files


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()


def stale(files: dict[Path, str]) -> list[str]:
    """The files whose committed text is not what the script makes, by name."""
    return [_name(path) for path, text in files.items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed file differs")
    files = generate()
    differ = stale(files)
    if parser.parse_args().check:
        for name in differ:
            print(f"stale: {name}")
        return 1 if differ else 0
    for path in files:
        if _name(path) in differ:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(files[path], encoding="utf-8")
            print(f"wrote {_name(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
