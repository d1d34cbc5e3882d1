"""When two memory texts state the same fact: the normalized key and the near-duplicate rule.

Every write path and the candidate checks use these two rules (`duplicates.py` applies them):

- **Same fact** (not written again): the texts have the same `fact_key`. The key is built
  conservatively, so two texts only share it when a reader would call them the same sentence:
  Unicode compatibility forms folded (NFKC: full-width letters and digits), case folded,
  punctuation at the edge of a word dropped (a full stop, quotes, brackets, "!", "。", "、")
  while punctuation inside a word or a number stays ("3.5" is not "35", "re-sign" is not
  "resign"), whitespace collapsed (and removed next to CJK characters, which are written without
  it), and one leading possessive wrapper removed: "my", "the user's", "user's", "我的", "用户的",
  "私の", "わたしの", "ユーザーの" ("my report is due on March 3" and "The user's report is due on
  March 3." are one fact). Nothing else: no stemming, no synonyms, no word order.
- **Near duplicate** (written, and the existing one is named so it can be superseded; a
  candidate is not proposed): one text says what the other says with words added or left out
  ("the demo is on Friday" / "The demo is scheduled for Friday"), never with a word replaced
  ("... on Friday" / "... on Monday" is a changed fact, not a copy), AND their embeddings are
  close. The word side compares content terms: light English stems (`terms.tokenize`; stopwords
  and "user" left out) and character pairs of CJK runs, the runs cut at kana and at a few Chinese
  function characters (的, 了, 在, 是, ...), with "我", "私", "用户", "ユーザー" left out (both
  texts are the same speaker's). The smaller set must lie inside the larger and cover at least
  NEAR_WORD_OVERLAP of it (Jaccard). Three guards stop a pair whose difference changes the fact
  although no content word was replaced: other numbers (a date, an amount), other polarity (one
  says "not", "never", "stopped", "不", "ない" and the other does not) and other time words
  ("last year", "next month", "去年", "来月"). Thresholds: Jaccard >= NEAR_WORD_OVERLAP and
  cosine similarity >= NEAR_COSINE, chosen on the tuning pairs of bench/duplicates/ (en, zh,
  ja) and reported on its held-out pairs for the test host's hashing embedder and for MiniLM
  (bench/near_duplicates.py; figures in bench/RESULTS.md, "Near duplicates").
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

from .terms import tokenize

NEAR_WORD_OVERLAP = 0.5
NEAR_COSINE = 0.6

_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_CLASS}]")
_SPACE_BY_CJK = re.compile(f"(?<=[{_CJK_CLASS}]) +| +(?=[{_CJK_CLASS}])")
# One leading wrapper that only says whose fact it is (the space already says that).
_WRAPPERS = ("the user's ", "user's ", "my ", "用户的", "用戶的", "我的", "ユーザーの", "私の", "わたしの")
_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")
_POLARITY = re.compile(r"\b(?:not|no|never|none|nothing|nobody|neither|nor|cannot|without|longer|anymore|stop|"
                       r"stopped|stopping|quit|quitting)\b|n't"
                       r"|[不没沒别別未非无無]|やめ|ない|ません|なかった|ず(?:[、。 ]|$)")
_TIME_WORD = re.compile(r"\b(?:yesterday|today|tonight|tomorrow|ago|last|next|past|previous|former|formerly|"
                        r"used to|since|until)\b|昨天|今天|明天|去年|今年|明年|上个|下个|以前|"
                        r"昨日|今日|明日|去年|来年|先月|来月|先週|来週|以前")
_SPEAKER_WORDS = re.compile("用户|用戶|ユーザー|わたし|[我私]")
_HIRAGANA = re.compile("[\u3040-\u309f]")
_FUNCTION_CHARS = frozenset("的了在是也和就都着呢吗吧啊很")


def _inner(text: str, at: int) -> bool:
    """Punctuation at `at` sits inside a word or a number: letters or digits (not CJK) on both sides."""
    if at == 0 or at == len(text) - 1:
        return False
    before, after = text[at - 1], text[at + 1]
    return before.isalnum() and after.isalnum() and not _CJK.match(before) and not _CJK.match(after)


def fact_key(text: str) -> str:
    """The normalized form two texts must share to be one fact ("" for a text of punctuation only)."""
    folded = unicodedata.normalize("NFKC", text).replace("\u2019", "'").casefold()
    kept = [ch if not unicodedata.category(ch).startswith("P") or _inner(folded, i) else " "
            for i, ch in enumerate(folded)]
    flat = " ".join("".join(kept).split())
    # The wrapper goes before the spaces next to CJK do: "the user's 工位…" keeps its space until then.
    for wrapper in _WRAPPERS:
        if flat.startswith(wrapper) and len(flat) > len(wrapper):
            flat = flat[len(wrapper):].lstrip()
            break
    return _SPACE_BY_CJK.sub("", flat)


def same_fact(a: str, b: str) -> bool:
    key = fact_key(a)
    return bool(key) and key == fact_key(b)


def content_terms(text: str) -> frozenset[str]:
    """The words the near-duplicate rule compares (see the module docstring)."""
    key = _SPEAKER_WORDS.sub(" ", fact_key(text))
    latin = {t for t in tokenize(_CJK.sub(" ", key)) if t != "user"}
    cjk = "".join(ch if _CJK.match(ch) and not _HIRAGANA.match(ch) and ch not in _FUNCTION_CHARS else " "
                  for ch in key)
    for run in cjk.split():  # runs of kanji, hanzi and katakana, cut at kana and function characters
        latin.update([run] if len(run) == 1 else (run[i:i + 2] for i in range(len(run) - 1)))
    return frozenset(latin)


def word_overlap(a: str, b: str) -> float:
    """Jaccard of the two texts' content terms."""
    terms_a, terms_b = content_terms(a), content_terms(b)
    if not terms_a or not terms_b:
        return 0.0
    return len(terms_a & terms_b) / len(terms_a | terms_b)


def _markers(pattern: re.Pattern[str], key: str) -> list[str]:
    return sorted(m.group(0) for m in pattern.finditer(key))


def guards_pass(a: str, b: str) -> bool:
    """Same numbers, same polarity, same time words (the pair could still be a copy)."""
    key_a, key_b = fact_key(a), fact_key(b)
    if not key_a or not key_b:
        return False
    return (_markers(_NUMBER, key_a) == _markers(_NUMBER, key_b)
            and bool(_POLARITY.search(key_a)) == bool(_POLARITY.search(key_b))
            and _markers(_TIME_WORD, key_a) == _markers(_TIME_WORD, key_b))


def words_could_be_near(a: str, b: str) -> bool:
    """The word side of the near-duplicate rule: the guards, then containment and overlap. Cheap, so it
    runs before any embedding is asked for."""
    if not guards_pass(a, b):
        return False
    terms_a, terms_b = content_terms(a), content_terms(b)
    if not terms_a or not terms_b or not (terms_a <= terms_b or terms_b <= terms_a):
        return False
    return word_overlap(a, b) >= NEAR_WORD_OVERLAP


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def near_duplicate(a: str, b: str, vector_a: Sequence[float], vector_b: Sequence[float]) -> bool:
    """Both sides of the rule: not the same fact, but nearly (see the module docstring)."""
    return not same_fact(a, b) and words_could_be_near(a, b) and cosine(vector_a, vector_b) >= NEAR_COSINE
