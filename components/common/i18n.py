"""The languages of chat replies: message catalogues of our own text, and the vocabulary of what the
core says by code.

- A **catalogue** holds the messages of one feature, each in every language, next to the code that
  sends them: `SAY = Catalogue({"stats.title": ("Episodes: {count}", "情景记忆：{count}条")})`, then
  `SAY("stats.title", count=3)`. A parameter that is not `Own` text is quoted as stored text
  (`chat_text.inert`), so stored or model text can never add structure to a reply; a `Said` from the
  core is worded from the vocabulary.
- The **vocabulary** (`vocabulary/<language>.json`, shipped with the plugin and built into the
  console's dictionaries) words every code the core sends: audit summaries, health lines, store
  traits, statuses, claim types (`ltm/wording.py`). The console and `!memory` use the same file, so
  a concept has one term per language.
- The **language** of a reply is set once per command (`speaking`); LangBot 4.11.2 sends no language
  with a query (docs/HOST-FACTS.md), so it comes from the plugin setting `reply_language`.
- The **command prefix** is the one the user typed (`!`, the full-width `！`, or `/`, which LangBot 4.12
  gives new bots), set once per command (`prefixed`): our texts are written with `!memory`, and every
  template of ours names the command with the typed prefix instead, so `/memory list` is answered with
  `/memory list 2`. Only our templates are rewritten, never a parameter (stored or user text).
- A catalogue's tuple holds English and Simplified Chinese, the two languages every author writes. The
  others (`OVERLAID`) live in overlay files, `messages/<language>.json` keyed by message id, so a feature
  module never grows a column per language: Traditional Chinese is generated from the Simplified
  (`scripts/i18n_zh_hant.py`), Japanese is written. A message an overlay lacks is said in English;
  tests/test_i18n_parity.py lists every missing or extra key per language.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from components.common.chat_text import Own, inert, own
from ltm import Said, said_from

WRITTEN = ("en_US", "zh_Hans")  # the columns of a catalogue's tuple
OVERLAID = ("zh_Hant", "ja_JP")  # from messages/<language>.json
LANGUAGES = (*WRITTEN, *OVERLAID)
DEFAULT_LANGUAGE = "en_US"
VOCABULARY_DIR = Path(__file__).with_name("vocabulary")
MESSAGES_DIR = VOCABULARY_DIR / "messages"
# Full-width separators read naturally in these languages; the others join with "; ".
_CJK = frozenset({"zh_Hans", "zh_Hant", "ja_JP"})
_FIELD = re.compile(r"\{(\w+)\}")
_LANGUAGE: contextvars.ContextVar[str] = contextvars.ContextVar("ltm_reply_language", default=DEFAULT_LANGUAGE)
COMMAND = "!memory"  # how our texts name the command; said with the prefix the user typed
DEFAULT_PREFIX = COMMAND[0]
_PREFIX: contextvars.ContextVar[str] = contextvars.ContextVar("ltm_command_prefix", default=DEFAULT_PREFIX)


def language_of(value: Any) -> str:
    """A language tag as LangBot writes it (`zh_Hans`, `zh-Hant`, `zh-CN`, `ja-JP`, `en`, ...) mapped onto
    ours; English for every other language (Spanish, Thai, ... have no reply texts)."""
    tag = str(value or "").strip().replace("-", "_").lower()
    if tag.startswith("zh"):
        return "zh_Hant" if any(t in tag for t in ("hant", "_tw", "_hk", "_mo")) else "zh_Hans"
    if tag == "ja" or tag.startswith("ja_"):
        return "ja_JP"
    return DEFAULT_LANGUAGE


@contextlib.contextmanager
def speaking(language: str) -> Iterator[None]:
    """Replies built inside this block are in `language`."""
    token = _LANGUAGE.set(language if language in LANGUAGES else DEFAULT_LANGUAGE)
    try:
        yield
    finally:
        _LANGUAGE.reset(token)


def current_language() -> str:
    return _LANGUAGE.get()


@contextlib.contextmanager
def prefixed(prefix: str) -> Iterator[None]:
    """Replies built inside this block name the command with `prefix` (what the user typed)."""
    token = _PREFIX.set(prefix or DEFAULT_PREFIX)
    try:
        yield
    finally:
        _PREFIX.reset(token)


def with_prefix(template: str) -> str:
    """Our template with the command named as the user typed it."""
    prefix = _PREFIX.get()
    return template if prefix == DEFAULT_PREFIX else template.replace(COMMAND, prefix + COMMAND[1:])


# --------------------------------------------------------------------------- vocabulary (codes of the core)
@cache
def vocabulary(language: str) -> dict[str, str]:
    path = VOCABULARY_DIR / f"{language}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.items()}


def _show(value: Any) -> str:
    if isinstance(value, Own):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, Said):
        return said(value)
    if isinstance(value, Mapping):
        found = said_from(value)
        return said(found) if found else inert(value)
    if isinstance(value, (list, tuple)):
        return ("；" if current_language() in _CJK else "; ").join(_show(v) for v in value)
    return inert(value)


def fill(template: str, params: Mapping[str, Any]) -> Own:
    """Our template (its `<placeholders>` in full-width brackets) with its parameters put in safely."""
    return Own(_FIELD.sub(lambda m: _show(params[m.group(1)]) if m.group(1) in params else m.group(0),
                          own(with_prefix(template))))


def term(key: str, default: str | None = None, **params: Any) -> Own:
    """A vocabulary entry in the current language; English when this language lacks it; `default` (as
    text that is not ours), else the key itself, when the vocabulary has no such entry at all."""
    template = vocabulary(current_language()).get(key) or vocabulary(DEFAULT_LANGUAGE).get(key)
    if template is None:
        return inert(key if default is None else default)
    return fill(template, params)


def said(value: Said) -> Own:
    """What the core said, in the current language; its English text when the code is unknown here."""
    template = vocabulary(current_language()).get(value.code) or vocabulary(DEFAULT_LANGUAGE).get(value.code)
    return fill(template, value.params) if template else inert(value.english)


@cache
def overlay(language: str) -> dict[str, str]:
    """The messages of a language beyond a catalogue's tuple, by message id (empty for the others)."""
    if language not in OVERLAID:
        return {}
    data = json.loads((MESSAGES_DIR / f"{language}.json").read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.items()}


