"""Cues a question gives beyond its words (E6 in docs/REQUIREMENTS.md): a named speaker and a date.

- A **named speaker**: the question names someone who speaks in this memory space ("What did
  Caroline research?"). Their own records gain the sender bonus in ranking, and the name is left
  out of the text that is embedded: a name pulls the question's vector towards every message that
  merely addresses that person ("Wow, Caroline!") instead of towards what was said. The name stays
  in the word search, where it is one rare word among others.
- A **date**: the question names a day or a month ("on 7 July, 2023", "in August 2023",
  "2023-05-03", "2023年5月3日"). Records written (or whose event happened) then gain
  `date_weight` x the match: 1 on the named day (within a day and a half either side, time zones
  and late-night messages), fading to 0 at `DAY_SPREAD` days; 1 anywhere in a named month.
  Relative phrases ("last week") are not read: they are relative to a moment the question does
  not state.
- **A question of time**: "When did ...?", "How long ago ...?", "What year ...?". A record that says
  when something happened relative to its own date ("yesterday", "last week", "two weekends ago")
  is where such an answer is told (the record's date places it): it gains `time_cue_weight`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

_MONTHS = {name: number for number, name in enumerate(
    "january february march april may june july august september october november december".split(), start=1)}
_MONTHS.update({name[:3]: number for name, number in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b", re.I)
# A month without a year only after a preposition: "may" alone is a verb far more often than a month.
_MONTH_ALONE = re.compile(rf"\b(?:in|during|since|early|late|mid|of)\s+{_MONTH}\b", re.I)
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_CJK_DATE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?")

_ASKS_WHEN = re.compile(r"^\s*(?:when|how long|what (?:year|month|date|day|time))\b|\bwhen\b|什么时候|何時|いつ",
                        re.I)
_TELLS_WHEN = re.compile(
    r"\b(?:yesterday|today|tonight|ago|last (?:week|weekend|month|year|night|summer|winter|spring|fall|autumn|"
    r"mon|tue|wed|thu|fri|sat|sun)\w*|this (?:past )?(?:week|weekend|month|year|morning)|"
    r"(?:few|couple of) (?:days|weeks|months|years))\b|昨天|前天|上周|上个月|去年|昨日|先週|先月|去年",
    re.I)

SAME_DAY = 1.5  # days either side of a named day that count as that day
DAY_SPREAD = 4.5  # days from a named day at which the match has faded to 0


@dataclass(frozen=True)
class DateCue:
    month: int
    year: int | None = None
    day: int | None = None

    def match(self, moment: datetime) -> float:
        """1 when `moment` is the named day or month, fading to 0 around a named day; else 0."""
        if self.day is not None and self.year is not None:
            try:
                target = datetime(self.year, self.month, self.day, 12, tzinfo=UTC)
            except ValueError:
                return 0.0
            gap = abs((moment - target).total_seconds()) / 86400
            if gap <= SAME_DAY:
                return 1.0
            return max(0.0, 1.0 - (gap - SAME_DAY) / (DAY_SPREAD - SAME_DAY))
        if moment.month != self.month or (self.year is not None and moment.year != self.year):
            return 0.0
        return 1.0 if self.day is None or moment.day == self.day else 0.0


def date_cues(question: str) -> tuple[DateCue, ...]:
    """Every day or month the question names, most specific reading of each span first."""
    found: list[DateCue] = []
    taken: list[tuple[int, int]] = []

    def add(match: re.Match[str], cue: DateCue) -> None:
        start, end = match.span()
        if any(start < b and end > a for a, b in taken) or not 1 <= cue.month <= 12:
            return
        taken.append((start, end))
        found.append(cue)

    for m in _ISO.finditer(question):
        add(m, DateCue(int(m[2]), int(m[1]), int(m[3])))
    for m in _DAY_MONTH_YEAR.finditer(question):
        add(m, DateCue(_MONTHS[m[2].lower()], int(m[3]), int(m[1])))
    for m in _MONTH_DAY_YEAR.finditer(question):
        add(m, DateCue(_MONTHS[m[1].lower()], int(m[3]), int(m[2])))
    for m in _MONTH_YEAR.finditer(question):
        add(m, DateCue(_MONTHS[m[1].lower()], int(m[2])))
    for m in _MONTH_ALONE.finditer(question):
        add(m, DateCue(_MONTHS[m[1].lower()]))
    for m in _CJK_DATE.finditer(question):
        add(m, DateCue(int(m[2]), int(m[1]) if m[1] else None, int(m[3]) if m[3] else None))
    return tuple(found)


def date_match(cues: Iterable[DateCue], moments: Iterable[datetime | None]) -> float:
    """The best match of any cue with any of a record's moments (when written, when it happened)."""
    return max((cue.match(m) for cue in cues for m in moments if m is not None), default=0.0)


def asks_when(question: str) -> bool:
    """Whether the question asks when something happened (or how long ago)."""
    return _ASKS_WHEN.search(question) is not None


def tells_when(content: str) -> bool:
    """Whether a record says when something happened relative to its own date ("last week")."""
    return _TELLS_WHEN.search(content) is not None


def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(name)}(?:['’]s)?(?![\w])", re.IGNORECASE)


def named(question: str, name: str) -> bool:
    """Whether the question names `name` as a word (possessive included), case-insensitively."""
    name = name.strip()
    return len(name) >= 2 and _name_pattern(name).search(question) is not None


def named_speakers(question: str, speakers: Iterable[str]) -> list[str]:
    """The speakers of the space the question names, longest name first. A name is looked at only
    when its first word is a word of the question (a space may have many speakers)."""
    present = set(re.findall(r"\w+", question.casefold()))
    found = set()
    for speaker in speakers:
        first = re.findall(r"\w+", speaker.casefold())[:1]
        if first and first[0] in present and named(question, speaker):
            found.add(speaker.strip())
    return sorted(found, key=len, reverse=True)


def without_speakers(question: str, names: Iterable[str]) -> str:
    """The question with the named speakers left out (the text to embed); the question itself when
    nothing but names would be left."""
    text = question
    for name in names:
        text = _name_pattern(name).sub(" ", text)
    text = " ".join(text.split())
    return text if re.search(r"\w", text) else question
