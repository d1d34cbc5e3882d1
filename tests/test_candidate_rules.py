"""The rule-based memory candidate extractor (ltm/candidates/engine.py and its rule modules).

Table-driven over tests/candidate_messages.json (scored by bench/candidate_rules.py, so the
test and the benchmark count the same way), plus credentials, limits and hostile input.
`pytest -s` prints the per-language and per-rule figures.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.candidate_rules import LANGUAGES, TABLE, format_report, load_table, score
from ltm.candidates import (
    MAX_TEXT_CHARS,
    SESSION,
    SPEAKER,
    CandidateKind,
    ProfileField,
    ProposedMemory,
    extract_candidates,
    redacted_text,
)
from ltm.secrets import secret_kind

CASES = load_table(TABLE)
NEGATIVES = [c for c in CASES if not c.expect]
# Floors chosen after seeing the results on the table (precision 1.00; recall 0.93 en, 0.99 zh):
# they guard against regressions while leaving room for honest misses added later. The table
# includes batches the rules were fitted to, so these are not estimates for unseen chat (see
# bench/candidate_rules.py for the first-run figures on held-back batches).
PRECISION_FLOOR = 0.97
RECALL_FLOOR = 0.85


def _fields(item: ProposedMemory) -> list[str]:
    return [item.content, item.evidence, item.rule, item.target or "", item.field.value if item.field else ""]


def test_table_has_enough_labelled_messages_in_each_language():
    for lang in LANGUAGES:
        cases = [c for c in CASES if c.lang == lang]
        assert len(cases) >= 45
        assert sum(1 for c in cases if c.expect) >= 20
        assert sum(1 for c in cases if not c.expect) >= 20
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", NEGATIVES, ids=[c.id for c in NEGATIVES])
def test_message_labelled_with_nothing_yields_no_candidate(case):
    assert extract_candidates(case.text) == []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_candidates_are_well_formed_and_quote_the_message(case):
    for item in extract_candidates(case.text):
        assert item.content.strip() == item.content and item.content
        if item.kind is CandidateKind.IGNORE:
            continue
        assert item.evidence and item.evidence in case.text
        if item.kind is CandidateKind.PROFILE:
            assert item.target in (SPEAKER, SESSION) and isinstance(item.field, ProfileField)
        else:
            assert item.target is None and item.field is None


def test_precision_and_recall_per_language_meet_the_floors():
    report = score(CASES, extract_candidates)
    print("\n" + format_report(report))
    for lang in LANGUAGES:
        tally = report.languages[lang]
        assert tally.precision is not None and tally.recall is not None
        assert tally.precision >= PRECISION_FLOOR, (lang, report.misses)
        assert tally.recall >= RECALL_FLOOR, (lang, report.misses)
        assert tally.negatives_with_proposal == 0


def test_scoring_punishes_an_extractor_that_proposes_wrong_things():
    def always_tom(text: str) -> list[ProposedMemory]:
        return [ProposedMemory(CandidateKind.PROFILE, "Tom", text, "fake", SPEAKER, ProfileField.NAME)]

    report = score(CASES, always_tom)
    assert report.overall.precision is not None and report.overall.precision < 0.1
    assert report.overall.recall is not None and report.overall.recall < 0.1
    assert report.overall.negatives_with_proposal == report.overall.negatives
    assert score(CASES, lambda text: []).overall.recall == 0


@pytest.mark.parametrize("text, expected", [
    ("my name is Tom", ("name", "Tom")),
    ("我叫小明", ("name", "小明")),
    ("I like hiking", ("preferences", "hiking")),
    ("我不喜欢香菜", ("preferences", "不喜欢香菜")),
    ("I don't like cilantro", ("preferences", "dislikes cilantro")),
    ("I'm allergic to peanuts", ("traits", "allergic to peanuts")),
    ("我是素食者", ("traits", "素食者")),
])
def test_profile_content_is_the_bare_value(text, expected):
    field, content = expected
    (item,) = extract_candidates(text)
    assert item.kind is CandidateKind.PROFILE and item.target == SPEAKER
    assert (item.field.value, item.content, item.evidence) == (field, content, text)


def test_a_group_convention_is_a_session_preference_and_a_plan_an_episode():
    (rule,) = extract_candidates("以后我们群里都用中文交流")
    assert (rule.kind, rule.target, rule.field, rule.content) == (
        CandidateKind.PROFILE, SESSION, ProfileField.PREFERENCES, "用中文交流")
    (plan,) = extract_candidates("Next week, I'm flying to Tokyo.")
    assert plan.kind is CandidateKind.EPISODE
    assert plan.content == "Next week, I'm flying to Tokyo"  # relative time kept as words


def test_at_most_max_candidates_in_text_order():
    text = "My name is Sam. I'm a teacher. I live in Leeds. I love cycling. I'm allergic to cats."
    every = extract_candidates(text, max_candidates=10)
    assert [c.content for c in every] == ["Sam", "teacher", "lives in Leeds", "cycling", "allergic to cats"]
    positions = [text.index(c.evidence) for c in every]
    assert positions == sorted(positions)
    assert extract_candidates(text) == every[:3]
    assert extract_candidates(text, max_candidates=1) == every[:1]
    assert extract_candidates(text, max_candidates=0) == []


def test_the_same_fact_twice_is_proposed_once():
    found = extract_candidates("I'm vegan. Really, I'm vegan!")
    assert [c.content for c in found] == ["vegan"]


@pytest.mark.parametrize("text", [
    "I'm the king of the world 😂", "I love Mondays 🙃", "best day ever, my laptop died /s",
    "I'm a professional sleeper, 20 years of practice 🤣", "我最爱开会了（反话）", "我是全公司最勤奋的人[doge]",
    "我特别喜欢周一（狗头）", "我住在地铁上了😂", "私は石油王です、嘘です", "毎日が日曜日です笑",
])
def test_an_irony_marker_declines_the_whole_message(text):
    assert extract_candidates(text) == []


@pytest.mark.parametrize(("text", "content"), [
    ("i'm vegan lol", "vegan"), ("I'm a nurse 🙂", "nurse"), ("我喜欢猫哈哈", "猫"), ("Wi-Fiなしの生活が好き", "Wi-Fiなしの生活"),
])
def test_laughter_and_a_smile_alone_are_not_irony(text, content):
    (item,) = extract_candidates(text)
    assert item.content == content


# Each message with the secret it carries; the secret must not survive in any field.
CREDENTIALS = [
    ("here's my key sk-proj-abcdefghijklmnop1234 keep it safe", "sk-proj-abcdefghijklmnop1234"),
    ("my password: Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("remember that my bank PIN is 4921", "4921"),
    ("My email password is bluefish77, please remember it", "bluefish77"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123 for the CI", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
    ("我的密码是abc12345，帮我记一下", "abc12345"),
    ("记住我的银行卡密码：135790", "135790"),
    ("验证码 482913，别告诉别人", "482913"),
    ("我的身份证号是110101199001011234", "110101199001011234"),
    ("我叫小明，我的支付密码是 88a7b6c5", "88a7b6c5"),
]


@pytest.mark.parametrize("text, secret", CREDENTIALS, ids=[f"credential-{i}" for i in range(len(CREDENTIALS))])
def test_credential_text_gives_only_a_redacted_ignore_candidate(text, secret):
    (item,) = extract_candidates(text, max_candidates=5)
    assert item.kind is CandidateKind.IGNORE
    assert item.content.startswith("[redacted: looks like ") and item.evidence == ""
    assert item.target is None and item.field is None
    pieces = {secret[i:i + 4] for i in range(len(secret) - 3)}
    for value in _fields(item):
        assert not any(piece in value for piece in pieces), value


def test_the_shared_secret_filter_decides_first():
    text = "AKIAABCDEFGHIJKLMNOP is the key"
    kind = secret_kind(text)
    assert kind is not None
    assert extract_candidates(text) == [ProposedMemory(CandidateKind.IGNORE, redacted_text(kind), "", "secret")]


def test_redacted_text_never_echoes_an_odd_kind():
    assert redacted_text("a password") == "[redacted: looks like a password]"
    assert redacted_text("hunter2 (the password)") == "[redacted: looks like a credential]"
    assert redacted_text("a PIN") == "[redacted: looks like a PIN]"
    assert redacted_text("an API key") == "[redacted: looks like an API key]"


@pytest.mark.parametrize("text", [
    "我喜欢" * 34_000,                       # ~100 KB: over the length bound, skipped
    "my name is Tom. " * 70,                 # just over MAX_TEXT_CHARS
    "哈" * 239 + "x",                        # a run the filler patterns must not re-split
    "I " * 499,
    "以后" * 499,
    "，" * 999,
    "really " * 140,
    "1" * 999,
    "my name is " + "A" * 900,
    "a, " * 333,
    "\n".join(["I like tea"] * 20),
    "です" * 120,                            # Japanese particles the clause endings must not re-split
    "覚えておいて、" * 60,
    "ことこと" * 60 + "覚えておいて",
    "私は" + "ア" * 200 + "が好きです",
])
def test_long_or_hostile_input_returns(text):
    result = extract_candidates(text)
    assert isinstance(result, list) and len(result) <= 3
    if len(text) > MAX_TEXT_CHARS:
        assert result == []


TOKENS = list("我叫喜欢不是以后下周决定记住，。？?!, .'aI1") + [
    "my name is ", "I like ", "I'm a ", "remember that ", "next week ", "我们", "过敏", "Tom", "小明",
    "私は", "が好きです", "に住んでいます", "来月", "覚えておいて", "、", "って", "です", "引っ越しました", "佐藤"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=60).map("".join), st.integers(min_value=0, max_value=5))
def test_any_text_gives_bounded_quoted_candidates(text, limit):
    found = extract_candidates(text, max_candidates=limit)
    assert len(found) <= limit
    kinds = [c.kind for c in found]
    if CandidateKind.IGNORE in kinds:
        assert kinds == [CandidateKind.IGNORE]
    for item in found:
        assert item.content
        if item.kind is not CandidateKind.IGNORE:
            assert item.evidence in text


EXTRACTOR = ("engine", "kinds", "sentences", "phrases", "declines", "rule_language", "rules_en", "rules_en_values",
             "rules_en_profile", "rules_en_sessions", "rules_en_episodes", "rules_zh", "rules_ja")


def test_the_extractor_is_pure():
    # The extractor and its rule modules; the rest of the package (queue, model path) does I/O through the ports.
    allowed = {"__future__", "re", "dataclasses", "enum", "typing", "collections.abc", "ltm.secrets"}
    package = Path(__file__).resolve().parents[1] / "ltm" / "candidates"
    for name in EXTRACTOR:
        tree = ast.parse((package / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module in EXTRACTOR:
                    continue  # a sibling module of the extractor
                names = {node.module or ""}
            else:
                continue
            assert names <= allowed, (name, names)
