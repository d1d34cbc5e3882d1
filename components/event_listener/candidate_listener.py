"""NormalMessageResponded: memory candidates from the user's own message (Q1-Q4 in docs/REQUIREMENTS.md).

Registered by `MemoryInjector` (a plugin gets each event in its first EventListener
component only, docs/HOST-FACTS.md 3.2), so this is a helper, not a component.

The handler runs while the host holds the bot's reply (the reply is sent after the event
returns), so it does as little as possible and never fails the turn:
1. the memory KB must exist and have `candidate_extraction_enabled` (no host call when off); while
   neither it nor the conversation record is on, the event is not even listened to
   (`CandidateListener.follow`, set by each turn's injection);
2. the memory KB must be attached to this pipeline (`_knowledge_base_uuids`, one host call, shared
   with the conversation record when it needs the turn too);
3. the text is the query variable `user_message_text`, the user's own words. The event's
   `response_text` (the assistant's reply) is never read, not even when the user text is
   empty: then nothing is proposed;
4. once per query: with streaming output the event can fire more than once per turn;
5. the identity is read from the live query (bot uuid, speaker), then extraction, the check
   against memory (a proposal whose fact the speaker's episodes or profile already hold, such
   as what this turn's `remember` call just stored, is not queued), and
   storage run in a background task started with a fresh context: a task that inherits the
   invocation loses host access when the handler returns (docs/HOST-FACTS.md 10), and it
   uses no query-scoped API.
`prevent_default()` is never called: it would drop the reply.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

from langbot_plugin.api.entities import context, events

from components.common.settle import settle
from ltm import CandidateRun, Identity, KBSettings, MemoryScope, MemoryService, detached
from ltm.langbot import Turn, read_turn

if TYPE_CHECKING:
    from components.event_listener.conversation_hook import ConversationHook

log = logging.getLogger("LongTermMemory")

SEEN_TTL_SECONDS = 600.0
SEEN_LIMIT = 4096


T = TypeVar("T")


def once(read: Callable[[], Awaitable[T]]) -> Callable[[], Awaitable[T]]:
    """`read` called on the first await only; later awaits get the same answer (or the same error)."""
    task: asyncio.Future[T] | None = None

    async def first() -> T:
        nonlocal task
        if task is None:
            task = asyncio.ensure_future(read())
        return await task
    return first


class SeenQueries:
    """Queries already handled in this process: at most `limit` (oldest forgotten first), each for `ttl`
    seconds. LangBot numbers queries from 0 again after a restart, so a key also names the chat."""

    def __init__(self, ttl: float = SEEN_TTL_SECONDS, limit: int = SEEN_LIMIT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._limit = limit
        self._clock = clock
        self._seen: OrderedDict[Hashable, float] = OrderedDict()

    def first_time(self, key: Hashable) -> bool:
        now = self._clock()
        while self._seen:
            oldest, at = next(iter(self._seen.items()))
            if now - at < self._ttl:
                break
            del self._seen[oldest]
        if key in self._seen:
            return False
        self._seen[key] = now
        while len(self._seen) > self._limit:
            self._seen.popitem(last=False)
        return True

    def forget(self, key: Hashable) -> None:
        """`key` was not handled after all: its next event is a first time again."""
        self._seen.pop(key, None)

    def __len__(self) -> int:
        return len(self._seen)


class CandidateListener:
    """Adds the NormalMessageResponded handler to the plugin's one EventListener component: candidate
    extraction here, and the conversation record (`conversation_hook.py`), each on its own so one
    failing never stops the other; the turn is read from the host at most once for both."""

    def __init__(self, component: Any, conversation: ConversationHook) -> None:
        self._component = component
        self._conversation = conversation
        self._seen = SeenQueries()
        self._tasks: set[asyncio.Task[None]] = set()

        async def on_responded(ctx: context.EventContext) -> None:
            try:
                memory: MemoryService = self._component.plugin.memory
                found = await memory.memory_kb()
                read = once(lambda: read_turn(ctx, found[0] if found else None))
            except Exception:  # an exception here would fail the user's turn
                log.exception("[LongTermMemory] no memory KB read after the reply query=%s", ctx.query_id)
                return
            for what, hand_off in (("candidate extraction", self._hand_off),
                                   ("conversation record", self._conversation.responded)):
                try:
                    await hand_off(ctx, memory, found, read)
                except Exception:  # an exception here would fail the user's turn
                    log.exception("[LongTermMemory] %s not started query=%s", what, ctx.query_id)

        self._handler = on_responded

    def register(self) -> None:
        self.follow(True)

    def follow(self, enabled: bool) -> None:
        """Listen to NormalMessageResponded only while the memory KB extracts candidates or records the
        conversation. For every event a plugin handles, LangBot 4.11.2's runtime sends LangBot the plugin's
        whole manifest (about 120 KB here), which cost about 12 ms of the turn while the host holds the reply
        (bench/RESULTS.md, issue 44). The injection calls this on every turn with the KB's settings;
        PromptPreProcessing comes first in a turn."""
        handlers = self._component.registered_handlers
        listening = self._handler in handlers.get(events.NormalMessageResponded, ())
        if enabled and not listening:
            self._component.handler(events.NormalMessageResponded)(self._handler)
        elif not enabled and listening:
            handlers[events.NormalMessageResponded].remove(self._handler)
            if not handlers[events.NormalMessageResponded]:
                del handlers[events.NormalMessageResponded]  # no handler: the runtime counts the event unhandled

    async def _hand_off(self, ctx: Any, memory: MemoryService, found: tuple[str, KBSettings] | None,
                        read: Callable[[], Awaitable[Turn]]) -> None:
        if found is None or not found[1].candidate_extraction_enabled:
            return
        turn = await read()
        if turn.kb_id is None:
            return
        text = turn.text
        if not text.strip() or turn.command:
            log.debug("[LongTermMemory] no user text to extract candidates from query=%s", ctx.query_id)
            return
        identity = await turn.identity()  # a bot uuid the query cannot give comes from the event's session
        if not self._seen.first_time((identity.chat_key, ctx.query_id, ctx.query_uuid or "")):
            log.debug("[LongTermMemory] candidates of query=%s already extracted", ctx.query_id)
            return
        task = detached(self._extract(memory, identity, text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        log.info("[LongTermMemory] candidate extraction handed off query=%s scope=%s chars=%d", ctx.query_id,
                 identity.chat_key, len(text))

    @staticmethod
    async def _extract(memory: MemoryService, identity: Identity, text: str) -> None:
        """Background: no query-scoped call here, the query may be gone already."""
        async def extract() -> tuple[MemoryScope, CandidateRun]:
            scope = await memory.scope_for(identity)
            return scope, await memory.propose_candidates(scope, text)

        # Background work must not die silently: a refusal is a warning, anything else a traceback.
        done = await settle(lambda: f"candidate extraction query={identity.query_id} scope={identity.chat_key}",
                            extract, refused=lambda exc: None, failed=lambda: None, refusal_level=logging.WARNING)
        if done is None:
            return
        scope, run = done
        # duplicates: proposals already pending, or already in memory (in_memory: the speaker's episodes, the
        # same turn's tool writes among them, or the profile).
        log.info("[LongTermMemory] candidates stored query=%s scope=%s origin=%s added=%d auto_applied=%d "
                 "refused=%d duplicates=%d in_memory=%d%s%s", identity.query_id, scope.chat_key, run.origin.value,
                 len(run.added), len(run.auto_applied), run.refused, run.duplicates, run.remembered,
                 f" skipped={run.skipped!r}" if run.skipped else "", " rejected=yes" if run.rejected else "")
