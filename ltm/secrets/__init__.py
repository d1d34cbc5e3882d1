"""Refuse to store (or log) what looks like a secret (W3 in docs/REQUIREMENTS.md: never store credentials).

The tool prompts teach the model not to store secrets; this package is the backstop on every
write path (`ltm/guards.py`), for memory candidates, and in the log lines that quote user text.
It looks for credential *shapes* and for a secret *being stated*, not for sensitive topics: "I
forgot my password", "the password policy changed", "密码学" and "令牌桶算法" are ordinary facts
and pass. It is a backstop, not an exhaustive detector. Why the rules are our own and not a
source-code secret scanner's: docs/ARCHITECTURE.md, "Decisions where the requirements are silent".

One detector (`detector.py`), five named rule sets, one module each:
- `tokens.py`            vendor tokens, JWTs, key blocks, bearer/basic auth, credentials in URLs;
- `codes.py`             PINs and one-time codes;
- `cards.py`             bank card numbers and card security codes;
- `statements.py`        stated credentials: "my password is ...", `API_KEY=...`, "密码：...";
- `identity_numbers.py`  social security, passport and Chinese resident identity numbers.
"""

from .detector import REDACTED, RULE_SETS, redact_for_log, secret_kind
from .kinds import (
    ACCESS_TOKEN,
    API_KEY,
    BEARER_TOKEN,
    CARD_CODE,
    CARD_NUMBER,
    ONE_TIME_CODE,
    PASSPORT_NUMBER,
    PASSWORD,
    PIN,
    PRIVATE_KEY,
    RECOVERY_PHRASE,
    RESIDENT_ID_NUMBER,
    SOCIAL_SECURITY_NUMBER,
)

__all__ = [
    "ACCESS_TOKEN",
    "API_KEY",
    "BEARER_TOKEN",
    "CARD_CODE",
    "CARD_NUMBER",
    "ONE_TIME_CODE",
    "PASSPORT_NUMBER",
    "PASSWORD",
    "PIN",
    "PRIVATE_KEY",
    "RECOVERY_PHRASE",
    "REDACTED",
    "RESIDENT_ID_NUMBER",
    "RULE_SETS",
    "SOCIAL_SECURITY_NUMBER",
    "redact_for_log",
    "secret_kind",
]
