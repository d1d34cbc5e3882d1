"""When a sentence states nothing to keep: questions, hedges, reported speech, jokes, commands.

Precision comes before recall: a wrong memory is injected into every later prompt, a missed one
only costs a manual `remember`. A whole sentence is declined when it asks, hedges or supposes,
reports or quotes someone, or tells the bot to do something; a message is declined whole when it
is a joke or role play. Each pattern holds the English, Chinese and Japanese words of one reason
(a message may mix languages); a new rule language adds its words here. Japanese puts the verb
last, so its questions and requests are found at the end of a clause (`QUESTION_JA`,
`COMMAND_JA`), and its kanji are chosen not to collide with Chinese ("何" but not "任何").
"""

from __future__ import annotations

import re

QUESTION_EN = re.compile(
    r"(?:do|does|did|can|could|would|will|should|shall|is|are|am|was|were|have|has|had|what|who|whom|whose|"
    r"where|when|why|how|which|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|can't|couldn't|shouldn't|"
    r"anyone|anybody|wanna)\b",
    re.IGNORECASE,
)
QUESTION_ZH = re.compile(
    r"什么|怎么|怎样|为什么|为啥|干嘛|啥|咋|哪|谁|几点|几号|几岁|几时|多少|多大|多久|是不是|有没有|能不能|"
    r"会不会|要不要|可不可以|对不对|好不好|行不行|是否|难道|吗|[呢么][\s~～]*$"
)
# Searched in a clause: question words, "…っけ", and a clause that ends in the question particle か.
QUESTION_JA = re.compile(
    r"(?<![任如为])何(?!度も|年も|か[^？?]|でも|とか|もかも|より)|誰|どこ|どちら(?!も)|どっち(?!も)|いつ(?!も|か|まで|の間|で)|なぜ|"
    r"なんで(?!も|す|し)|どうして|どう(?!も|ぞ)|どれ|(?<!ほ)どの|どんな|いくつ|いくら|っけ|でしょうか|だろうか|"
    r"(?:です|ます|でした|ました|ません|ない|る|た|の|ん)か(?:な|ね|しら)?[\s。！!〜～…]*$|かな[ぁあー〜～]*[\s。！!…]*$|"
    r"の[?？]|知って(?:る|ます)$"
)
CONFIRMATION = re.compile(
    r"\b(?:right|correct|isn't\s+it|aren't\s+i|am\s+i|don't\s+i|didn't\s+i|is\s+that\s+(?:right|ok|okay|true)|"
    r"true)\b|对吗|是吗|对不对|是不是|对吧|是吧|没错吧|没错吗|真的吗|ですよね|だよね|でしょ[うっ]?$|よね[?？]",
    re.IGNORECASE,
)
FIRST_PERSON = re.compile(r"(?:i|i'm|im|i've|i'll|my|me|we|we're|our)\b|我|私|僕|俺", re.IGNORECASE)
HEDGE = re.compile(
    r"\b(?:if|unless|suppose|supposing|imagine|what\s+if|would|wouldn't|could|couldn't|might|maybe|perhaps|"
    r"probably|possibly|likely|unlikely|i\s+think|i\s+thought|i\s+guess|i\s+suppose|i\s+believe|i\s+feel\s+like|"
    r"i\s+wonder|not\s+sure|unsure|don't\s+know|dunno|idk|wish|hopefully|hope|in\s+case|pretend|let's\s+say|"
    r"as\s+if|kind\s+of|kinda|sort\s+of|sorta|seems?|seemed|supposedly|allegedly|thinking\s+(?:about|of)|"
    r"considering|wondering|hoping|someday|one\s+day|sometime|dreamt|dreamed|if\s+only)\b|'d\b|"
    r"(?<!in )(?<!by )(?<!of )(?<!since )(?<!until )(?<!early )(?<!late )(?<!mid-)(?<!this )(?<!next )"
    r"\bmay\b(?!\s*\d)|"
    r"如果|假如|假设|假使|倘若|要是|万一|的话|除非|设想|想象|可能|也许|或许|大概|大约|说不定|不一定|不确定|"
    r"不知道|不清楚|好像|似乎|貌似|估计|应该是|觉得|感觉|我猜|但愿|希望|比如|例如|打个比方|看情况|梦见|梦到|做梦|"
    # Japanese: if, maybe, I think (not the intention "…ようと思う"), someday, as if, undecided.
    r"もし|[っだ]たら|(?<!あ)たら[、,]|れば[、,]|なら[、,\s]|ならば|(?<=[るたいのん])なら(?![なずわ])|かも|たぶん|多分|"
    r"おそらく|恐らく|(?<!う)と思|だろう|でしょう(?!か)|みたい|いつか|そのうち|できれば|できたら|迷って|悩んで|"
    r"未定|わから(?:ない|ん)|分から(?:ない|ん)|わかんない|気がする|っぽい|ような(?:もん|もの|気)|"
    r"みたいな(?:もん|もの)|まだ決まって",
    re.IGNORECASE,
)
REPORTED = re.compile(
    r"\b(?:said|says|saying|told|tells|asked|asks|claims?|claimed|according\s+to|heard|hears|rumou?rs?|"
    r"rumou?red|reportedly|apparently|quoting|wrote|texted|messaged)\b|[\"“”「」『』«»]|"
    r"听说|据说|传说|告诉我|跟我说|问我|讲过|透露|转述|八卦|传言|(?<![小听好实话是如白便来])说(?![好明唱真实])|"
    # Japanese: "…らしい" (not "素晴らしい"), "…って聞いた", "…と言ってた", "…んだって", "…そうです".
    r"(?<=[るたいだんう])らしい|って(?:聞い|聞き|言って|言われ|話して|連絡|噂|書いて|メール)|"
    r"と(?:聞い|聞き|言って|言われ|書いて)|言って(?:た|いた|ました)|んだって|だって[よねさ]*[\s。！!…]*$|"
    r"(?<=[るた])そう(?:です|だ|よ|な)|によると|によれば|噂|伝え聞",
    re.IGNORECASE,
)
# "Tom: I'm moving" / "小王：我要走了" reads as a quoted chat line.
SPEAKER_PREFIX = re.compile(
    r"(?!(?:the\s+)?(?:rules?|policy)\s)[A-Za-z][\w .'-]{0,20}:\s|"
    r"(?!(?:本群|群)?的?(?:群规|规矩|规定))[\u4e00-\u9fff]{1,6}[:：]"
)
JOKE = re.compile(
    r"\b(?:jk|j/k|just\s+kidding|kidding|joking|role\s*-?\s*play|let's\s+play|pretend|hypothetically|"
    r"in\s+character|as\s+a\s+joke)\b|/s\b|开玩笑|开个玩笑|骗你的|逗你的|逗你玩|瞎说的|假的啦|角色扮演|扮演|假装|玩个游戏|"
    # Irony markers: crying-laughing and winking faces, 狗头 / doge, 反话 ("said the other way round").
    r"[\U0001F602\U0001F923\U0001F606\U0001F61C\U0001F61D\U0001F92A\U0001F643\U0001F60F\U0001F639]|"
    r"狗头|\[doge\]|反话|"
    # Japanese: 冗談, 嘘です, なんちゃって, (笑) and a closing 笑 / w / 草, キリッ, ドヤ.
    r"冗談|(?:嘘|うそ|ウソ)(?:です|だよ|だけど|だから|w)|大嘘|なんちゃって|なんてね|ネタ(?:です|だよ)|キリッ|ドヤ|"
    r"[（(]笑[）)]|(?<=[\u3041-\u30fa])(?:笑|草)(?=[\s。！!、…]|$)|(?<=[\u3041-\u30fa\u4e00-\u9fff])[wｗ]+(?![a-z])",
    re.IGNORECASE,
)
# The message sets up who the bot is ("you are DAN", "记住：你是一只猫娘"): role play, not facts.
PERSONA = re.compile(
    r"\b(?:you\s+are|you're|u\s+r|ur)\s+(?:now\s+)?(?:a|an|my|the|called|named|(?-i:[A-Z]{2,}))\b|"
    r"\byour\s+name\s+is\b|\bact\s+as\b|你(?:现在|以后|从现在开始|就)?(?:是|叫|扮演)(?!不是|谁|什么|哪)|叫你|当我的|"
    r"(?:あなた|貴方|きみ|お前|おまえ)(?:は|の名前は)|(?<![\u3041-\u30fa\u4e00-\u9fff])君は",
    re.IGNORECASE,
)
# Episodes must stand on their own; "以后别这样了" / "I'll do it tomorrow" need the chat around them.
VAGUE_REFERENCE = re.compile(
    r"\b(?:it|this|these|those)\b(?!\s+(?:week|weekend|month|year|summer|winter|spring|fall|autumn|semester|term|"
    r"quarter|coming|monday|tuesday|wednesday|thursday|friday|saturday|sunday|group|chat|channel)\b)|"
    r"[这那](?:样|么|些|件事|种|个(?!月|星期|礼拜|周末|学期))|你|"
    r"これ(?!から|まで)|それ(?!ぞれ|から|で|に)|あれ(?!ば)|あなた|お前|その件|あの件",
    re.IGNORECASE,
)
COMMAND = re.compile(
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
# Searched in the first sentence: a Japanese request ends the sentence or comes before a colon
# ("この文章を英語に翻訳して：…", "おすすめの本を5冊教えて"); "呼んでください" (a name) and
# "投稿してください" (a rule for the chat) are not requests to the bot.
COMMAND_JA = re.compile(
    r"(?:(?:翻訳|英訳|和訳|要約|作成|生成|説明|添削|計算|比較|提案|整理|変換|紹介|チェック|確認|予約|検索|"
    r"リストアップ)し|訳し|まとめ|書い|教え|調べ|作っ|探し|考え|直し|描い|読ん|答え|選ん|送っ)"
    r"(?:て|で)(?:ください|下さい|くれ|くれる|くれない|くれます|ほしい|欲しい|もらえ|ちょうだい)?"
    r"(?:[\s。！!?？〜～…]*$|[：:])"
)
TRANSIENT = re.compile(
    r"\b(?:today|tonight|right\s+now|at\s+the\s+moment|this\s+(?:morning|afternoon|evening)|for\s+now|"
    r"temporarily|for\s+a\s+while)\b|今天|今晚|这会儿|刚才|刚刚|此刻|这几天|这两天|暂时|临时|一会儿|待会|等会|"
    r"今日(?!から)|今夜|今晩|今朝|さっき|先ほど|今から|とりあえず|一時的|しばらく",
    re.IGNORECASE,
)

# "remember ..." followed by a reference instead of a fact ("remember this", "记住了").
REMEMBER_BAD = re.compile(r"(?:this|that|it|to|when|the\s+time)\b|[了吗住这那它]", re.IGNORECASE)
# "记一下我的手机号吧" / "remember my address": names a slot but gives no value.
SLOT_WITHOUT_VALUE = re.compile(
    r"(?:number|address|name|birthday|email|phone|account|plate|(?<![0-9０-９日])号码?|手机号|电话|地址|名字|生日|邮箱|微信号?|账号|车牌号?|"
    r"番号|住所|名前|誕生日|メアド|メールアドレス|電話番号)"
    r"[\s吧哦啊呀~～!！.。]*$",
    re.IGNORECASE,
)
