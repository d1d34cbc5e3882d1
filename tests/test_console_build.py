"""The Memory Console build: `scripts/build_console.py` turns pages/console/ into the one page the host serves.

The committed `components/pages/console/index.html` must be exactly what a fresh build gives; the
build is byte-for-byte repeatable; and it refuses sources the blob:-URL page could not use (URLs to
load, dictionaries that disagree, unused or missing files, a page over the host's size limit).
Refusals are checked on a temporary copy of the sources.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "build_console.py"
SOURCE = ROOT / "pages" / "console"
OUTPUT = ROOT / "components" / "pages" / "console" / "index.html"

_spec = importlib.util.spec_from_file_location("build_console", SCRIPT)
bc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bc)


@pytest.fixture
def src(tmp_path: Path) -> Path:
    copy = tmp_path / "console"
    shutil.copytree(SOURCE, copy)
    return copy


def edit(path: Path, change: Callable[[str], str]) -> None:
    before = path.read_text(encoding="utf-8")
    after = change(before)
    assert after != before, f"the edit did not change {path.name}"
    path.write_text(after, encoding="utf-8")


def refused(source: Path) -> str:
    with pytest.raises(bc.BuildError) as caught:
        bc.build(source)
    return str(caught.value)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


# --------------------------------------------------------------------------- the committed page


def test_committed_page_is_a_fresh_build() -> None:
    assert OUTPUT.read_bytes() == bc.build(), (
        "components/pages/console/index.html is stale: run `python3 scripts/build_console.py` and commit it")


def test_build_is_deterministic_and_independent_of_where_the_sources_are(src: Path) -> None:
    first = bc.build()
    assert bc.build() == first
    assert bc.build(src) == first


def test_page_inlines_every_source_in_the_declared_order() -> None:
    page = bc.build().decode("utf-8")
    lines = page.splitlines()
    assert lines[0] == "<!DOCTYPE html>"
    header = page[: page.index("-->")]
    assert "GENERATED" in header and "pages/console/" in header and "python3 scripts/build_console.py" in header

    template = (SOURCE / "index.html").read_text(encoding="utf-8")
    declared = re.findall(r"<!-- build:script (\S+) -->", template)
    assert declared[0] == "bridge.js" and declared[-1] == "main.js"
    inlined = re.findall(r"<script>\n/\* source: pages/console/(\S+) \*/\n", page)
    assert inlined == declared
    for name in declared + ["console.css"]:
        assert (SOURCE / name).read_text(encoding="utf-8") in page, name
    assert "build:" not in page.replace("build_console", "")  # no directive survives

    block = re.search(r'<script type="application/json" id="ltm-i18n">\n(.*?)\n</script>', page, re.DOTALL)
    assert block and page.index(block.group(0)) < page.index("<script>\n")
    dictionaries = json.loads(block.group(1))
    # The page's own dictionary plus the plugin's vocabulary (what the server sends by code).
    vocabulary = ROOT / "components" / "common" / "vocabulary"
    assert dictionaries == {lang: {**json.loads((SOURCE / "i18n" / f"{lang}.json").read_text(encoding="utf-8")),
                                   **json.loads((vocabulary / f"{lang}.json").read_text(encoding="utf-8"))}
                            for lang in bc.LANGUAGES}


def test_check_flags_a_missing_or_stale_page_and_accepts_a_fresh_one(tmp_path: Path) -> None:
    out = tmp_path / "index.html"
    missing = run("--check", "--output", str(out))
    assert missing.returncode == 1 and "stale" in missing.stderr and not out.exists()

    written = run("--output", str(out))
    assert written.returncode == 0, written.stderr
    assert out.read_bytes() == bc.build()
    assert run("--check", "--output", str(out)).returncode == 0

    out.write_bytes(out.read_bytes().replace(b"Memory Console", b"Memory Konsole", 1))
    stale = run("--check", "--output", str(out))
    assert stale.returncode == 1
    assert "stale" in stale.stderr and "python3 scripts/build_console.py" in stale.stderr
    assert out.read_bytes() != bc.build()  # --check never writes


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(("name", "change", "named"), [
    ("console.css", lambda s: s + ".x { background: url(https://cdn.example.com/a.png); }\n", "url"),
    ("console.css", lambda s: s + ".x { background: url('../../assets/icon.svg'); }\n", "url"),
    ("console.css", lambda s: '@import "theme.css";\n' + s, "@import"),
    ("index.html", lambda s: s.replace("</head>", '<link rel="stylesheet" href="console.css">\n</head>'), "href"),
    ("index.html", lambda s: s.replace("</body>", '<script src="extra.js"></script>\n</body>'), "src"),
    ("index.html", lambda s: s.replace("</body>", "<img src=//cdn.example.com/x.png alt=x>\n</body>"), "src"),
    ("main.js", lambda s: s.replace("'use strict';", "'use strict';\n  fetch('/overview');", 1), "fetch("),
    ("main.js", lambda s: s.replace("'use strict';", "'use strict';\n  import('./extra.js');", 1), "import"),
    ("api.js", lambda s: "import { x } from './x.js';\n" + s, "import"),
    ("bridge.js", lambda s: s.replace("'use strict';", "'use strict';\n  var cdn = 'https://cdn.example.com';", 1),
     "absolute URL"),
])
def test_a_url_to_load_is_refused(src: Path, name: str, change: Callable[[str], str], named: str) -> None:
    edit(src / name, change)
    message = refused(src)
    assert message.startswith(f"{name}:") and named in message


def test_inline_urls_are_accepted(src: Path) -> None:
    edit(src / "console.css", lambda s: s + ".x { background: url(data:image/gif;base64,R0lGODlhAQABAAAAACw=); }\n")
    edit(src / "index.html", lambda s: s.replace("</body>", '<a href="#main">main</a>\n</body>'))
    page = bc.build(src)
    assert b"url(data:image/gif" in page and b'href="#main"' in page


def test_dictionaries_with_different_keys_are_refused(src: Path) -> None:
    en = src / "i18n" / "en_US.json"
    zh = src / "i18n" / "zh_Hans.json"
    edit(en, lambda s: s.replace('"app.title": "Memory Console",', '"app.title": "Memory Console",\n  "app.new": "New",'))
    message = refused(src)
    assert "same keys" in message and "'app.new'" in message

    for lang in bc.LANGUAGES[1:]:
        edit(src / "i18n" / f"{lang}.json", lambda s: s.replace('{\n', '{\n  "app.new": "新",\n', 1))
    bc.build(src)  # the same key in every dictionary: fine

    edit(zh, lambda s: s.replace('  "app.refresh": "刷新",\n', ""))
    message = refused(src)
    assert "only in en_US: ['app.refresh']" in message


def test_a_key_written_twice_is_refused(src: Path) -> None:
    edit(src / "i18n" / "zh_Hans.json", lambda s: s.replace('"app.refresh": "刷新",', '"app.refresh": "刷新",\n  "app.title": "x",'))
    assert "'app.title' appears twice" in refused(src)


def test_a_page_over_the_host_limit_is_refused(src: Path) -> None:
    (src / "big.js").write_text("/* " + "x" * bc.MAX_BYTES + " */\n", encoding="utf-8")
    edit(src / "index.html", lambda s: s.replace("<!-- build:script main.js -->",
                                                 "<!-- build:script main.js -->\n<!-- build:script big.js -->"))
    message = refused(src)
    assert "4 MiB" in message and str(bc.MAX_BYTES) in message


def test_unused_missing_and_unsafe_sources_are_refused(src: Path) -> None:
    (src / "tab-notes.js").write_text("(function () {})();\n", encoding="utf-8")
    assert "not used by index.html: tab-notes.js" in refused(src)
    (src / "tab-notes.js").unlink()

    edit(src / "index.html", lambda s: s.replace("<!-- build:script api.js -->", "<!-- build:script apis.js -->"))
    assert "apis.js does not exist" in refused(src)
    edit(src / "index.html", lambda s: s.replace("<!-- build:script apis.js -->", "<!-- build:script api.js -->"))

    edit(src / "core.js", lambda s: s + "var closer = '</script>';\n")
    assert "core.js" in refused(src) and "</script" in refused(src)


def test_a_tab_button_needs_its_script(src: Path) -> None:
    button = ('<button type="button" role="tab" class="tab" id="tab-notes" aria-controls="panel-notes" '
              'data-tab="notes" data-i18n="tab.notes">Notes</button>')
    review = 'data-i18n="tab.review">Review</button>'
    edit(src / "index.html", lambda s: s.replace(review, review + "\n        " + button))
    assert "tab-notes.js" in refused(src)

    (src / "tab-notes.js").write_text("(function () { window.ltmConsole.defineTab('notes', { render: function () {} }); })();\n",
                                      encoding="utf-8")
    edit(src / "index.html", lambda s: s.replace("<!-- build:script main.js -->",
                                                 "<!-- build:script tab-notes.js -->\n<!-- build:script main.js -->"))
    page = bc.build(src).decode("utf-8")
    assert page.index("source: pages/console/tab-notes.js") < page.index("source: pages/console/main.js")


def test_the_command_line_reports_a_refusal(tmp_path: Path, src: Path) -> None:
    edit(src / "console.css", lambda s: s + ".x { background: url(img.png); }\n")
    out = tmp_path / "index.html"
    result = run("--source", str(src), "--output", str(out))
    assert result.returncode == 2 and "refused" in result.stderr and "console.css" in result.stderr
    assert not out.exists()
