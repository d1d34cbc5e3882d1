"""Is the value after a marker ("password is ...", "token: ...") a secret, or an ordinary word?"""

from __future__ import annotations

import re

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


def clean_value(raw: str) -> tuple[str, bool]:
    """The value without surrounding quotes and sentence punctuation; whether it was quoted."""
    quoted = bool(raw) and raw[0] in _QUOTES
    return raw.strip(_QUOTES).rstrip(_TRAILING).strip(_QUOTES), quoted


def masked_or_placeholder(value: str) -> bool:
    """`****`, `xxx`, `${API_KEY}`, `<your key>`, `os.environ[...]`: no secret is written down."""
    return value[0] in "$<{%[(" or "environ" in value or "getenv" in value or set(value) <= _MASK_CHARS


def _describes(value: str) -> bool:
    """A lowercase word that describes the secret ("weak", "expired") rather than being it."""
    low = value.lower()
    if low in _NOT_A_VALUE:
        return True
    return value.isalpha() and value.islower() and len(value) >= 5 and low.endswith(_DESCRIPTIVE_ENDINGS)


def stated(raw: str, min_len: int = 3) -> bool:
    """After a strong marker (password, api key): any value that is not an ordinary word."""
    value, quoted = clean_value(raw)
    if not value or masked_or_placeholder(value):
        return False
    return quoted or (len(value) >= min_len and not _describes(value))


_TOKEN_VALUE = re.compile(r"[A-Za-z0-9+/=_.~-]+")
_LETTER_DIGIT_CHANGE = re.compile(r"[0-9][A-Za-z]|[A-Za-z][0-9]")
_UPPER = re.compile(r"[A-Z]")


def looks_random(raw: str) -> bool:
    """After a weak marker (token, secret, key): only a value that looks machine-made, such as
    `9f8e7d6c5b4a` or `AbXq...`; `group_123`, `bot:xxx:group_1` and `v1.2.3` are identifiers."""
    value, _ = clean_value(raw)
    if len(value) < 12 or not _TOKEN_VALUE.fullmatch(value) or masked_or_placeholder(value):
        return False
    if len(_LETTER_DIGIT_CHANGE.findall(value)) >= 3:
        return True
    return len(value) >= 20 and len(_UPPER.findall(value, 1)) >= 3 and not value.isupper()


def looks_like_year(digits: str) -> bool:
    return len(digits) == 4 and 1900 <= int(digits) <= 2099


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def inside_an_id(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` lies inside a UUID (this plugin's episode ids, quoted back by a tool call or
    a console request): its digit runs are random hex, never a card number or a one-time code. One random
    id in about 20,000 held a Luhn-valid 13-digit run ("…-6244-4763-8124-7c…")."""
    return any(m.start() <= start and end <= m.end() for m in _UUID.finditer(text))
