"""Phrases every language's rules and the engine share: fillers, lead-ins, and time expressions.

A filler ("oh", "btw", "嗯", "对了", "実は") never makes a clause a statement; a lead-in ("from now
on", "以后", "今後") makes what follows a standing rule; a day-level or later time ("next week",
"下周", "来月") turns a statement about oneself into a plan. Same-day times (today, tonight, 今天,
今日) do not make a plan. A past time ("last month", "上个月", "先月") may lead a life event.
"""

from __future__ import annotations

import re

EN_FILLER = (
    r"(?:oh|ok|okay|well|so|also|and|but|plus|btw|by\s+the\s+way|fyi|fun\s+fact|actually|honestly|"
    r"just\s+so\s+you\s+know|for\s+the\s+record|hey|hi|hello|yeah|yep|yes|no|nope|lol|haha+|hmm+|um+|uh+|"
    r"anyway|anyways|alright|ugh+|omg|wow|yo|tbh|ngl|welp|meh|man|dude|everyone|everybody|all|guys|folks|there|"
    r"team|friends|heads\s+up|quick\s+update|(?:friendly\s+|quick\s+|just\s+a\s+)?reminder(?:\s+that)?|"
    # "can you remember that ...": a request to remember, which the rules read after it, not a question.
    r"(?:can|could|would|will)\s+you(?=\s+(?:please\s+)?(?:remember|note|keep\s+in\s+mind|make\s+a\s+note)\b))\b"
)
ZH_FILLER = (
    r"(?:嗯+|哦+|噢+|喔+|啊+|哈+|嘿+|呵呵|对了|另外|还有|其实|顺便说一下|顺便说下|顺便提一下|说真的|老实说|"
    r"坦白说|话说|那个|然后|而且|并且|不过|但是|所以|因为|大家好|你好|您好|各位好|各位|嗨|哈喽|好的|好吧|"
    r"是的|没错|补充一下|自我介绍一下)"
)
# Japanese fillers; "あ", "あの" and "あと" only before a comma ("あのカフェ" is not a filler).
JA_FILLER = (
    r"(?:はじめまして|初めまして|こんにちは|こんばんは|おはようございます|おはよう|どうも|実は|じつは|ちなみに|"
    r"えっと|えーと|まあ|ねえ|そうそう|そういえば|ところで|それと|報告です|お知らせです|みなさん|皆さん|皆様|"
    r"よろしくお願いします|はい|うん|なるほど|(?:あの?|あと)(?=[、,]))"
)
SEP = r"[\s,，、!！.。:：~～-]*"
# Each item is an atomic group: a run like "哈哈哈哈" is consumed once and never re-split,
# which keeps these repetitions linear.
FILLERS = re.compile(r"(?>(?:" + EN_FILLER + "|" + ZH_FILLER + "|" + JA_FILLER + ")" + SEP + "){0,4}", re.IGNORECASE)

EN_DURABLE = (r"(?:from\s+now\s+on|going\s+forward|from\s+today\s+on|starting\s+(?:today|now)|"
               r"from\s+here\s+on(?:\s+out)?)")
ZH_DURABLE = r"(?:从今以后|从现在开始|从现在起|从今天开始|从今天起|以后|今后|往后)"
JA_DURABLE = r"(?:今後は?|以後は?|これからは|今日からは|次回からは?|次からは?)"
POLITE = r"(?:(?:please|pls)\s+|请你?|麻烦你?)?"
DURABLE = re.compile(POLITE + r"(?:" + EN_DURABLE + "|" + ZH_DURABLE + "|" + JA_DURABLE + r")[\s,，、:：]*",
                     re.IGNORECASE)

