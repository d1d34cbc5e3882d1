"""Refuse to store (or log) what looks like a secret (W3 in docs/REQUIREMENTS.md: never store credentials).

The tool prompts teach the model not to store secrets; this module is the backstop on every
write path and in the log lines that quote user text. It looks for credential *shapes*
(vendor token formats, key blocks, card numbers, credentials inside URLs) and for a secret
*being stated* ("my bank password is ...", "密码：...", "card PIN: ...", "验证码 123456"), not
for sensitive topics: "I forgot my password", "the password policy changed", "密码学" and
"令牌桶算法" are ordinary facts and pass. It is a backstop, not an exhaustive detector.

Why the token shapes are our own rules and not Yelp's `detect-secrets` (evaluated at 1.5.0):

* Cost. Its 27 plugins took a median of about 220 microseconds on a 200-character chat
  message and about 9 ms on 8,000 characters; this check runs on every stored field and
  every logged query. Importing it takes about 0.1 s because it imports `requests`.
* Weight. It would add `requests` (with urllib3, certifi, charset-normalizer) to every
  operator's plugin environment; nothing else in the plugin needs them.
* Fit. It is built for scanning source files: its per-line entry point reads global
  settings and can *verify* a finding by sending it to the vendor's API, which a memory
  plugin must never do; only the undocumented `analyze_string` avoids that. Its keyword
  plugin wants quoted values (it misses `aws_secret_access_key = wJal...` and
  `password: hunter2`); it has no Google `AIza` rule, no card numbers and no natural
  language, and its entropy and public-IP plugins would refuse ordinary facts.
* Upkeep. No release since 1.5.0 (May 2024).

The token formats below are the vendors' public formats.

How it stays fast and linear-time on long or hostile input: every rule has literal anchors
(lowercase substrings such as "sk_live_", "password", "验证码"). `str.find` locates them and
the rule's expression is matched only *at* those positions. Token expressions start with a
negative lookbehind on the token's own character class, so of many anchors inside one long
run only the first is scanned; every other repetition is bounded. Unlabelled card numbers
are the one scan over the whole text, and its expression starts with a digit class.
"""

from __future__ import annotations

import re
from collections.abc import Callable

API_KEY = "an API key"
ACCESS_TOKEN = "an access token"
BEARER_TOKEN = "a bearer token"
PASSWORD = "a password"
PRIVATE_KEY = "a private key"
ONE_TIME_CODE = "a one-time code"
PIN = "a PIN"
CARD_NUMBER = "a bank card number"
CARD_CODE = "a card security code"
RECOVERY_PHRASE = "a recovery phrase"

REDACTED = "<redacted>"

# --- value heuristics ---------------------------------------------------------------------

# Words that follow "password is" / "password:" in ordinary sentences and are not a password.
_NOT_A_VALUE = frozenset(
    """
    a an the my your our his her their its this that these those it one mine yours ours theirs
    not no none null nil n/a na empty blank unknown unset same different also still now just
    only really very too so quite always never usually often sometimes probably definitely
    in on at for to from with without by of about like as and or but if when where which what
    who how why then than there here below above attached following provided
    required optional correct incorrect wrong right valid invalid weak strong short long
    secure insecure safe unsafe easy hard simple complex complicated new old
    secret private sensitive hidden masked redacted forgotten lost due set needed missing
    stored saved encrypted hashed changed reset expired written shared unchanged enabled
    disabled case-sensitive something anything nothing everything yes ok okay fine good bad
    great terrible stupid see ask use check be been being going gone enough available
    true false undefined todo tbd
    """.split()
)
_DESCRIPTIVE_ENDINGS = ("ed", "ing", "ly", "able", "ible", "ful", "less", "ive", "ous", "ent", "ant", "ish")
_QUOTES = "\"'`“”‘’「」『』"
_TRAILING = ".,;:!?)]}>。，；：！？）】》、"
_MASK_CHARS = frozenset("*•·xX.-_#?")


def _clean_value(raw: str) -> tuple[str, bool]:
    """The value without surrounding quotes and sentence punctuation; whether it was quoted."""
    quoted = bool(raw) and raw[0] in _QUOTES
    return raw.strip(_QUOTES).rstrip(_TRAILING).strip(_QUOTES), quoted


