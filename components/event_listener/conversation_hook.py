"""NormalMessageResponded: the finished turn into the chat's conversation record (V1), off the reply path.

Only while the installation has `conversation_enabled` on, and only in pipelines whose runner has the
memory KB attached (as for injection, I4); a command to this plugin is never recorded (it never reaches
the reply stage anyway). The host holds the bot's reply until the handler returns, so the handler does
no storage write and no model call, and normally no host call at all:

1. **What was said** is what the injection read for the same query at PromptPreProcessing (`heard`:
   the identity, the user's words, `msg_create_time`), kept here for at most ten minutes. Only when it
   is missing (the injection failed, the plugin restarted in between) is the turn read from the live
   query again (one host call, and the bot's uuid when the query lacks it).
2. **The reply** is the event's `response_text`. LangBot emits the event once per assistant result
   with content (docs/HOST-FACTS.md 3.3): with streaming output once per chunk, each holding the text so
   far, and, when the pipeline tracks function calls, once for a "Calling ..." notice. A result that
   calls tools (`funcs_called`) is not the reply and is skipped; each later event of the same query
   replaces the reply, and the turn is recorded once its query has been quiet for `REPLY_QUIET_S`.
3. **Recording** (`record_turn`, and the fold it starts when one is due, by the chat model for up to
   30 s, single-flight per chat) runs in a background task started with a fresh context, like candidate
   extraction: it makes no query-scoped call. Errors are logged there, never raised into the turn.

The platform's message id does not reach a plugin in LangBot 4.11.2 (HOST-FACTS 13.3): turns are
recorded without one. An event of a query already recorded (a stream that paused longer than the quiet
time) is logged and left out: the record keeps the reply as it was when recorded.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from components.common.settle import settle
from components.event_listener.candidate_listener import SeenQueries
from ltm import Identity, KBSettings, MemoryScope, MemoryService, SpokenTurn, TurnRecorded, detached
from ltm.langbot import Turn

log = logging.getLogger("LongTermMemory")

REPLY_QUIET_S = 1.0  # a query's reply is final once no event of it came for this long (read when used)
HEARD_TTL_S = 600.0


async def quiet_time() -> None:
    """One wait for more events of a query (a function of its own, so a test can hold it)."""
    await asyncio.sleep(REPLY_QUIET_S)


HEARD_LIMIT = 4096


@dataclass
class Heard:
    """What a turn said, as the injection read it (or the responded event, when the injection did not)."""

    identity: Identity
    text: str
    at: str
    command: bool = False


@dataclass
class Pending:
    heard: Heard | None  # None while the turn is being read from the host
    reply: str
    changes: int = 0  # later events of the query (each replaced the reply)


QueryKey = tuple[Any, str]


def query_key(ctx: Any) -> QueryKey:
    return (ctx.query_id, str(getattr(ctx, "query_uuid", "") or ""))


class ConversationHook:
    def __init__(self) -> None:
        self._heard: OrderedDict[QueryKey, tuple[float, Heard]] = OrderedDict()
        self._pending: dict[QueryKey, Pending] = {}
        self._recorded = SeenQueries()
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ PromptPreProcessing
    def forget(self, ctx: Any) -> None:
        """A new query of this number (LangBot counts from 0 again after a restart): nothing an earlier one
        left is taken for it."""
        self._heard.pop(query_key(ctx), None)

    def heard(self, ctx: Any, turn: Turn, identity: Identity) -> None:
        """The injection's read of this query's turn, for its reply's event."""
        key = query_key(ctx)
        now = time.monotonic()
        self._heard[key] = (now, Heard(identity, turn.text, turn.spoken_at, turn.command))
        while self._heard and (len(self._heard) > HEARD_LIMIT
                               or now - next(iter(self._heard.values()))[0] > HEARD_TTL_S):
            self._heard.popitem(last=False)

    # ------------------------------------------------------------------ NormalMessageResponded
    async def responded(self, ctx: Any, memory: MemoryService, found: tuple[str, KBSettings] | None,
                        read: Callable[[], Awaitable[Turn]]) -> None:
        if found is None or not found[1].conversation_enabled:
            return
        event = ctx.event
        if getattr(event, "funcs_called", None):
            return  # a round that calls tools, or LangBot's "Calling ..." notice: not the reply
        key = query_key(ctx)
        reply = str(getattr(event, "response_text", "") or "")
        pending = self._pending.get(key)
        if pending is not None:  # a later event of the same query: a longer stream, a second result
            pending.reply, pending.changes = reply or pending.reply, pending.changes + 1
            return
        mark = (*key, str(getattr(event, "launcher_id", "") or ""))
        if not self._recorded.first_time(mark):
            log.debug("[LongTermMemory] conversation turn of query=%s already recorded; a late reply left out",
                      ctx.query_id)
            return
        pending = self._pending[key] = Pending(None, reply)  # before the read: later events update it
        try:
            pending.heard = await self._heard_or_read(key, read)
        finally:
            if pending.heard is None:
                self._pending.pop(key, None)
                self._recorded.forget(mark)  # not read (a host error): a later event of the query may record it
        if pending.heard is None:
            return
        task = detached(self._record(memory, key, pending))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _heard_or_read(self, key: QueryKey, read: Callable[[], Awaitable[Turn]]) -> Heard | None:
        kept = self._heard.pop(key, None)
        if kept is not None:
            return kept[1]
        turn = await read()
        if turn.kb_id is None:
            return None  # I4: not a pipeline of the memory KB
        return Heard(await turn.identity(), turn.text, turn.spoken_at, turn.command)

    async def _record(self, memory: MemoryService, key: QueryKey, pending: Pending) -> None:
        """Background: wait for the query's reply to settle, then one service call."""
        seen = -1
        while seen != pending.changes:
            seen = pending.changes
            await quiet_time()
        self._pending.pop(key, None)
        heard = pending.heard
        assert heard is not None  # a task is started only once the turn was read

        async def record() -> tuple[MemoryScope, TurnRecorded]:
            scope = await memory.scope_for(heard.identity)
            return scope, await memory.record_turn(scope, SpokenTurn(
                user_text=heard.text, reply_text=pending.reply, sender_id=heard.identity.sender_id,
                sender_name=heard.identity.sender_name, message_id=heard.identity.message_id, at=heard.at,
                to_plugin=heard.command))

        done = await settle(lambda: f"conversation record query={heard.identity.query_id} "
                                    f"scope={heard.identity.chat_key}",
                            record, refused=lambda exc: None, failed=lambda: None, refusal_level=logging.WARNING)
        if done is None:
            return
        scope, result = done
        fold = result.fold
        log.info("[LongTermMemory] conversation turn recorded query=%s scope=%s turn=%s skipped=%s withheld=%d "
                 "folded_at_once=%d fold=%s", heard.identity.query_id, scope.chat_key,
                 result.turn.seq if result.turn else "-", result.skipped.value if result.skipped else "-",
                 result.withheld, result.folded_at_once,
                 f"{fold.folded}/{fold.source.value}" if fold and not fold.in_flight else
                 ("in_flight" if fold else "-"))
