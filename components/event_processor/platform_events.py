"""The event processor: LongTermMemory's Runner for platform events (`message.deleted`,
`group.member_left`; docs/HOST-FACTS.md 14.4).

LangBot 4.11.2 hands platform events to plugins only through an event processor bound to the bot
(README, "Platform events"): an agent of kind `event_processor` whose component is this Runner. Thin:
the event in (`platform_event`: the adapter reads `ctx.event.data`), one service call, a log line out.
It never replies (LangBot turns replies off for processors) and never raises: a memory error is logged
(an unexpected one with its traceback), and the adapter goes on with the bot's next event (it handles one
connection's events in order, so the run stays short: a few storage reads and at most one write per
memory space).

Inside a run the SDK routes the plugin's own API calls through the run's API (`run_scoped`), which has no
vector calls and grants only what the manifest's permissions list; the memory service works as the
plugin's other components do, so the call runs in a fresh context (no run bound, HOST-FACTS 10), awaited
within the run: the run still ends only when the event was handled.
"""

from __future__ import annotations

import logging

from langbot_plugin.api.definition.components.runner.runner import Runner
from langbot_plugin.api.entities.builtin.runner.context import RunnerContext

from ltm import LTMError, MemoryService, Recall, detached
from ltm.langbot import platform_event

log = logging.getLogger("LongTermMemory")


class PlatformEvents(Runner):
    async def run(self, ctx: RunnerContext) -> None:
        event = platform_event(ctx.event.data)
        if event is None:
            log.info("[LongTermMemory] platform event %s: nothing this plugin acts on", ctx.event.event_type)
            return
        memory: MemoryService = self.plugin.memory
        handled = memory.message_recalled(event) if isinstance(event, Recall) else memory.member_left(event)
        try:
            outcome = await detached(handled)
        except LTMError as exc:
            log.warning("[LongTermMemory] platform event %s not applied: %s (%s)", ctx.event.event_type, exc.code,
                        exc.message)
            return
        except Exception:  # a bug here: its traceback is logged, and the adapter goes on with the next event
            log.exception("[LongTermMemory] platform event %s not applied", ctx.event.event_type)
            return
        if outcome.skipped:
            log.info("[LongTermMemory] platform event %s: %s", ctx.event.event_type, outcome.skipped)
