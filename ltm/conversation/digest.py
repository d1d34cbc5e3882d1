"""The summary without a model: one short line per folded turn, newest kept, within the budget (V2).

Deterministic and cheap (no host call): a turn's line is the first sentence of what the speaker said
and the first sentence of the reply, each cut to a few words. The digest is kept beside every summary,
the model's too, because it is what a speaker's erasure can rebuild the summary from (a model's text
mixes every speaker's words; a digest line has exactly one speaker).

When the lines outgrow the summary budget, the oldest go first and the rendering says how many
earlier turns it no longer shows: what a chat said most recently matters most to its next turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from .model import DigestLine, RecordedTurn, Summary

USER_WORDS = 160  # characters of the speaker's first sentence in a digest line
REPLY_WORDS = 100  # characters of the reply's first sentence
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")


def first_sentence(text: str, limit: int) -> str:
    """The first sentence of `text` on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    head = _SENTENCE_END.split(text.strip(), maxsplit=1)[0] if text.strip() else ""
    sentence = " ".join(head.split()) or flat
    return sentence if len(sentence) <= limit else sentence[: max(limit - 1, 0)].rstrip() + "…"


def digest_line(turn: RecordedTurn) -> DigestLine:
    said = first_sentence(turn.user_text, USER_WORDS)
    answered = first_sentence(turn.reply_text, REPLY_WORDS)
    text = f"{said} → {answered}" if said and answered else said or f"→ {answered}"
    return DigestLine(turn.seq, turn.at, turn.sender_id, turn.sender_name, text)


def render_line(line: DigestLine) -> str:
    when = line.at[:16].replace("T", " ")
    who = line.sender_name or line.sender_id or "?"
    return f"{when} {who}: {line.text}".strip()


def render(lines: Iterable[DigestLine], dropped: int) -> str:
    shown = [render_line(line) for line in lines]
    if dropped:
        shown.insert(0, f"(+{dropped} earlier turns)")
    return "\n".join(shown)


def fitted(lines: tuple[DigestLine, ...], dropped: int, budget: int) -> tuple[tuple[DigestLine, ...], int]:
    """The newest lines whose rendering (with its "earlier turns" note) fits `budget`, and the new count of
    dropped lines. A single line longer than the budget is cut to it."""
    kept = list(lines)
    while kept and len(render(kept, dropped)) > budget:
        if len(kept) > 1:
            kept.pop(0)
            dropped += 1
            continue
        line = kept[0]
        room = budget - len(render([replace(line, text="")], dropped)) - 2  # the space and the ellipsis
        if room > 0:
            kept[0] = replace(line, text=line.text[:room] + "…")
        if room <= 0 or len(render(kept, dropped)) > budget:
            kept, dropped = [], dropped + 1
        break
    return tuple(kept), dropped


def extended(summary: Summary, turns: Iterable[RecordedTurn], budget: int) -> tuple[tuple[DigestLine, ...], int]:
    """The summary's digest with one line per newly folded turn, fitted to `budget`."""
    lines = summary.digest + tuple(digest_line(t) for t in turns)
    return fitted(lines, summary.dropped, budget)


def without_speaker(summary: Summary, sender_id: str, budget: int) -> tuple[tuple[DigestLine, ...], int]:
    lines = tuple(line for line in summary.digest if line.sender_id != sender_id)
    return fitted(lines, summary.dropped, budget)
