"""Rule-based memory candidates from one user message (SPEC section 10, Q1 and Q3).

Pure: text in, proposals out; no I/O, no SDK, standard library only. The caller
passes the user's own message text (``user_message_text``), never the assistant's
reply, and turns each `ProposedMemory` into a pending candidate of the current
scope (``claim_type=user_statement``, ``source_ref=query:<query id>``).

Precision comes before recall: a wrong memory is injected into every later
prompt, a missed one only costs a manual ``remember``. So the rules only fire on
first-person statements anchored at the start of a clause ("my name is ...",
"我叫...", "I'm allergic to ...", "下周我要..."), and a whole sentence is
declined when it is a question, a hypothetical or hedge, reported or quoted
speech, hearsay, or a command to the bot. A message is declined whole when it is
a joke or role play, a pasted block, or starts with a command (its rest is then
material for the command, not a statement about the speaker).

What is proposed
- profile ``name``: the name as typed ("my name is Tom" -> "Tom", "叫我小北就行" -> "小北").
- profile ``preferences``: the liked thing without "I like"/"我喜欢" ("hiking",
  "吃火锅"); a dislike keeps its polarity ("dislikes cilantro", "doesn't eat pork",
  "不喜欢香菜"); "my favorite X is Y" stays a phrase ("favorite color is green").
- profile ``traits``: "vegetarian", "allergic to peanuts", "lives in Berlin",
  "程序员", "对芒果过敏", "住在成都".
- ``session`` preferences for conventions of the whole chat ("以后我们群里都用中文交流"
  -> "用中文交流"; "from now on we only speak English in this group").
- episodes: explicit requests ("remember that X" / "记住X" -> "X", or the profile
  fact X states), plans with a day-level or later time, decisions, and standing
  instructions that start with "from now on"/"以后". The content is the clause as
  typed; relative times ("next week", "明天") are kept as words, never turned into
  dates. Same-day times (today, tonight, 今天) do not make a plan.
- credential-like text: exactly one ``ignore`` candidate with a fixed redacted
  text; nothing of the message is copied into it.

Every non-ignore candidate's ``evidence`` is an exact substring of the input (the
clause, or for "remember ..." the sentence). Output is in text order, de-duplicated,
at most ``max_candidates``.

Messages longer than `MAX_TEXT_CHARS` return nothing at all, not even an ignore
candidate: a caller that sends such text elsewhere (a model) runs its own credential
check. Message-wide patterns run on at most that many characters; the clause patterns
on one sentence of at most `MAX_SENTENCE_CHARS`. Repetitions are bounded, atomic, or
over single characters, so no pattern backtracks into a blow-up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Final, Protocol

from ltm.secrets import secret_kind


class CandidateKind(str, Enum):
    PROFILE = "profile"
    EPISODE = "episode"
    IGNORE = "ignore"


class ProfileField(str, Enum):
    NAME = "name"
    TRAITS = "traits"
    PREFERENCES = "preferences"


SPEAKER: Final = "speaker"
SESSION: Final = "session"

MAX_TEXT_CHARS: Final = 1000
"""Longer messages (pasted documents, logs) are not scanned at all."""
MAX_SENTENCE_CHARS: Final = 240
MAX_VALUE_CHARS: Final = 60
MAX_LINES: Final = 12
SECRET_RULE: Final = "secret"


@dataclass(frozen=True)
class ProposedMemory:
    """One proposal. `rule` is "<lang>.<rule>" with lang en|zh and rule one of name, pref,
    dislike, trait, session, remember, plan, decision, fact; "secret" for an ignore candidate.
    `target` ("speaker" | "session") and `field` are set for profile candidates only."""

    kind: CandidateKind
    content: str
    evidence: str
    rule: str
    target: str | None = None
    field: ProfileField | None = None


def redacted_text(kind: str) -> str:
    """The fixed content of an ignore candidate; `kind` is a phrase like "a password"."""
    if not _SAFE_KIND.fullmatch(kind):
        kind = "a credential"
    return f"[redacted: looks like {kind}]"


def extract_candidates(user_text: str, *, max_candidates: int = 3) -> list[ProposedMemory]:
    """Conservative memory candidates stated by the speaker in `user_text`."""
    if max_candidates <= 0 or not user_text or len(user_text) > MAX_TEXT_CHARS:
        return []
    kind = secret_kind(user_text)
    if kind is not None:
        return [ProposedMemory(CandidateKind.IGNORE, redacted_text(kind), "", SECRET_RULE)]
    if not user_text.strip() or user_text.count("\n") >= MAX_LINES or "```" in user_text:
        return []
    folded = user_text.translate(_FOLD)
    if _JOKE.search(folded) or _PERSONA.search(folded):
        return []
    found: list[ProposedMemory] = []
    seen: set[tuple[CandidateKind, ProfileField | None, str | None, str]] = set()
    for index, (start, end, question) in enumerate(_sentences(folded)):
        if index == 0 and _is_command(folded, start, end):
            return []
        for item in _Sentence(user_text, folded, start, end, question).candidates():
            key = (item.kind, item.field, item.target, " ".join(item.content.casefold().split()))
            if key in seen:
                continue
            seen.add(key)
            found.append(item)
            if len(found) >= max_candidates:
                return found
    return found


# ---------------------------------------------------------------- vocabulary
# Apostrophe-like characters fold to "'" (same length, so offsets stay valid).
_FOLD = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\uff07": "'"})
_SAFE_KIND = re.compile(r"[a-z][a-z -]{0,40}")

_EN_FILLER = (
    r"(?:oh|ok|okay|well|so|also|and|but|plus|btw|by\s+the\s+way|fyi|fun\s+fact|actually|honestly|"
    r"just\s+so\s+you\s+know|for\s+the\s+record|hey|hi|hello|yeah|yep|yes|no|nope|lol|haha+|hmm+|um+|uh+|"
    r"anyway|anyways|alright|ugh+|omg|wow|yo|tbh|ngl|welp|meh|man|dude|everyone|everybody|all|guys|folks|there|"
    r"team|friends)\b"
)
_ZH_FILLER = (
    r"(?:嗯+|哦+|噢+|喔+|啊+|哈+|嘿+|呵呵|对了|另外|还有|其实|顺便说一下|顺便说下|顺便提一下|说真的|老实说|"
    r"坦白说|话说|那个|然后|而且|并且|不过|但是|所以|因为|大家好|你好|您好|各位好|各位|嗨|哈喽|好的|好吧|"
    r"是的|没错|补充一下|自我介绍一下)"
)
_SEP = r"[\s,，!！.。:：~～-]*"
# Each item is an atomic group: a run like "哈哈哈哈" is consumed once and never re-split,
# which keeps these repetitions linear.
_FILLERS = re.compile(r"(?>(?:" + _EN_FILLER + "|" + _ZH_FILLER + ")" + _SEP + "){0,4}", re.IGNORECASE)

_EN_DURABLE = (r"(?:from\s+now\s+on|going\s+forward|from\s+today\s+on|starting\s+(?:today|now)|"
               r"from\s+here\s+on(?:\s+out)?)")
_ZH_DURABLE = r"(?:从今以后|从现在开始|从现在起|从今天开始|从今天起|以后|今后|往后)"
_POLITE = r"(?:(?:please|pls)\s+|请你?|麻烦你?)?"
_DURABLE = re.compile(_POLITE + r"(?:" + _EN_DURABLE + "|" + _ZH_DURABLE + r")[\s,，:：]*", re.IGNORECASE)

_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
# Day-level or later future times. Today / tonight / clock times alone are not plans worth keeping.
_EN_TIME = (
    r"\b(?:tomorrow|the\s+day\s+after\s+tomorrow|"
    r"next\s+(?:week|month|year|weekend|semester|term|quarter|summer|winter|spring|fall|autumn|" + _WEEKDAY + r")|"
    r"this\s+(?:weekend|coming\s+\w+|summer|winter|spring|fall|autumn|month|year|week|" + _WEEKDAY + r")|"
    r"on\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\b|" + _WEEKDAY + r"s?|"
    + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"|"
    r"in\s+(?:january|february|march|april|may|june|july|august|september|october|november|december)|"
    r"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|"
    r"in\s+(?:a|an|one|two|three|four|five|six|\d{1,2}|a\s+few|a\s+couple\s+of)\s+(?:days?|weeks?|months?|years?)|"
    r"by\s+(?:the\s+end\s+of|tomorrow|next)|(?:every|each)\s+(?:day|morning|evening|night|week|weekend|month|year|"
    + _WEEKDAY + r")|from\s+now\s+on|going\s+forward|later\s+this\s+(?:week|month|year)|"
    r"over\s+the\s+(?:weekend|holidays|summer)|after\s+(?:the\s+holidays|graduation))\b"
)
_ZH_NUM = r"[0-9０-９一二三四五六七八九十两]"
_ZH_DAY = r"[一二三四五六日天]"
_ZH_TIME = (
    r"(?:大后天|明天|后天|明早|明晚|明儿|明年|后年|下个?(?:周|星期|礼拜)" + _ZH_DAY + r"?|下个?(?:周|星期|礼拜)末|"
    r"下个?月(?:初|中|底)?|下半年|下学期|(?<!上)周末|这个?(?:周|星期|礼拜)(?:" + _ZH_DAY + r"|末)?|本周(?:"
    + _ZH_DAY + r"|末)?|(?<![上下这本个])(?:周|星期|礼拜)" + _ZH_DAY + r"|月底|月初|年底|年初|"
    + _ZH_NUM + r"{1,3}月(?:" + _ZH_NUM + r"{1,3}[日号])?|" + _ZH_NUM + r"{1,3}[号日](?![子本元])|"
    r"过几天|过两天|过段时间|以后|今后|往后|从现在开始|从今天起|每天|每周|每个?月|每年|每晚|每早|"
    r"寒假|暑假|国庆|春节|过年|元旦|中秋|五一|端午|清明)"
)
_TIME_SEARCH = re.compile(_EN_TIME + "|" + _ZH_TIME, re.IGNORECASE)
_LEAD_ONLY = re.compile(
    r"(?>(?:" + _EN_FILLER + "|" + _ZH_FILLER + "|" + _EN_DURABLE + "|" + _ZH_DURABLE + "|" + _EN_TIME + "|"
    + _ZH_TIME + ")" + _SEP + "){1,4}",
    re.IGNORECASE,
)

# ---------------------------------------------------------------- declines
_QUESTION_EN = re.compile(
    r"(?:do|does|did|can|could|would|will|should|shall|is|are|am|was|were|have|has|had|what|who|whom|whose|"
    r"where|when|why|how|which|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|can't|couldn't|shouldn't|"
    r"anyone|anybody|wanna)\b",
    re.IGNORECASE,
)
_QUESTION_ZH = re.compile(
    r"什么|怎么|怎样|为什么|为啥|干嘛|啥|咋|哪|谁|几点|几号|几岁|几时|多少|多大|多久|是不是|有没有|能不能|"
    r"会不会|要不要|可不可以|对不对|好不好|行不行|是否|难道|吗|[呢么][\s~～]*$"
)
_CONFIRMATION = re.compile(
    r"\b(?:right|correct|isn't\s+it|aren't\s+i|am\s+i|don't\s+i|didn't\s+i|is\s+that\s+(?:right|ok|okay|true)|"
    r"true)\b|对吗|是吗|对不对|是不是|对吧|是吧|没错吧|没错吗|真的吗",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"(?:i|i'm|im|i've|i'll|my|me|we|we're|our)\b|我", re.IGNORECASE)
_HEDGE = re.compile(
    r"\b(?:if|unless|suppose|supposing|imagine|what\s+if|would|wouldn't|could|couldn't|might|maybe|perhaps|"
    r"probably|possibly|likely|unlikely|i\s+think|i\s+thought|i\s+guess|i\s+suppose|i\s+believe|i\s+feel\s+like|"
    r"i\s+wonder|not\s+sure|unsure|don't\s+know|dunno|idk|wish|hopefully|hope|in\s+case|pretend|let's\s+say|"
    r"as\s+if|kind\s+of|kinda|sort\s+of|sorta|seems?|seemed|supposedly|allegedly|thinking\s+(?:about|of)|"
    r"considering|wondering|hoping|someday|one\s+day|sometime|dreamt|dreamed|if\s+only)\b|'d\b|"
    r"(?<!in )(?<!by )(?<!of )(?<!since )(?<!until )(?<!early )(?<!late )(?<!mid-)(?<!this )(?<!next )"
    r"\bmay\b(?!\s*\d)|"
    r"如果|假如|假设|假使|倘若|要是|万一|的话|除非|设想|想象|可能|也许|或许|大概|大约|说不定|不一定|不确定|"
    r"不知道|不清楚|好像|似乎|貌似|估计|应该是|觉得|感觉|我猜|但愿|希望|比如|例如|打个比方|看情况|梦见|梦到|做梦",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(?:said|says|saying|told|tells|asked|asks|claims?|claimed|according\s+to|heard|hears|rumou?rs?|"
    r"rumou?red|reportedly|quoting|wrote|texted|messaged)\b|[\"“”「」『』«»]|"
    r"听说|据说|传说|告诉我|跟我说|问我|讲过|透露|转述|八卦|传言|(?<![小听好实话是如白便来])说(?![好明唱真实])",
    re.IGNORECASE,
)
# "Tom: I'm moving" / "小王：我要走了" reads as a quoted chat line.
_SPEAKER_PREFIX = re.compile(
    r"[A-Za-z][\w .'-]{0,20}:\s|(?!(?:本群|群)?的?(?:群规|规矩|规定))[\u4e00-\u9fff]{1,6}[:：]"
)
_JOKE = re.compile(
    r"\b(?:jk|j/k|just\s+kidding|kidding|joking|role\s*-?\s*play|let's\s+play|pretend|hypothetically|"
    r"in\s+character|as\s+a\s+joke)\b|/s\b|开玩笑|开个玩笑|骗你的|逗你的|逗你玩|瞎说的|假的啦|角色扮演|扮演|假装|玩个游戏",
    re.IGNORECASE,
)
# The message sets up who the bot is ("you are DAN", "记住：你是一只猫娘"): role play, not facts.
_PERSONA = re.compile(
    r"\b(?:you\s+are|you're|u\s+r|ur)\s+(?:now\s+)?(?:a|an|my|the|called|named|(?-i:[A-Z]{2,}))\b|"
    r"\byour\s+name\s+is\b|\bact\s+as\b|你(?:现在|以后|从现在开始|就)?(?:是|叫|扮演)(?!不是|谁|什么|哪)|叫你|当我的",
    re.IGNORECASE,
)
# Episodes must stand on their own; "以后别这样了" / "I'll do it tomorrow" need the chat around them.
_VAGUE_REFERENCE = re.compile(
    r"\b(?:it|this|these|those)\b(?!\s+(?:week|weekend|month|year|summer|winter|spring|fall|autumn|semester|term|"
    r"quarter|coming|monday|tuesday|wednesday|thursday|friday|saturday|sunday|group|chat|channel)\b)|"
    r"[这那](?:样|么|些|件事|种|个(?!月|星期|礼拜|周末|学期))|你",
    re.IGNORECASE,
)
_COMMAND = re.compile(
    r"(?:(?:please|pls|plz|kindly)\s+)?(?:help\s+me|write|translate|summari[sz]e|explain|tell\s+me|tell\s+us|"
    r"give\s+me|show\s+me|make|create|generate|draw|list|find|search|look\s+up|google|calculate|compute|check|"
    r"fix|rewrite|draft|compose|recommend|suggest|describe|answer|reply|respond|proofread|edit|polish|correct|"
    r"convert|count|book|order|remind\s+me|repeat|say|play|open|send|read|design|plan|brainstorm|compare|"
    r"analy[sz]e|review|format|code|debug|implement|continue|tl;?dr|eli5)\b|"
    r"(?:请|麻烦|劳驾)?你?(?:帮我|帮忙|给我|替我|帮我们|写|翻译|总结|解释|告诉我|搜索|搜一下|查一下|查查|查询|"
    r"生成|画|列出|推荐|计算|算一下|讲个|讲一个|讲讲|来个|来一首|说一下|润色|改写|修改|检查|回答|回复一下|"
    r"提醒我|念|读一下|看看|分析|比较|设计|规划|安排一下|预订)",
    re.IGNORECASE,
)
_TRANSIENT = re.compile(
    r"\b(?:today|tonight|right\s+now|at\s+the\s+moment|this\s+(?:morning|afternoon|evening)|for\s+now|"
    r"temporarily|for\s+a\s+while)\b|今天|今晚|这会儿|刚才|刚刚|此刻|这几天|这两天|暂时|临时|一会儿|待会|等会",
    re.IGNORECASE,
)

# ---------------------------------------------------------------- sentences and clauses
_SENTENCE_END = re.compile(r"(?:[。！？!?；;\n\r…]|\.(?=[\s.!?。！？…]|$))+")
_CLAUSE_SEP = re.compile(
    r"，+|,+|\s+(?=(?:and|but|so|plus)\s+(?:i|i'm|im|i've|i'll|my|we|we're|we've|we'll|our)\b"
    r"(?!\s+(?:are|were|'re|both)\b))|"
    r"(?<=[^\s，,])(?=但是|不过|而且|并且|所以)",
    re.IGNORECASE,
)
# After an ASCII comma a new clause starts only with one of these; otherwise the comma
# belongs to a list inside the clause ("I like tea, coffee and juice").
_NEW_CLAUSE_AFTER_COMMA = re.compile(
    r"\s*(?:(?:i|i'm|im|i've|i'll|i'd|my|we|we're|our|you|your|it|it's|that|that's|this|he|she|they|there|"
    r"but|and|so|because|also|though|btw|lol|haha|just|please|anyway|which|who|nobody|no|not|what|where|when|"
    r"why|how|any|anyone|anybody|do|does|did|can|could|should|would|will|is|are|right|ok|okay|correct)\b|"
    r"[\u4e00-\u9fff])",
    re.IGNORECASE,
)


def _sentences(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, ends with a question mark) for each sentence, whitespace-trimmed."""
    spans: list[tuple[int, int, bool]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        question = "?" in match.group() or "？" in match.group()
        spans.append((start, match.start(), question))
        start = match.end()
    spans.append((start, len(text), False))
    out: list[tuple[int, int, bool]] = []
    for s, e, q in spans:
        s, e = _trim(text, s, e)
        if s < e:
            out.append((s, e, q))
    return out


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    cuts: list[tuple[int, int]] = []
    for match in _CLAUSE_SEP.finditer(text, start, end):
        if match.group().startswith(",") and not _NEW_CLAUSE_AFTER_COMMA.match(text, match.end(), end):
            continue
        cuts.append((match.start(), match.end()))
    out: list[tuple[int, int]] = []
    pos = start
    for cut_start, cut_end in cuts:
        out.append((pos, cut_start))
        pos = cut_end
    out.append((pos, end))
    trimmed = [_trim(text, s, e) for s, e in out]
    return [(s, e) for s, e in trimmed if s < e]


def _is_command(folded: str, start: int, end: int) -> bool:
    """A request to the bot ("help me write...", "帮我翻译..."); "remember that ..." is not one."""
    match = _FILLERS.match(folded, start, end)
    pos = match.end() if match else start
    if _EN_REMEMBER.match(folded, pos, end) or _ZH_REMEMBER.match(folded, pos, end):
        return False
    return bool(_COMMAND.match(folded, pos, end))


# ---------------------------------------------------------------- values
_EN_VALUE_STOP = re.compile(
    r"\s+(?:but|because|cause|cuz|since|though|although|when|whenever|so|and\s+(?:i|i'm|im|my|we)|lol|lmao|"
    r"haha+|btw|too|as\s+well|a\s+lot|very\s+much|so\s+much|at\s+all|now|these\s+days|anyway|tbh|honestly|"
    r"just\s+so\s+you\s+know|fyi|please|pls|plz|thanks|thank\s+you|"
    r"for\s+(?:years|ages|decades|a\s+while|a\s+long\s+time|\d+\s+\w+))\b|\s*[;:(]|\s+-\s|[!.?]",
    re.IGNORECASE,
)
_EN_PRONOUN = re.compile(
    r"\b(?:you|your|yours|u|ur|it|its|this(?!\s+(?:group|chat|channel))|that|these|those|him|her|them|he|she|they)\b",
    re.IGNORECASE,
)
_EN_BAD_VALUE_START = re.compile(
    r"(?:to\s+think|to\s+believe|how|when|what|where|why|if|whether|the\s+way|not|being|it|a\s+little|"
    r"a\s+bit|a\s+lot|kind\s+of|sort\s+of)\b",
    re.IGNORECASE,
)
_ZH_VALUE_STOP = re.compile(r"因为|但是|不过|所以|可是|然后|而且|并且|[，,：:;；、（(]")
_ZH_TAIL = "啊呀哦哈啦嘛噢呗咯喔嘿哟了~～"
_KEEP_CLOSERS = ")）》」』】]"


def _strip_tail(value: str) -> str:
    value = value.strip()
    changed = True
    while value and changed:
        changed = False
        while value and not (value[-1].isalnum() or value[-1] in _KEEP_CLOSERS):
            value = value[:-1].rstrip()
            changed = True
        while value and value[-1] in _ZH_TAIL:
            value = value[:-1].rstrip()
            changed = True
    return value


def _en_value(folded: str, text: str, start: int, end: int, *, max_words: int = 8) -> str | None:
    """The English phrase at [start, end): cut at the first connective, list commas kept."""
    stop = _EN_VALUE_STOP.search(folded, start, end)
    if stop:
        end = stop.start()
    pieces = text[start:end].split(",")
    kept = [pieces[0]]
    for piece in pieces[1:]:
        words = piece.split()
        if not words or len(words) > 3 or _NEW_CLAUSE_AFTER_COMMA.match(piece):
            break
        kept.append(piece)
    value = " ".join(",".join(kept).split())
    value = _strip_tail(value)
    if not value or len(value) > MAX_VALUE_CHARS or len(value.split()) > max_words:
        return None
    if _EN_BAD_VALUE_START.match(value) or _EN_PRONOUN.search(value):
        return None
    return value


def _zh_value(text: str, start: int, end: int) -> str | None:
    stop = _ZH_VALUE_STOP.search(text, start, end)
    if stop:
        end = stop.start()
    value = _strip_tail(text[start:end])
    if not value or len(value) > 30:
        return None
    return value


# ---------------------------------------------------------------- profile rules
_EN_NAME_STOP = frozenset(
    """not also still just so too pretty very hard long short weird unusual different spelled written on in at the
    a an my your his her their same what secret private none nothing unknown irrelevant important later back
    tomorrow tonight now soon anytime maybe crazy whatever if when after before once again sometime here there
    this that it anything something everything whenever please""".split()
    + "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august "
      "september october november december".split()
)
_EN_NAME = re.compile(
    r"(?P<trigger>my\s+(?:first\s+|full\s+|real\s+|given\s+)?name\s+is(?:\s+actually)?|(?:my\s+|the\s+)?name's|"
    r"(?:you\s+can\s+)?(?:please\s+|just\s+)?call\s+me|(?:everyone|everybody|people|my\s+friends|friends)\s+call\s+me|"
    r"i\s+go\s+by)\s+"
    r"(?P<name>[A-Za-z][A-Za-z'-]{0,24}(?:\s(?!I\b)(?-i:[A-Z])[A-Za-z'-]{0,24}){0,2})"
    r"(?=\s*$|\s*[,;:!.)~]|\s+(?:and|but|btw|lol|haha|though|from|here|by\s+the\s+way|nice|for\s+short|"
    r"please|thanks|thank)\b)",
    re.IGNORECASE,
)
_ZH_NAME_TOKEN = (
    r"(?P<name>(?![了过着去来做帮给吃买别不一起回看他她它你您人车醒外什啥谁怎这那的们得是在到上下把被让个也])"
    r"[\u4e00-\u9fff]{1,4}?|[A-Za-z][A-Za-z0-9_'.-]{0,20}(?:\s[A-Z][A-Za-z'-]{0,20}){0,2})"
    r"(?=就行|就好|就可以|就成|即可|好了|吧|哦|哈|啊|呀|啦|嗯|~|～|$|[\s，,。.!！;；)）])"
)
_ZH_NAME = re.compile(
    r"(?:我的?(?:名字|真名|全名|昵称|网名|英文名|中文名|外号|小名)(?:是|叫)|我叫|"
    r"(?:你们?|大家)?(?:以后)?(?:都|就)?(?:可以)?(?:请)?(?:直接)?叫我)\s*" + _ZH_NAME_TOKEN
)

_EN_ADV = (r"(?:(?:really|also|just|totally|absolutely|actually|do|still|mostly|generally|usually|always|truly|"
           r"definitely|personally|genuinely|so|super|seriously|much|kinda)\s+){0,3}")
_EN_I_AM = (r"i(?:'m|m|\s+am)\s+(?:(?:also|actually|still|now|originally|officially|severely|very|really|quite|"
            r"mildly|totally)\s+){0,2}")
_EN_TRAIT_ADJ = re.compile(
    _EN_I_AM + r"(?P<value>(?:not\s+)?(?:vegetarian|vegan|pescatarian|lactose[ -]intolerant|gluten[ -]intolerant|"
    r"diabetic|colou?r[ -]?blind|left[ -]handed|right[ -]handed|deaf|hard\s+of\s+hearing|pregnant|married|divorced|"
    r"engaged|retired|self[ -]employed|introverted|extroverted))"
    r"(?=\s*$|\s*[,;:!.)~]|\s+(?:and|but|so|btw|lol|haha|too|though|now|by\s+the\s+way|just\s+so|fyi|as\s+well)\b)",
    re.IGNORECASE,
)
_EN_ALLERGY = re.compile(_EN_I_AM + r"allergic\s+to\s+", re.IGNORECASE)
_EN_HAVE_ALLERGY = re.compile(r"i\s+have\s+(?:a|an)\s+(?P<value>[a-z]+(?:\s[a-z]+)?\s+allergy)\b", re.IGNORECASE)
_EN_FROM = re.compile(_EN_I_AM + r"from\s+", re.IGNORECASE)
_EN_LIVE = re.compile(
    r"i(?:\s+" + _EN_ADV + r"(?:live|reside)|(?:'ve|\s+have)\s+(?:always\s+)?lived)\s+in\s+", re.IGNORECASE
)
_EN_WORK = re.compile(r"i\s+" + _EN_ADV + r"work\s+(?P<prep>as|at|for|in|from)\s+", re.IGNORECASE)
_EN_AGE = re.compile(_EN_I_AM + r"(?P<value>\d{1,2}\s+years?\s+old)\b", re.IGNORECASE)
_EN_ROLE = re.compile(_EN_I_AM + r"(?P<not>not\s+(?P<article>a|an)|a|an)\s+", re.IGNORECASE)
_EN_ROLE_BAD = frozenset(
    "bit little lot few big huge fan total complete kind sort type idiot fool genius mess joke disaster loser "
    "noob legend clown".split()
)
_EN_NOT_FAN = re.compile(
    r"i(?:'m|m|\s+am)\s+not\s+(?:(?:really\s+)?a\s+|much\s+of\s+a\s+)?(?:(?:big|huge|massive|great)\s+)?fan\s+of\s+",
    re.IGNORECASE,
)
_EN_HAVE = re.compile(
    r"i\s+(?:also\s+)?have\s+(?P<value>(?:a|an|one|two|three|four|five|\d{1,2})\s+"
    r"(?:(?:little|young|baby|small|big|older|younger|twin)\s+)?(?:cats?|dogs?|kids?|children|sons?|daughters?|"
    r"brothers?|sisters?|twins|baby|babies|pets?|rabbits?|hamsters?|parrots?|birds?|puppy|puppies|kittens?|"
    r"grandchildren|grandkids))\b(?!\s+(?:appointment|meeting|party|class|lesson|exam))",
    re.IGNORECASE,
)
# "I'm Sarah" / "I'm Canadian": one or two capitalized words that end the clause.
_EN_IM_CAPITALIZED = re.compile(
    r"(?i:i'm|im|i\s+am)\s+(?P<name>[A-Z][a-z'-]{1,20}(?:\s[A-Z][a-z'-]{1,20})?)"
    r"(?=\s*$|\s*[,;:!.)~]|\s+(?:and|but|btw|from|here|by\s+the\s+way|nice|lol|haha)\b)"
)
_EN_NOT_A_NAME = frozenset(
    """sorry back fine good ok okay here home done ready tired new bored busy hungry sure late in out on off down up
    glad happy sad sick lost confused serious kidding joking right wrong free excited retired vegan vegetarian married
    single divorced engaged pregnant alive dead awake asleep online offline away still also just so very really not no
    yes always never the a an afraid certain positive thankful grateful curious interested impressed exhausted stuck
    broke rich poor old young fired hired remote working leaving coming going moving based well better worse okay
    gay straight bi trans lesbian queer catholic christian muslim jewish buddhist hindu atheist protestant mormon sikh
    orthodox agnostic""".split()
)
_EN_DEMONYMS = frozenset(
    """american canadian mexican brazilian argentinian argentine chilean colombian peruvian venezuelan cuban british
    english scottish welsh irish french german italian spanish portuguese dutch belgian swiss austrian swedish
    norwegian danish finnish icelandic polish czech slovak hungarian romanian bulgarian greek turkish russian
    ukrainian serbian croatian israeli iranian egyptian moroccan nigerian kenyan ghanaian ethiopian chinese japanese
    korean taiwanese vietnamese thai filipino indonesian malaysian singaporean indian pakistani bangladeshi nepali
    australian""".split()
)
_EN_PREF = re.compile(
    r"(?:i\s+" + _EN_ADV + r"(?:like|love|enjoy|prefer|adore)\s+|"
    r"i(?:'m|m|\s+am)\s+(?:(?:a\s+)?(?:big|huge|massive|great)\s+)?fan\s+of\s+|i(?:'m|m|\s+am)\s+(?:really\s+)?into\s+|"
    r"my\s+(?:hobby\s+is|hobbies\s+are|hobbies\s+include|interests\s+are)\s+)",
    re.IGNORECASE,
)
_EN_FAVORITE = re.compile(r"my\s+(?P<value>favou?rite\s+[a-z]+(?:\s+[a-z]+)?\s+(?:is|are)\s+)", re.IGNORECASE)
_EN_DISLIKE = re.compile(
    r"i\s+" + _EN_ADV + r"(?:(?:don't|dont|do\s+not|never)\s+(?:really\s+)?(?P<neg>like|enjoy|eat|drink|smoke)|"
    r"(?P<verb>hate|dislike|detest|loathe|can't\s+stand|cannot\s+stand|can't\s+eat|cannot\s+eat|can't\s+have|avoid))\b",
    re.IGNORECASE,
)

_ZH_ADV = (r"(?P<adv>(?:也|还|都|很|更|最|特别|超级|超|非常|挺|比较|真的|一直|本来就|从小就|向来|一向|其实|确实|"
           r"真|蛮|相当|尤其|就是|平时|平常|一般|现在|目前|已经|从小){0,3})")
_ZH_ME = re.compile(r"我(?![们俩家])")
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
    _ZH_ADV + r"(?P<value>(?:有|养了|养着)" + _ZH_NUM + r"{1,2}(?:只|条|个|位)"
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


# ---------------------------------------------------------------- session conventions
_ZH_SESSION_SUBJECT = r"(?:我们群里?|咱们群里?|咱群里?|本群|这个群里?|群里|我们|咱们|大家)(?:在群里|群里)?(?:的人)?"
_ZH_SESSION_MOD = r"(?:都|就|统一|一律|全部|尽量|请|要|必须|一起){0,3}"
_ZH_SESSION = re.compile(
    r"(?:" + _ZH_DURABLE + r"[\s，,]*" + _ZH_SESSION_SUBJECT + "|" + _ZH_SESSION_SUBJECT + _ZH_DURABLE + ")"
    + _ZH_SESSION_MOD + r"(?![再有])|(?:本群|我们群|咱们群|群)?的?(?:群规|规矩|规定)(?:是|：|:)\s*|"
    r"(?:本群|我们群|咱们群|这个群|群里|群内)里?(?:一律|统一|都)?(?=禁止|不许|不准|严禁|不要|只能|只许|必须)"
)
_EN_SESSION = re.compile(
    r"(?:" + _EN_DURABLE + r"[\s,]*(?:in\s+this\s+(?:group|chat|channel)[\s,]*)?|"
    r"in\s+this\s+(?:group|chat|channel)[\s,]*)"
    r"(?:we|everyone|everybody|all\s+of\s+us|y'all|you\s+all|this\s+(?:group|chat|channel))\s+"
    r"(?:(?:will|should|must|shall|are\s+going\s+to|need\s+to|have\s+to|all|please)\s+){0,2}",
    re.IGNORECASE,
)

# ---------------------------------------------------------------- episodes
_ZH_SUBJ = r"(?:我们(?:组|团队|部门|公司|家|班|宿舍|俩)?|咱们(?:组|团队|家|俩)?|我俩|咱俩|我)"
_ZH_EP_ADV = (r"(?:" + _ZH_TIME + r"|也|都|就|还|已经|一定|肯定|马上|终于|又|一起|准时|早上|上午|中午|下午|晚上|傍晚|"
              r"凌晨|早晨|" + _ZH_NUM + r"{1,3}点半?)")
_ZH_EP_HEAD = r"(?:" + _ZH_TIME + r"[\s，,]*)?" + _ZH_SUBJ + r"(?:[\s，,]*" + _ZH_EP_ADV + r"){0,4}"
_ZH_DECISION = re.compile(_ZH_EP_HEAD + r"(?:一致|最终|最后)?(?:决定|商量好了?|说好了?|约好了?|定好了?|定了)(?=..)")
_ZH_PLAN_MODAL = re.compile(_ZH_EP_HEAD + r"(?:将要|要|会|将|打算|准备|计划|得|必须|约了|报名了|订了|预约了)(?=.)")
_ZH_PLAN_EVENT = re.compile(
    _ZH_EP_HEAD + r"(?:去|来|回|飞|出发|开会|见面|搬家|结婚|考试|面试|入职|离职|出差|旅游|旅行|报到|上班|值班|请假|"
    r"休假|放假|生日|过生日|体检|答辩|毕业|开学|开始|年会|聚餐|团建|培训|聚会|婚礼|比赛|演出|发布会|上课)"
)
_ZH_DURABLE_EPISODE = re.compile(
    _POLITE + _ZH_DURABLE + r"[\s，,]*(?!(?:我们|咱们|大家|我)?(?:再|有机会|有空|吧|见|看情况))(?=..)"
)

_EN_SUBJ = (r"(?:i|we|my\s+(?:wife|husband|partner|family|team|kids?|son|daughter|girlfriend|boyfriend|parents)"
            r"\s+and\s+i)")
_EN_PLAN = re.compile(
    r"(?:" + _EN_TIME + r"[\s,]*)?" + _EN_SUBJ
    + r"(?:'ll|\s+will|\s+shall|'m\s+going\s+to|m\s+going\s+to|\s+am\s+going\s+to|'m\s+gonna|m\s+gonna|"
    r"\s+am\s+gonna|\s+are\s+going\s+to|'re\s+going\s+to|'re\s+gonna|\s+plan\s+to|'m\s+planning\s+(?:to|on)|"
    r"\s+am\s+planning\s+(?:to|on)|\s+are\s+planning\s+(?:to|on)|'re\s+planning\s+(?:to|on)|\s+intend\s+to|"
    r"\s+have\s+to|\s+need\s+to|'ve\s+got\s+to|'m\s+supposed\s+to|(?:'m|m|\s+am|'re|\s+are)\s+[a-z]+ing|"
    r"\s+have\s+(?:a|an|my|our))\b",
    re.IGNORECASE,
)
_EN_DECISION = re.compile(
    _EN_SUBJ + r"(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|all\s+)?(?:decided|agreed|settled|"
    r"made\s+up\s+(?:my|our)\s+minds?)\b(?!\s+to\s+disagree)(?:\s+(?:to|that|on)\b)?(?=\s*\S)",
    re.IGNORECASE,
)
# A decision clause with nothing after it ("我们已经决定了，就选方案B") joins the next clause.
_DECISION_ONLY = re.compile(
    r"(?:我们|咱们|我俩|咱俩|我)(?:已经|最终|最后|一致)?(?:决定|商量好|说好|约好|定好|定)了?|"
    r"(?:we|i)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|all\s+)?(?:decided|agreed)",
    re.IGNORECASE,
)
# Dated facts about the speaker that have no profile field.
_EN_FACT = re.compile(
    r"my\s+(?:birthday|bday|wedding\s+anniversary|anniversary)(?:\s+is|'s)\s+(?:on\s+)?(?=\S)", re.IGNORECASE
)
_ZH_FACT = re.compile(r"我的?(?:生日|阳历生日|农历生日|结婚纪念日)(?:是|在)(?=.)")
_EN_DURABLE_EPISODE = re.compile(_POLITE + _EN_DURABLE + r"[\s,]*(?=\S+\s+\S)", re.IGNORECASE)

# ---------------------------------------------------------------- explicit requests
_EN_REMEMBER = re.compile(
    r"(?:please\s+)?(?:(?:always\s+)?remember|keep\s+in\s+mind|(?:please\s+)?note|make\s+a\s+note|take\s+a\s+note)"
    r"(?:\s+that\b|\s*[:,-]|\s+(?=(?:i|i'm|im|my|we|we're|our)\b))\s*",
    re.IGNORECASE,
)
_ZH_REMEMBER = re.compile(
    r"(?:请|麻烦)?你?(?:帮我|给我)?(?:记住|记一下|记下来|记下|记着|记好|记录一下|备忘一下)(?:哦|啊|哈|一下)?[\s：:，,]*"
)
_REMEMBER_BAD = re.compile(r"(?:this|that|it|to|when|the\s+time)\b|[了吗住这那它]", re.IGNORECASE)
# "记一下我的手机号吧" / "remember my address": names a slot but gives no value.
_SLOT_WITHOUT_VALUE = re.compile(
    r"(?:number|address|name|birthday|email|phone|account|plate|号码?|手机号|电话|地址|名字|生日|邮箱|微信号?|账号|车牌号?)"
    r"[\s吧哦啊呀~～!！.。]*$",
    re.IGNORECASE,
)


class _Sentence:
    """One sentence of the message: the declines and the rules, clause by clause."""

    def __init__(self, text: str, folded: str, start: int, end: int, question: bool) -> None:
        self.text = text
        self.folded = folded
        self.start = start
        self.end = end
        self.question = question

    def candidates(self) -> list[ProposedMemory]:
        if self.end - self.start > MAX_SENTENCE_CHARS:
            return []
        clauses = _clauses(self.folded, self.start, self.end)
        asking = [self._asks(cs, ce, last=i == len(clauses) - 1) for i, (cs, ce) in enumerate(clauses)]
        if any(asking[:-1]):
            return []
        if asking and asking[-1]:
            # "我下个月要去日本，有什么推荐的吗" / "I like tea, and you?": a closing question about
            # something else leaves the statement before it; a confirmation ("..., right?") does not.
            tail_start, tail_end = clauses[-1]
            tail_body = self._after_fillers(tail_start, tail_end)
            if (len(clauses) == 1 or _CONFIRMATION.search(self.folded, tail_start, tail_end)
                    or _FIRST_PERSON.match(self.folded, tail_body, tail_end)):
                return []
            clauses = clauses[:-1]
            self.end = clauses[-1][1]
        if self._declined():
            return []
        body = self._after_fillers(self.start, self.end)
        remembered = _EN_REMEMBER.match(self.folded, body, self.end) or _ZH_REMEMBER.match(self.folded, body, self.end)
        if remembered:
            return self._remembered(remembered.end())
        if _SPEAKER_PREFIX.match(self.folded, body, self.end) or _is_command(self.folded, self.start, self.end):
            return []
        return self._from_clauses(clauses, allow_episodes=True)

    # -- declines
    def _asks(self, start: int, end: int, *, last: bool) -> bool:
        if (last and self.question) or _QUESTION_ZH.search(self.folded, start, end):
            return True
        return bool(_QUESTION_EN.match(self.folded, self._after_fillers(start, end), end))

    def _declined(self) -> bool:
        span = (self.start, self.end)
        return bool(_HEDGE.search(self.folded, *span) or _REPORTED.search(self.folded, *span))

    def _after_fillers(self, start: int, end: int) -> int:
        match = _FILLERS.match(self.folded, start, end)
        return match.end() if match else start

    # -- "remember that ..." / "记住..."
    def _remembered(self, pos: int) -> list[ProposedMemory]:
        if pos >= self.end or _REMEMBER_BAD.match(self.folded, pos, self.end):
            return []
        clauses = _clauses(self.folded, pos, self.end)
        facts = self._from_clauses(clauses, allow_episodes=False)
        evidence = self.text[self.start:self.end]
        if facts:
            return [ProposedMemory(f.kind, f.content, evidence, f.rule, f.target, f.field) for f in facts]
        content = _strip_tail(self.text[pos:self.end])
        if (len(content) < 2 or (content.isascii() and len(content.split()) < 2) or _VAGUE_REFERENCE.search(content)
                or _SLOT_WITHOUT_VALUE.search(content) or content.endswith("吧")):
            return []
        lang = "zh" if _has_cjk(content) else "en"
        return [ProposedMemory(CandidateKind.EPISODE, content, evidence, f"{lang}.remember")]

    # -- clause rules
    def _from_clauses(self, clauses: list[tuple[int, int]], *, allow_episodes: bool) -> list[ProposedMemory]:
        out: list[ProposedMemory] = []
        lead_start: int | None = None
        first_person = False
        for cs, ce in clauses:
            if _LEAD_ONLY.fullmatch(self.folded, cs, ce) or _DECISION_ONLY.fullmatch(
                    self.folded, self._after_fillers(cs, ce), ce):
                lead_start = cs if lead_start is None else lead_start
                continue
            start = cs if lead_start is None else lead_start
            lead_start = None
            found, anchored = self._clause(start, ce, carry=first_person, allow_episodes=allow_episodes)
            first_person = first_person or anchored
            if found is not None:
                out.append(found)
        return out

    def _clause(self, start: int, end: int, *, carry: bool, allow_episodes: bool) -> tuple[ProposedMemory | None, bool]:
        body = self._after_fillers(start, end)
        durable = _DURABLE.match(self.folded, body, end)
        after_lead = durable.end() if durable else body
        evidence = self.text[start:end]
        anchored = bool(_ZH_ME.match(self.folded, after_lead, end))

        def profile(field: ProfileField, value: str | None, rule: str, target: str = SPEAKER) -> ProposedMemory | None:
            if not value:
                return None
            return ProposedMemory(CandidateKind.PROFILE, value, evidence, rule, target, field)

        # "我们下周聚餐吧" proposes something; it has not been agreed yet.
        proposal = self.text[start:end].rstrip(" ~～!！啊呀").endswith("吧")
        found = self._name(after_lead, end, profile)
        if found is None and not proposal:
            found = self._session(body, end, profile)
        if found is None and not _TRANSIENT.search(self.folded, start, end):
            found = self._en_profile(after_lead, end, profile)
            if found is None and (anchored or carry):
                zh_at = after_lead + 1 if anchored else after_lead
                found = self._zh_profile(zh_at, end, profile)
        if found is None and allow_episodes and not proposal:
            found = self._episode(start, body, end)
        return found, anchored

    def _name(self, pos: int, end: int, profile: _ProfileMaker) -> ProposedMemory | None:
        match = _EN_NAME.match(self.folded, pos, end)
        if match:
            name = self.text[match.start("name"):match.end("name")]
            first = name.split()[0].casefold()
            if first in _EN_NAME_STOP or ("call" in match.group("trigger").casefold() and name[0].islower()):
                return None
            return profile(ProfileField.NAME, name, "en.name")
        match = _EN_IM_CAPITALIZED.match(self.folded, pos, end)
        if match:
            word = match.group("name").casefold()
            if word in _EN_DEMONYMS:
                return profile(ProfileField.TRAITS, self.text[match.start("name"):match.end("name")], "en.trait")
            if word.split()[0] in _EN_NOT_A_NAME or word.split()[0] in _EN_DEMONYMS:
                return None
            return profile(ProfileField.NAME, self.text[match.start("name"):match.end("name")], "en.name")
        match = _ZH_NAME.match(self.folded, pos, end)
        if match:
            name = self.text[match.start("name"):match.end("name")]
            if name in {"名字", "什么", "外卖"}:
                return None
            return profile(ProfileField.NAME, name, "zh.name")
        return None

    def _session(self, pos: int, end: int, profile: _ProfileMaker) -> ProposedMemory | None:
        match = _ZH_SESSION.match(self.folded, pos, end)
        if match:
            return profile(ProfileField.PREFERENCES, _zh_value(self.text, match.end(), end), "zh.session", SESSION)
        match = _EN_SESSION.match(self.folded, pos, end)
        if match:
            value = _en_value(self.folded, self.text, match.end(), end, max_words=12)
            return profile(ProfileField.PREFERENCES, value, "en.session", SESSION)
        return None

    def _en_profile(self, pos: int, end: int, profile: _ProfileMaker) -> ProposedMemory | None:
        folded, text = self.folded, self.text
        traits, prefs = ProfileField.TRAITS, ProfileField.PREFERENCES
        if match := _EN_ALLERGY.match(folded, pos, end):
            value = _en_value(folded, text, match.end(), end, max_words=5)
            return profile(traits, value and f"allergic to {value}", "en.trait")
        if match := _EN_HAVE_ALLERGY.match(folded, pos, end):
            return profile(traits, text[match.start("value"):match.end("value")], "en.trait")
        if match := _EN_AGE.match(folded, pos, end):
            return profile(traits, " ".join(text[match.start("value"):match.end("value")].split()), "en.trait")
        if match := _EN_TRAIT_ADJ.match(folded, pos, end):
            return profile(traits, text[match.start("value"):match.end("value")], "en.trait")
        if match := _EN_FROM.match(folded, pos, end):
            value = _en_value(folded, text, match.end(), end, max_words=4)
            return profile(traits, value and f"from {value}", "en.trait")
        if match := _EN_LIVE.match(folded, pos, end):
            value = _en_value(folded, text, match.end(), end, max_words=5)
            return profile(traits, value and f"lives in {value}", "en.trait")
        if match := _EN_WORK.match(folded, pos, end):
            value = _en_value(folded, text, match.end(), end, max_words=8)
            return profile(traits, value and f"works {match.group('prep').casefold()} {value}", "en.trait")
        if match := _EN_HAVE.match(folded, pos, end):
            return profile(traits, "has " + " ".join(text[match.start("value"):match.end("value")].split()), "en.trait")
        if match := _EN_NOT_FAN.match(folded, pos, end):
            value = _en_value(folded, text, match.end(), end, max_words=6)
            return profile(prefs, value and f"dislikes {value}", "en.dislike")
        if (match := _EN_ROLE.match(folded, pos, end)) and not _EN_PREF.match(folded, pos, end):
            value = _en_value(folded, text, match.end(), end, max_words=4)
            if value and value.split()[0].casefold() not in _EN_ROLE_BAD:
                article = match.group("article")
                return profile(traits, f"not {article.casefold()} {value}" if article else value, "en.trait")
        if match := _EN_FAVORITE.match(folded, pos, end):
            value = _en_value(folded, text, match.end(), end, max_words=6)
            head = " ".join(text[match.start("value"):match.end("value")].split())
            return profile(prefs, value and f"{head} {value}", "en.pref")
        if match := _EN_DISLIKE.match(folded, pos, end):
            return profile(prefs, self._en_dislike(match, end), "en.dislike")
        if match := _EN_PREF.match(folded, pos, end):
            return profile(prefs, _en_value(folded, text, match.end(), end), "en.pref")
        return None

    def _en_dislike(self, match: re.Match[str], end: int) -> str | None:
        value = _en_value(self.folded, self.text, match.end(), end, max_words=6) if match.end() < end else None
        negated = match.group("neg")
        verb = " ".join((negated or match.group("verb")).casefold().split())
        if negated in {"drink", "smoke"}:
            return f"doesn't {negated} {value}" if value else f"doesn't {negated}"  # "I don't drink"
        if not value:
            return None
        if verb == "avoid":
            return f"avoids {value}"
        if negated == "eat":
            return f"doesn't eat {value}"
        if verb in {"can't eat", "cannot eat", "can't have"}:
            return verb.replace("cannot", "can't") + " " + value
        if value.casefold().startswith("to "):
            return f"doesn't like {value}"
        return f"dislikes {value}"

    def _zh_profile(self, pos: int, end: int, profile: _ProfileMaker) -> ProposedMemory | None:
        folded, text = self.folded, self.text
        traits, prefs = ProfileField.TRAITS, ProfileField.PREFERENCES
        if match := _ZH_ALLERGY.match(folded, pos, end):
            return profile(traits, _zh_value(text, match.start("value"), end), "zh.trait")
        if match := _ZH_TRAIT_WORD.match(folded, pos, end):
            return profile(traits, text[match.start("value"):match.end("value")], "zh.trait")
        if (match := _ZH_JOB_AT.match(folded, pos, end)) and _zh_trait_noun(_zh_value(text, match.start("role"), end)):
            return profile(traits, _zh_value(text, match.start("value"), end), "zh.trait")
        if match := _ZH_HAS.match(folded, pos, end):
            return profile(traits, text[match.start("value"):match.end("value")], "zh.trait")
        if match := _ZH_AGE.match(folded, pos, end):
            return profile(traits, text[match.start("value"):match.end("value")], "zh.trait")
        if match := _ZH_LEARNING.match(folded, pos, end):
            return profile(traits, _zh_value(text, match.start("value"), end), "zh.trait")
        if match := _ZH_VEGETARIAN.match(folded, pos, end):
            return profile(traits, text[match.start("value"):match.end("value")], "zh.trait")
        if match := _ZH_PLACE.match(folded, pos, end):
            return profile(traits, _zh_value(text, match.start("value"), end), "zh.trait")
        if match := _ZH_DISLIKE.match(folded, pos, end):
            rest = _zh_value(text, match.end(), end)
            if not rest or _ZH_PERSON.search(rest) or rest[0] in "这那":
                return None
            return profile(prefs, text[match.start("verb"):match.end("verb")] + rest, "zh.dislike")
        if match := _ZH_HOBBY.match(folded, pos, end):
            value = _zh_value(text, match.end(), end)
            return profile(prefs, value if value and not _ZH_PERSON.search(value) else None, "zh.pref")
        if match := _ZH_PREF.match(folded, pos, end):
            return profile(prefs, self._zh_pref(match, end), "zh.pref")
        if match := _ZH_IS.match(folded, pos, end):
            value = _zh_value(text, match.end(), end)
            if not value or _ZH_IS_BAD_START.match(value) or not _zh_trait_noun(value):
                return None
            return profile(traits, value, "zh.trait")
        return None

    def _zh_pref(self, match: re.Match[str], end: int) -> str | None:
        value = _zh_value(self.text, match.end(), end)
        if not value or _ZH_PERSON.search(value):
            return None
        if value.startswith("的"):
            # "我最喜欢的电影是《星际穿越》" is a preference; "我喜欢的人..." is not.
            if "最" not in match.group("adv") or "是" not in value:
                return None
            return "最" + match.group("verb") + value
        if _ZH_PREF_BAD_START.match(value):
            return None
        return value

    # -- episodes
    def _episode(self, start: int, body: int, end: int) -> ProposedMemory | None:
        folded = self.folded
        content = _strip_tail(self.text[body:end])
        evidence = self.text[start:end]
        if not content or _VAGUE_REFERENCE.search(content):
            return None

        def episode(rule: str) -> ProposedMemory:
            return ProposedMemory(CandidateKind.EPISODE, content, evidence, rule)

        has_time = bool(_TIME_SEARCH.search(folded, start, end))
        if _EN_FACT.match(folded, body, end):
            return episode("en.fact")
        if _ZH_FACT.match(folded, body, end):
            return episode("zh.fact")
        if _EN_DECISION.match(folded, body, end):
            return episode("en.decision")
        if _ZH_DECISION.match(folded, body, end):
            return episode("zh.decision")
        if has_time and _EN_PLAN.match(folded, body, end):
            return episode("en.plan")
        if has_time and _ZH_PLAN_MODAL.match(folded, body, end):
            return episode("zh.plan")
        event = _ZH_PLAN_EVENT.match(folded, body, end)
        if event and _TIME_SEARCH.search(folded, body, event.end()):
            return episode("zh.plan")
        if _EN_DURABLE_EPISODE.match(folded, body, end):
            return episode("en.plan")
        if _ZH_DURABLE_EPISODE.match(folded, body, end):
            return episode("zh.plan")
        return None


def _zh_trait_noun(value: str | None) -> bool:
    """"程序员", "北京人", "做设计的": what "我是..." may be followed by to make a trait."""
    if not value or _ZH_PERSON.search(value):
        return False
    return value[-1] in _ZH_TRAIT_SUFFIX or bool(_ZH_PROFESSION.fullmatch(value))


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


class _ProfileMaker(Protocol):
    """Type of the `profile(...)` helper closures inside `_Sentence._clause`."""

    def __call__(self, field: ProfileField, value: str | None, rule: str,
                 target: str = SPEAKER) -> ProposedMemory | None: ...
