"""A consumer of LongTermMemory's `_ltm_context`, written exactly like the documented example.

The body of `on_prompt` between the markers is the documented consumer, unchanged; the
try/finally around it only records what it saw (an exception still propagates).

What it read is appended to `default_prompt` as one system message
"LTM_CONSUMER: <json>" with:
- `ltm`: the value it got (None when the variable is absent or empty),
- `profile` / `traits`: what the documented lines derive from it,
- `style`: the documented example's decision ("喜欢幽默" -> a humorous tone),
- `error`: the exception type when the documented code raised (on LangBot 4.11.2
  `get_query_var` fails on an absent variable), then re-raised.
Logs go to stderr (stdout is the plugin's channel to the runtime).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import context, events
from langbot_plugin.api.entities.builtin.provider.message import Message

log = logging.getLogger("ContextConsumer")


class ContextConsumer(EventListener):
    def __init__(self) -> None:
        super().__init__()

        @self.handler(events.PromptPreProcessing)
        async def on_prompt(event_ctx: context.EventContext) -> None:
            record: dict[str, Any] = {"ltm": None, "profile": None, "traits": None, "style": None}
            try:
                # --- the documented consumer, as written ---
                ltm = await event_ctx.get_query_var("_ltm_context")
                if not ltm:
                    # LongTermMemory not installed or inactive: use defaults.
                    return

                profile = ltm.get("speaker_profile") or ltm.get("session_profile") or {}
                traits = profile.get("traits", [])
                record.update(ltm=ltm, profile=profile, traits=traits)

                if "喜欢幽默" in traits:
                    style = "Use a humorous and playful tone."
                elif "偏好简洁" in traits:
                    style = "Be concise and direct."
                else:
                    return
                record["style"] = style
                event_ctx.event.default_prompt.append(Message(role="system", content=style))
                # --- end of the documented consumer ---
            except Exception as exc:
                record["error"] = type(exc).__name__
                raise
            finally:
                log.info("ContextConsumer: query=%s read _ltm_context=%s", event_ctx.query_id,
                         "none" if record["ltm"] is None else "dict")
                event_ctx.event.default_prompt.append(
                    Message(role="system", content="LTM_CONSUMER: " + json.dumps(record, ensure_ascii=False)))
