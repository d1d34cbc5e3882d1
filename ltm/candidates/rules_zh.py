"""Chinese candidate rules: names, profile facts, chat conventions, episodes, "记住...".

The profile rules start after "我" (the engine strips it, and carries it to the following
clauses of a sentence: "我是程序员，喜欢爬山"); names, conventions and episodes carry their own
subject ("我叫小北", "以后我们群里都用中文交流", "下周我要去上海"). A value is the phrase as
typed, cut at the first connective or comma, at most 30 characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .kinds import SESSION, ProfileField
from .phrases import POLITE, TIME_SEARCH, ZH_DURABLE, ZH_NUM, ZH_PAST, ZH_TIME
from .rule_language import Claim, EpisodeRule, ProfileRule, RuleLanguage, with_time
from .sentences import Span, strip_tail

TRAITS, PREFERENCES, NAME = ProfileField.TRAITS, ProfileField.PREFERENCES, ProfileField.NAME
# The first person the profile rules follow; "我们", "我俩" and "我家" are not the speaker alone.
SUBJECT = re.compile(r"我(?![们俩家])")

_ZH_VALUE_STOP = re.compile(r"因为|但是|不过|所以|可是|然后|而且|并且|[，,：:;；、（(]")
_ZH_NAME_TOKEN = (
    r"(?P<name>(?![了过着去来做帮给吃买别不一起回看他她它你您人车醒外什啥谁怎这那的们得是在到上下把被让个也])"
    r"[\u4e00-\u9fff]{1,4}?|[A-Za-z][A-Za-z0-9_'.-]{0,20}(?:\s[A-Z][A-Za-z'-]{0,20}){0,2})"
    r"(?=就行|就好|就可以|就成|即可|好了|吧|哦|哈|啊|呀|啦|嗯|~|～|$|[\s，,。.!！;；)）])"
)
_ZH_NAME = re.compile(
    r"(?:我的?(?:名字|真名|全名|昵称|网名|英文名|中文名|外号|小名)(?:是|叫)|我叫|"
    r"(?:你们?|大家)?(?:以后)?(?:都|就)?(?:可以)?(?:请)?(?:直接)?叫我)\s*" + _ZH_NAME_TOKEN
)

_ZH_ADV = (r"(?P<adv>(?:也|还|都|很|更|最|特别|超级|超|非常|挺|比较|真的|一直|本来就|从小就|向来|一向|其实|确实|"
           r"真|蛮|相当|尤其|就是|平时|平常|一般|现在|目前|已经|从小){0,3})")
_ZH_ALLERGY = re.compile(
    _ZH_ADV + r"(?P<value>对?(?![不没]|有点|有些|好像|可能|会)[^\s，,。！!？?~～]{1,12}?过敏)"
)
_ZH_VEGETARIAN = re.compile(_ZH_ADV + r"(?P<value>吃素|吃全素|吃斋)")
_ZH_PLACE = re.compile(
    _ZH_ADV + r"(?P<value>住在|来自|老家(?:是|在)|在[^\s，,。！!？?在]{1,15}?"
    r"(?:工作|上班|上学|读书|读大学|读研|念书|实习|任职))"
)
_ZH_IS = re.compile(_ZH_ADV + r"是(?:一[个名位枚]|个|名|位)?")
_ZH_IS_BAD_START = re.compile(
    r"说|不|来|在|觉得|真|想|因为|被|从|跟|和|对|为|的|这|那|你|您|他|她|它|什么|谁|怎么|一样|故意|刚|要|会|去|有|我"
)
_ZH_TRAIT_SUFFIX = "者员师生家工手人族控党迷粉长医警士后座匠农兵娃妈爸男女理监管子货"
_ZH_PROFESSION = re.compile(r"(?:做|搞|学|教|干|写|卖|开)[^\s]{1,8}的")
_ZH_DISLIKE = re.compile(
    _ZH_ADV + r"(?P<verb>不太喜欢|不怎么喜欢|不喜欢|不太能吃|不太能喝|不怎么吃|不怎么喝|不太吃|不太喝|不敢吃|不爱|讨厌|"
    r"受不了|不吃|不喝|不抽|不能吃|不能喝|吃不了|喝不了|吃不惯|不碰|不玩|不看)"
)
_ZH_TRAIT_WORD = re.compile(
    _ZH_ADV + r"是?(?P<value>怕冷|怕热|怕黑|怕吵|怕疼|怕狗|怕猫|怕蛇|怕虫子?|晕车|晕船|晕机|恐高|近视|色盲|"
    r"乳糖不耐受?|失眠|有洁癖|左撇子)"
)
_ZH_JOB_AT = re.compile(
    _ZH_ADV + r"(?P<value>在[^\s，,。！!？?在]{1,10}?(?:做|当)(?P<role>[^\s，,。！!？?]{1,10}))"
)
_ZH_HAS = re.compile(
    _ZH_ADV + r"(?P<value>(?:有|养了|养着)" + ZH_NUM + r"{1,2}(?:只|条|个|位)"
    r"(?:猫|狗|孩子|儿子|女儿|兄弟|姐妹|哥哥|姐姐|弟弟|妹妹|宠物|兔子|仓鼠|鹦鹉|猫咪|狗狗))"
)
_ZH_AGE = re.compile(
    r"(?:今年)?(?P<value>(?:[1-9][0-9]?|[二三四五六七八九]十[一二三四五六七八九]?|十[一二三四五六七八九]?|"
    r"[一二三四五六七八九])岁)(?=$|了|啦|[，,。！!\s])"
)
_ZH_LEARNING = re.compile(_ZH_ADV + r"(?P<value>(?:正在|在)学(?!校|院|生|期)习?[^\s，,。！!？?]{1,12})")
_ZH_HOBBY = re.compile(r"的?(?:爱好|兴趣|兴趣爱好)(?:是|有|就是)")
_ZH_PREF = re.compile(_ZH_ADV + r"(?P<verb>喜欢|热爱|偏爱|钟爱|偏好|爱)")
_ZH_PERSON = re.compile(r"[你您他她它]")
_ZH_PREF_BAD_START = re.compile(r"[这那死上过着了人吗]|好(?!吃|喝|看)")


_ZH_SESSION_SUBJECT = r"(?:我们群里?|咱们群里?|咱群里?|本群|这个群里?|群里|我们|咱们|大家)(?:在群里|群里)?(?:的人)?"
_ZH_SESSION_MOD = r"(?:都|就|统一|一律|全部|尽量|请|要|必须|一起){0,3}"
_ZH_SESSION = re.compile(
    r"(?:" + ZH_DURABLE + r"[\s，,]*" + _ZH_SESSION_SUBJECT + "|" + _ZH_SESSION_SUBJECT + ZH_DURABLE + ")"
    + _ZH_SESSION_MOD + r"(?![再有])|(?:本群|我们群|咱们群|群)?的?(?:群规|规矩|规定)(?:是|：|:)\s*|"
    r"(?:本群|我们群|咱们群|这个群|群里|群内)里?(?:一律|统一|都)?(?=禁止|不许|不准|严禁|不要|只能|只许|必须)"
)
_ZH_SUBJ = r"(?:我们(?:组|团队|部门|公司|家|班|宿舍|俩)?|咱们(?:组|团队|家|俩)?|我俩|咱俩|我)"
_ZH_EP_ADV = (r"(?:" + ZH_TIME + r"|也|都|就|还|已经|一定|肯定|马上|终于|又|一起|准时|早上|上午|中午|下午|晚上|傍晚|"
              r"凌晨|早晨|" + ZH_NUM + r"{1,3}点半?)")
_ZH_DAYPART = r"(?:早上|上午|中午|下午|晚上|傍晚|凌晨|早晨|" + ZH_NUM + r"{1,3}点半?)"
_ZH_EP_HEAD = (r"(?:(?:" + ZH_TIME + "|" + _ZH_DAYPART + r")[\s，,]*){0,3}" + _ZH_SUBJ
               + r"(?:[\s，,]*" + _ZH_EP_ADV + r"){0,4}")
_ZH_DECISION = re.compile(
    r"(?:" + _ZH_EP_HEAD + r"(?:一致|最终|最后)?"
    r"(?:决定|商量好了?|说好了?|约好了?|定好了?|定了|一致同意|都同意)|"
    r"(?:最后|最终)(?:还是|就)?(?:决定|定了|选了))(?=..)"
)
_ZH_PLAN_MODAL = re.compile(_ZH_EP_HEAD + r"(?:将要|要|会|将|打算|准备|计划|得|必须|约了|报名了|订了|预约了)(?=.)")
_ZH_PLAN_EVENT = re.compile(
    _ZH_EP_HEAD + r"(?:带[^\s，,。]{1,4}去|有(?:个|一个|场|一场)?"
    r"(?:面试|考试|会议|会|约|体检|手术|答辩|比赛|演出|培训)|"
    r"去|来|回|飞|出发|办|举办|举行|开会|见面|搬家|结婚|考试|面试|入职|离职|出差|旅游|旅行|报到|上班|值班|请假|"
    r"休假|放假|生日|过生日|体检|答辩|毕业|开学|开始|年会|聚餐|团建|培训|聚会|婚礼|比赛|演出|发布会|上课)"
)
_ZH_DURABLE_EPISODE = re.compile(
    POLITE + ZH_DURABLE + r"[\s，,]*(?!(?:我们|咱们|大家|我)?(?:再|有机会|有空|吧|见|看情况))(?=..)"
)

# A past-tense change that lasts; most need a completed form (了) or a past time, since "搬到成都"
# alone may be a plan. Objects are named where the verb alone also fits a one-off ("换了" a phone).
_ZH_LIFE_ADV = r"(?:" + ZH_TIME + "|" + ZH_PAST + r"|也|都|就|还|又|正式|一起|刚刚?|已经|终于|从[^\s，,。调搬]{1,8})"
_ZH_LIFE = re.compile(
    r"(?:(?:" + ZH_PAST + "|" + ZH_TIME + r")[\s，,]*){0,2}" + _ZH_SUBJ + r"(?:[\s，,]*" + _ZH_LIFE_ADV + r"){0,4}(?:"
    r"搬(?:家)?(?:到|去|来|回)了?[^\s，,。]{1,12}|搬家了|换(?:了)?(?:份|个)?(?:新)?工作|跳槽(?:了|到)|"
    r"(?:辞职|离职|裸辞|退休|结婚|领证|离婚|订婚|分手|入职|转正|升职|怀孕|毕业)了|"
    r"(?:硕士|博士|本科|大学|研究生|高中)毕业|戒(?:烟|酒|糖)|添了|生了(?:个|一个)?(?:孩子|儿子|女儿|宝宝|娃|二胎|老二)|"
    r"当(?:爸爸|妈妈|爸|妈|奶奶|爷爷|外婆|外公)了|拿到了?(?:驾照|offer|学位|证书|[^\s，,。]{1,6}证)|考(?:上|进)(?:了[^\s，,。]{1,8}|[^\s，,。]{1,8}了)|"
    r"调(?:到|去|往|回)了?[^\s，,。]{1,12}|买(?:了)?(?:一)?(?:套|辆)?(?:房子?|车)|"
    r"开始(?:学|练|健身|跑步|吃素|减肥)[^\s，,。]{0,8}了|加入了[^\s，,。]{1,12}|升(?:为|到)了?[^\s，,。]{1,8})"
)
_ZH_FACT = re.compile(
    r"(?:我|我们|我俩|我和[^\s，,。的]{1,4})的?(?:生日|阳历生日|农历生日|结婚纪念日|纪念日)(?:是|在)(?=.)"
)
# "团建改到下周六了", "季度考核在下周五", "我的驾照下个月到期": an event (or a document) and its date.
_ZH_EVENT_HEAD = (r"(?:会|会议|考核|考试|面试|团建|聚餐|活动|培训|评审|答辩|体检|发布|上线|假期|旅行|婚礼|典礼|比赛|"
                  r"演出|晚会|年会|例会|周会|聚会|截止日期|deadline|ddl)")
_ZH_EVENT = re.compile(
    r"(?:我的|我们的)?[^\s，,。我你他她它]{0,8}?" + _ZH_EVENT_HEAD
    + r"(?:改到|改在|改成|推迟到|延期到|提前到|定在|定于|安排在|挪到|在|是|于)(?=" + ZH_TIME + r")|"
    r"(?:我的|我们的)?(?:驾照|护照|签证|合同|租约|会员|保险|证件|身份证)(?:" + ZH_TIME + r"){1,2}(?:到期|过期|截止)"
)
_ZH_REMEMBER = re.compile(
    r"(?:请|麻烦)?你?(?:帮我|给我)?(?:记住|记一下|记下来|记下|记着|记好|记录一下|备忘一下)(?:哦|啊|哈|一下)?[\s：:，,]*"
)


def zh_value(text: str, start: int, end: int) -> str | None:
    stop = _ZH_VALUE_STOP.search(text, start, end)
    if stop:
        end = stop.start()
    value = strip_tail(text[start:end])
    if not value or len(value) > 30:
        return None
    return value


def _zh_trait_noun(value: str | None) -> bool:
    """"程序员", "北京人", "做设计的": what "我是..." may be followed by to make a trait."""
    if not value or _ZH_PERSON.search(value):
        return False
    return value[-1] in _ZH_TRAIT_SUFFIX or bool(_ZH_PROFESSION.fullmatch(value))


# ---------------------------------------------------------------- the rule tables
def _trait(value: str | None) -> Claim:
    return Claim(TRAITS, value, "zh.trait")


def _value_from(group: str) -> Callable[[re.Match[str], Span], Claim]:
    """A trait that runs from a group of the match to the first connective: "住在成都，..." -> "住在成都"."""
    return lambda m, s: _trait(zh_value(s.text, m.start(group), s.end))


def _name(match: re.Match[str], span: Span) -> Claim:
    name = span.group(match, "name")
    return Claim(NAME, None if name in {"名字", "什么", "外卖"} else name, "zh.name")


def _job_at(match: re.Match[str], span: Span) -> Claim | None:
    """"我在腾讯做设计师": a trait only when the role is a noun for a person (otherwise the next rules)."""
    if not _zh_trait_noun(zh_value(span.text, match.start("role"), span.end)):
        return None
    return _trait(zh_value(span.text, match.start("value"), span.end))


def _dislike(match: re.Match[str], span: Span) -> Claim:
    rest = zh_value(span.text, match.end(), span.end)
    if not rest or _ZH_PERSON.search(rest) or rest[0] in "这那":
        return Claim(PREFERENCES, None, "zh.dislike")
    return Claim(PREFERENCES, span.group(match, "verb") + rest, "zh.dislike")


def _hobby(match: re.Match[str], span: Span) -> Claim:
    value = zh_value(span.text, match.end(), span.end)
    return Claim(PREFERENCES, value if value and not _ZH_PERSON.search(value) else None, "zh.pref")


def _preference(match: re.Match[str], span: Span) -> Claim:
    value = zh_value(span.text, match.end(), span.end)
    if not value or _ZH_PERSON.search(value):
        liked = None
    elif value.startswith("的"):
        # "我最喜欢的电影是《星际穿越》" is a preference; "我喜欢的人..." is not.
        liked = "最" + match.group("verb") + value if "最" in match.group("adv") and "是" in value else None
    else:
        liked = None if _ZH_PREF_BAD_START.match(value) else value
    return Claim(PREFERENCES, liked, "zh.pref")


def _is(match: re.Match[str], span: Span) -> Claim:
    """"我是程序员" / "我是北京人": "是" followed by a noun for a person."""
    value = zh_value(span.text, match.end(), span.end)
    if not value or _ZH_IS_BAD_START.match(value) or not _zh_trait_noun(value):
        return _trait(None)
    return _trait(value)


def _event_with_time(match: re.Match[str], span: Span, body: int, has_time: bool) -> bool:
    """"下周我们去杭州": an event, with its time before it."""
    return bool(TIME_SEARCH.search(span.folded, body, match.end()))


# "我是小周": 小/老/阿 and one more character is how a colleague is called.
_ZH_I_AM_NAME = re.compile(r"我是(?P<name>[小老阿][\u4e00-\u9fff])(?=$|[\s，,。.!！~～啦呀哦])")
_ZH_IN_CHARGE = re.compile(_ZH_ADV + r"(?P<value>负责[^\s，,。！!？?]{1,10})")
# ... but "老师", "老板", "小白" are what someone is, not a name.
_ZH_NOT_A_NICKNAME = "师板乡大人婆公孩号学弟妹手丑鸟白兵将总爸妈哥姐"


def _nickname(match: re.Match[str], span: Span) -> Claim:
    name = span.group(match, "name")
    return Claim(NAME, None if name[-1] in _ZH_NOT_A_NICKNAME else name, "zh.name")


NAMES = (ProfileRule(_ZH_NAME, _name), ProfileRule(_ZH_I_AM_NAME, _nickname))
SESSIONS = (ProfileRule(_ZH_SESSION, lambda m, s: Claim(PREFERENCES, zh_value(s.text, m.end(), s.end), "zh.session",
                                                        SESSION)),)
PROFILE = (
    ProfileRule(_ZH_ALLERGY, _value_from("value")),
    ProfileRule(_ZH_TRAIT_WORD, lambda m, s: _trait(s.group(m))),
    ProfileRule(_ZH_JOB_AT, _job_at),
    ProfileRule(_ZH_HAS, lambda m, s: _trait(s.group(m))),
    ProfileRule(_ZH_AGE, lambda m, s: _trait(s.group(m))),
    ProfileRule(_ZH_LEARNING, _value_from("value")),
    ProfileRule(_ZH_IN_CHARGE, _value_from("value")),
    ProfileRule(_ZH_VEGETARIAN, lambda m, s: _trait(s.group(m))),
    ProfileRule(_ZH_PLACE, _value_from("value")),
    ProfileRule(_ZH_DISLIKE, _dislike),
    ProfileRule(_ZH_HOBBY, _hobby),
    ProfileRule(_ZH_PREF, _preference),
    ProfileRule(_ZH_IS, _is),
)
EPISODES = (
    EpisodeRule(_ZH_FACT, "zh.fact"),
    EpisodeRule(_ZH_EVENT, "zh.fact"),
    EpisodeRule(_ZH_DECISION, "zh.decision"),
    EpisodeRule(_ZH_PLAN_MODAL, "zh.plan", with_time),
    EpisodeRule(_ZH_PLAN_EVENT, "zh.plan", _event_with_time),
    EpisodeRule(_ZH_DURABLE_EPISODE, "zh.plan"),
    EpisodeRule(_ZH_LIFE, "zh.life", done=True),
)

CHINESE = RuleLanguage("zh", names=NAMES, sessions=SESSIONS, profile=PROFILE, episodes=EPISODES,
                       remember=_ZH_REMEMBER, subject=SUBJECT)