def _masked_or_placeholder(value: str) -> bool:
    """`****`, `xxx`, `${API_KEY}`, `<your key>`, `os.environ[...]`: no secret is written down."""
    return value[0] in "$<{%[(" or "environ" in value or "getenv" in value or set(value) <= _MASK_CHARS


def _describes(value: str) -> bool:
    """A lowercase word that describes the secret ("weak", "expired") rather than being it."""
    low = value.lower()
    if low in _NOT_A_VALUE:
        return True
    return value.isalpha() and value.islower() and len(value) >= 5 and low.endswith(_DESCRIPTIVE_ENDINGS)


def _stated(raw: str, min_len: int = 3) -> bool:
    """After a strong marker (password, api key): any value that is not an ordinary word."""
    value, quoted = _clean_value(raw)
    if not value or _masked_or_placeholder(value):
        return False
    return quoted or (len(value) >= min_len and not _describes(value))


_TOKEN_VALUE = re.compile(r"[A-Za-z0-9+/=_.~-]+")
_LETTER_DIGIT_CHANGE = re.compile(r"[0-9][A-Za-z]|[A-Za-z][0-9]")
_UPPER = re.compile(r"[A-Z]")


def _looks_random(raw: str) -> bool:
    """After a weak marker (token, secret, key): only a value that looks machine-made, such as
    `9f8e7d6c5b4a` or `AbXq...`; `group_123`, `bot:xxx:group_1` and `v1.2.3` are identifiers."""
    value, _ = _clean_value(raw)
    if len(value) < 12 or not _TOKEN_VALUE.fullmatch(value) or _masked_or_placeholder(value):
        return False
    if len(_LETTER_DIGIT_CHANGE.findall(value)) >= 3:
        return True
    return len(value) >= 20 and len(_UPPER.findall(value, 1)) >= 3 and not value.isupper()


def _looks_like_year(digits: str) -> bool:
    return len(digits) == 4 and 1900 <= int(digits) <= 2099


# --- rules ----------------------------------------------------------------------------------
#
# A rule is a handler called at each position where one of its anchors occurs; it returns the
# kind of secret found there or None. Anchors are literals: cased ones are searched in the text,
# lowercase ones in its lowercase copy, Chinese ones only when the text is not pure ASCII.

Handler = Callable[[str, int], "str | None"]

_I, _X = re.IGNORECASE, re.VERBOSE
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_IDENT_CHARS = _ALNUM | frozenset("_.-")


def _run_start(text: str, pos: int, chars: frozenset[str], limit: int) -> int:
    """Where the run of `chars` that ends at `pos` starts (looking back at most `limit` characters)."""
    start = pos
    while start > 0 and pos - start < limit and text[start - 1] in chars:
        start -= 1
    return start


def _shape(pattern: str, kind: str, flags: int = 0) -> Handler:
    """A token shape that starts at the anchor."""
    compiled = re.compile(pattern, flags)
    return lambda text, pos: kind if compiled.match(text, pos) else None


# Tokens that start with a short word and "_": sk_live_, ghp_, github_pat_, npm_, hf_.
_UNDERSCORE_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_])(?:(?P<stripe>[spr]k_(?:live|test)_[A-Za-z0-9]{16,})|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{30,}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,})"
)
# Tokens that start with a short word and "-": sk- (OpenAI style), xoxb-, xapp-, glpat-, GOCSPX-, pypi-.
_DASH_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_-])(?:(?P<sk>sk-[A-Za-z0-9_-]{20,})|xox[abopsr]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}"
    r"|glpat-[A-Za-z0-9_-]{20,}|(?P<key>GOCSPX-[A-Za-z0-9_-]{20,}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{40,}))"
)
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY")


def _underscore_token(text: str, pos: int) -> str | None:
    match = _UNDERSCORE_TOKEN.match(text, _run_start(text, pos, _ALNUM, 10))
    if not match:
        return None
    return API_KEY if match.group("stripe") else ACCESS_TOKEN


