"""Every code the core sends has its words in both languages (issue 23 item 4).

The core says audit summaries, health lines, statuses, claim types and store traits as codes with
parameters (ltm/wording.py); `!memory` and the console word them from
components/common/vocabulary/<language>.json. A code that one of them lacks would show as a raw code
(or English) to a Chinese reader, so each is checked here: every declared phrase, every audit
operation and target type the core writes, every status and claim type.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest

import ltm
from ltm import CandidateStatus, ClaimType, EpisodeStatus, Level, Operation
from ltm.wording import PHRASES

ROOT = Path(__file__).resolve().parents[1]
VOCABULARY = ROOT / "components" / "common" / "vocabulary"
LANGUAGES = ("en_US", "zh_Hans")
_FIELD = re.compile(r"\{(\w+)\}")
# The target type of an audit entry: `tx.applied(Operation.X, "type", …)` (or an f-string of a value).
_ENTRY = re.compile(r'\b(?:applied|noted|reverted)\(\s*[A-Za-z_.]+,\s*(?:"([a-z_]+)"|f"\{\w+\.value\}_(\w+)")')


def load(language: str) -> dict[str, str]:
    return json.loads((VOCABULARY / f"{language}.json").read_text(encoding="utf-8"))


def core_sources() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "ltm").rglob("*.py")))


def audited_targets() -> set[str]:
    """Every target type the core's audit entries can carry, read from its source (the operations are
    the members of `ltm.operations.Operation`: the gate takes nothing else)."""
    return {target for target, _ in _ENTRY.findall(core_sources())} - {""}


@pytest.fixture(scope="module", autouse=True)
def every_phrase_declared() -> None:
    # A phrase is declared when its module is imported: import every module of the core.
    for module in pkgutil.walk_packages(ltm.__path__, "ltm."):
        importlib.import_module(module.name)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_phrase_of_the_core_has_words_with_the_same_parameters(language: str) -> None:
    words = load(language)
    assert len(PHRASES) > 100
    missing = sorted(code for code in PHRASES if not words.get(code, "").strip())
    assert not missing, (language, missing)
    differ = sorted(code for code, phrase in PHRASES.items() if set(_FIELD.findall(words[code])) != phrase.fields)
    assert not differ, (language, differ)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_audited_operation_and_target_has_a_label(language: str) -> None:
    operations, targets = {op.value for op in Operation}, audited_targets()
    # The scan itself must find what the core is known to write (else it would prove nothing).
    assert {"episode", "candidate", "setting", "snapshot", "knowledge_base"} <= targets
    words = load(language)
    assert not sorted(o for o in operations if f"op.{o}" not in words), language
    assert not sorted(t for t in targets | {"session_profile", "speaker_profile"} if f"target.{t}" not in words)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_status_claim_type_and_level_has_a_word(language: str) -> None:
    words = load(language)
    wanted = ({f"status.{s.value}" for s in EpisodeStatus} | {f"candidate.status.{s.value}" for s in CandidateStatus}
              | {f"claim.{c.value}" for c in ClaimType} | {f"level.{lv.value}" for lv in Level})
    assert not sorted(k for k in wanted if k not in words and k.replace("status.", "episode.status.", 1) not in words)


def test_both_languages_know_the_same_codes_and_chinese_is_chinese() -> None:
    english, chinese = load("en_US"), load("zh_Hans")
    assert set(english) == set(chinese)
    # A Chinese entry that is the English text (or has no Chinese at all) was left untranslated; codes,
    # numbers and product names are the exceptions that read the same in both.
    same = {"audit.profile_updated", "audit.status_changed", "health.setting_override"}
    untranslated = sorted(k for k, v in chinese.items() if k not in same and not re.search("[\u4e00-\u9fff]", v)
                          and re.search("[A-Za-z]{3}", re.sub(r"\{\w+\}", "", v)))
    assert not untranslated, untranslated


# One term per concept in Chinese (issue 23 item 4): the synonym on the left must not appear anywhere
# the console or a reply words a code or a message; the term on the right is the one in use.
# LangBot's Chinese WebUI calls a pipeline 处理器 (處理器 in zh_Hant, converted from this one).
SYNONYMS = {"陈述类型": "声明类型", "写保护": "栅栏", "发言人": "发言者", "记忆条目": "情景记忆", "流水线": "处理器"}


def test_one_chinese_term_per_concept_in_the_console_and_the_replies() -> None:
    import components.commands.memory  # noqa: F401  # every reply catalogue is declared on import
    from components.common.i18n import Catalogue

    console = json.loads((ROOT / "pages" / "console" / "i18n" / "zh_Hans.json").read_text(encoding="utf-8"))
    texts = {**{f"console:{k}": v for k, v in console.items()}, **{f"vocabulary:{k}": v for k, v in
                                                                   load("zh_Hans").items()},
             **{f"reply:{k}": v[1] for k, v in Catalogue.ALL.items()}}
    for synonym, term in SYNONYMS.items():
        assert not sorted(k for k, v in texts.items() if synonym in v), (synonym, term)
        assert any(term in v for v in texts.values()), term


@pytest.mark.parametrize("language", ["en_US", "zh_Hans", "zh_Hant", "ja_JP"])
def test_no_code_is_worded_twice_in_one_vocabulary_file(language: str) -> None:
    # json.loads keeps the last of two equal keys, so a merge that adds a word twice hides one silently
    # (and the console build refuses the file); caught here with the file that holds it.
    pairs = json.loads((VOCABULARY / f"{language}.json").read_text(encoding="utf-8"), object_pairs_hook=list)
    keys = [key for key, _ in pairs]
    assert not sorted({key for key in keys if keys.count(key) > 1}), language
