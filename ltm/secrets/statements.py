"""Rule set "stated credentials": a secret being told, in English, Chinese, Japanese or code.

"my bank password is ...", "password Fern!ght42", "api token: ...", `DB_PASSWORD=...`,
`"client_secret": "..."`, "密码：...", "助记词：...", "パスワードは...です". Talking about a secret
is not telling one: "I forgot my password", "the password policy changed", "密码学", "令牌桶算法"
and "パスワードを忘れた" pass. The value after the marker decides (`values.py`): after a strong
marker (password, api key) anything that is not an ordinary word, after a weak one (token,
secret, key) only a value that looks machine-made, and after a password with no "is" or colon
only a value that cannot be a word: letters with digits or symbols inside.
"""

from __future__ import annotations

import re

from .kinds import ACCESS_TOKEN, API_KEY, PASSWORD, RECOVERY_PHRASE
from .rules import IDENT_CHARS, IGNORECASE, VERBOSE, RuleSet, run_start
from .values import clean_value, looks_random, masked_or_placeholder, stated

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
    IGNORECASE | VERBOSE,
)
_QUALIFIER_BEFORE = re.compile(
    r"(?<![A-Za-z])(?:api|access|auth|refresh|(?P<session>session)|bot|oauth|app|personal\saccess|secret|private"
    r"|master|admin|root|encryption|signing|license|licence|wi-?fi|client|seed|recovery)[\s_-]?\Z",
    IGNORECASE,
)


# "password Fern!ght42": no connector, so the value itself must look like a password.
_EN_BARE_PASSWORD = re.compile(
    r"(?<![A-Za-z])(?:pass(?:word|wd|code|phrase)|pwd)\s{1,3}(?P<val>[\"'“‘]?[!-~]{6,64})", IGNORECASE
)
_INNER_SYMBOL = re.compile(r"[A-Za-z][^A-Za-z0-9\s]+[A-Za-z0-9]|[0-9][^A-Za-z0-9\s]+[A-Za-z]")


def _bare_password(text: str, pos: int) -> str | None:
    match = _EN_BARE_PASSWORD.match(text, pos)
    if not match:
        return None
    value, _ = clean_value(match.group("val"))
    if len(value) < 6 or "://" in value or masked_or_placeholder(value) or not any(c.isalpha() for c in value):
        return None
    mixed = any(c.isdigit() for c in value) or _INNER_SYMBOL.search(value)
    return PASSWORD if mixed else None


def _en_statement(text: str, pos: int) -> str | None:
    match = _EN_STATEMENT.match(text, pos)
    if not match:
        return _bare_password(text, pos)
    head, value = match.group("head").lower(), match.group("val")
    qualifier = _QUALIFIER_BEFORE.search(text, max(0, pos - 24), pos)
    # A session token is a secret; this plugin's own "session_key" is an identity key.
    qualified = qualifier is not None and not (qualifier.group("session") and head.startswith("key"))
    if head.startswith(("pass", "pwd")):
        if head == "pwd" and value[:1] in "/~":  # the shell's working directory
            return None
        return PASSWORD if stated(value) else None
    if head in ("phrase", "mnemonic"):
        return RECOVERY_PHRASE if (qualified or head == "mnemonic") and stated(value) else None
    kind = API_KEY if "key" in head or "secret" in head else ACCESS_TOKEN
    if qualified or head.startswith("apikey"):
        return kind if stated(value) else None
    return kind if looks_random(value) else None


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
    start = run_start(text, pos, IDENT_CHARS, 61)
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
        return PASSWORD if stated(value, min_len=4) else None
    if last.endswith("token") or last in ("credential", "credentials", "auth"):
        kind = ACCESS_TOKEN
    elif last.endswith("secret") or last in ("key", "apikey"):
        kind = API_KEY
    else:
        return None
    if len(words) == 1 and last in ("key", "auth"):
        return None  # a bare "key: ..." is prose far more often than code
    if last == "apikey" or _SECRET_QUALIFIERS.intersection(words[:-1]):
        return kind if stated(value, min_len=4) else None
    return kind if looks_random(value) else None  # `sort_key = created_at` is not a secret


# Chinese and Japanese statements: 密码是 abc123 / 密码：hunter2 / 我的密码 hunter2 / 助记词：... /
# パスワードは sakura2024 です / パスワード：... The value must be ASCII (or full-width ASCII):
# "密码是什么", "密码学" and "パスワードを変更した" pass.
_CJK_STATEMENT = re.compile(
    r"(?P<noun>密码|口令|密钥|秘钥|私钥|令牌|助记词|パスワード|パスコード|合言葉)"
    r"(?P<conn>(?:\s{0,3}(?:是|为|就是|改成了?|改为|换成了?|设为|设置为|设成了?|は|が|って|を|に変えて|[:：=＝])){0,3})"
    r"\s{0,3}(?P<val>[\"'“‘「]?[!-~！-～]{3,128})"
)


def _cjk_statement(text: str, pos: int) -> str | None:
    match = _CJK_STATEMENT.match(text, pos)
    if not match:
        return None
    raw = match.group("val")
    value, _ = clean_value(raw)
    if match.group("conn"):
        ok = stated(raw)
    else:  # no verb: only a value that is not a word ("密码 reset 了" passes, "我的密码 hunter2" does not)
        ok = len(value) >= 4 and not value.isalpha() and not masked_or_placeholder(value)
    if not ok:
        return None
    noun = match.group("noun")
    if noun == "助记词":
        return RECOVERY_PHRASE
    return ACCESS_TOKEN if noun == "令牌" else API_KEY if noun in ("密钥", "秘钥", "私钥") else PASSWORD


STATED_CREDENTIALS = RuleSet(
    "stated credentials",
    lower=(
        ("pass", (_en_statement, _assignment)),
        ("pwd", (_en_statement, _assignment)),
        ("apikey", (_en_statement, _assignment)),
        ("token", (_en_statement, _assignment)),
        ("key", (_en_statement, _assignment)),
        ("secret", (_en_statement, _assignment)),
        ("credential", (_en_statement, _assignment)),
        ("phrase", (_en_statement,)),
        ("mnemonic", (_en_statement,)),
        ("auth", (_assignment,)),
    ),
    cjk=tuple((noun, (_cjk_statement,)) for noun in ("密码", "口令", "密钥", "秘钥", "私钥", "令牌", "助记词",
                                                    "パスワード", "パスコード", "合言葉")),
)
