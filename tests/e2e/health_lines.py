"""The checks of a `!memory health` reply as the real-host tests read them: every line after the title,
without the lines that name the chat and its latest speaker (labels, not checks; components/commands/
headings.py writes them)."""

from __future__ import annotations

NAME_LINES = ("Chat: ", "Latest speaker: ")


def health_checks(reply: str) -> list[str]:
    lines = [line.rstrip() for line in reply.splitlines()]
    return [line for line in lines[1:] if not line.startswith(NAME_LINES)]
