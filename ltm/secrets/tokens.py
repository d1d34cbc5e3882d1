"""Rule set "vendor tokens": credential shapes that need no words around them.

Vendor token formats (Stripe, Slack, Google, GitHub, GitLab, AWS, OpenAI-style `sk-`, Telegram,
Hugging Face, npm, PyPI), JWTs, private key blocks, bearer and basic authorization, and
credentials inside URLs. The formats are the vendors' public ones. Token expressions start with a
negative lookbehind on the token's own character class, so of many anchors inside one long run
only the first is scanned.
"""

from __future__ import annotations

import re

from .kinds import ACCESS_TOKEN, API_KEY, BEARER_TOKEN, PASSWORD, PRIVATE_KEY
from .rules import ALNUM, DIGITS, IGNORECASE, RuleSet, run_start, shape
from .values import looks_random, masked_or_placeholder

# Tokens that start with a short word and "_": sk_live_, ghp_, github_pat_, npm_, hf_.
_UNDERSCORE_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_])(?:(?P<stripe>[spr]k_(?:live|test)_[A-Za-z0-9]{16,})|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{30,}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,})"
)
# Tokens that start with a short word and "-": sk- (OpenAI style), xoxb-, xapp-, glpat-, GOCSPX-, pypi-.
_DASH_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_-])(?:(?P<sk>sk-[A-Za-z0-9_-]{16,})|xox[abopsr]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}"
    r"|glpat-[A-Za-z0-9_-]{20,}|(?P<key>GOCSPX-[A-Za-z0-9_-]{20,}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{40,}))"
)
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY")


def _underscore_token(text: str, pos: int) -> str | None:
    match = _UNDERSCORE_TOKEN.match(text, run_start(text, pos, ALNUM, 10))
    if not match:
        return None
    return API_KEY if match.group("stripe") else ACCESS_TOKEN


def _dash_token(text: str, pos: int) -> str | None:
    if text.startswith("-----BEGIN", pos):
        return PRIVATE_KEY if _PRIVATE_KEY.match(text, pos) else None
    match = _DASH_TOKEN.match(text, run_start(text, pos, ALNUM, 8))
    if not match:
        return None
    if match.group("sk"):
        return API_KEY if _sk_key(match.group("sk")[3:]) else None
    return API_KEY if match.group("key") else ACCESS_TOKEN


_WORD_SEPARATORS = re.compile(r"[-_]+")
# Longer runs of letters are not words but a key, also when lowercased on the way (tags are).
_LONGEST_WORD = 15


def _sk_key(body: str) -> bool:
    """Is what follows `sk-` a key? From 20 characters on, anything but a number or words (issue 35,
    finding 8: `sk-AbCdEfGhIjKlMnOpQrSt` is a key though it has no digit); a shorter one (an `sk-` key
    of 20 in all, issue 21) must look machine-made. Words are parts of at most 15 letters, each written
    as words are (lower case, capitalised or all capitals): "sk-learn-pipeline-guide", "sk-SK-Bratislava"."""
    if len(body) < 20:
        return looks_random(body)
    if not any(c.isalpha() for c in body):
        return False  # a number after "sk-" (a product code), not a key
    parts = [part for part in _WORD_SEPARATORS.split(body) if part]
    return not all(part.isalpha() and len(part) <= _LONGEST_WORD
                   and (part.islower() or part.istitle() or part.isupper()) for part in parts)


_TELEGRAM = re.compile(r":AA[A-Za-z0-9_-]{30,}")


def _telegram_token(text: str, pos: int) -> str | None:
    """`<8-10 digit bot id>:AA<about 33 characters>`; the anchor is the colon."""
    if not _TELEGRAM.match(text, pos):
        return None
    digits = pos - run_start(text, pos, DIGITS, 11)
    return ACCESS_TOKEN if 8 <= digits <= 10 else None


_BEARER = re.compile(r"(?<![A-Za-z])bearer\s{1,4}(?P<tok>[A-Za-z0-9._~+/-]{20,})", IGNORECASE)


def _bearer(text: str, pos: int) -> str | None:
    match = _BEARER.match(text, pos)
    return BEARER_TOKEN if match and looks_random(match.group("tok")) else None


# After an explicit `Authorization: Bearer` header the value is a credential however plain it
# looks ("abcdefghijklmnopqrstuvwxyz012345"); a bare "bearer ..." in prose still has to look random.
_BEARER_HEADER = re.compile(r"(?<![A-Za-z])authorization\s{0,4}:\s{0,4}bearer\s{1,4}(?P<tok>[A-Za-z0-9._~+/-]{16,})",
                            IGNORECASE)


def _bearer_header(text: str, pos: int) -> str | None:
    match = _BEARER_HEADER.match(text, pos)
    return BEARER_TOKEN if match and not masked_or_placeholder(match.group("tok")) else None


_AWS = shape(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])", API_KEY)

VENDOR_TOKENS = RuleSet(
    "vendor tokens",
    cased=(
        ("_", (_underscore_token,)),
        ("-", (_dash_token,)),
        ("AIza", (shape(r"(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])", API_KEY),)),
        ("ya29.", (shape(r"(?<![A-Za-z0-9_-])ya29\.[A-Za-z0-9_-]{20,}", ACCESS_TOKEN),)),
        ("hooks.slack.com/", (shape(r"hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}", ACCESS_TOKEN),)),
        ("AKIA", (_AWS,)), ("ASIA", (_AWS,)), ("ABIA", (_AWS,)), ("ACCA", (_AWS,)),
        (":AA", (_telegram_token,)),
        # A JWT: base64url of a JSON header and of a JSON payload (both start `{"`, i.e. `eyJ`), a signature.
        ("eyJ", (shape(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*",
                       ACCESS_TOKEN),)),
        # scheme://user:password@host (the user may be empty, as in redis://:password@host).
        ("://", (shape(r"://[^\s/:@]{0,64}:[^\s/@]{1,128}@[^\s/@]", PASSWORD),)),
    ),
    lower=(
        ("bearer", (_bearer,)),
        ("authorization", (_bearer_header,
                           shape(r"(?<![A-Za-z])authorization\s{0,4}:\s{0,4}basic\s{1,4}[A-Za-z0-9+/]{8,}",
                                 PASSWORD, IGNORECASE))),
    ),
)
