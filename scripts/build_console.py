#!/usr/bin/env python3
"""Build the Memory Console page from its sources (standard library only).

LangBot serves plugin pages only from `components/pages/` and `assets/`, and runs a page from a
`blob:` URL, where relative URLs resolve to nothing. So the page the host serves,
`components/pages/console/index.html`, must be one self-contained file. Its sources live in
`pages/console/`; this script inlines them.

The template `pages/console/index.html` is plain HTML plus directive lines, each alone on its line:

    <!-- build:style FILE -->     a <style> element holding FILE (CSS)
    <!-- build:i18n -->           <script type="application/json" id="ltm-i18n"> holding one object,
                                  {"en_US": {...}, "zh_Hans": {...}, ...}, from i18n/<language>.json
                                  for each of LANGUAGES plus the plugin's vocabulary (the words for every
                                  code the server sends, components/common/vocabulary/, shared with
                                  the `!memory` replies; a key in both is refused) (must come before
                                  the first script)
    <!-- build:script FILE -->    a <script> element holding FILE (JavaScript); the scripts run in
                                  the order these lines appear

FILE is a path inside pages/console/. The build refuses (exit status 2, with the reason) when a
source names an external or relative URL (src=, href=, url(), @import, import, fetch()), when the
dictionaries do not have the same keys, when a source file is not used, when a tab button in the
template has no tab-<name>.js, or when the page would exceed the host's 4 MiB limit. Same sources,
same bytes: the output depends on nothing but the source files.

    python3 scripts/build_console.py            write components/pages/console/index.html
    python3 scripts/build_console.py --check    exit 1 if the committed file differs from a fresh build
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "pages" / "console"
OUTPUT = ROOT / "components" / "pages" / "console" / "index.html"
SOURCE_LABEL = "pages/console"
VOCABULARY = ROOT / "components" / "common" / "vocabulary"
COMMAND = "python3 scripts/build_console.py"
LANGUAGES = ("en_US", "zh_Hans", "zh_Hant", "ja_JP")  # zh_Hant: made by scripts/i18n_zh_hant.py
MAX_BYTES = 4 * 1024 * 1024  # the host refuses to serve larger files
SOURCE_SUFFIXES = (".html", ".css", ".js", ".json")

HEADER = (
    "<!-- GENERATED FILE, do not edit: built from the sources in pages/console/ by\n"
    f"     {COMMAND}\n"
    "     Edit the sources, run that command, and commit the sources and this file together. -->\n"
)
DIRECTIVE = re.compile(r"^[ \t]*<!-- build:(?P<kind>[a-z0-9]+)(?:[ \t]+(?P<arg>\S+))?[ \t]*-->[ \t]*$")
DIRECTIVE_LIKE = re.compile(r"<!--\s*build:")

# A URL the page may name: a fragment of itself, or inline data.
_INLINE = re.compile(r"\s*(?:#|data:)", re.IGNORECASE)
# Places where a URL is loaded, with the URL captured in v1/v2/v3 (quoted or not).
_URL_SLOTS = (
    re.compile(r"""(?<![\w-])(?P<what>src|href|srcset|action|formaction|poster)\s*=(?!=)\s*"""
               r"""(?:"(?P<v1>[^"]*)"|'(?P<v2>[^']*)'|(?P<v3>[^\s>"'`]*))""", re.IGNORECASE),
    re.compile(r"""(?<![\w-])(?P<what>url)\(\s*(?:"(?P<v1>[^"]*)"|'(?P<v2>[^']*)'|(?P<v3>[^)\s]*))""",
               re.IGNORECASE),
)
# Loads that have no inline form worth allowing: refused whatever they name.
_LOADS = (
    ("@import", re.compile(r"@import\b", re.IGNORECASE)),
    ("import", re.compile(r"""(?<![\w$.])import(?:\s*\(|\s*["'`]|\s+[\w$*{][^;]*?\bfrom\s*["'`])""")),
    ("export ... from", re.compile(r"""(?<![\w$.])export\s+[\w$*{][^;]*?\bfrom\s*["'`]""")),
    ("fetch(", re.compile(r"(?<![\w$])fetch\s*\(")),
    ("an absolute URL", re.compile(r"\b(?:https?|wss?|ftp)://", re.IGNORECASE)),
)


