"""Words and index terms of a text, for ranking and the word index (E6, E7 in docs/REQUIREMENTS.md).

- `words`: lower-cased words without stopwords and without a possessive "'s", as written: exact
  matches (tags, a speaker named in a question) compare these;
- `tokenize`: the BM25 terms, the words folded to a light stem ("exercises", "exercised" and
  "exercising" are one term; "Caroline's" is "caroline") plus character bigrams of CJK runs.
  Both the question and every stored record go through it, so a question finds a record that
  says the same thing in another inflection. LoCoMo tuning split (MiniLM): R@5 / R@10 .700 / .784
  without the folding, .715 / .803 with it (all other cues on; bench/RESULTS.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[0-9a-z\u00c0-\u024f]+(?:['’][a-z]+)?", re.IGNORECASE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_POSSESSIVE = re.compile(r"['’]s$")

# Function words carry no evidence of which memory is meant; questions are full of them.
STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being am
    do does did doing have has had having i me my we our you your he him his she her it its they them
    their this that these those what which who whom whose when where why how there here not no so than
    too very can could will would shall should may might must about into over after before up down out
    just also any some all each both few more most other such only own same s t don't didn't""".split()
)

_KEEP_S = ("ss", "us", "is")  # "class", "bus", "this": the s is part of the word
_ES_AFTER = ("s", "x", "z", "ch", "sh")  # "classes", "boxes", "watches" lose "es"; "exercises" only "s"


def words(text: str) -> list[str]:
    """Lower-cased words without stopwords, a possessive "'s" removed (no CJK, no folding)."""
    out = []
    for word in _WORD.findall(text.lower()):
        if word in STOPWORDS:
            continue
        word = _POSSESSIVE.sub("", word)
        if word and word not in STOPWORDS:
            out.append(word)
    return out


def stem(word: str) -> str:
    """A light English fold: plural, -ed and -ing endings, then a final "e" ("bake", "baked", "baking"
    -> "bak"). Not a linguistic stemmer: it only has to map a question's word and a record's word to
    the same term, the same way every time. A stem keeps at least 3 letters."""
    if len(word) <= 3 or not word.isalpha():
        return word
    base = word
    if word.endswith(("ies", "ied")) and len(word) > 5:
        base = word[:-3] + "y"
    elif word.endswith("ing") and len(word) >= 6:
        base = _undouble(word[:-3])
    elif word.endswith("ed") and len(word) >= 5 and not word.endswith("eed"):
        base = _undouble(word[:-2])
    elif word.endswith("es") and word[:-2].endswith(_ES_AFTER) and len(word) >= 5:
        base = word[:-2]
    elif word.endswith("s") and not word.endswith(_KEEP_S):
        base = word[:-1]
    if base.endswith("e") and len(base) > 3:
        base = base[:-1]
    return base


def _undouble(base: str) -> str:
    """"planned", "planning" -> "plan" (but "called" -> "call", "missed" -> "miss")."""
    if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
        return base[:-1]
    return base


def tokenize(text: str) -> list[str]:
    """BM25 terms: folded `words`, then CJK character bigrams (a lone CJK character stays one term)."""
    return terms_of(text, words(text))


def terms_of(text: str, text_words: Iterable[str]) -> list[str]:
    """`tokenize(text)` when its `words` are already known (a recall's question reads them once)."""
    tokens = [stem(w) for w in text_words]
    for run in _CJK.findall(text.lower()):
        if len(run) == 1:
            tokens.append(run)
        tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens
