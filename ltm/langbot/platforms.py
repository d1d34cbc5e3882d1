"""Which chat platforms show a reply as plain text (issue 41, point 4).

A `!memory` reply is written once for Markdown and plain text alike (components/common/chat_text.py);
its lines end with two spaces, Markdown's hard line break, which the WebUI debug chat, Discord or Telegram
need and a plain-text client shows as trailing spaces. QQ (LangBot's OneBot v11 adapters and QQ's
official bot API) and the WeChat family show text as it is, so their replies go without them. The
platform is the bot's adapter (`get_bot_info`, LangBot's adapter names, docs/HOST-FACTS.md 14.6), asked
once per bot and kept `TTL_SECONDS`; a bot LangBot does not list (the WebUI debug chat's
`websocket-proxy-bot`) or an adapter not named here keeps the Markdown breaks.
"""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger("LongTermMemory")

PLAIN_TEXT_ADAPTERS = frozenset({"onebot-v11", "aiocqhttp", "qqofficial", "wecom", "wecombot", "wecomcs",
                                 "officialaccount", "openclaw_weixin"})
TTL_SECONDS = 600.0
FAILED_TTL_SECONDS = 30.0  # how long a failed question is remembered (the debug chat's bot is never listed)


def shows_plain_text(adapter: Any) -> bool:
    """Whether replies on a bot of this adapter are shown as plain text ("-omni" names the same platform)."""
    name = str(adapter or "").strip().lower()
    return name.removesuffix("-omni").removesuffix("-eba") in PLAIN_TEXT_ADAPTERS


class Platforms:
    """The plain-text question per bot, asked of the host once per `TTL_SECONDS`."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[float, bool]] = {}  # bot uuid -> (asked again after, plain text)

    async def plain_text(self, api: Any, bot_uuid: Any) -> bool:
        key = str(bot_uuid or "")
        if not key:
            return False
        found = self._known.get(key)
        if found is not None and time.monotonic() < found[0]:
            return found[1]
        try:
            bot = await api.get_bot_info(key)
        except Exception as exc:  # noqa: BLE001 - not a bot LangBot lists (the debug chat), or no answer: Markdown
            # Kept only briefly: a passing host error must not turn plain text off for a QQ bot for TTL_SECONDS.
            log.debug("[LongTermMemory] get_bot_info failed for bot=%s: %s", key, type(exc).__name__)
            self._known[key] = (time.monotonic() + FAILED_TTL_SECONDS, False)
            return False
        plain = isinstance(bot, dict) and shows_plain_text(bot.get("adapter"))
        self._known[key] = (time.monotonic() + TTL_SECONDS, plain)
        return plain