def _in_current(message_id: str, texts: tuple[str, ...]) -> str:
    language = current_language()
    if language in WRITTEN:
        return texts[WRITTEN.index(language)]
    return overlay(language).get(message_id) or texts[0]


# --------------------------------------------------------------------------- catalogues (our own text)
class Catalogue:
    """The messages of one feature in every language; message ids are unique across catalogues."""

    ALL: ClassVar[dict[str, tuple[str, ...]]] = {}

    def __init__(self, messages: Mapping[str, tuple[str, ...]]) -> None:
        for message_id, texts in messages.items():
            if message_id in Catalogue.ALL:
                raise ValueError(f"message {message_id!r} is declared twice")
            if len(texts) != len(WRITTEN) or not all(t.strip() for t in texts):
                raise ValueError(f"message {message_id!r} needs one text per language {WRITTEN}")
            fields = [sorted(set(_FIELD.findall(t))) for t in texts]
            if any(f != fields[0] for f in fields):
                raise ValueError(f"message {message_id!r} uses different parameters per language: {fields}")
            Catalogue.ALL[message_id] = tuple(texts)
        self.messages = dict(messages)

    def __call__(self, message_id: str, /, **params: Any) -> Own:
        return fill(self.text(message_id), params)

    def text(self, message_id: str) -> str:
        """The template itself in the current language (for text that is not a whole message)."""
        return _in_current(message_id, self.messages[message_id])


def localized(texts: tuple[str, ...], message_id: str, **params: Any) -> Own:
    """A text given as `(en_US, zh_Hans)` in the current language; `message_id` names it in the overlays."""
    return fill(_in_current(message_id, texts), params)
