"""English rules for the conventions of a whole chat: session preferences, not the speaker's.

A convention is said to the group: after a lead-in ("from now on we ...", "in this group
everyone ..."), as the group's rules ("rules for this chat: ..."), or as a standing practice that
names the chat ("we only speak English here", "no spoilers in this channel", "this group is for
photography only", "everyone, please post photos in #photos"). Without a word for the chat
("here", "in this group", "#channel") a "please use ..." is a request to the bot, not a rule.
"""

from __future__ import annotations

import re

from .kinds import SESSION
from .phrases import EN_DURABLE
from .rule_language import Claim, ProfileRule
from .rules_en_values import PREFERENCES, en_value, value_at
from .sentences import Span

_EN_SESSION = re.compile(
    r"(?:" + EN_DURABLE + r"[\s,]*(?:in\s+this\s+(?:group|chat|channel)[\s,]*)?|"
    r"in\s+this\s+(?:group|chat|channel)[\s,]*)"
    r"(?:(?:we|everyone|everybody|all\s+of\s+us|y'all|you\s+all|this\s+(?:group|chat|channel))\s+"
    r"(?:(?:will|should|must|shall|are\s+going\s+to|need\s+to|have\s+to|all|please)\s+){0,2}|"
    r"(?:please\s+)?(?=no\s+[a-z]))|"
    # "everyone here speaks Portuguese": the engine has skipped "everyone" (a filler) already.
    r"(?:(?<=\beveryone\s)|(?<=\beverybody\s))here\s+(?=(?:speaks|uses|writes|posts)\s+(?-i:[A-Z]))|"
    r"(?:the\s+)?(?:rules?|policy)\s+(?:for|of|in)\s+this\s+(?:group|chat|channel)\s*(?:(?:is|are)\s*:?|:)\s*",
    re.IGNORECASE,
)

# Where the chat is named at the end of the clause: "... here", "... in this group", "... in #photos".
_EN_IN_CHAT = re.compile(
    r"\s+(?:here|in\s+(?:this|the)\s+(?:group|chat|channel|server|thread)|in\s+(?:the\s+)?#[\w-]+(?:\s+channel)?)"
    r"(?:\s+(?:please|pls|plz|thanks|thx))?\s*$",
    re.IGNORECASE,
)
# Said to everyone, just before the clause: "everyone, please ...", "guys pls ...".
_EN_TO_ALL = re.compile(r"\b(?:everyone|everybody|y'all|you\s+all|guys|folks|all)[\s,]*$", re.IGNORECASE)
_EN_PRACTICE = re.compile(
    r"(?:we|everyone|everybody)\s+(?:(?:only|always|all|usually|just)\s+)?"
    r"(?=(?:speak|use|write|post|talk|chat|share|keep|reply|answer)\b)",
    re.IGNORECASE,
)
# "no" is a filler the engine skips before the rules run, so this rule looks back at it.
_EN_NO_HERE = re.compile(r"(?<=\bno\s)(?!(?:worries|problem|problems|idea|way|clue|rush|pressure|thanks|doubt|one|"
                         r"body|wonder|need)\b)(?=[a-z])", re.IGNORECASE)
_EN_PLEASE_ALL = re.compile(
    r"(?:please|pls|plz|kindly)\s+(?=(?:use|post|keep|write|speak|share|put|tag|send|stick\s+to|reply)\b)",
    re.IGNORECASE,
)
_EN_CHAT_IS_FOR = re.compile(
    r"this\s+(?:group|chat|channel|server|thread)\s+is\s+(?=(?:(?:only|just|strictly)\s+for|for|[a-z]+[ -]only)\b)",
    re.IGNORECASE,
)


def _in_chat(match: re.Match[str], span: Span, *, to_all: bool = False, prefix: str = "") -> Claim | None:
    """The clause up to the word for the chat, which must end it (or, with `to_all`, precede it)."""
    where = _EN_IN_CHAT.search(span.folded, match.end(), span.end)
    before = span.folded[max(0, match.start() - 24):match.start()]
    if where is None and not (to_all and _EN_TO_ALL.search(before)):
        return None
    end = where.start() if where else span.end
    value = en_value(span.folded, span.text, match.end(), end, max_words=10)
    return Claim(PREFERENCES, value and prefix + value, "en.session", SESSION)


SESSIONS = (
    ProfileRule(_EN_SESSION, lambda m, s: Claim(PREFERENCES, value_at(s, m.end(), 12), "en.session", SESSION)),
    ProfileRule(_EN_CHAT_IS_FOR, lambda m, s: Claim(PREFERENCES, value_at(s, m.end(), 8), "en.session", SESSION)),
    ProfileRule(_EN_PRACTICE, _in_chat),
    ProfileRule(_EN_NO_HERE, lambda m, s: _in_chat(m, s, prefix="no ")),
    ProfileRule(_EN_PLEASE_ALL, lambda m, s: _in_chat(m, s, to_all=True)),
)
