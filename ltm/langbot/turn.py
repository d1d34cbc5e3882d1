"""One event's turn, read from the host once: what both event listeners ask before they touch memory.

    turn = await read_turn(ctx, kb_id)              # kb_id: the memory KB, or None when there is none
    if turn.kb_id is None or turn.command: ...      # not this pipeline's memory, or a `!memory` turn
    identity = await turn.identity()

`kb_id` is the memory KB only when this query's pipeline has it attached (I4); `text` is the user's
own message; `command` says whether it is `!memory ...` (such a turn never reaches a model). The bot is
read one of two ways, so a listener makes no host call it did not make before:
- `bot_with_variables=True` (the injection, which the model waits for): with a memory KB, the bot uuid
  is asked together with the query variables, one round trip; a failure of either fails the read (the
  injection then goes without memory, I6: a guessed bot would be a wrong space);
- otherwise (after the reply): only when `identity()` is asked, and a bot the query cannot give comes
  from the event's session (`live_bot_uuid`).

`spoken_at` is the message's time, from the query variables.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..identity import Identity
from ..timefields import format_utc
from .identity import identity_from_event, is_memory_command, live_bot_uuid, memory_kb_attached, user_text

_UNREAD = object()  # the bot uuid has not been asked yet


@dataclass
class Turn:
    ctx: Any
    kb_id: str | None  # the memory KB when this query's pipeline has it attached, else None
    text: str
    command: bool
    variables: Any = None
    _bot_uuid: Any = field(default=_UNREAD, repr=False)

    @property
    def spoken_at(self) -> str:
        """When the user's message was sent (query variable `msg_create_time`, epoch seconds) in UTC ISO
        8601; "" when the host does not say (docs/HOST-FACTS.md 13.3)."""
        value = self.variables.get("msg_create_time") if isinstance(self.variables, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            return ""
        try:
            return format_utc(datetime.fromtimestamp(value, UTC))
        except (OverflowError, OSError, ValueError):
            return ""

    async def identity(self) -> Identity:
        """The turn's identity (the chat and the current speaker); asks the bot uuid if not read yet."""
        if self._bot_uuid is _UNREAD:
            self._bot_uuid = await live_bot_uuid(self.ctx)
        return identity_from_event(self.ctx.event, self.variables, bot_uuid=self._bot_uuid, query_id=self.ctx.query_id)


async def read_turn(ctx: Any, kb_id: str | None, *, bot_with_variables: bool = False) -> Turn:
    """The turn of an event (`ctx`: its `EventContext`), given the memory KB's id (None: there is none)."""
    bot_uuid: Any = _UNREAD
    if kb_id is not None and bot_with_variables:  # two independent reads of the turn: one round trip
        variables, bot_uuid = await asyncio.gather(ctx.get_query_vars(), ctx.get_bot_uuid())
    else:
        variables = await ctx.get_query_vars()
    text = user_text(variables)
    attached = kb_id if kb_id is not None and memory_kb_attached(variables, kb_id) else None
    return Turn(ctx, attached, text, is_memory_command(text), variables, bot_uuid)

