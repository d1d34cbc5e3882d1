"""Past-tense life events (ltm/candidates/rules_en.py, rules_zh.py, rules_ja.py: rule "<lang>.life").

A durable change said in the past tense (a move, a new job, quitting, a wedding, a graduation, a
child, a house) is one episode: the clause as typed, so it keeps when it happened, and not also
the trait it leaves (one fact, one candidate for the reviewer). A one-off in the past tense, a
change that happened to someone else, a hypothetical or a question gives nothing. The sentences
were written for this test, not taken from the labelled sets in bench/extraction/.
"""

from __future__ import annotations

import pytest

from ltm.candidates import CandidateKind, extract_candidates

# (message, content): the episode's content is the clause as typed.
LIFE_EVENTS = [
    ("I moved to Osaka last month", "I moved to Osaka last month"),
    ("I moved to Denver in June", "I moved to Denver in June"),
    ("we moved into a new flat last weekend", "we moved into a new flat last weekend"),
    ("I just started a new job at a bank", "I just started a new job at a bank"),
    ("I started working at a hospital in May", "I started working at a hospital in May"),
    ("I quit my job last Friday", "I quit my job last Friday"),
    ("I quit smoking two years ago", "I quit smoking two years ago"),
    ("I got engaged!", "I got engaged"),
    ("we got married last spring", "we got married last spring"),
    ("my husband and I bought our first house", "my husband and I bought our first house"),
    ("I retired last year", "I retired last year"),
    ("we had a baby girl in May", "we had a baby girl in May"),
    ("I gave up sugar a few months ago", "I gave up sugar a few months ago"),
    ("I joined Stripe as a designer", "I joined Stripe as a designer"),
    ("last year I graduated from MIT", "last year I graduated from MIT"),
    ("I got my driver's license yesterday", "I got my driver's license yesterday"),
    ("finally passed my bar exam", "finally passed my bar exam"),
    ("我上个月搬到了成都", "我上个月搬到了成都"),
    ("我去年搬到了深圳", "我去年搬到了深圳"),
    ("我换工作了", "我换工作了"),
    ("我上个月跳槽了", "我上个月跳槽了"),
    ("我们今年五月结婚了", "我们今年五月结婚了"),
    ("我已经戒酒半年了", "我已经戒酒半年了"),
    ("我刚当爸爸了", "我刚当爸爸了"),
    ("我考上研究生了", "我考上研究生了"),
    ("我前年退休了", "我前年退休了"),
    ("我们家去年买了辆车", "我们家去年买了辆车"),
    ("我开始学游泳了", "我开始学游泳了"),
    ("先月大阪に引っ越しました", "先月大阪に引っ越しました"),
    ("去年仙台に引っ越しました", "去年仙台に引っ越しました"),
    ("先週から新しい職場で働き始めました", "先週から新しい職場で働き始めました"),
    ("三年前に結婚しました", "三年前に結婚しました"),
    ("この春、大学を卒業しました", "この春、大学を卒業しました"),
    ("先月転職しました", "先月転職しました"),
    ("半年前に会社を辞めました", "半年前に会社を辞めました"),
    ("ついに運転免許を取りました", "ついに運転免許を取りました"),
    ("先日、長男が生まれました", "先日、長男が生まれました"),
    ("マンションを買った", "マンションを買った"),
]


@pytest.mark.parametrize(("text", "content"), LIFE_EVENTS, ids=[t for t, _ in LIFE_EVENTS])
def test_a_past_tense_life_event_is_one_episode(text: str, content: str) -> None:
    found = extract_candidates(text, max_candidates=5)
    assert [(c.kind, c.content) for c in found] == [(CandidateKind.EPISODE, content)]
    assert found[0].rule.endswith(".life") and found[0].evidence in text


def test_a_present_fact_after_the_change_is_kept_beside_it() -> None:
    found = extract_candidates("I changed careers, I'm a teacher now")
    assert [(c.kind, c.content) for c in found] == [
        (CandidateKind.EPISODE, "I changed careers"), (CandidateKind.PROFILE, "teacher")]


@pytest.mark.parametrize("text", [
    # one-offs in the past tense: the verb alone also fits these
    "I moved the meeting to Thursday", "I left my phone at home", "I quit the game halfway",
    "I started cooking dinner", "I bought a coffee", "我换了个手机", "昨日パンを買いました",
    # someone else's change
    "my brother moved to Rome last year", "Sam got married last week", "我哥去年结婚了", "听说他辞职了",
    "兄が先月結婚しました", "田中さんは先月転職しました",
    # hypothetical, question, joke
    "if I quit my job I'd travel", "did you move to Denver?", "如果我换工作了就搬家", "我搬到成都了吗？",
    "もし会社を辞めたら旅に出る", "結婚しましたか？", "冗談だけど、会社を辞めました",
])
def test_what_is_not_the_speakers_lasting_change_gives_nothing(text: str) -> None:
    assert extract_candidates(text) == []