_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
# Day-level or later future times. Today / tonight / clock times alone are not plans worth keeping.
EN_TIME = (
    r"\b(?:tomorrow|the\s+day\s+after\s+tomorrow|"
    r"next\s+(?:week|month|year|weekend|semester|term|quarter|summer|winter|spring|fall|autumn|" + _WEEKDAY + r")|"
    r"this\s+(?:weekend|coming\s+\w+|summer|winter|spring|fall|autumn|month|year|week|" + _WEEKDAY + r")|"
    r"on\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\b|" + _WEEKDAY + r"s?|"
    + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"|"
    r"in\s+(?:january|february|march|april|may|june|july|august|september|october|november|december)|"
    r"(?:next|this)\s+(?:january|february|march|april|may|june|july|august|september|october|november|december)|"
    r"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|"
    r"in\s+(?:a|an|one|two|three|four|five|six|\d{1,2}|a\s+few|a\s+couple\s+of)\s+(?:days?|weeks?|months?|years?)|"
    r"by\s+(?:the\s+end\s+of|tomorrow|next)|(?:every|each)\s+(?:day|morning|evening|night|week|weekend|month|year|"
    + _WEEKDAY + r")|from\s+now\s+on|going\s+forward|later\s+this\s+(?:week|month|year)|"
    r"over\s+the\s+(?:weekend|holidays|summer)|after\s+(?:the\s+holidays|graduation)|"
    r"in\s+the\s+(?:spring|summer|fall|autumn|winter|new\s+year))\b"
)
ZH_NUM = r"[0-9０-９一二三四五六七八九十两]"
ZH_DAY = r"[一二三四五六日天]"
ZH_TIME = (
    r"(?:大后天|明天|后天|明早|明晚|明儿|明年|后年|下个?(?:周|星期|礼拜)" + ZH_DAY + r"?|下个?(?:周|星期|礼拜)末|"
    r"下个?月(?:初|中|底)?|下半年|下学期|(?<!上)周末|这个?(?:周|星期|礼拜)(?:" + ZH_DAY + r"|末)?|本周(?:"
    + ZH_DAY + r"|末)?|(?<![上下这本个])(?:周|星期|礼拜)" + ZH_DAY + r"|月底|月初|年底|年初|"
    + ZH_NUM + r"{1,3}月(?:" + ZH_NUM + r"{1,3}[日号])?|" + ZH_NUM + r"{1,3}[号日](?![子本元])|"
    r"过几天|过两天|过段时间|以后|今后|往后|从现在开始|从今天起|每天|每周|每个?月|每年|每晚|每早|"
    r"寒假|暑假|国庆|春节|过年|元旦|中秋|五一|端午|清明)"
)
# Japanese day-level or later times; a weekday needs 曜 ("金曜", "水曜日"), a bare 月/日 is a word part.
JA_DAY = r"[月火水木金土日]曜日?"
JA_TIME = (
    r"(?:明日|あした|あす|明後日|あさって|再来週|来週|再来月|来月|再来年|来年|今週末|週末|来週末|年末|年始|年明け|"
    r"月末|月初め|夏休み|冬休み|春休み|ゴールデンウィーク|GW|お盆|正月|毎週|毎月|毎年|毎日|毎朝|毎晩|"
    r"今度の|次の" + JA_DAY + r"|(?:今年|来年)の(?:春|夏|秋|冬)|今週の?" + JA_DAY + r"|" + JA_DAY + r"|"
    + ZH_NUM + r"{1,2}月" + ZH_NUM + r"{1,2}日|" + ZH_NUM + r"{1,2}月|" + ZH_NUM + r"{1,2}日(?!間)|今後)"
)
TIME_SEARCH = re.compile(EN_TIME + "|" + ZH_TIME + "|" + JA_TIME, re.IGNORECASE)

# Past times that may lead a life event ("last month I moved ...", "上个月我搬到了...", "先月...").
EN_PAST = (r"(?:last\s+(?:week|month|year|summer|winter|spring|fall|autumn|weekend)|yesterday|recently|"
           r"this\s+(?:past\s+)?(?:week|month|year|spring|summer)|a\s+(?:few\s+)?(?:days?|weeks?|months?|years?)\s+ago)")
ZH_PAST = (r"(?:上个?月|上个?(?:周|星期|礼拜)|去年|前年|今年|前几天|前阵子|前段时间|最近|昨天|前天|年初|上半年|"
           r"春天|夏天|秋天|冬天|" + ZH_NUM + r"{1,3}月份?)")
JA_PAST = (r"(?:先月|先週|去年|昨年|一昨年|今年|先日|最近|この(?:春|夏|秋|冬)|今年の(?:春|夏|秋|冬)|"
           r"去年の(?:春|夏|秋|冬)|昨日|" + ZH_NUM + r"{1,2}月(?:から|に)?)")
LEAD_ONLY = re.compile(
    r"(?>(?:" + EN_FILLER + "|" + ZH_FILLER + "|" + JA_FILLER + "|" + EN_DURABLE + "|" + ZH_DURABLE + "|"
    + JA_DURABLE + "|" + EN_TIME + "|" + ZH_TIME + "|" + JA_TIME + "|" + EN_PAST + "|" + ZH_PAST + "|"
    + JA_PAST + ")" + SEP + "){1,4}",
    re.IGNORECASE,
)

# A decision clause with nothing after it ("我们已经决定了，就选方案B") joins the next clause.
DECISION_ONLY = re.compile(
    r"(?:我们|咱们|我俩|咱俩|我)(?:已经|最终|最后|一致)?(?:决定|商量好|说好|约好|定好|定)了?|"
    r"(?:we|i)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|all\s+)?(?:decided|agreed)|"
    r"(?:話し合|相談し|検討し)(?:った|ての|た)結果|協議の結果|検討の結果",
    re.IGNORECASE,
)
