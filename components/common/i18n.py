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

LANGUAGES = ("en_US", "zh_Hans")
DEFAULT_LANGUAGE = "en_US"
VOCABULARY_DIR = Path(__file__).with_name("vocabulary")
_FIELD = re.compile(r"\{(\w+)\}")
_LANGUAGE: contextvars.ContextVar[str] = contextvars.ContextVar("ltm_reply_language", default=DEFAULT_LANGUAGE)


def language_of(value: Any) -> str:
    """A language tag as LangBot writes it (`zh_Hans`, `zh-CN`, `en`, ...) mapped onto ours; else English."""
    tag = str(value or "").strip().replace("-", "_").lower()
    if tag.startswith("zh") and not any(t in tag for t in ("hant", "_tw", "_hk", "_mo")):
        return "zh_Hans"
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
        return ("；" if current_language() == "zh_Hans" else "; ").join(_show(v) for v in value)
    return inert(value)


def fill(template: str, params: Mapping[str, Any]) -> Own:
    """Our template (its `<placeholders>` in full-width brackets) with its parameters put in safely."""
    return Own(_FIELD.sub(lambda m: _show(params[m.group(1)]) if m.group(1) in params else m.group(0),
                          own(template)))


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


# --------------------------------------------------------------------------- catalogues (our own text)
class Catalogue:
    """The messages of one feature in every language; message ids are unique across catalogues."""

    ALL: ClassVar[dict[str, tuple[str, ...]]] = {}

    def __init__(self, messages: Mapping[str, tuple[str, ...]]) -> None:
        for message_id, texts in messages.items():
            if message_id in Catalogue.ALL:
                raise ValueError(f"message {message_id!r} is declared twice")
            if len(texts) != len(LANGUAGES) or not all(t.strip() for t in texts):
                raise ValueError(f"message {message_id!r} needs one text per language {LANGUAGES}")
            fields = [sorted(set(_FIELD.findall(t))) for t in texts]
            if any(f != fields[0] for f in fields):
                raise ValueError(f"message {message_id!r} uses different parameters per language: {fields}")
            Catalogue.ALL[message_id] = tuple(texts)
        self.messages = dict(messages)

    def __call__(self, message_id: str, /, **params: Any) -> Own:
        texts = self.messages[message_id]
        return fill(texts[LANGUAGES.index(current_language())], params)

    def text(self, message_id: str) -> str:
        """The template itself in the current language (for text that is not a whole message)."""
        return self.messages[message_id][LANGUAGES.index(current_language())]


def localized(texts: tuple[str, ...], **params: Any) -> Own:
    """A text given in every language (`(en_US, zh_Hans)`) in the current one."""
    return fill(texts[LANGUAGES.index(current_language())], params)