class BuildError(Exception):
    """The sources cannot be built into a page the host can serve; the message says why."""


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _read(path: Path, name: str) -> str:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BuildError(f"{name}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text if text.endswith("\n") else text + "\n"


def _check_urls(name: str, text: str) -> None:
    for pattern in _URL_SLOTS:
        for m in pattern.finditer(text):
            value = m.group("v1") if m.group("v1") is not None else m.group("v2") if m.group("v2") is not None \
                else m.group("v3")
            if not _INLINE.match(value):
                raise BuildError(
                    f"{name}:{_line_of(text, m.start())}: {m.group('what')} names {value!r}; the page runs from a "
                    "blob: URL, so only inline content (data:, #fragment) can be used there"
                )
    for what, pattern in _LOADS:
        m = pattern.search(text)
        if m:
            raise BuildError(
                f"{name}:{_line_of(text, m.start())}: {what} would load a URL; the page must be self-contained "
                "(the host serves one file from a blob: URL; talk to the plugin with langbot.api)"
            )


def _check_embeddable(name: str, text: str, kind: str) -> None:
    closers = {"script": ("</script", "<!--"), "style": ("</style",)}[kind]
    lowered = text.lower()
    for closer in closers:
        at = lowered.find(closer)
        if at != -1:
            raise BuildError(f"{name}:{_line_of(text, at)}: {closer!r} cannot appear inside an inline <{kind}>")


def _load_dictionary(name: str, text: str) -> dict[str, str]:
    def unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
        out: dict[str, object] = {}
        for key, value in pairs:
            if key in out:
                raise BuildError(f"{name}: the key {key!r} appears twice")
            out[key] = value
        return out

    try:
        data = json.loads(text, object_pairs_hook=unique)
    except json.JSONDecodeError as exc:
        raise BuildError(f"{name}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise BuildError(f"{name}: must be one JSON object mapping each key to its text")
    return data


def _i18n_block(source: Path, vocabulary: Path = VOCABULARY) -> tuple[str, list[str]]:
    names = [f"i18n/{lang}.json" for lang in LANGUAGES]
    dictionaries = {}
    for lang, name in zip(LANGUAGES, names):
        path = source / name
        if not path.is_file():
            raise BuildError(f"{name} is missing")
        text = _read(path, name)
        _check_urls(name, text)
        dictionaries[lang] = _load_dictionary(name, text)
        words_name = f"components/common/vocabulary/{lang}.json"
        words_path = vocabulary / f"{lang}.json"
        if not words_path.is_file():
            raise BuildError(f"{words_name} is missing")
        words = _load_dictionary(words_name, _read(words_path, words_name))
        both = sorted(set(words) & set(dictionaries[lang]))
        if both:
            raise BuildError(f"{name} repeats keys of {words_name} (one term per concept): {both}")
        dictionaries[lang] = {**dictionaries[lang], **words}
    first, keys = LANGUAGES[0], set(dictionaries[LANGUAGES[0]])
    for lang in LANGUAGES[1:]:
        other = set(dictionaries[lang])
        if other != keys:
            raise BuildError(
                f"i18n/{first}.json and i18n/{lang}.json must have the same keys; "
                f"only in {first}: {sorted(keys - other) or 'none'}; only in {lang}: {sorted(other - keys) or 'none'}"
            )
    # JSON is the one form of an object literal that the page can parse without running it.
    # "<" is escaped so no text can close the element early; JSON.parse reads it back unchanged.
    body = json.dumps(dictionaries, ensure_ascii=False, indent=1).replace("<", "\\u003c")
    return f'<script type="application/json" id="ltm-i18n">\n{body}\n</script>\n', names


def _source_files(source: Path) -> list[str]:
    return sorted(p.relative_to(source).as_posix() for p in source.rglob("*")
                  if p.is_file() and p.name.endswith(SOURCE_SUFFIXES))


def build(source: Path = SOURCE) -> bytes:
    """The page built from `source`, as the bytes to write; raises BuildError when it must not be built."""
    template_path = source / "index.html"
    if not template_path.is_file():
        raise BuildError(f"{source}: no index.html template")
    template = _read(template_path, "index.html")
    _check_urls("index.html", template)
    lines = template.splitlines(keepends=True)
    if not lines[0].strip().lower() == "<!doctype html>":
        raise BuildError("index.html: the first line must be <!DOCTYPE html>")

    used = {"index.html"}
    scripts: list[str] = []
    out = [lines[0], HEADER]
    for number, line in enumerate(lines[1:], start=2):
        m = DIRECTIVE.match(line)
        if not m:
            if DIRECTIVE_LIKE.search(line):
                raise BuildError(f"index.html:{number}: malformed build directive: {line.strip()}")
            out.append(line)
            continue
        kind, arg = m.group("kind"), m.group("arg")
        if kind == "i18n":
            if arg is not None or "i18n" in used:
                raise BuildError(f"index.html:{number}: write the i18n directive once, without a file name")
            if scripts:
                raise BuildError(f"index.html:{number}: the i18n block must come before the first script")
            block, names = _i18n_block(source)
            used.update(names)
            used.add("i18n")
            out.append(block)
            continue
        if kind not in ("style", "script") or arg is None:
            raise BuildError(f"index.html:{number}: unknown build directive: {line.strip()}")
        rel = PurePosixPath(arg)
        suffix = ".css" if kind == "style" else ".js"
        if rel.is_absolute() or ".." in rel.parts or rel.suffix != suffix:
            raise BuildError(f"index.html:{number}: {kind} takes a {suffix} file inside {SOURCE_LABEL}/, not {arg!r}")
        name = rel.as_posix()
        if name in used:
            raise BuildError(f"index.html:{number}: {name} is inlined twice")
        path = source / name
        if not path.is_file():
            raise BuildError(f"index.html:{number}: {name} does not exist in {SOURCE_LABEL}/")
        text = _read(path, name)
        _check_urls(name, text)
        _check_embeddable(name, text, kind)
        used.add(name)
        out.append(f"<{kind}>\n/* source: {SOURCE_LABEL}/{name} */\n{text}</{kind}>\n")
        if kind == "script":
            scripts.append(name)

    if "i18n" not in used:
        raise BuildError("index.html: no <!-- build:i18n --> line; the page needs its dictionaries")
    for tab in re.findall(r'\bdata-tab="([^"]*)"', template):
        if f"tab-{tab}.js" not in scripts:
            raise BuildError(f"index.html has a tab button for {tab!r} but no <!-- build:script tab-{tab}.js --> line")
    unused = [name for name in _source_files(source) if name not in used]
    if unused:
        raise BuildError(f"not used by index.html: {', '.join(unused)} (add a build directive or delete the file)")

    page = "".join(out).encode("utf-8")
    if len(page) > MAX_BYTES:
        raise BuildError(f"the built page is {len(page)} bytes; the host serves files up to {MAX_BYTES} bytes (4 MiB)")
    return page


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def _first_different_line(a: bytes, b: bytes) -> int:
    left, right = a.split(b"\n"), b.split(b"\n")
    for number, (x, y) in enumerate(zip(left, right), start=1):
        if x != y:
            return number
    return min(len(left), len(right)) + 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Inline the Memory Console sources into the page the host serves.")
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if the output file differs from a fresh build")
    parser.add_argument("--source", type=Path, default=SOURCE, help=f"source folder (default: {SOURCE_LABEL})")
    parser.add_argument("--output", type=Path, default=OUTPUT,
                        help="page to write or check (default: components/pages/console/index.html)")
    args = parser.parse_args(argv)
    try:
        page = build(args.source)
    except BuildError as exc:
        print(f"build_console: refused: {exc}", file=sys.stderr)
        return 2
    current = args.output.read_bytes() if args.output.is_file() else None
    if args.check:
        if current == page:
            print(f"{_shown(args.output)} is up to date")
            return 0
        where = "is missing" if current is None else \
            f"differs from a fresh build (first at line {_first_different_line(current, page)})"
        print(f"build_console: {_shown(args.output)} is stale: it {where}. Run `{COMMAND}` and commit the result.",
              file=sys.stderr)
        return 1
    if current == page:
        print(f"{_shown(args.output)} is up to date")
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    partial = args.output.with_name(args.output.name + ".partial")
    partial.write_bytes(page)
    os.replace(partial, args.output)
    print(f"wrote {_shown(args.output)} ({len(page)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
