"""The Japanese candidate rules (ltm/candidates/rules_ja.py) and the Japanese words of the declines.

です/ます and plain forms, with and without a first-person topic; the same conservatism as the
English and Chinese rules: questions, hypotheticals, hearsay, jokes, quoted text, requests to the
bot, other people's facts and one-off states give nothing, and a credential gives only the
redacted ignore candidate. Every sentence here was written for this test, not taken from the
labelled sets in bench/extraction/.
"""

from __future__ import annotations

import pytest

from ltm.candidates import SESSION, SPEAKER, CandidateKind, ProfileField, extract_candidates
from ltm.candidates.sentences import clauses

NAME, TRAITS, PREFS = ProfileField.NAME, ProfileField.TRAITS, ProfileField.PREFERENCES

# (message, field, content, rule): one speaker profile candidate, its value as the rules keep it.
PROFILE = [
    ("私は寿司が好きです", PREFS, "寿司", "ja.pref"),
    ("納豆が大好き！", PREFS, "納豆", "ja.pref"),
    ("俺、ラーメン好きなんだよね", PREFS, "ラーメン", "ja.pref"),
    ("僕はホラー映画が苦手なんだ", PREFS, "ホラー映画が苦手", "ja.dislike"),
    ("お酒は飲めません", PREFS, "お酒は飲めません", "ja.dislike"),
    ("好きな食べ物はカレーです", PREFS, "カレー", "ja.pref"),
    ("趣味は釣りです", PREFS, "釣り", "ja.pref"),
    ("週末はよくジムに行ってます", PREFS, "ジム", "ja.pref"),
    ("卵アレルギーなので気をつけてます", TRAITS, "卵アレルギー", "ja.trait"),
    ("私、福岡に住んでいます", TRAITS, "福岡在住", "ja.trait"),
    ("北海道出身です", TRAITS, "北海道出身", "ja.trait"),
    ("銀行で働いています", TRAITS, "銀行勤務", "ja.trait"),
    ("エンジニアとして働いています", TRAITS, "エンジニア", "ja.trait"),
    ("私は薬剤師です", TRAITS, "薬剤師", "ja.trait"),
    ("犬を2匹飼っています", TRAITS, "犬を2匹飼っている", "ja.trait"),
    ("娘が一人います", TRAITS, "娘が一人", "ja.trait"),
    ("フランス語が話せます", TRAITS, "フランス語が話せる", "ja.trait"),
    ("30歳です", TRAITS, "30歳", "ja.trait"),
    ("実は左利きなんです", TRAITS, "左利き", "ja.trait"),
    ("鈴木と申します", NAME, "鈴木", "ja.name"),
    ("私の名前はアキラです", NAME, "アキラ", "ja.name"),
    ("たっくんって呼んでね", NAME, "たっくん", "ja.name"),
    ("みんなにはマコって呼ばれています", NAME, "マコ", "ja.name"),
    ("こんにちは、中村です！", NAME, "中村", "ja.name"),
]


@pytest.mark.parametrize(("text", "field", "content", "rule"), PROFILE, ids=[p[0] for p in PROFILE])
def test_a_japanese_profile_fact_gives_its_value(text: str, field: ProfileField, content: str, rule: str) -> None:
    (item,) = extract_candidates(text)
    assert (item.kind, item.target, item.field, item.content, item.rule) == (
        CandidateKind.PROFILE, SPEAKER, field, content, rule)
    assert item.evidence in text


# (message, rule, content): one episode; the content is the clause as typed, times kept as words.
EPISODES = [
    ("来週大阪に出張します", "ja.plan", "来週大阪に出張します"),
    ("来年の夏に家族でハワイに行く予定です", "ja.plan", "来年の夏に家族でハワイに行く予定です"),
    ("来月から週3でヨガに通うつもりです", "ja.plan", "来月から週3でヨガに通うつもりです"),
    ("今後は敬語を使わないで話してください", "ja.plan", "今後は敬語を使わないで話してください"),
    ("新しいプロジェクトはRustで書くことにしました", "ja.decision", "新しいプロジェクトはRustで書くことにしました"),
    ("次の勉強会は来週木曜です", "ja.fact", "次の勉強会は来週木曜です"),
    ("私の誕生日は7月3日です", "ja.fact", "私の誕生日は7月3日です"),
]


@pytest.mark.parametrize(("text", "rule", "content"), EPISODES, ids=[e[0] for e in EPISODES])
def test_a_japanese_plan_decision_or_date_is_an_episode(text: str, rule: str, content: str) -> None:
    (item,) = extract_candidates(text)
    assert (item.kind, item.rule, item.content) == (CandidateKind.EPISODE, rule, content)


@pytest.mark.parametrize(("text", "content"), [
    ("このグループでは敬語なしでお願いします", "敬語なしでお願いします"),
    ("今後、質問はスレッドに書いてください", "質問はスレッドに書いてください"),
    ("グループのルールは、写真の転載禁止です", "写真の転載禁止"),
])
def test_a_rule_for_the_group_is_a_session_preference(text: str, content: str) -> None:
    (item,) = extract_candidates(text)
    assert (item.kind, item.target, item.field, item.content) == (CandidateKind.PROFILE, SESSION, PREFS, content)


