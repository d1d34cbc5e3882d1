"""Generic chat-text helpers of `!memory` replies (each feature's own text sits next to its handler).

Chat clients show plain text in narrow bubbles, so replies use short lines, show full ids
(operators copy them into `show`, `forget`, `archive`, `restore`), number pages as "page 2/7",
and fit one message: JSON is sent whole or summarized, never cut.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ltm import EpisodeStatus

# One chat message. Platforms cut around 4,000 characters (Telegram 4,096; QQ and
# WeChat are similar), and the command's "*" fallback delivers only ONE reply.
MAX_REPLY_CHARS = 3500
SNIPPET_CHARS = 100


def clip(text: str, limit: int = SNIPPET_CHARS) -> str:
    """One line: whitespace collapsed, cut with an ellipsis."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"

def short_time(value: str | None) -> str:
    """`2026-05-01T09:00:12.5Z` -> `2026-05-01 09:00Z`; unknown -> `-`."""
    if not value:
        return "-"
    text = str(value)
    if len(text) >= 16 and text[10] == "T":
        zone = "Z" if text.endswith("Z") else ""
        return f"{text[:10]} {text[11:16]}{zone}"
    return text

def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"

def page_title(title: str, page: int, pages: int, total: int, unit: str = "total") -> str:
    return f"{title} · page {page}/{pages} · {total} {unit}"

def statuses_label(statuses: Sequence[EpisodeStatus]) -> str:
    return "+".join(s.value for s in statuses)

def speaker_label(sender_id: str, sender_name: str) -> str:
    if sender_name and sender_id:
        return f"{sender_name} ({sender_id})"
    return sender_name or sender_id or "unknown speaker"

def compact_json(value: Any) -> str:
    """Compact (no indentation) so more fits in one chat message; still valid JSON to paste back."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

def json_or_summary(header: str, payload: Any, summary: list[str], hint: str) -> str:
    """The whole JSON when it fits one message, otherwise a summary and where to get it.

    JSON is never cut: half a document cannot be imported and silently drops data.
    """
    body = compact_json(payload)
    if len(header) + 1 + len(body) <= MAX_REPLY_CHARS:
        return f"{header}\n{body}"
    return "\n".join([f"{header}: too long for chat ({len(body)} characters of JSON)", *summary, hint])

def fit_reply(text: str) -> str:
    """Last guard for non-JSON replies: cut at a line boundary, and say so."""
    if len(text) <= MAX_REPLY_CHARS:
        return text
    kept: list[str] = []
    used = 0
    for line in text.splitlines():
        if used + len(line) + 1 > MAX_REPLY_CHARS - 40:
            if not kept:  # one huge line: keep its start rather than nothing
                kept.append(clip(line, MAX_REPLY_CHARS - 40))
            break
        kept.append(line)
        used += len(line) + 1
    kept.append("… (output shortened for chat)")
    return "\n".join(kept)
