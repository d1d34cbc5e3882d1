"""The words an operator reads match LangBot 4.11.2's and read naturally (issue 45, points 4 and 5).

- English says "processor" where LangBot's English WebUI says Processors (its API still says pipeline),
  Japanese says 知識ベース where LangBot's Japanese WebUI does (never ナレッジベース).
- No English text has "(s)" or "(ies)" plurals; a staged summary is not called "archived" (an operator
  reads that entry right after approving it).
- `import l2` says speakers were not kept only when the JSON named someone else.
- Stored or model text keeps its square brackets (`[scripted draft]`, as the README and the console
  show it) unless they could make a Markdown link.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from components.common.chat_text import inert, render
from components.common.i18n import Catalogue
from testhost import PluginHarness
from tests.chat import open_chat
from tests.test_reply_rendering import plain_lines, rendered_lines

ROOT = Path(__file__).resolve().parents[1]
VOCABULARY = ROOT / "components" / "common" / "vocabulary"
CONSOLE = ROOT / "pages" / "console" / "i18n"


def english_texts() -> dict[str, str]:
    texts = {f"vocabulary {k}": v for k, v in json.loads((VOCABULARY / "en_US.json").read_text("utf-8")).items()}
    texts |= {f"console {k}": v for k, v in json.loads((CONSOLE / "en_US.json").read_text("utf-8")).items()}
    texts |= {f"catalogue {k}": v[0] for k, v in Catalogue.ALL.items()}
    return texts


def japanese_texts() -> dict[str, str]:
    texts = {f"vocabulary {k}": v for k, v in json.loads((VOCABULARY / "ja_JP.json").read_text("utf-8")).items()}
    texts |= {f"messages {k}": v for k, v in
              json.loads((VOCABULARY / "messages" / "ja_JP.json").read_text("utf-8")).items()}
    texts |= {f"console {k}": v for k, v in json.loads((CONSOLE / "ja_JP.json").read_text("utf-8")).items()}
    for path in (ROOT / "manifest.yaml", *sorted((ROOT / "components").glob("*/*.yaml")),
                 ROOT / "readme" / "README_ja_JP.md"):
        texts[str(path.relative_to(ROOT))] = path.read_text("utf-8")
    return texts


def test_no_english_text_writes_a_plural_in_brackets() -> None:
    found = {where: text for where, text in english_texts().items() if re.search(r"\w\((s|es|ies)\)", text)}
    assert found == {}, found


def test_english_says_processor_and_japanese_says_the_webuis_knowledge_base() -> None:
    english = english_texts()
    assert english["vocabulary item.pipeline"] == "Processor"
    said = {w: t for w, t in english.items() if re.search(r"\bpipelines?\b", t, re.IGNORECASE)}
    assert said == {}, said
    katakana = {w: t[:80] for w, t in japanese_texts().items() if "ナレッジベース" in t}
    assert katakana == {}, katakana


def test_a_staged_summary_is_not_called_archived() -> None:
    for language, word in (("en_US", "archiv"), ("zh_Hans", "归档"), ("zh_Hant", "歸檔"), ("ja_JP", "アーカイブ")):
        text = json.loads((VOCABULARY / f"{language}.json").read_text("utf-8"))["audit.summary_staged"]
        assert word not in text, (language, text)


def test_brackets_stay_unless_they_could_make_a_link() -> None:
    assert inert("[scripted draft] the demo is on Friday") == "[scripted draft] the demo is on Friday"
    assert inert("see [1] and [2] below") == "see [1] and [2] below"
    for raw in ("[a](http://example.test)", "![i](http://example.test/x.png)", "[a][b]", "[a]: http://example.test",
                "ends with [a]", "[x] [y](z)"):
        text = inert(raw)
        for line in (f"Quote: {text}", text):
            assert rendered_lines(render(line)) == plain_lines(render(line)), (raw, text)
        assert "](" not in text and "][" not in text and "]:" not in text, text


async def test_import_says_speakers_were_replaced_only_when_the_json_named_someone_else(
        harness: PluginHarness) -> None:
    await harness.restart(plugin_config={"command_admin_only_in_groups": False}, fresh_modules=False)
    await harness.create_memory_kb()
    member = open_chat(harness, "g1", sender_id="u2", sender_name="Bea", privilege=1)  # a member may import here
    plain = await member.run('!memory import l2 [{"content": "the demo is on Friday"}]')
    assert "Imported" in plain and "Speakers in the JSON were not kept" not in plain, plain
    own = await member.run('!memory import l2 [{"content": "the demo is in room 4", "sender_id": "u2"}]')
    assert "Speakers in the JSON were not kept" not in own, own
    other = await member.run('!memory import l2 [{"content": "the demo needs a projector", "sender_id": "u9"}]')
    assert "Speakers in the JSON were not kept" in other, other
