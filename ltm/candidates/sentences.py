"""Cutting one message into sentences and clauses, and the small text helpers the rules share.

Offsets always refer to the message as typed: folding keeps lengths (apostrophe-like characters
become "'"), so a rule matches on the folded text and copies its value from the original.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Apostrophe-like characters fold to "'" (same length, so offsets stay valid).
FOLD = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\uff07": "'"})


@dataclass(frozen=True)
class Span:
    """One clause of the message: the text as typed, its folded copy, and where the clause ends."""

    text: str
    folded: str
    end: int

    def group(self, match: re.Match[str], name: str = "value") -> str:
        """A named group of a match on the folded text, copied from the text as typed."""
        return self.text[match.start(name):match.end(name)]


_SENTENCE_END = re.compile(r"(?:[。！？!?；;\n\r…]|\.(?=[\s.!?。！？…]|$))+")
_CLAUSE_SEP = re.compile(
    r"，+|,+|\s+(?=(?:and|but|so|plus)\s+(?:i|i'm|im|i've|i'll|my|we|we're|we've|we'll|our)\b"
    r"(?!\s+(?:are|were|'re|both)\b))|"
    r"(?<=[^\s，,])(?=但是|不过|而且|并且|所以)",
    re.IGNORECASE,
)
# In Japanese the comma "、" ends a clause ("子どもが生まれました、男の子です"), except after a topic
# ("ルールは、…", "私も、…"); in Chinese it only separates list items ("苹果、香蕉"), so it cuts a
# clause only in a sentence that has kana.
_JA_CLAUSE_SEP = re.compile(_CLAUSE_SEP.pattern + "|(?<![はも])、+", re.IGNORECASE)
# After an ASCII comma a new clause starts only with one of these; otherwise the comma
# belongs to a list inside the clause ("I like tea, coffee and juice").
NEW_CLAUSE_AFTER_COMMA = re.compile(
    r"\s*(?:(?:i|i'm|im|i've|i'll|i'd|my|we|we're|our|you|your|it|it's|that|that's|this|he|she|they|there|"
    r"but|and|so|because|also|though|btw|lol|haha|just|please|anyway|which|who|nobody|no|not|what|where|when|"
    r"why|how|any|anyone|anybody|do|does|did|can|could|should|would|will|is|are|right|ok|okay|correct)\b|"
    r"[\u4e00-\u9fff])",
    re.IGNORECASE,
)


def sentences(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, ends with a question mark) for each sentence, whitespace-trimmed."""
    spans: list[tuple[int, int, bool]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        question = "?" in match.group() or "？" in match.group()
        spans.append((start, match.start(), question))
        start = match.end()
    spans.append((start, len(text), False))
    out: list[tuple[int, int, bool]] = []
    for s, e, q in spans:
        s, e = trim(text, s, e)
        if s < e:
            out.append((s, e, q))
    return out


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# "my husband and I bought ...": "and I" joins a subject, it does not start a clause.
_JOINT_SUBJECT_BEFORE = re.compile(r"\b(?:my|our)\s+[a-z]+$", re.IGNORECASE)


def clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    cuts: list[tuple[int, int]] = []
    separators = _JA_CLAUSE_SEP if has_kana(text[start:end]) else _CLAUSE_SEP
    for match in separators.finditer(text, start, end):
        if match.group().startswith(",") and not NEW_CLAUSE_AFTER_COMMA.match(text, match.end(), end):
            continue
        joint = _JOINT_SUBJECT_BEFORE.search(text, max(start, match.start() - 30), match.start())
        if joint and match.group().isspace():
            continue
        cuts.append((match.start(), match.end()))
    out: list[tuple[int, int]] = []
    pos = start
    for cut_start, cut_end in cuts:
        out.append((pos, cut_start))
        pos = cut_end
    out.append((pos, end))
    trimmed = [trim(text, s, e) for s, e in out]
    return [(s, e) for s, e in trimmed if s < e]


# Sentence-final particles: Chinese ones, and the Japanese "よ" and "ね".
_ZH_TAIL = "啊呀哦哈啦嘛噢呗咯喔嘿哟了~～よね"
_KEEP_CLOSERS = ")）》」』】]"


def strip_tail(value: str, keep: str = "") -> str:
    """`value` without closing punctuation and particles, except those in `keep`."""
    value = value.strip()
    changed = True
    while value and changed:
        changed = False
        while value and not (value[-1].isalnum() or value[-1] in _KEEP_CLOSERS):
            value = value[:-1].rstrip()
            changed = True
        while value and value[-1] in _ZH_TAIL and value[-1] not in keep:
            value = value[:-1].rstrip()
            changed = True
    return value


def has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


_KANA = re.compile("[\u3041-\u3096\u30a1-\u30fa]")


def has_kana(text: str) -> bool:
    """Hiragana or katakana: the text is Japanese (Chinese has neither)."""
    return bool(_KANA.search(text))
