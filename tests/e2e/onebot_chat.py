"""What the OneBot e2e tests read besides the chat itself: the probe plugin's report lines and the bot's
event log in LangBot.

The probe (tests/e2e/event_plugin) writes `EVENT_PROBE <json>` lines to stderr, which the plugin
runtime's log keeps (`<data>/logs/plugin-runtime.log`). LangBot's per-bot event log (WebUI: the bot
-> Logs; `POST /api/v1/platform/bots/<uuid>/logs`) holds one entry per routing decision, with
structured `metadata` (`kind: event_route_trace`, `event_type`, `status`, `failure_code`, `target_type`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from devhost.langbot_setup import REPO
from devhost.lbclient import LangBotClient

PROBE_PLUGIN = ("ltm-test", "EventProbe")
PROBE_DIR = REPO / "tests" / "e2e" / "event_plugin"
PROBE_RUNNER = "plugin:ltm-test/EventProbe/events"
MARKER = "EVENT_PROBE "


def probe_records(runtime_log: Path) -> list[dict[str, Any]]:
    records = []
    for line in runtime_log.read_text(errors="replace").splitlines():
        at = line.find(MARKER)
        if at >= 0:
            records.append(json.loads(line[at + len(MARKER):]))
    return records


def wait_probe(runtime_log: Path, where: Callable[[dict[str, Any]], bool], timeout: float = 60.0) -> dict[str, Any]:
    """The first probe record that satisfies `where`, waiting for it to be written."""
    deadline = time.monotonic() + timeout
    while True:
        found = next((r for r in probe_records(runtime_log) if where(r)), None)
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"no probe record matched within {timeout:.0f}s; last: {probe_records(runtime_log)[-5:]}")
        time.sleep(0.3)


def log_mark(client: LangBotClient, bot_uuid: str) -> int:
    """The newest `seq_id` of the bot's event log (-1 when empty)."""
    return max((entry.get("seq_id", -1) for entry in client.bot_logs(bot_uuid, 20)), default=-1)


def wait_route(client: LangBotClient, bot_uuid: str, since: int, event_type: str, status: str,
               timeout: float = 60.0) -> dict[str, Any]:
    """The first routing decision after `since` about `event_type` with `status` (`not_matched`,
    `matched`, `delivered`, `failed`)."""
    deadline = time.monotonic() + timeout
    while True:
        entries = [e for e in client.bot_logs(bot_uuid, 200) if e.get("seq_id", -1) > since]
        for entry in entries:
            meta = entry.get("metadata") or {}
            if meta.get("kind") == "event_route_trace" and meta.get("event_type") == event_type \
                    and meta.get("status") == status:
                return entry
        if time.monotonic() > deadline:
            raise AssertionError(f"no {event_type} {status} after seq {since}: {[e.get('text') for e in entries]}")
        time.sleep(0.3)
