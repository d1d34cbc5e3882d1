"""What one finished turn becomes before it is stored: cleaned, bounded, and without credentials (V1).

The listener hands over the host's raw values (`SpokenTurn`); `prepared` makes them storable once:

- texts are cleaned like every host text (`ltm/host_values.py`: a lone surrogate becomes U+FFFD,
  control characters go), so a 50,000-character message or half an emoji cannot break a store;
- each side is cut to the chat's side budget (`ConversationLimits.side_chars`) *before* anything
  scans it, so the cost of a hostile message is bounded by the budget, not by its length;
- **a side that looks like a credential is withheld whole** (`WITHHELD`): the one detector
  (`ltm/secrets/` through `ltm/guards.py`) says *that* a text holds a secret, not *where*, and a cut
  around a guessed span could leave half a key behind. The turn itself is kept (who spoke, when,
  that the bot answered), so the record still says something was said;
- a turn addressed to the plugin (`!memory ...`: the caller knows, `to_plugin`) or with neither a
  message nor a reply is not recorded at all (`not_recorded`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..errors import ValidationError
from ..guards import refuse_secrets
from ..host_values import clean_host_text, clean_name
from .model import WITHHELD, ConversationLimits


class NotRecorded(str, enum.Enum):
    """Why a finished turn left the record unchanged."""

    DISABLED = "disabled"  # conversation_enabled is off, or there is no memory KB
    TO_PLUGIN = "to_plugin"  # a command to this plugin: it never reached a model
    EMPTY = "empty"  # neither a message nor a reply


@dataclass(frozen=True)
class SpokenTurn:
    """One finished turn as the host gave it (phase 2: the listener's `Turn` and the reply event)."""

    user_text: str
    reply_text: str
    sender_id: str = ""  # in the kept form (`Identity`: escaped at the boundary); empty: the scope's speaker
    sender_name: str = ""
    message_id: str = ""
    at: str = ""  # UTC ISO 8601; empty: the time it is recorded
    to_plugin: bool = False  # the caller's `is this our command` (the adapter knows the prefixes)


@dataclass(frozen=True)
class PreparedTurn:
    sender_id: str
    sender_name: str
    message_id: str
    user_text: str
    reply_text: str
    at: str
    withheld: int  # how many sides were withheld as credentials (0-2)


def not_recorded(turn: SpokenTurn) -> NotRecorded | None:
    """Why this turn is not recorded (None: it is): the check the caller's flag and the texts decide."""
    if turn.to_plugin:
        return NotRecorded.TO_PLUGIN
    if not str(turn.user_text or "").strip() and not str(turn.reply_text or "").strip():
        return NotRecorded.EMPTY
    return None


def bounded(text: str, limit: int) -> str:
    """`text` cleaned and cut to `limit` characters (an ellipsis marks the cut); cut before it is cleaned,
    so the work done on a hostile text never exceeds a small multiple of the limit."""
    raw = str(text or "")[: limit * 2]
    cleaned = clean_host_text(raw).strip()
    return cleaned if len(cleaned) <= limit else cleaned[: max(limit - 1, 0)].rstrip() + "…"


def without_credentials(text: str) -> tuple[str, bool]:
    """(`text`, False), or (`WITHHELD`, True) when the one secret detector finds a credential in it."""
    try:
        refuse_secrets([("message", text)])
    except ValidationError:
        return WITHHELD, True
    return text, False


# Longer than any credential the detector knows: a key that starts before the cut ends inside this margin.
_KEY_MARGIN = 512


def _side(text: str, limit: int) -> tuple[str, bool]:
    """One side of a turn, withheld or cut to `limit`. The detector reads past the cut first: cutting first
    could leave the start of a key behind that it no longer recognises."""
    wide = bounded(text, limit + _KEY_MARGIN)
    kept, withheld = without_credentials(wide)
    return (kept, True) if withheld else (bounded(wide, limit), False)


def prepared(turn: SpokenTurn, limits: ConversationLimits, now: str) -> PreparedTurn:
    user, user_withheld = _side(turn.user_text, limits.side_chars)
    reply, reply_withheld = _side(turn.reply_text, limits.side_chars)
    return PreparedTurn(sender_id=str(turn.sender_id or ""), sender_name=clean_name(turn.sender_name),
                        message_id=bounded(turn.message_id, 200), user_text=user, reply_text=reply,
                        at=turn.at or now, withheld=int(user_withheld) + int(reply_withheld))
