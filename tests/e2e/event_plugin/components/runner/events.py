"""The probe's event processor: one `EVENT_PROBE <json>` line per platform event it receives.

Bound to a bot as an agent of kind `event_processor` (the bot's `plugin_processors`), it is run
with a `RunnerContext` whose `event.data` is the platform event (`message.deleted`,
`group.member_left`, as the manifest declares). The line holds the envelope, the typed event's
class, the bot uuid and whether plugin storage answers inside the run, both through the
run-scoped API (`ctx.api`, granted by `permissions.storage: [plugin]`) and through the plugin's
own API (what the plugin's other components use). Logs go to stderr (stdout is the plugin's
channel to the runtime); the runtime's log keeps them.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from langbot_plugin.api.definition.components.runner.runner import Runner
from langbot_plugin.api.entities.builtin.runner.context import RunnerContext

log = logging.getLogger("EventProbe")


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json") if model is not None else None


async def _outcome(call: Any) -> str:
    try:
        result = await call
    except Exception as exc:  # reported, never raised: the probe must not fail the event
        return f"error: {type(exc).__name__}: {exc}"
    return f"ok: {result!r}"[:200]


class EventProbeRunner(Runner):
    async def run(self, ctx: RunnerContext) -> None:
        record: dict[str, Any] = {
            "probe": "runner", "event_id": ctx.event.event_id, "event_type": ctx.event.event_type,
            "source": ctx.event.source, "data": ctx.event.data, "conversation": _dump(ctx.conversation),
            "actor": _dump(ctx.actor), "subject": _dump(ctx.subject), "typed": type(ctx.platform_event).__name__,
            "reply_target": _dump(ctx.delivery).get("reply_target") if ctx.delivery else None,
        }
        record["bot_uuid"] = await _outcome(ctx.get_bot_uuid())
        record["run_storage"] = await _outcome(ctx.api.set_plugin_storage("probe-last-event", ctx.event.event_id.encode()))
        record["plugin_storage"] = await _outcome(self.plugin.get_plugin_storage_keys())
        log.info("EVENT_PROBE %s", json.dumps(record, ensure_ascii=False, default=str))