def _dash_token(text: str, pos: int) -> str | None:
    if text.startswith("-----BEGIN", pos):
        return PRIVATE_KEY if _PRIVATE_KEY.match(text, pos) else None
    match = _DASH_TOKEN.match(text, _run_start(text, pos, _ALNUM, 8))
    if not match:
        return None
    if match.group("sk"):
        body = match.group("sk")[3:]
        return API_KEY if any(c.isdigit() for c in body) and any(c.isalpha() for c in body) else None
    return API_KEY if match.group("key") else ACCESS_TOKEN


_TELEGRAM = re.compile(r":AA[A-Za-z0-9_-]{30,}")


def _telegram_token(text: str, pos: int) -> str | None:
    """`<8-10 digit bot id>:AA<about 33 characters>`; the anchor is the colon."""
    if not _TELEGRAM.match(text, pos):
        return None
    digits = pos - _run_start(text, pos, frozenset("0123456789"), 11)
    return ACCESS_TOKEN if 8 <= digits <= 10 else None


_BEARER = re.compile(r"(?<![A-Za-z])bearer\s{1,4}(?P<tok>[A-Za-z0-9._~+/-]{20,})", _I)


def _bearer(text: str, pos: int) -> str | None:
    match = _BEARER.match(text, pos)
    return BEARER_TOKEN if match and _looks_random(match.group("tok")) else None


_AWS = _shape(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])", API_KEY)

