"""Host-supplied identity and text, made storable once at the boundary (S1 in docs/REQUIREMENTS.md).

Whatever LangBot (or an admin typing a chat's id into an operator page) hands the plugin as an id, a
display name or a message text may hold characters that no store can keep or that a reader could
mistake for structure: a lone UTF-16 surrogate (half an emoji) cannot be encoded as UTF-8 at all,
NUL and other control characters break some vector stores and every line-based reply, bidi
controls reorder what a reader sees. The rule (docs/GUARANTEES.md, "Host identity"):

- **Ids** (launcher id, sender id, bot uuid) are *escaped*, never dropped: each C0/C1 control,
  lone surrogate, U+2028/U+2029 and bidi control (embeddings, overrides, isolates, the LRM, RLM
  and ALM marks), and white space at either end of the id (forms and command words strip it),
  becomes U+FFFD
  followed by its code point as four upper-case hex digits, and U+FFFD itself is escaped the same
  way, so the mapping is reversible (`unescape_id`) and two different raw ids never share a key.
  Every ordinary id (no such character) is kept exactly as the host gives it. A bot uuid also has
  `:` escaped and a leading `group_`/`person_` broken up, because a session key is
  `<bot uuid>:<launcher type>_<launcher id>` (or the session name alone without a bot) and must
  read back one way only. An id longer than `MAX_ID_CHARS` after escaping keeps its first 170
  characters, then U+FFFD, `#` and the SHA-256 of the raw id (an escape is never followed by `#`).
- **Display names** are *cleaned* (a name is shown, never used as a key): a lone surrogate becomes
  U+FFFD, control characters and U+2028/U+2029 become spaces, bidi controls are removed, runs of
  white space become one space, and the name is cut to `MAX_NAME_CHARS`.
- **Host texts** (the user's message as the host hands it to recall and candidate extraction) keep
  their words: a lone surrogate becomes U+FFFD, U+2028/U+2029 become line breaks, and control
  characters other than tab and line breaks are removed.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

ESCAPE = "\ufffd"
MAX_ID_CHARS = 240
MAX_NAME_CHARS = 100
_HASHED_HEAD_CHARS = 170
_HASH_MARK = ESCAPE + "#"
_BIDI = frozenset({0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)})
_LINE_SEPARATORS = frozenset({0x2028, 0x2029})
_SESSION_PREFIXES = ("group_", "person_")
_ESCAPED_FORM = re.compile("\ufffd(?:[0-9A-F]{4}|#[0-9a-f]{64})")


def _is_control(code: int) -> bool:
    return code < 0x20 or 0x7F <= code <= 0x9F


def _is_surrogate(code: int) -> bool:
    return 0xD800 <= code <= 0xDFFF


def _escaped_in_ids(code: int) -> bool:
    return (_is_control(code) or _is_surrogate(code) or code in _LINE_SEPARATORS or code in _BIDI
            or code == 0xFFFD)


def _unit(ch: str) -> str:
    return f"{ESCAPE}{ord(ch):04X}"


def _bounded(units: list[str], raw: str) -> str:
    escaped = "".join(units)
    if len(escaped) <= MAX_ID_CHARS:
        return escaped
    head: list[str] = []
    size = 0
    for unit in units:  # cut between escapes, never inside one
        if size + len(unit) > _HASHED_HEAD_CHARS:
            break
        head.append(unit)
        size += len(unit)
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
    return "".join(head) + _HASH_MARK + digest


def _units(raw: str, also: str = "") -> list[str]:
    units = [_unit(ch) if _escaped_in_ids(ord(ch)) or ch in also else ch for ch in raw]
    # White space at either end is escaped too: every form field and command word is stripped, and
    # "g1 " must neither become "g1" there nor share g1's memory.
    for index in range(len(raw)):
        if not raw[index].isspace():
            break
        units[index] = _unit(raw[index])
    for index in range(len(raw) - 1, -1, -1):
        if not raw[index].isspace():
            break
        units[index] = _unit(raw[index])
    return units


def escape_id(raw: str) -> str:
    """A launcher or sender id as the plugin keeps it (injective; ordinary ids unchanged)."""
    return _bounded(_units(raw), raw)


def escape_bot_uuid(raw: str) -> str:
    """A bot uuid as the plugin keeps it: like `escape_id`, and it never reads as a session name or
    contains the key separator `:`."""
    units = _units(raw, also=":")
    if raw.startswith(_SESSION_PREFIXES):
        units[0] = _unit(raw[0])
    return _bounded(units, raw)


def unescape_id(kept: str) -> str:
    """The raw id of a kept id (for ids that were not shortened by a hash)."""
    return re.sub("\ufffd([0-9A-F]{4})", lambda m: chr(int(m.group(1), 16)), kept)


def has_stray_characters(kept: str) -> bool:
    """True when `kept` holds a character that escaping replaces, outside an escape: no id, and no
    key built from ids, that passed the boundary does."""
    return any(_escaped_in_ids(ord(ch)) for ch in _ESCAPED_FORM.sub("", kept))


def id_problem(value: str, field: str, *, bot: bool = False) -> str | None:
    """Why `value` is not an id in the kept form (None when it is): ids the plugin holds were escaped
    at the boundary, so anything else reached the core without passing it."""
    if len(value) > MAX_ID_CHARS:
        return f"{field} is longer than {MAX_ID_CHARS} characters"
    if has_stray_characters(value):
        return f"{field} contains a control, bidi or unpaired surrogate character"
    if value != value.strip():
        return f"{field} must not start or end with white space"
    if bot and (":" in value or value.startswith(_SESSION_PREFIXES)):
        return f"{field} must not contain ':' or start like a session name"
    return None


def clean_name(value: Any) -> str:
    """A display name as the plugin keeps it (lossy; names are shown, never keys)."""
    raw = str(value or "")[: MAX_NAME_CHARS * 4]  # bounded before it is scanned
    out: list[str] = []
    for ch in raw:
        code = ord(ch)
        if _is_surrogate(code):
            out.append("\ufffd")
        elif _is_control(code) or code in _LINE_SEPARATORS:
            out.append(" ")
        elif code not in _BIDI:
            out.append(ch)
    return " ".join("".join(out).split())[:MAX_NAME_CHARS].strip()


def name_problem(value: str) -> str | None:
    """Why `value` is not a display name in the kept form (None when it is)."""
    if value != clean_name(value):
        return "sender_name contains control, bidi or unpaired surrogate characters or is too long"
    return None


def clean_host_text(value: Any) -> str:
    """A message text from the host, storable and searchable (its words kept)."""
    out: list[str] = []
    for ch in str(value or ""):
        code = ord(ch)
        if _is_surrogate(code):
            out.append("\ufffd")
        elif code in _LINE_SEPARATORS:
            out.append("\n")
        elif not _is_control(code) or ch in "\t\n\r":
            out.append(ch)
    return "".join(out)
