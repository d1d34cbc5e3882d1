"""Refuse to store what looks like a secret (W3 in docs/REQUIREMENTS.md: never store credentials).

The tool prompts teach the model not to store secrets; this is the backstop on
every write path. Deliberately conservative: it looks for credential *shapes*
and explicit markers, not for sensitive topics.
"""

from __future__ import annotations

import re

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("an API key", re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}")),
    ("an API key", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("an access token", re.compile(r"\b(ghp|gho|ghs|github_pat|xox[abpr])_[A-Za-z0-9_]{16,}")),
    ("a bearer token", re.compile(r"\bbearer\s+[A-Za-z0-9._~+/-]{20,}", re.IGNORECASE)),
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    (
        "a password",
        re.compile(r"\b(password|passwd|pwd|passcode|api[_ -]?key|secret[_ -]?key|access[_ -]?token)\s*[:=]\s*\S+",
                   re.IGNORECASE),
    ),
    ("a password", re.compile(r"(密码|口令|密钥)\s*[:：是为]\s*\S+")),
    ("a one-time code",
     re.compile(r"(验证码|verification code|one[- ]time (pass)?code|OTP)\D{0,12}\d{4,8}", re.IGNORECASE)),
]


def secret_kind(text: str) -> str | None:
    """The kind of secret the text seems to contain, or None."""
    for kind, pattern in _PATTERNS:
        if pattern.search(text):
            return kind
    return None
