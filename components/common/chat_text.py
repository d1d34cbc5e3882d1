"""The rendering rule of every chat reply: one text that reads right as Markdown and as plain text.

LangBot's WebUI debug chat, Discord and Telegram render a reply as Markdown (CommonMark with GitHub's
extensions, raw HTML included in the WebUI); QQ and WeChat show it as plain text. So a reply is
written once, as lines, and this module turns it into text that both kinds of client show the same:

- **Lines stay lines.** Every line but the last ends with two spaces (a Markdown hard line break;
  invisible in plain text), except on a platform that shows text as it is (QQ, WeChat: `plain=True`,
  `ltm/langbot/platforms.py`), where they would only be trailing spaces. Leading indentation becomes
  no-break spaces, which Markdown keeps and which never start a code block. A line of our own that
  would start a Markdown block (`- `, `1. `, `# `, `> `, `---`, a fence, a table row) gets one
  no-break space in front, so it stays text.
- **Placeholders are full-width**: `<id>` in our own text is written `＜id＞` (Markdown would read
  `<id>` as an HTML tag and drop it). Ids are plain words (hex, `c-…`), visible everywhere.
- **No Markdown lists or tables.** A list is lines that start with `[n]` or `•`; a table is
  `label: value` lines. Both read the same in either kind of client.
- **Text that is not ours stays inert** (`quote`, and every plain `str` given to a message): stored
  memories, model output, names, queries and ids become one line (line breaks, U+2028/U+2029 and
  the other separators become ` ↵ `), bidi overrides and control characters become U+FFFD, and the
  characters Markdown would act on (`` ` `` `*` `_` `~`, `<` before a tag, `&` of an entity, `\\`
  before punctuation, and a `[...]` pair that a link could be made of: one whose `]` is followed by
  `(`, `[` or `:`, or ends the text) become look-alikes that Markdown leaves alone. A bracket pair
  that cannot make a link stays as written (`[scripted draft] ...`). So quoted text
  cannot break a line, start one, open a code span across lines, or imitate a line of the reply.
- **JSON** (`json_text`) stays valid JSON to paste back: inside strings the same characters are
  written as JSON unicode escapes (a backslash, `u` and four hex digits), so Markdown shows
  exactly what plain text shows.
- **One message**: `render` cuts at a line boundary to `MAX_REPLY_CHARS` and says so.

The API: text we write is `Own` (what `Catalogue` messages return, `own`, `lines`); anything else
is quoted on the way in. `render` makes the final text; `tests/test_reply_rendering.py` renders
every reply through markdown-it-py and checks that each line and each placeholder survives.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ltm.secrets import REDACTED, secret_kind

# One chat message. Platforms cut around 4,000 characters (Telegram 4,096; QQ and
# WeChat are similar), and the command's "*" fallback delivers only ONE reply.
MAX_REPLY_CHARS = 3500
SNIPPET_CHARS = 100
HARD_BREAK = "  \n"
NBSP = "\u00a0"
SHORTENED = "… (output shortened for chat)"


class Own(str):
    """Text the plugin wrote itself (a message, an id list it built): trusted by the rendering rule."""

    __slots__ = ()


_PLACEHOLDER = re.compile(r"<([a-z][a-z0-9_|.\-]*)>")


def own(text: str) -> Own:
    """Our own text, with its `<placeholders>` written in full-width brackets."""
    return Own(_PLACEHOLDER.sub(r"＜\1＞", text))


# --------------------------------------------------------------------------- text that is not ours
_LINE_BREAKS = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# C0/C1 controls (tab aside) and the bidi embeddings, overrides and isolates, which can reorder
# the rest of a line on screen.
_UNSAFE = re.compile(r"[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069]")
_INERT_CHARS = str.maketrans({"`": "ˋ", "*": "∗", "~": "∼"})
_LINKING_CLOSE = re.compile(r"\](?=[(\[:]|$)")  # `[a](b)`, `[a][b]`, `[a]: b`, or what our text puts after it
_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")  # intraword `_` never makes emphasis
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?@#:$%])")  # HTML tags, autolinks, Discord mentions and emoji
_ENTITY = re.compile(r"&(?=#[0-9]{1,7};|#[xX][0-9A-Fa-f]{1,6};|[A-Za-z][A-Za-z0-9]{1,31};)")
_ESCAPE = re.compile(r"\\(?=[!-/:-@\[-`{-~])")  # a backslash escape would eat the character after it
_MASS_MENTION = re.compile(r"@(?=everyone|here)")


def inert(value: Any, limit: int | None = None) -> Own:
    """Text that is not ours, made inert: one line, nothing Markdown acts on, cut to `limit`. Text that
    holds a credential (a key pasted where a name or a word was expected) is never echoed, not even
    cut short: the reply shows "<redacted>" in its place."""
    text = _SURROGATE.sub("\ufffd", str(value if value is not None else ""))
    if secret_kind(text):
        text = REDACTED
    text = _LINE_BREAKS.sub(" ↵ ", text)
    text = " ".join(_UNSAFE.sub("\ufffd", text).split())
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 1)].rstrip() + "…"
    text = _ESCAPE.sub("＼", text)
    text = _UNDERSCORE.sub("＿", _unlinked(text.translate(_INERT_CHARS)))
    text = _ENTITY.sub("＆", _TAG_OPEN.sub("‹", text))
    return Own(_MASS_MENTION.sub("@\u200b", text))


def _unlinked(text: str) -> str:
    """Every `]` that could close a link, and the `[` it would pair with, written full-width."""
    if "]" not in text:
        return text
    chars = list(text)
    for match in reversed(list(_LINKING_CLOSE.finditer(text))):
        chars[match.start()] = "］"
        opening = text.rfind("[", 0, match.start())
        if opening != -1:
            chars[opening] = "［"
    return "".join(chars)


def quote(value: Any, limit: int | None = SNIPPET_CHARS) -> Own:
    """Stored or model text in quotation marks: inert, one line, visibly not a line of the reply."""
    return Own(f"“{inert(value, limit)}”")


def clip(value: Any, limit: int = SNIPPET_CHARS) -> Own:
    """A value of ours or the user's (an id, a name, a key) shortened to one inert line."""
    return inert(value, limit)


