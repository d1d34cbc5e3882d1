"""The question of one recall, read once (E6, E7 in docs/REQUIREMENTS.md).

Every stage of a recall reads something of the question: whether it is a record id, its text to
embed without the speakers it names, its BM25 terms for the space's index and for ranking, its
words for tag matches, the record ids and dates it names, whether it asks when, the speakers it names. `Question.of`
reads all of it once, when the recall starts; the stages take the `Question`, never the text, so
no stage tokenizes or parses the question again and every stage reads it the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .question_cues import DateCue, asks_when, date_cues, named, named_speakers, without_speakers
from .terms import terms_of, words

_ID_LEN = 36  # a record id (a UUID) as the whole question: recall reads that record directly
_ID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)


@dataclass(frozen=True)
class Question:
    """What one recall asks, as every stage reads it. Built by `of`; immutable."""

    text: str  # as asked, stripped; a question of nothing asks for the filters' tags, or "*"
    record_id: str  # the whole question when it has a record id's shape, else ""
    lowered: str  # `text` lower-cased: a record holding it verbatim gains the snippet bonus
    terms: tuple[str, ...]  # BM25 terms (`terms.tokenize`): the space's index and ranking
    words: frozenset[str]  # exact-match words (`terms.words`, no folding)
    tag_words: frozenset[str]  # `words` and the whitespace-split pieces (a tag may hold punctuation)
    ids: frozenset[str]  # record ids named anywhere in it, lower-cased
    dates: tuple[DateCue, ...]  # the days and months it names (question_cues.py)
    asks_when: bool = False  # it asks when something happened (question_cues.py)

    @classmethod
    def of(cls, query: str, tags: Sequence[str] = ()) -> Question:
        """The question `query`; `tags` (a recall's tag filter) stand in for an empty one."""
        asked = (query or "").strip()
        record_id = asked if len(asked) == _ID_LEN and asked.count("-") == 4 else ""
        text = asked or " ".join(tags) or "*"
        found = words(text)
        lowered = text.strip().lower()
        return cls(
            text=text,
            record_id=record_id,
            lowered=lowered,
            terms=tuple(terms_of(text, found)),
            words=frozenset(found),
            tag_words=frozenset(found) | frozenset(lowered.split()),
            ids=frozenset(m.lower() for m in _ID.findall(lowered)),
            dates=date_cues(text),
            asks_when=asks_when(text),
        )

    def names(self, who: str) -> bool:
        """Whether the question names `who` (a speaker's name or id) as a word, possessive included."""
        return named(self.text, who)

    def without_speakers(self, speakers: Iterable[str]) -> str:
        """The text to embed: the question without those of `speakers` (a space's) it names (their
        records are preferred by ranking instead; see question_cues.py)."""
        return without_speakers(self.text, named_speakers(self.text, speakers))
