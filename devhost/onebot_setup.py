"""A LangBot 4.11.2 bot on the OneBot v11 adapter, set up over the HTTP API (stdlib only).

The adapter is `onebot-v11` (`langbot/pkg/platform/adapters/aiocqhttp/`: forward or reverse
WebSocket, messages and notices). The older `aiocqhttp` adapter (`pkg/platform/sources/`, shown
under "Legacy adapters" in the WebUI) only receives messages, on a port of its own.
How a bot's events reach a pipeline or an event processor: docs/HOST-FACTS.md section 14.
"""

from __future__ import annotations

import copy
from typing import Any

from .lbclient import LangBotClient

ADAPTER = "onebot-v11"


def reverse_ws_url(base_url: str, bot_uuid: str) -> str:
    """Where a protocol endpoint in reverse mode connects: LangBot's own port, one path per bot."""
    return "ws" + base_url.rstrip("/")[len("http"):] + f"/bots/{bot_uuid}/onebot/v11/ws"


def adapter_config(access_token: str, *, forward_url: str | None = None, self_id: int | str = "") -> dict[str, Any]:
    config: dict[str, Any] = {"connection_mode": "forward_ws" if forward_url else "reverse_ws",
                              "access-token": access_token, "self_id": str(self_id)}
    if forward_url:
        config["ws_url"] = forward_url
    return config


def routes_to(bindings: list[dict[str, Any]], pipeline_uuid: str) -> list[dict[str, Any]]:
    """The bot's routes with every pipeline target replaced by `pipeline_uuid` (filters kept)."""
    out = copy.deepcopy(bindings)
    for binding in out:
        if binding.get("target_type") == "pipeline":
            binding["target_uuid"] = pipeline_uuid
    return out


def create_onebot_bot(client: LangBotClient, name: str, *, pipeline_uuid: str, access_token: str,
                      forward_url: str | None = None, self_id: int | str = "",
                      admins: list[tuple[str, str | int]] | None = None) -> str:
    """A bot on `onebot-v11` with LangBot's default routes (private chats always, groups only when the
    bot is @-mentioned) pointed at `pipeline_uuid`, and LangBot's per-bot admin list set to `admins`
    (`("person", user_id)` or `("group", group_id)`). Reverse mode unless `forward_url` is given."""
    bot_uuid = client.create_bot(name, ADAPTER, adapter_config(access_token, forward_url=forward_url, self_id=self_id))
    defaults = client.bot(bot_uuid).get("event_bindings") or []
    client.update_bot(bot_uuid, {"event_bindings": routes_to(defaults, pipeline_uuid)})
    for launcher_type, launcher_id in admins or []:
        client.add_bot_admin(bot_uuid, launcher_type, launcher_id)
    return bot_uuid


def bind_event_processor(client: LangBotClient, bot_uuid: str, runner_id: str, name: str) -> str:
    """An event processor on `runner_id` (a Runner with `usages: [event]`), subscribed by the bot
    (its `plugin_processors`; the bot reloads). Returns the processor's uuid."""
    processor_uuid = client.create_event_processor(name, runner_id)
    current = client.bot(bot_uuid).get("plugin_processors") or []
    client.update_bot(bot_uuid, {"plugin_processors": [*current, {"processor_uuid": processor_uuid, "enabled": True}]})
    return processor_uuid
