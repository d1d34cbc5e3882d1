"""The labelled extraction sets of bench/extraction/ and the rule that decides a match.

`load_set` reads one set (schema in bench/extraction/README.md) and refuses a malformed
one with a message naming the item and the problem, so a typo in a label cannot silently
turn into a miss. `form_matches` is the matching rule the quality benchmark
(bench/extraction_quality.py) counts with:

A proposed candidate matches an expected form when
1. kind is the same, and for a profile candidate target and field are the same;
2. an ignore form matches any ignore candidate whose content is the fixed redacted text
   (nothing of the message copied into it);
3. a content of "any" matches any content;
4. otherwise, on normalized text (NFKC, case-folded), the key phrase's tokens occur in the
   proposed content in the same order, other tokens allowed in between. A token is a run of
   letters or digits, or one CJK ideograph or kana. For the profile field `name` the token
   sequences must be equal instead (an honorific such as さん or 先生 after the name is
   dropped first), so "Tom and I" is not the name "Tom";
5. and, for a profile candidate, the polarity agrees: the proposed value holds a negation
   marker ("not", "don't", "dislikes", 不, 没, 讨厌, 禁止, ない, ません, 嫌い, 苦手, ...)
   exactly when the expected form is negated (`"negated": true`, or the key phrase itself
   holds a marker). "likes cilantro" does not match an expected "cilantro" the speaker
   dislikes. Episodes are not checked: their content is the clause as typed, whose
   negations belong to it ("haven't touched one since").
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ltm.candidates import ProposedMemory

SETS_DIR = Path(__file__).resolve().parent / "extraction"
SET_NAMES = ("tuning", "heldout")
LANGUAGES = ("en", "zh", "ja")
ANY = "any"

POSITIVE_CATEGORIES = ("name", "trait", "preference", "session", "plan", "decision", "event", "remember",
                       "life_event")
NEGATIVE_CATEGORIES = ("neg.question", "neg.hypothetical", "neg.hearsay", "neg.joke", "neg.quoted",
                       "neg.instruction", "neg.smalltalk", "neg.one_off", "neg.credential")
CATEGORIES = POSITIVE_CATEGORIES + NEGATIVE_CATEGORIES

KINDS = ("profile", "episode", "ignore")
TARGETS = ("speaker", "session")
FIELDS = ("name", "traits", "preferences")
REDACTED_PREFIX = "[redacted: "

_ITEM_KEYS = {"id", "lang", "chat", "category", "text", "expect"}
_FORM_KEYS = {"kind", "target", "field", "content", "negated"}
_EXPECT_KEYS = _FORM_KEYS | {"alt"}


class SetError(ValueError):
    """A labelled set that does not follow the schema."""


@dataclass(frozen=True)
class Form:
    """One acceptable shape of an expected candidate."""

    kind: str
    target: str | None = None
    field: str | None = None
    content: str | None = None  # None: any content (always for ignore)
    negated: bool = False

    @property
    def label(self) -> str:
        """The kind as the per-kind table names it: speaker.traits, session.preferences, episode, ignore."""
        return f"{self.target}.{self.field}" if self.kind == "profile" else self.kind


@dataclass(frozen=True)
class Expected:
    """One candidate the message should yield: its main form and accepted alternatives."""

    forms: tuple[Form, ...]

    @property
    def label(self) -> str:
        return self.forms[0].label


@dataclass(frozen=True)
class Item:
    id: str
    lang: str
    chat: str
    category: str
    text: str
    expect: tuple[Expected, ...]

    @property
    def negative(self) -> bool:
        return self.category.startswith("neg.")


def set_path(name: str) -> Path:
    return SETS_DIR / f"{name}.json"


def load_set(path: Path) -> list[Item]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SetError(f"{path}: cannot read the set ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        raise SetError(f"{path}: expected an object with an 'items' list")
    items: list[Item] = []
    seen: set[str] = set()
    for number, raw in enumerate(doc["items"], start=1):
        item = _item(raw, f"{path.name} item {number}")
        if item.id in seen:
            raise SetError(f"{path.name}: id {item.id} is used twice")
        seen.add(item.id)
        items.append(item)
    return items


def _item(raw: Any, where: str) -> Item:
    if not isinstance(raw, dict):
        raise SetError(f"{where}: not an object")
    where = f"{where} ({raw.get('id', '?')})"
    if set(raw) != _ITEM_KEYS:
        raise SetError(f"{where}: keys must be {sorted(_ITEM_KEYS)}, got {sorted(raw)}")
    for key in ("id", "text"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise SetError(f"{where}: '{key}' must be a non-empty string")
    _one_of(raw["lang"], LANGUAGES, "lang", where)
    _one_of(raw["chat"], ("group", "private"), "chat", where)
    _one_of(raw["category"], CATEGORIES, "category", where)
    if not isinstance(raw["expect"], list):
        raise SetError(f"{where}: 'expect' must be a list")
    expect = tuple(_expected(e, f"{where} expect {n}") for n, e in enumerate(raw["expect"], start=1))
    category = raw["category"]
    if category == "neg.credential":
        if [e.label for e in expect] != ["ignore"]:
            raise SetError(f"{where}: a credential expects exactly one ignore candidate")
    elif category.startswith("neg."):
        if expect:
            raise SetError(f"{where}: a negative category expects no candidate")
    elif not expect:
        raise SetError(f"{where}: a positive category expects at least one candidate")
    return Item(raw["id"], raw["lang"], raw["chat"], category, raw["text"], expect)


def _expected(raw: Any, where: str) -> Expected:
    if not isinstance(raw, dict) or not set(raw) <= _EXPECT_KEYS:
        raise SetError(f"{where}: an expected candidate is an object with keys among {sorted(_EXPECT_KEYS)}")
    alternatives = raw.get("alt", [])
    if not isinstance(alternatives, list) or not all(isinstance(a, dict) for a in alternatives):
        raise SetError(f"{where}: 'alt' must be a list of forms")
    main = {k: v for k, v in raw.items() if k != "alt"}
    return Expected(tuple(_form(f, where) for f in [main, *alternatives]))


def _form(raw: dict[str, Any], where: str) -> Form:
    if not set(raw) <= _FORM_KEYS:
        raise SetError(f"{where}: unknown keys {sorted(set(raw) - _FORM_KEYS)}")
    kind = _one_of(raw.get("kind"), KINDS, "kind", where)
    negated = raw.get("negated", False)
    if not isinstance(negated, bool):
        raise SetError(f"{where}: 'negated' must be true or false")
    if kind == "ignore":
        if set(raw) != {"kind"}:
            raise SetError(f"{where}: an ignore form has only 'kind'")
        return Form("ignore")
    content = raw.get("content")
    if not isinstance(content, str) or not content.strip():
        raise SetError(f"{where}: 'content' must be a key phrase or \"any\"")
    if content != ANY and not tokens(content):
        raise SetError(f"{where}: the key phrase {content!r} has no tokens")
    if kind == "episode":
        if set(raw) - {"kind", "content"}:
            raise SetError(f"{where}: an episode form has only 'kind' and 'content'")
        return Form("episode", content=None if content == ANY else content)
    target = _one_of(raw.get("target"), TARGETS, "target", where)
    field = _one_of(raw.get("field"), FIELDS, "field", where)
    return Form("profile", target, field, None if content == ANY else content, negated)


def _one_of(value: Any, options: tuple[str, ...], key: str, where: str) -> str:
    if value not in options:
        raise SetError(f"{where}: '{key}' must be one of {', '.join(options)}, got {value!r}")
    return str(value)


# ---------------------------------------------------------------- the matching rule
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_NEGATION = re.compile(
    r"\b(?:not|no|never|nor|neither|dislikes?|disliked|hates?|hated|avoids?|avoided|cannot)\b|n't\b|"
    r"不|没|沒|(?<![特区级分告类性个识离辨])别|讨厌|受不了|禁止|严禁|ない|ません|嫌い|苦手|無理|ダメ|だめ"
)
_HONORIFIC = re.compile(r"(?:さん|くん|君|ちゃん|様|さま|先生|氏)$")


def normalized(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(normalized(text))


def has_negation(text: str) -> bool:
    return bool(_NEGATION.search(normalized(text)))


def _in_order(needle: list[str], haystack: list[str]) -> bool:
    rest = iter(haystack)
    return all(token in rest for token in needle)


def form_matches(form: Form, item: ProposedMemory) -> bool:
    if item.kind.value != form.kind:
        return False
    if form.kind == "ignore":
        return item.content.startswith(REDACTED_PREFIX)
    if form.kind == "profile" and (item.target != form.target
                                   or (item.field.value if item.field else None) != form.field):
        return False
    if form.content is None:
        return True
    if form.field == "name":
        return tokens(_HONORIFIC.sub("", item.content.strip())) == tokens(form.content)
    if not _in_order(tokens(form.content), tokens(item.content)):
        return False
    return form.kind == "episode" or has_negation(item.content) == (form.negated or has_negation(form.content))


def matching(expect: tuple[Expected, ...], produced: list[ProposedMemory]) -> dict[int, int]:
    """The largest one-to-one matching, as {produced index: expected index} (augmenting paths;
    a message has a handful of candidates, so the search is tiny)."""
    fits = [[j for j, e in enumerate(expect) if any(form_matches(f, p) for f in e.forms)] for p in produced]
    owner: dict[int, int] = {}  # expected index -> produced index

    def place(i: int, tried: set[int]) -> bool:
        for j in fits[i]:
            if j in tried:
                continue
            tried.add(j)
            if j not in owner or place(owner[j], tried):
                owner[j] = i
                return True
        return False

    for i in range(len(produced)):
        place(i, set())
    return {i: j for j, i in owner.items()}
