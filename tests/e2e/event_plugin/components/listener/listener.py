"""The probe's EventListener: one `EVENT_PROBE <json>` line per pipeline event, with its query id and
the platform message id the event carries (the `Source` component of its message chain), if any.

PromptPreProcessing also records the names of the query variables and the values of three of them
(`VARIABLES`). Logs go to stderr (the runtime's log keeps them).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import context, events

log = logging.getLogger("EventProbe")

WATCHED = (events.PersonMessageReceived, events.GroupMessageReceived, events.PersonNormalMessageReceived,
           events.GroupNormalMessageReceived, events.PersonCommandSent, events.GroupCommandSent,
           events.PromptPreProcessing, events.NormalMessageResponded)
# What PromptPreProcessing reports of the query variables, besides their names: the platform event
# the query came from, and who LangBot says is speaking.
VARIABLES = {"ingress_event_id": "_ingress_event_id", "var_sender_id": "sender_id", "var_sender_name": "sender_name"}


class MessageIdProbe(EventListener):
    def __init__(self) -> None:
        super().__init__()
        for event_class in WATCHED:
            self.handler(event_class)(self._report)

    async def _report(self, event_ctx: context.EventContext) -> None:
        event = event_ctx.event
        record: dict[str, Any] = {"probe": "listener", "event": event_ctx.event_name, "query_id": event_ctx.query_id,
                                  "sender_id": getattr(event, "sender_id", None),
                                  "launcher_id": getattr(event, "launcher_id", None)}
        chain = getattr(event, "message_chain", None)
        if chain is not None:
            record["message_id"] = chain.message_id
        if isinstance(event, events.PromptPreProcessing):
            try:
                variables = await event_ctx.get_query_vars()
                record["query_vars"] = sorted(variables)
                record.update({key: variables.get(name) for key, name in VARIABLES.items()})
            except Exception as exc:  # reported, never raised
                record["query_vars"] = f"error: {exc}"
        log.info("EVENT_PROBE %s", json.dumps(record, ensure_ascii=False, default=str))