def test_joining_the_group_is_not_a_rule_for_it() -> None:
    assert extract_candidates("今日からこのグループに入りました") == []


@pytest.mark.parametrize(("text", "kind", "content"), [
    # The request first, the fact after it.
    ("覚えておいて、妻の誕生日は5月8日", CandidateKind.EPISODE, "妻の誕生日は5月8日"),
    ("メモして：会議室の予約は毎週月曜", CandidateKind.EPISODE, "会議室の予約は毎週月曜"),
    # The fact first, the request closing the sentence; a profile fact it states is proposed as such.
    ("母の誕生日は9月2日だって覚えておいて", CandidateKind.EPISODE, "母の誕生日は9月2日だ"),
    ("私が猫アレルギーなこと、覚えておいてください", CandidateKind.PROFILE, "猫アレルギー"),
    ("覚えといてね、私は朝型です", CandidateKind.PROFILE, "朝型"),
])
def test_remember_requests_in_either_order(text: str, kind: CandidateKind, content: str) -> None:
    (item,) = extract_candidates(text)
    assert (item.kind, item.content) == (kind, content)
    assert item.evidence == text


# Hard negatives, one group per reason the rules decline.
NEGATIVES = {
    "question": ["寿司は好きですか？", "何が好き？", "どこに住んでいますか", "住んでるのはどこだっけ",
                 "私ってやっぱり転職したほうがいいのかな", "覚えてる？"],
    "hypothetical": ["もし東京に住んでいたら毎日美術館に行くのに", "たぶん来週出張する", "来月引っ越すかもしれない",
                     "たぶん転職すると思う", "引っ越そうかなと思ってる", "雨なら中止です"],
    "wish or invitation": ["いつか京都に住みたいな", "来年留学したいなあ", "来週飲みに行こう"],
    "hearsay": ["兄が来月結婚するらしい", "先輩が転職したって聞いた", "課長が結婚したそうです",
                "友達が言ってたけど、あの店は閉店するんだって", "田中くんがラーメン好きなんだって"],
    "someone else's fact": ["田中さんは福岡に住んでいます", "姉は大阪に住んでる", "友達は犬を飼ってる", "彼女は看護師です"],
    "joke": ["私は宇宙人です、嘘です", "毎日が日曜日です笑", "俺は世界一のイケメンだw", "仕事が恋人です（笑）",
             "冗談だよ、辞めないよ"],
    "quoted": ["看板に「来週から営業します」と書いてある", "ポスターに「私たちは月曜に開店します」とあった"],
    "request to the bot": ["この文を英語に訳して：私は京都に住んでいます", "この文章を要約して", "レシピを教えてください",
                           "明日の予定を調べてくれる？", "日本語で返事を書いてください"],
    "role play": ["あなたは猫です", "君は誰？"],
    "smalltalk": ["ありがとうございます！", "おやすみなさい", "はじめまして、学生です"],
    "one-off or not a plan": ["今日は眠い", "さっき昼ごはん食べた", "昨日パンを買いました", "今日は雨です", "明日は雨が降ります",
                              "明日は休みです", "今めっちゃ忙しい", "駅前に新しいカフェができました"],
    "nothing to remember": ["これ覚えておいて", "私の住所を覚えておいて"],
}
NEGATIVE_CASES = [(reason, text) for reason, texts in NEGATIVES.items() for text in texts]


@pytest.mark.parametrize(("reason", "text"), NEGATIVE_CASES, ids=[f"{r}: {t}" for r, t in NEGATIVE_CASES])
def test_a_japanese_hard_negative_gives_nothing(reason: str, text: str) -> None:
    assert extract_candidates(text) == []


@pytest.mark.parametrize(("text", "secret"), [
    ("パスワードはhimitsu123です、覚えておいて", "himitsu123"),
    ("暗証番号：0721", "0721"),
    ("確認コードは 482913 です", "482913"),
    ("ログインパスワード: Neko*2023", "Neko*2023"),
    ("セキュリティコード 789", "789"),
])
def test_a_japanese_credential_gives_only_the_redacted_ignore_candidate(text: str, secret: str) -> None:
    (item,) = extract_candidates(text, max_candidates=5)
    assert item.kind is CandidateKind.IGNORE and item.evidence == ""
    assert secret not in item.content and item.content.startswith("[redacted: looks like ")


def test_the_japanese_comma_ends_a_clause_but_the_chinese_one_does_not() -> None:
    ja = "子どもが生まれました、男の子です"
    assert [ja[s:e] for s, e in clauses(ja, 0, len(ja))] == ["子どもが生まれました", "男の子です"]
    topic = "グループのルールは、写真の転載禁止です"  # after a topic the comma does not cut
    assert [topic[s:e] for s, e in clauses(topic, 0, len(topic))] == [topic]
    zh = "我喜欢苹果、香蕉和橙子"  # an enumeration comma inside one clause
    assert [zh[s:e] for s, e in clauses(zh, 0, len(zh))] == [zh]
    (item,) = extract_candidates("子どもが生まれました、男の子です")
    assert (item.rule, item.content) == ("ja.life", "子どもが生まれました")