# --------------------------------------------------------------------------- JSON
_JSON_ESCAPES = re.compile(r'\\(["\\/])')
# Markdown's characters, and the line separators and bidi controls a stored text may hold (a recorded
# chat turn keeps them), which would break or reorder the line on screen.
_JSON_ACTIVE = re.compile(r"[`*~\[\]<>&\u2028\u2029\u202a-\u202e\u2066-\u2069]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def _inert_json_string(match: re.Match[str]) -> str:
    body = _JSON_ESCAPES.sub(lambda m: f"\\u{ord(m.group(1)):04x}", match.group(0)[1:-1])
    return '"' + _JSON_ACTIVE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", body) + '"'


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def json_text(payload: Any) -> Own:
    """Compact JSON (more fits one message) that Markdown shows unchanged and that still parses."""
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    raw = _SURROGATE.sub("\ufffd", raw)
    return Own(_JSON_STRING.sub(_inert_json_string, raw))


# --------------------------------------------------------------------------- lines and the final text
def lines(*parts: str | Iterable[str | None] | None) -> Own:
    """Join lines of our own (strings, lists of strings; None is skipped) into one text."""
    out: list[str] = []
    for part in parts:
        if part is None:
            continue
        if isinstance(part, str):
            out.append(part)
        else:
            out.extend(p for p in part if p is not None)
    return Own("\n".join(out))


_BLOCK_START = re.compile(
    r"(?:#{1,6}(?:\s|$)|>|[-+*](?:\s|$)|\d{1,9}[.)](?:\s|$)|(?:[-=_*]\s*){3,}$|=+\s*$|`{3,}|~{3,}|\||<)")


def _line(text: str) -> str:
    body = text.rstrip()
    stripped = body.lstrip(" \t")
    indent = len(body) - len(stripped)
    if indent:
        return NBSP * indent + stripped
    if _BLOCK_START.match(stripped):
        return NBSP + stripped
    return stripped


def _fit(rows: list[str], limit: int) -> list[str]:
    total = sum(len(r) + len(HARD_BREAK) for r in rows)
    if total <= limit:
        return rows
    kept: list[str] = []
    used = len(SHORTENED)
    for row in rows:
        if used + len(row) + len(HARD_BREAK) > limit:
            if not kept:  # one huge line: keep its start rather than nothing
                kept.append(row[: max(limit - used - len(HARD_BREAK) - 1, 1)] + "…")
            break
        kept.append(row)
        used += len(row) + len(HARD_BREAK)
    return [*kept, SHORTENED]


def render(reply: str, limit: int = MAX_REPLY_CHARS, *, plain: bool = False) -> str:
    """The reply as sent: hard line breaks (none for a plain-text platform, `plain`), indentation kept,
    no line that starts a Markdown block, cut at a line boundary to one message. Blank lines stay
    paragraph breaks."""
    rows = _fit([_line(row) for row in own(reply).split("\n")], limit)
    out = []
    for index, row in enumerate(rows):
        last = plain or index == len(rows) - 1 or not rows[index + 1] or not row
        out.append(row if last else row + "  ")
    return "\n".join(out)
