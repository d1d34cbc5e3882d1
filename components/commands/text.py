"""Generic reply helpers of `!memory` (each feature's own text sits next to its handler).

Chat clients show narrow bubbles, so replies use short lines, show full ids (operators copy them
into `show`, `forget`, `archive`, `restore`), number pages as "page 2/7", and fit one message:
JSON is sent whole or summarized, never cut. How a reply is marked up so it reads the same as
Markdown and as plain text is `components/common/chat_text.py`; its languages are
`components/common/i18n.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.common.chat_text import HARD_BREAK, MAX_REPLY_CHARS, Own, inert, json_text, lines
from components.common.i18n import WRITTEN, Catalogue, current_language, overlay, term
from ltm import EpisodeStatus, MessageRef

SAY = Catalogue({
    "text.page": ("{title} · page {page}/{pages} · {total} {unit}",
                  "{title} · 第 {page}/{pages} 页 · 共 {total} {unit}"),
    "text.unknown_speaker": ("unknown speaker", "未知发言者"),
    "text.message": ("Message: {message_id} in {chat} (a recall of it withdraws this memory)",
                     "消息：{chat} 中的 {message_id}（撤回该消息会撤销这条记忆）"),
    "text.json_too_long": ("{header}: too long for chat ({chars} characters of JSON)",
                           "{header}：太长，无法在聊天中发送（JSON 共 {chars} 个字符）"),
})

Noun = tuple[str, str, str]  # English singular, English plural, Chinese (with its measure word)


def _word(noun: Noun, count: int) -> str:
    """The noun after a count; a language beyond the tuple has it in its overlay as `noun.<plural>`."""
    language = current_language()
    if language == "zh_Hans":
        return noun[2]
    if language not in WRITTEN:
        return overlay(language).get(f"noun.{noun[1]}") or noun[1]
    return noun[0] if count == 1 else noun[1]


# The nouns several subcommands count.
EPISODES: Noun = ("episode", "episodes", "条情景记忆")
SPEAKER_PROFILES: Noun = ("speaker profile", "speaker profiles", "个发言者画像")


def counted(count: int, noun: Noun) -> Own:
    """`1 episode`, `3 episodes`, `3 条情景记忆`, `3 件のエピソード`."""
    return Own(f"{count} {_word(noun, count)}")


def short_time(value: str | None) -> Own:
    """`2026-05-01T09:00:12.5Z` -> `2026-05-01 09:00Z`; unknown -> `-`."""
    if not value:
        return Own("-")
    text = str(value)
    if len(text) >= 16 and text[10] == "T":
        zone = "Z" if text.endswith("Z") else ""
        return inert(f"{text[:10]} {text[11:16]}{zone}")
    return inert(text)


TOTAL: Noun = ("total", "total", "条")


def page_title(title: Own, page: int, pages: int, total: int, unit: Noun = TOTAL) -> Own:
    return SAY("text.page", title=title, page=page, pages=pages, total=total, unit=Own(_word(unit, 2)))


def statuses_label(statuses: Sequence[EpisodeStatus]) -> Own:
    return Own("+".join(term(f"status.{s.value}") for s in statuses))


def status_label(status: EpisodeStatus | str) -> Own:
    return term(f"status.{status.value if isinstance(status, EpisodeStatus) else status}")


def speaker_label(sender_id: str, sender_name: str) -> Own:
    if sender_name and sender_id:
        return Own(f"{inert(sender_name, 60)} ({inert(sender_id, 80)})")
    return inert(sender_name or sender_id, 80) if (sender_name or sender_id) else SAY("text.unknown_speaker")


def message_lines(message: MessageRef | None) -> list[Own]:
    """The platform message a record came from (X1), as one line; none when it names none."""
    if message is None:
        return []
    return [SAY("text.message", message_id=inert(message.message_id, 80), chat=inert(message.chat_key, 120))]


def json_or_summary(header: Own, payload: Any, summary: list[Own], hint: Own) -> Own:
    """The whole JSON when it fits one message, otherwise a summary and where to get it.

    JSON is never cut: half a document cannot be imported and silently drops data.
    """
    body = json_text(payload)
    if len(header) + len(HARD_BREAK) + len(body) <= MAX_REPLY_CHARS:
        return lines(header, body)
    return lines(SAY("text.json_too_long", header=header, chars=len(body)), summary, hint)
