"""Japanese candidate rules: names, profile facts, chat conventions, episodes, "覚えておいて".

Japanese leaves the subject out ("看護師をしています") and puts the verb last, so a rule here
reads a whole clause: an optional first-person topic ("私は", "僕、"), the phrase, and the
predicate that must end the clause ("…に住んでいます", "…が好きです", "来月…に行きます"), in
です/ます or plain form. What keeps that conservative: the predicate must close the clause (a
past form is not a plan, "好きな…" is not a like), no other person may be its topic
("鈴木さんは…", "母が…": `_someone_else`), and the engine has already declined questions,
hedges, hearsay, jokes, quotes and requests (`declines.py`). A value is the phrase as typed, at
most `MAX_VALUE_CHARS`; a place or workplace becomes a profile phrase ("大阪在住",
"広告代理店勤務").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from .kinds import SESSION, ProfileField
from .phrases import JA_DAY, ZH_NUM
from .rule_language import Claim, EpisodeRule, ProfileRule, RuleLanguage
from .sentences import Span, strip_tail

MAX_VALUE_CHARS: Final = 30
TRAITS, PREFERENCES, NAME = ProfileField.TRAITS, ProfileField.PREFERENCES, ProfileField.NAME

# One character of a phrase: not a space, a comma, a sentence end or a quote.
_P = r"[^\s、。，,！!？?「」『』]"
# The first person as the topic; "僕、" is cut into its own clause by the engine.
_SUBJ = r"(?:(?:私|わたし|あたし|僕|ぼく|俺|おれ|自分|うち)(?:は|も|が|って|\s)?)?"
# What may follow the predicate before the clause ends: sentence-final particles, "んです".
_TAIL = r"(?:です|だ|よ|ね|の|んです|んだ|なんです|なんだ|なの|わ|♪|！|!|〜|～|…|\s)*$"
_COPULA = r"(?:です|だ|なんです|なんだ|なの|で)?"

# Another person as the topic or subject of the clause: what follows is about them.
_OTHER_PERSON = re.compile(
    r"(?:さん|くん|君|ちゃん|様|氏|先輩|後輩|部長|課長|社長|先生|彼女?|あいつ|友達|友人|同僚|上司|母|父|姉|兄|妹|弟|"
    r"夫|妻|旦那|嫁|両親|祖母|祖父)(?:は|が|も|って|、|,)"
)
_WEATHER = re.compile(r"雨|雪|台風|晴れ|曇り|天気|気温|暑く|寒く")


def _someone_else(span: Span, start: int) -> bool:
    """The clause, or the words just before it ("鈴木さん、来月…"), has another person as topic."""
    return bool(_OTHER_PERSON.search(span.folded, max(0, start - 12), span.end))


_CLOSING = re.compile(r"(?:です|でした|なんです|なんだ|なの|だ)+$")
_PRONOUN = re.compile(r"これ|それ|あれ|あなた|お前|きみ")


def ja_value(text: str, start: int, end: int) -> str | None:
    """The phrase at [start, end) without a closing copula or particle ("宣伝は禁止です" -> "宣伝は禁止")."""
    value = strip_tail(_CLOSING.sub("", strip_tail(text[start:end])))
    if not value or len(value) > MAX_VALUE_CHARS or _OTHER_PERSON.search(value) or _PRONOUN.search(value):
        return None
    return value


# ---------------------------------------------------------------- names
_NAME_TOKEN = (
    r"(?P<name>[\u4e00-\u9fff々]{1,5}|[\u30a1-\u30fa\u30fc]{2,10}|[\u3041-\u3096]{2,6}(?<![はがをもにでのと])|"
    r"[A-Za-z][A-Za-z'-]{0,20})(?:さん)?"
)
_NAME_STOP = frozenset("名前 本名 何 誰 私 僕 俺 自分 元気 大丈夫 暇 最高 了解 承知 休み 無事 本当 同じ 残念 賛成 反対 "
                       "心配 幸せ 安心 学生 社会人 新人 エンジニア デザイナー プログラマー マネージャー".split())
_NAME_IS = re.compile(
    r"(?:(?:私|僕|俺|わたし|ぼく|おれ|あたし|自分)の)?"
    r"(?:名前|本名|フルネーム|ニックネーム|あだ名|呼び名)は" + _NAME_TOKEN
    + r"(?=です|だ|と(?:いい|申し|言い)|って(?:いい|言い)|" + _TAIL + ")"
)
_NAME_SAY = re.compile(_SUBJ + _NAME_TOKEN + r"(?:と|って)(?:申します|いいます|言います|申す者です)")
_NAME_CALLED = re.compile(
    r"(?:(?:みんな|皆|友達|周り|家族)(?:から|に)は?)?" + _NAME_TOKEN + r"(?:って|と)呼ばれて(?:います|いる|る|ます)"
)
_NAME_CALL_ME = re.compile(
    _NAME_TOKEN + r"(?:って|と)(?:呼んで|よんで)(?:ください|下さい|くれ|ほしい|欲しい|ね|いいよ|いいです|OK)?" + _TAIL
)
_NAME_BARE = re.compile(_NAME_TOKEN + r"(?:です|でーす|だよ)" + _TAIL)
_GREETING_BEFORE = re.compile(r"(?:はじめまして|初めまして|こんにちは|こんばんは|どうも)[\s、,！!。]*$")
_REGARDS_AFTER = re.compile(r"[\s、,！!。]*よろしく")
_JOB_SUFFIX = "師士員医官家者手職長生人"


def _name(match: re.Match[str], span: Span) -> Claim:
    name = span.group(match, "name")
    return Claim(NAME, None if name in _NAME_STOP else name, "ja.name")


def _greeted_name(match: re.Match[str], span: Span) -> Claim | None:
    """"はじめまして、佐藤です" / "田中です、よろしく": a bare "Xです" is a name only beside a greeting."""
    greeted = _GREETING_BEFORE.search(span.text, 0, match.start()) or _REGARDS_AFTER.match(span.text, span.end)
    name = span.group(match, "name")
    if not greeted or name in _NAME_STOP or name[-1] in _JOB_SUFFIX:
        return None
    return Claim(NAME, name, "ja.name")


# ---------------------------------------------------------------- profile facts
_KIN = r"(?:子ども|子供|こども|息子|娘|兄|姉|弟|妹|兄弟|姉妹|孫)"
_ANIMAL = r"(?:猫|ねこ|ネコ|犬|いぬ|イヌ|うさぎ|ウサギ|ハムスター|インコ|金魚|ペット|フェレット|カメ|亀|柴犬)"
_COUNT = r"(?:" + ZH_NUM + r"{1,2}(?:人|匹|羽|頭)|一人|二人|ひとり|ふたり|いっぴき)"
# A job ends in a person suffix (看護師, 会社員, 選手), not in 苦手 / 上手 ("not good at" / "good at").
_JOB = (r"(?:" + _P + r"{0,11}(?:[師士員医官家者職長]|(?<![苦上下])手|エンジニア|デザイナー|プログラマー?|"
        r"ライター|マネージャー|マン|コンサルタント|アナリスト|主婦|主夫|学生|フリーランス|パート|アルバイト|バイト))")
_NOT_NEGATED = r"(?!では|じゃ|は?ない|はありません)"

_ALLERGY = re.compile(_SUBJ + r"(?P<value>" + _P + r"{1,12}?アレルギー)" + _NOT_NEGATED)
_ALLERGY_TO = re.compile(_SUBJ + r"(?P<what>" + _P + r"{1,12}?)にアレルギーが(?:あります|ある)" + _TAIL)
_TRAIT_WORD = re.compile(
    _SUBJ + r"(?P<value>ベジタリアン|ヴィーガン|ビーガン|菜食主義者?|左利き|右利き|花粉症|猫舌|下戸|色弱|色盲|"
    r"乳糖不耐症|近視|妊娠中|既婚者?|独身|一人っ子|長男|長女|次男|次女|末っ子|夜型|朝型|(?:AB|A|B|O)型)"
    r"(?=なので|なんで|なんです|なの|です|だ|で[、,]|" + _TAIL + ")" + _NOT_NEGATED
)
_CONSTITUTION = re.compile(_SUBJ + r"(?P<value>" + _P + r"{1,15}?体質)(?=です|だ|なん|なの|で|" + _TAIL + ")")
_LIVES = re.compile(_SUBJ + r"(?P<place>" + _P + r"{1,15}?)に住んで(?:います|いる|る|ます|おります)" + _TAIL)
_FROM = re.compile(_SUBJ + r"(?P<place>" + _P + r"{1,12}?)の?出身" + _COPULA + _TAIL)
_WORKS = re.compile(
    _SUBJ + r"(?P<place>" + _P + r"{1,20}?)(?:で|に)(?:働いて|勤めて|勤務して)(?:います|いる|る|ます|おります)" + _TAIL
)
_JOB_DOING = re.compile(
    _SUBJ + r"(?P<value>" + _JOB + r")(?:を|として)(?:して|やって|働いて)(?:います|いる|る|ます|おります)" + _TAIL
)
_JOB_IS = re.compile(r"(?:私|僕|俺|わたし|ぼく|おれ|あたし)は(?P<value>" + _JOB + r")" + _COPULA + _TAIL)
_AGE = re.compile(_SUBJ + r"(?:今年)?(?P<value>" + ZH_NUM + r"{1,3}歳)"
                  r"(?:です|だ|に(?:なりました|なった)|" + _TAIL + ")")
_HAS = re.compile(_SUBJ + r"(?P<value>(?:" + _KIN + "|" + _ANIMAL + r")が" + _COUNT + r"?)(?:い(?:ます|る)|おります)"
                  + _TAIL)
_KEEPS = re.compile(_SUBJ + r"(?P<value>" + _ANIMAL + r"を(?:" + ZH_NUM + r"{1,2}(?:匹|羽|頭))?飼って)"
                    r"(?:い)?(?:ます|る)" + _TAIL)
_SPEAKS = re.compile(
    _SUBJ + r"(?P<lang>" + _P + r"{1,10}?語)(?:が|も|は)"
    r"(?:少し|ちょっと|少しだけ|ペラペラ|流暢に|ネイティブ(?:レベル)?で)?"
    r"(?:話せ|しゃべれ)(?:ます|る)" + _TAIL
)

_FAVORITE = re.compile(
    r"(?:(?:私|僕|俺|わたし)の)?(?:一番|いちばん|最も)?好きな(?P<what>" + _P + r"{1,10}?)は(?P<value>" + _P
    + r"{1,20}?)" + _COPULA + _TAIL
)
_HOBBY = re.compile(r"(?:(?:私|僕|俺|わたし)の)?趣味は(?P<value>" + _P + r"{1,20}?)" + _COPULA + _TAIL)
_LIKES = re.compile(_SUBJ + r"(?P<value>" + _P + r"{1,20}?)(?:が|は|も)?(?:大好き|好き|大好物|好物)" + _COPULA + _TAIL)
_SIDE = re.compile(_SUBJ + r"(?P<value>" + _P + r"{1,15}?派)" + _COPULA + _TAIL)
_DISLIKES = re.compile(
    _SUBJ + r"(?P<value>" + _P + r"{1,20}?)(?:が|は|も)?(?P<verb>大嫌い|嫌い|苦手|だめ|ダメ|無理)" + _COPULA + _TAIL
)
_CANNOT = re.compile(
    _SUBJ + r"(?P<value>" + _P + r"{1,15}?)(?:が|は|を|も)?(?P<verb>食べられ(?:ない|ません)|食べれ(?:ない|ません)|"
    r"飲め(?:ない|ません)|食べ(?:ない|ません)|飲ま(?:ない|ません)|吸わ(?:ない|ません))(?:ん?です|の)?" + _TAIL
)
_DAYS_OFF = re.compile(
    r"(?:休みの日|休日|週末|オフの日|暇な時|暇なとき|休みの時)は(?:だいたい|よく|いつも|たいてい|大体)?(?P<value>" + _P
    + r"{1,15}?)を?(?:して(?:る|います|ます)|してる|してます|に行って(?:る|ます|います))" + _TAIL
)
_REPLY_STYLE = re.compile(
    r"(?P<value>(?:返事|返信|回答|答え|説明)は" + _P + r"{1,15}?)(?:だと|の方が|のほうが|が|で)"
    r"(?:うれしい|嬉しい|助かる|助かります|いい|好き|お願いします)" + _TAIL
)


def _trait(value: str | None) -> Claim:
    return Claim(TRAITS, value, "ja.trait")


def _group(name: str, suffix: str = "", field: ProfileField = TRAITS, rule: str = "ja.trait",
           ) -> Callable[[re.Match[str], Span], Claim]:
    """A claim whose value is one group of the match, with a fixed suffix ("大阪" + "在住")."""
    def build(match: re.Match[str], span: Span) -> Claim:
        value = ja_value(span.text, match.start(name), match.end(name))
        return Claim(field, value and value + suffix, rule)

    return build


def _typed(field: ProfileField, rule: str, end_group: str) -> Callable[[re.Match[str], Span], Claim]:
    """A claim whose value runs from the value group to the end of `end_group`, as typed ("パクチーは苦手")."""
    def build(match: re.Match[str], span: Span) -> Claim:
        return Claim(field, ja_value(span.text, match.start("value"), match.end(end_group)), rule)

    return build


def _allergy_to(match: re.Match[str], span: Span) -> Claim:
    value = ja_value(span.text, match.start("what"), match.end("what"))
    return _trait(value and value + "アレルギー")


# ---------------------------------------------------------------- chat conventions
_GROUP = r"(?:この|当|本|うちの)?(?:グループ|チャット|ルーム|トーク|サーバー|チャンネル|部屋)内?"
_FROM_NOW = r"(?:これから|今後|今日から|以後)は?[、,\s]*"
_SESSION = re.compile(
    r"(?:" + _FROM_NOW + r")?" + _GROUP + r"(?:では|の中では|で)は?[、,\s]*|" + _GROUP
    + r"の(?:ルール|決まり|規則|約束)(?:は|：|:)[、,\s]*|" + _FROM_NOW
    + r"(?=" + _P + r"{0,40}?(?:ここ|グループ|チャット|スレッド|チャンネル|みなさん|皆さん|全員|各自|みんな))"
)


# A convention prescribes or forbids; "このグループに入りました" only reports.
_RULE_LIKE = re.compile(r"ください|下さい|ましょう|こと$|禁止|厳禁|NG|お願い|ように|ません$|ないで|しない$|"
                        r"のみ|だけ|専用|(?:使|話|書|投稿|共有|報告)(?:う|す|く|します|います)$")


def _session(match: re.Match[str], span: Span) -> Claim:
    value = ja_value(span.text, match.end(), span.end)
    return Claim(PREFERENCES, value if value and _RULE_LIKE.search(value) else None, "ja.session", SESSION)


# ---------------------------------------------------------------- episodes
_FACT = re.compile(r"(?:(?:私|僕|俺|わたし|うち)の)?(?:誕生日|結婚記念日|記念日)は(?=.)")
_EVENT = re.compile(
    r"(?P<noun>" + _P + r"{2,15}?)(?:は|が)(?=" + _P + r"{0,6}?(?:" + ZH_NUM + r"{1,2}[月日]|" + JA_DAY + "))"
)
_TIME_WORD = re.compile(r"(?:今日|明日|昨日|今週|来週|先週|今月|来月|先月|今年|来年|去年|あさって|毎日|毎週)$")
_DECISION = re.compile(
    r".{1,60}?(?:ことに(?:しました|した|決めました|決めた|決定しました|なりました|なった)|こと[でが]決まり(?:ました)?|"
    r"に決まりました|に決まった|に決めました|に決めた|[でに]決定(?:しました)?|で決まり(?:ました)?)" + _TAIL
)
# A plan: a non-past predicate (ます form, 予定, つもり, "…ようと思っています", or a plain verb that
# is not volitional: "行こう" is an invitation) closing a clause that names a day-level or later time.
# "明日は休みです" ends in a copula, not a verb, and "毎日…通勤しています" in a habit (…ている):
# neither is taken as a plan.
_PLAN = re.compile(
    r".{1,80}?(?:(?<!てい)(?<!でい)(?<![てで])ます|ません|予定(?:です|だ)?|つもり(?:です|だ)?|"
    r"[よおこそとのもろぼごぞどょ]うと思って(?:い)?(?:ます|る)|(?<![こそとのもろぼごぞどよおょ])[うくつぬむぐぶ]|"
    r"(?<!てい)(?<!でい)(?<![てで])る|(?<![でま])す)" + _TAIL
)
_DONE = r"(?:しました|した)"
_LIFE = re.compile(
    r".{0,50}?(?:引っ?越し(?:ました|た|て(?:きました|きた))|"
    r"(?:転職|就職|入社|退職|退社|結婚|離婚|婚約|入籍|卒業|入学|合格|昇進|昇格|出産|独立|開業|起業|移住|上京|帰国|"
    r"留学|転校|転居)" + _DONE + "|"
    r"(?:異動|転勤|配属|単身赴任)(?:になりました|になった|しました|した|が決まりました)|"
    r"(?:働き|飼い|習い|通い|住み|勤め|勉強し|練習し|付き合い|育て)始め(?:ました|た)|"
    r"(?:タバコ|たばこ|煙草|お酒|酒|会社|仕事|バイト|アルバイト|ジム|部活|肉|喫煙|飲酒|コーヒー)を?(?:辞め|やめ|止め)"
    r"(?:ました|た)|"
    r"(?:子ども|子供|こども|赤ちゃん|息子|娘|長男|長女|次男|次女|孫)が生まれ(?:ました|た)|"
    r"(?:免許|資格|学位|内定|運転免許)を?(?:取り?ました|取った|とった|取得しました|取得した|もらいました|もらった)|"
    r"(?:家|マンション|一軒家|新築|車|土地)を?(?:買い?ました|買った|購入しました|購入した)|"
    r"(?:フリーランス|社会人|父親|母親|パパ|ママ|親|大学生|" + _P + r"{1,8}[員師士者長])"
    r"に(?:なりました|なった))" + _TAIL
)
_DURABLE_EPISODE = re.compile(r"(?:今後は?|以後は?|これからは|次回からは?|次からは?)[、,\s]*(?=" + _P + "{2})")


def _own_plan(match: re.Match[str], span: Span, body: int, has_time: bool) -> bool:
    return has_time and not _someone_else(span, body) and not _WEATHER.search(span.folded, body, span.end)


def _own(match: re.Match[str], span: Span, body: int, has_time: bool) -> bool:
    return not _someone_else(span, body)


def _event(match: re.Match[str], span: Span, body: int, has_time: bool) -> bool:
    """"忘年会は12月20日です": a named event with a date; "明日は金曜日です" names no event."""
    return not _TIME_WORD.search(match.group("noun")) and not _someone_else(span, body)


# ---------------------------------------------------------------- "覚えておいて"
_REMEMBER_VERB = (r"(?:ちゃんと)?(?:覚えて(?:おいて|といて|て)?|覚えといて|おぼえて(?:おいて)?|"
                  r"メモ(?:して(?:おいて)?|しといて|っといて)|記録(?:して(?:おいて)?|しといて)|記憶して(?:おいて)?|忘れないで)"
                  r"(?:ほしい|欲しい)?")
_REMEMBER = re.compile(
    r"(?:" + _REMEMBER_VERB + r"|メモ)(?:んだ|んです)?(?:けど|が)?(?:ね|ください|下さい|くれ|な|よ)?[\s、,：:]+"
)
_REMEMBER_AFTER = re.compile(
    r"(?:ということ|ってこと|のこと|こと|って|と|のを|を)?[\s、,]*" + _REMEMBER_VERB
    + r"(?:ね|ください|下さい|くれ|くれる|な|よ)*[\s。！!〜～…]*$"
)


NAMES = (
    ProfileRule(_NAME_IS, _name),
    ProfileRule(_NAME_SAY, _name),
    ProfileRule(_NAME_CALLED, _name),
    ProfileRule(_NAME_CALL_ME, _name),
    ProfileRule(_NAME_BARE, _greeted_name),
)
SESSIONS = (ProfileRule(_SESSION, _session),)
PROFILE = (
    ProfileRule(_ALLERGY, _group("value")),
    ProfileRule(_ALLERGY_TO, _allergy_to),
    ProfileRule(_TRAIT_WORD, _group("value")),
    ProfileRule(_CONSTITUTION, _group("value")),
    ProfileRule(_LIVES, _group("place", "在住")),
    ProfileRule(_FROM, _group("place", "出身")),
    ProfileRule(_WORKS, _group("place", "勤務")),
    ProfileRule(_JOB_DOING, _group("value")),
    ProfileRule(_JOB_IS, _group("value")),
    ProfileRule(_AGE, _group("value")),
    ProfileRule(_HAS, _group("value")),
    ProfileRule(_KEEPS, _group("value", "いる")),
    ProfileRule(_SPEAKS, _group("lang", "が話せる")),
    ProfileRule(_FAVORITE, _typed(PREFERENCES, "ja.pref", "value")),
    ProfileRule(_HOBBY, _group("value", field=PREFERENCES, rule="ja.pref")),
    ProfileRule(_DAYS_OFF, _group("value", field=PREFERENCES, rule="ja.pref")),
    ProfileRule(_REPLY_STYLE, _group("value", field=PREFERENCES, rule="ja.pref")),
    ProfileRule(_DISLIKES, _typed(PREFERENCES, "ja.dislike", "verb")),
    ProfileRule(_CANNOT, _typed(PREFERENCES, "ja.dislike", "verb")),
    ProfileRule(_SIDE, _group("value", field=PREFERENCES, rule="ja.pref")),
    ProfileRule(_LIKES, _group("value", field=PREFERENCES, rule="ja.pref")),
)
EPISODES = (
    EpisodeRule(_FACT, "ja.fact"),
    EpisodeRule(_DECISION, "ja.decision", _own),
    EpisodeRule(_LIFE, "ja.life", _own),
    EpisodeRule(_EVENT, "ja.fact", _event),
    EpisodeRule(_PLAN, "ja.plan", _own_plan),
    EpisodeRule(_DURABLE_EPISODE, "ja.plan"),
)

JAPANESE = RuleLanguage("ja", names=NAMES, sessions=SESSIONS, profile=PROFILE, episodes=EPISODES,
                        remember=_REMEMBER, remember_after=_REMEMBER_AFTER)