_CASED_RULES: list[tuple[str, tuple[Handler, ...]]] = [
    ("_", (_underscore_token,)),
    ("-", (_dash_token,)),
    ("AIza", (_shape(r"(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])", API_KEY),)),
    ("ya29.", (_shape(r"(?<![A-Za-z0-9_-])ya29\.[A-Za-z0-9_-]{20,}", ACCESS_TOKEN),)),
    ("hooks.slack.com/", (_shape(r"hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}", ACCESS_TOKEN),)),
    ("AKIA", (_AWS,)), ("ASIA", (_AWS,)), ("ABIA", (_AWS,)), ("ACCA", (_AWS,)),
    (":AA", (_telegram_token,)),
    # A JWT: base64url of a JSON header and of a JSON payload (both start `{"`, i.e. `eyJ`), a signature.
    ("eyJ", (_shape(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*", ACCESS_TOKEN),)),
    # scheme://user:password@host (the user may be empty, as in redis://:password@host).
    ("://", (_shape(r"://[^\s/:@]{0,64}:[^\s/@]{1,128}@[^\s/@]", PASSWORD),)),
]

# English statements, anchored at the head noun: "my bank password is ...", "api token: ...".
_EN_STATEMENT = re.compile(
    r"""
    (?<![A-Za-z])
    (?P<head>pass(?:word|wd|code|phrase)s? | pass\s(?:code|phrase) | pwd | apikeys? | tokens? | keys? | secrets?
       | credentials? | phrase | mnemonic)
    (?![A-Za-z])
    (?:\s{1,3}(?:for|to|of|on|at)\s{1,3}(?:(?:my|the|our|your|his|her|their)\s{1,3})?[\w.@'-]{1,40}
       (?:\s{1,3}account)?)?
    (?P<conn>\s{0,3}(?:[:=：＝]|是|为)|\s{1,3}(?:is|was|are|:=|=>|->)(?![A-Za-z])|'s)
    (?:\s{1,3}(?:now|still|currently|simply|just)(?![A-Za-z]))?
    \s{0,3}(?P<val>\S{1,128})
    """,
    _I | _X,
)
_QUALIFIER_BEFORE = re.compile(
    r"(?<![A-Za-z])(?:api|access|auth|refresh|(?P<session>session)|bot|oauth|app|personal\saccess|secret|private"
    r"|master|admin|root|encryption|signing|license|licence|wi-?fi|client|seed|recovery)[\s_-]?\Z",
    _I,
)


def _en_statement(text: str, pos: int) -> str | None:
    match = _EN_STATEMENT.match(text, pos)
    if not match:
        return None
    head, value = match.group("head").lower(), match.group("val")
    qualifier = _QUALIFIER_BEFORE.search(text, max(0, pos - 24), pos)
    # A session token is a secret; this plugin's own "session_key" is an identity key.
    qualified = qualifier is not None and not (qualifier.group("session") and head.startswith("key"))
    if head.startswith(("pass", "pwd")):
        if head == "pwd" and value[:1] in "/~":  # the shell's working directory
            return None
        return PASSWORD if _stated(value) else None
    if head in ("phrase", "mnemonic"):
        return RECOVERY_PHRASE if (qualified or head == "mnemonic") and _stated(value) else None
    kind = API_KEY if "key" in head or "secret" in head else ACCESS_TOKEN
    if qualified or head.startswith("apikey"):
        return kind if _stated(value) else None
    return kind if _looks_random(value) else None


# Code-style assignments: `aws_secret_access_key = ...`, `"client_secret": "..."`, `DB_PASSWORD=...`,
# matched from the start of the identifier that contains the anchor.
_ASSIGNMENT = re.compile(
    r"""(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,60})["']?[ \t]{0,3}(?::=|=>|[:=：＝])[ \t]{0,3}"""
    r"""(?P<val>["']?[^\s"',;]{1,128})"""
)
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_NOT_SECRET_KEY_WORDS = frozenset(
    "id ids name names type url uri path file dir policy length len min max expiry expires expiration ttl "
    "count hint field prompt manager rotation header public pub size format algorithm alg version prefix "
    "label description".split()
)
# "session_key", "user_key" and "scope_key" are identity keys in this plugin, not secrets.
_SECRET_QUALIFIERS = frozenset(
    "api secret access private auth client signing encryption master refresh bot oauth app".split()
)


# Checked first, forward from the anchor: is the identifier followed by `=` or `:` at all?
_CONNECTOR_AHEAD = re.compile(r"""[A-Za-z0-9_.-]{0,60}["']?[ \t]{0,3}[:=：＝]""")


def _assignment(text: str, pos: int) -> str | None:
    if not _CONNECTOR_AHEAD.match(text, pos):
        return None
    start = _run_start(text, pos, _IDENT_CHARS, 61)
    match = _ASSIGNMENT.match(text, start)
    if not match:
        return None
    words = [w.lower() for w in _KEY_WORDS.findall(match.group("key"))]
    if not words or _NOT_SECRET_KEY_WORDS.intersection(words):
        return None
    last, value = words[-1], match.group("val")
    if last.endswith(("password", "passwd", "passcode", "passphrase")) or last in ("pwd", "pass"):
        if len(words) == 1 and last == "pass":
            return None  # "pass: ..." is a boarding pass or a mountain pass more often than a password
        if last == "pwd" and value.lstrip("\"'")[:1] in "/~":
            return None
        return PASSWORD if _stated(value, min_len=4) else None
    if last.endswith("token") or last in ("credential", "credentials", "auth"):
        kind = ACCESS_TOKEN
    elif last.endswith("secret") or last in ("key", "apikey"):
        kind = API_KEY
    else:
        return None
    if len(words) == 1 and last in ("key", "auth"):
        return None  # a bare "key: ..." is prose far more often than code
    if last == "apikey" or _SECRET_QUALIFIERS.intersection(words[:-1]):
        return kind if _stated(value, min_len=4) else None
    return kind if _looks_random(value) else None  # `sort_key = created_at` is not a secret


_PIN = re.compile(
    r"""(?<![A-Za-z])(?P<pin>pin)(?:\s?(?:code|number|no\.?)|码|号)?(?![A-Za-z])
         (?P<conn>\s{1,3}(?:is|was)\s{1,3}|\s{0,3}(?:[:=：＝]|是|为)\s{0,3}|\s{1,3})
         ["'“]?[0-9]{4,8}(?![0-9])""",
    _I | _X,
)


def _pin(text: str, pos: int) -> str | None:
    match = _PIN.match(text, pos)
    # A bare space joins only the upper-case abbreviation: "card PIN 4821", not "pin 1234 to the board".
    return PIN if match and (match.group("conn").strip() or match.group("pin") == "PIN") else None


# "<qualifier> code|passcode|password|pin <digits>": a one-time code, or a door/alarm code.
_CODE_AFTER_HEAD = re.compile(
    r"(?<![A-Za-z])(?:(?:pass)?code|password|pin)(?![A-Za-z])[^0-9\n]{0,16}(?P<code>[0-9]{4,8})"
    r"(?![0-9])",
    _I,
)
_CODE_QUALIFIER = re.compile(
    r"(?<![A-Za-z])(?:(?P<otp>verification|confirmation|security|login|log-?in|sign-?in|2fa|mfa|auth(?:entication)?"
    r"|backup|recovery|sms|text|one[\s-]?time|temporary)|(?P<door>door|gate|alarm|lock|safe|garage|entry|keypad"
    r"|locker|access))[\s-]?\Z",
    _I,
)


def _qualified_code(text: str, pos: int) -> str | None:
    match = _CODE_AFTER_HEAD.match(text, pos)
    if not match or _looks_like_year(match.group("code")):
        return None
    qualifier = _CODE_QUALIFIER.search(text, max(0, pos - 20), pos)
    if not qualifier:
        return None
    return ONE_TIME_CODE if qualifier.group("otp") else PIN


_OTP = re.compile(r"(?:otp|2fa)(?![A-Za-z])[^0-9\n]{0,16}(?P<code>[0-9]{4,8})(?![0-9])", _I)


def _otp(text: str, pos: int) -> str | None:
    """"OTP: 123456", "TOTP 123456", "2FA 123456"."""
    prev, prev2 = text[pos - 1:pos], text[max(0, pos - 2):max(0, pos - 1)]
    if prev.isalpha() and not (prev in "tThH" and not prev2.isalpha()):  # TOTP and HOTP, not "potpourri"
        return None
    match = _OTP.match(text, pos)
    return ONE_TIME_CODE if match and not _looks_like_year(match.group("code")) else None


_CARD_CODE = re.compile(r"(?<![A-Za-z])(?:cvv2?|cvc2?|csc)(?![A-Za-z])[^0-9\n]{0,8}[0-9]{3,4}(?![0-9])",
                        _I)
_FULL_NUMBER = r"[^0-9\n]{0,12}[0-9](?:[ -]?[0-9]){11,18}(?![ -]?[0-9])"
_CARD_LABEL = re.compile(rf"card(?P<suffix>\s?(?:number|no\.?|num|\#))?(?![A-Za-z]){_FULL_NUMBER}", _I)
_CARD_KIND_BEFORE = re.compile(r"(?<![A-Za-z])(?:credit|debit|bank)\s?\Z", _I)


def _card_code(text: str, pos: int) -> str | None:
    return CARD_CODE if _CARD_CODE.match(text, pos) else None


def _labelled_card(text: str, pos: int) -> str | None:
    """An explicit "card number" / "credit card" followed by a full number, valid or not."""
    match = _CARD_LABEL.match(text, pos)
    if not match or not (match.group("suffix") or _CARD_KIND_BEFORE.search(text, max(0, pos - 8), pos)):
        return None
    return CARD_NUMBER


_LOWER_RULES: list[tuple[str, tuple[Handler, ...]]] = [
    ("bearer", (_bearer,)),
    ("authorization", (_shape(r"(?<![A-Za-z])authorization\s{0,4}:\s{0,4}basic\s{1,4}[A-Za-z0-9+/]{8,}", PASSWORD,
                              _I),)),
    ("pass", (_qualified_code, _en_statement, _assignment)),
    ("pwd", (_en_statement, _assignment)),
    ("apikey", (_en_statement, _assignment)),
    ("token", (_en_statement, _assignment)),
    ("key", (_en_statement, _assignment)),
    ("secret", (_en_statement, _assignment)),
    ("credential", (_en_statement, _assignment)),
    ("phrase", (_en_statement,)),
    ("mnemonic", (_en_statement,)),
    ("auth", (_assignment,)),
    ("pin", (_pin, _qualified_code)),
    ("code", (_qualified_code,)),
    ("otp", (_otp,)),
    ("2fa", (_otp,)),
    ("cv", (_card_code,)),
    ("csc", (_card_code,)),
    ("card", (_labelled_card,)),
]

# Chinese statements: 密码是 abc123 / 密码：hunter2 / 我的密码 hunter2 / 助记词：...
# The value must be ASCII (or full-width ASCII): "密码是什么" and "密码学" pass.
_ZH_STATEMENT = re.compile(
    r"(?P<noun>密码|口令|密钥|秘钥|私钥|令牌|助记词)"
    r"(?P<conn>(?:\s{0,3}(?:是|为|就是|改成了?|改为|换成了?|设为|设置为|设成了?|[:：=＝])){0,3})"
    r"\s{0,3}(?P<val>[\"'“‘「]?[!-~！-～]{3,128})"
)


def _zh_statement(text: str, pos: int) -> str | None:
    match = _ZH_STATEMENT.match(text, pos)
    if not match:
        return None
    raw = match.group("val")
    value, _ = _clean_value(raw)
    if match.group("conn"):
        ok = _stated(raw)
    else:  # no verb: only a value that is not a word ("密码 reset 了" passes, "我的密码 hunter2" does not)
        ok = len(value) >= 4 and not value.isalpha() and not _masked_or_placeholder(value)
    if not ok:
        return None
    noun = match.group("noun")
    if noun == "助记词":
        return RECOVERY_PHRASE
    return ACCESS_TOKEN if noun == "令牌" else API_KEY if noun in ("密钥", "秘钥", "私钥") else PASSWORD


_ZH_OTP_WORDS = ("验证", "校验", "动态", "短信", "确认", "登录", "动态密")
_ZH_CODE_DIGITS = re.compile(r"[^0-9\n]{0,16}(?P<code>[0-9]{3,8})(?![0-9])")


def _zh_code(text: str, pos: int) -> str | None:
    """验证码 123456 (and 校验码, 动态码, 动态密码, 短信码, 确认码, 登录码); 安全码 123 is a card code."""
    before = text[max(0, pos - 3):pos]
    otp = before.endswith(_ZH_OTP_WORDS)
    if not otp and not before.endswith("安全"):
        return None
    match = _ZH_CODE_DIGITS.match(text, pos + 1)
    if not match or _looks_like_year(match.group("code")):
        return None
    if len(match.group("code")) >= 4:
        return ONE_TIME_CODE
    return None if otp else CARD_CODE


_ZH_CARD_NUMBER = re.compile(rf"号?{_FULL_NUMBER}")
_ZH_CARD_CODE = re.compile(r"背[^0-9\n]{0,8}[0-9]{3,4}(?![0-9])")


def _zh_card(text: str, pos: int) -> str | None:
    """信用卡 / 银行卡 / 储蓄卡 / 借记卡 / 卡号 followed by a full number; 卡背 123 (the code on the back)."""
    if _ZH_CARD_CODE.match(text, pos + 1):
        return CARD_CODE
    labelled = text[max(0, pos - 2):pos] in ("信用", "银行", "储蓄", "借记") or text.startswith("号", pos + 1)
    return CARD_NUMBER if labelled and _ZH_CARD_NUMBER.match(text, pos + 1) else None


_CJK_RULES: list[tuple[str, tuple[Handler, ...]]] = [
    ("码", (_zh_code,)),  # before 密码, so that 动态密码 884422 reads as a one-time code
    ("卡", (_zh_card,)),
    *((noun, (_zh_statement,)) for noun in ("密码", "口令", "密钥", "秘钥", "私钥", "令牌", "助记词")),
]


# --- card numbers without a label -------------------------------------------------------------

# Starts with a digit class so `re` skips non-digits quickly; the lookbehinds (placed after the
# first digit) keep a match from starting inside a longer number or after a "+" (a phone number).
_CARD_CANDIDATE = re.compile(
    r"[0-9](?<![0-9+＋][0-9])(?<![0-9][ -][0-9])(?:[ -]?[0-9]){12,18}(?![ -]?[0-9])"
)
_NOT_A_CARD_CONTEXT = ("order", "tracking", "invoice", "ticket", "isbn", "phone", "tel", "mobile", "fax", "订单",
                       "单号", "运单", "快递", "物流", "发票", "电话", "手机", "编号", "工号", "学号", "身份证")
_GROUPING = re.compile(r"[ -]")


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _issuer_length_ok(d: str) -> bool:
    """The number has a card issuer's prefix and that issuer's length."""
    n, p2, p3, p4 = len(d), int(d[:2]), int(d[:3]), int(d[:4])
    if p2 // 10 == 4:
        return n in (13, 16, 19)  # Visa
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16  # Mastercard
    if p2 in (34, 37):
        return n == 15  # American Express
    if p2 in (36, 38, 39) or 300 <= p3 <= 305:
        return 14 <= n <= 16  # Diners Club
    if 3528 <= p4 <= 3589:
        return 16 <= n <= 19  # JCB
    if p2 == 50 or 56 <= p2 <= 69:
        return 13 <= n <= 19  # UnionPay (62), Discover (6011, 64, 65), Maestro
    return False


def _grouped_like_a_card(candidate: str) -> bool:
    """Unseparated, or grouped as printed on a card (4-4-4-4[-3], 4-6-5, 4-6-4), not like a phone number."""
    sizes = [len(g) for g in _GROUPING.split(candidate)]
    if len(sizes) == 1 or (set(sizes[:-1]) == {4} and sizes[-1] <= 4):
        return True
    return sizes in ([4, 6, 5], [4, 6, 4], [6, 13], [6, 12])


def _card_number_found(text: str, low: str) -> bool:
    for match in _CARD_CANDIDATE.finditer(text):
        candidate = match.group(0)
        digits = _GROUPING.sub("", candidate)
        if len(set(digits)) == 1 or not _grouped_like_a_card(candidate):
            continue
        if not _issuer_length_ok(digits) or not _luhn_ok(digits):
            continue
        before = low[max(0, match.start() - 24):match.start()]
        if any(word in before for word in _NOT_A_CARD_CONTEXT):
            continue
        return True
    return False


# --- entry points -----------------------------------------------------------------------------

# Full-width letters and digits (typed with a Chinese IME, or to dodge a filter) and zero-width
# characters are folded first. Full-width punctuation alone is common in Chinese and is matched
# as it is, which saves a pass over every Chinese text.
_NEEDS_FOLDING = re.compile("[０-９Ａ-Ｚａ-ｚ\u200b-\u200d\u2060\ufeff\u00ad]")
_FOLD: dict[int, int | None] = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_FOLD.update({0x3000: 0x20, 0x200B: None, 0x200C: None, 0x200D: None, 0x2060: None, 0xFEFF: None, 0x00AD: None})


def _prepare(text: str) -> tuple[str, str]:
    """The text to match (full-width ASCII folded) and a lowercase copy of the same length."""
    if not text.isascii() and _NEEDS_FOLDING.search(text):
        text = text.translate(_FOLD)
    low = text.lower()
    if len(low) != len(text):  # a few characters (such as "İ") lowercase to two
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return text, low


def _scan(haystack: str, text: str, rules: list[tuple[str, tuple[Handler, ...]]]) -> str | None:
    for anchor, handlers in rules:
        pos = haystack.find(anchor)
        while pos != -1:
            for handler in handlers:
                kind = handler(text, pos)
                if kind:
                    return kind
            pos = haystack.find(anchor, pos + 1)
    return None


def secret_kind(text: str) -> str | None:
    """The kind of secret the text seems to contain ("an API key", "a password", ...), or None."""
    if not text:
        return None
    text, low = _prepare(text)
    kind = _scan(text, text, _CASED_RULES) or _scan(low, text, _LOWER_RULES)
    if not kind and not text.isascii():
        kind = _scan(text, text, _CJK_RULES)
    if not kind and _card_number_found(text, low):
        kind = CARD_NUMBER
    return kind


_WHITESPACE = re.compile(r"\s+")


def redact_for_log(text: str, limit: int = 40) -> str:
    """What a log line may quote of user text: "<redacted>" if the text looks like a secret,
    otherwise its first `limit` characters on one line (control characters become spaces)."""
    text = text or ""
    if secret_kind(text):
        return REDACTED
    line = "".join(c if c.isprintable() else " " for c in text)
    line = _WHITESPACE.sub(" ", line).strip()[: max(limit, 0)].rstrip()
    return REDACTED if secret_kind(line) else line
