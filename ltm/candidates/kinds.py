"""What a memory candidate can be: the vocabulary the rule engine, the model path and the queue share."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Final


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
SECRET_RULE: Final = "secret"


@dataclass(frozen=True)
class ProposedMemory:
    """One proposal. `rule` is "<lang>.<rule>" with lang en|zh|ja and rule one of name, pref,
    dislike, trait, session, remember, plan, decision, fact, life; "secret" for an ignore candidate;
    "model" for the model path. `target` ("speaker" | "session") and `field` are set for profile
    candidates only."""

    kind: CandidateKind
    content: str
    evidence: str
    rule: str
    target: str | None = None
    field: ProfileField | None = None


# Letters and spaces only: the detector's kinds ("a password", "a PIN", "an API key") pass as they are.
_SAFE_KIND = re.compile(r"[A-Za-z][A-Za-z -]{0,40}")


def redacted_text(kind: str) -> str:
    """The fixed content of an ignore candidate; `kind` is a phrase like "a password" or "a PIN"."""
    if not _SAFE_KIND.fullmatch(kind):
        kind = "a credential"
    return f"[redacted: looks like {kind}]"


# What an accepted candidate keeps once the memory it became is deleted (forget, bulk delete, a
# document's removal): its text and quote go with the memory, the decision stays listed.
FORGOTTEN_TEXT: Final = "[redacted: the memory it became was deleted]"


def ignore_candidate(kind: str) -> ProposedMemory:
    """The one proposal of a message that looks like it holds a secret: nothing of the text is kept."""
    return ProposedMemory(CandidateKind.IGNORE, redacted_text(kind), "", SECRET_RULE)
