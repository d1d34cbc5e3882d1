"""The lines that head a `!memory` reply: the health report's, and the chat's names.

A chat is named as the platform names it (its group's name, or in a private chat its speaker's), from
the labels the listener keeps (`ltm/chat_labels.py`); a chat whose names are not known yet gets no line.
Health items are named by their short key in English (what the docs name; `pipeline` as LangBot's
English WebUI says it, processor), by the vocabulary's words otherwise.
"""

from __future__ import annotations

from components.common.chat_text import Own, lines
from components.common.i18n import Catalogue, current_language, said, term
from ltm import ChatLabel, HealthReport, Level, MemoryScope, split_chat_key

SAY = Catalogue({
    "views.health_title": ("Memory health: {level}", "记忆健康状况：{level}"),
    "views.health_item": ("{level} {item}: {message}", "{level} {item}：{message}"),
    "headings.group": ("Chat: group “{name}” ({id})", "聊天：群聊“{name}”（{id}）"),
    "headings.person": ("Chat: private chat with “{name}” ({id})", "聊天：与“{name}”的私聊（{id}）"),
    "headings.speaker": ("Latest speaker: {name}", "最近的发言者：{name}"),
})
# LangBot's English WebUI calls a pipeline a processor (its API keeps "pipeline", and so does the item's key).
_ENGLISH_ITEMS = {"pipeline": "processor"}


def level_label(level: Level) -> Own:
    """In English the chat says GREEN/AMBER/RED (a plain-text reader finds the word at a glance); in
    Chinese it uses the vocabulary's level words, as the console does."""
    return Own(level.value.upper()) if current_language() == "en_US" else term(f"level.{level.value}")


def item_label(key: str) -> Own:
    """The checked item: its short key in English (what the docs name), the vocabulary's name otherwise."""
    return Own(_ENGLISH_ITEMS.get(key, key)) if current_language() == "en_US" else term(f"item.{key}")


def chat_line(label: ChatLabel, scope: MemoryScope) -> Own | None:
    """This chat as the platform names it; None while no turn has named it."""
    chat_type, _, chat_id = split_chat_key(scope.chat_key)[1].partition("_")
    if chat_type == "group" and label.chat_name:
        heading = SAY("headings.group", name=label.chat_name, id=chat_id)
        return lines(heading, SAY("headings.speaker", name=label.sender_name)) if label.sender_name else heading
    if chat_type == "person" and label.sender_name:
        return SAY("headings.person", name=label.sender_name, id=chat_id)
    return None


def health_text(report: HealthReport, chat: Own | None = None) -> Own:
    return lines(SAY("views.health_title", level=level_label(report.level)), chat,
                 [SAY("views.health_item", level=level_label(item.level), item=item_label(item.key),
                      message=said(item.said)) for item in report.items])
