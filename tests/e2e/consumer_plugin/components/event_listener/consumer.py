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

It also reports what LangBot hands a listener, for tests/e2e/test_real_host_history.py (a log line
only, the prompt is not changed): `HISTORY_PROBE prompt=<json>` with the role, text and type of each
message of PromptPreProcessing's `prompt` and `default_prompt`, and `HISTORY_PROBE responded=<json>`
with NormalMessageResponded's fields and the query variables it can still read.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import context, events
from langbot_plugin.api.entities.builtin.provider.message import Message

log = logging.getLogger("ContextConsumer")
PROBE_CHARS = 80


def _shown(message: Any) -> dict[str, Any]:
    content = getattr(message, "content", None)
    if isinstance(content, list):
        text = " ".join(str(getattr(part, "text", "") or "") for part in content)
    else:
        text = str(content or "")
    return {"role": getattr(message, "role", None), "type": type(message).__name__, "text": text[:PROBE_CHARS],
            "content_type": type(content).__name__}


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value if not isinstance(value, str) else value[:PROBE_CHARS]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value[:10]]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in list(value.items())[:40]}
    return type(value).__name__


class ContextConsumer(EventListener):
    def __init__(self) -> None:
        super().__init__()

        @self.handler(events.NormalMessageResponded)
        async def on_responded(event_ctx: context.EventContext) -> None:
            try:
                event = event_ctx.event
                variables = await event_ctx.get_query_vars()
                report = {"query_id": event_ctx.query_id, "launcher_type": _plain(event.launcher_type),
                          "launcher_id": _plain(event.launcher_id), "sender_id": _plain(event.sender_id),
                          "response_text": _plain(event.response_text), "prefix": _plain(event.prefix),
                          "finish_reason": _plain(event.finish_reason), "funcs_called": _plain(event.funcs_called),
                          "reply_chain": _plain(str(event.reply_message_chain)),
                          "variables": {k: _plain(v) for k, v in sorted(variables.items())
                                        if not k.startswith("_") or k == "_monitoring_message_id"}}
                log.warning("HISTORY_PROBE responded=%s", json.dumps(report, ensure_ascii=False))
            except Exception as exc:  # a probe never fails the turn
                log.warning("HISTORY_PROBE responded failed: %s", exc)

        @self.handler(events.PromptPreProcessing)
        async def on_prompt(event_ctx: context.EventContext) -> None:
            try:
                report = {"query_id": event_ctx.query_id, "session_name": event_ctx.event.session_name,
                          "prompt": [_shown(m) for m in event_ctx.event.prompt],
                          "default_prompt": [_shown(m) for m in event_ctx.event.default_prompt]}
                log.warning("HISTORY_PROBE prompt=%s", json.dumps(report, ensure_ascii=False))
            except Exception as exc:  # a probe never fails the turn
                log.warning("HISTORY_PROBE prompt failed: %s", exc)
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
