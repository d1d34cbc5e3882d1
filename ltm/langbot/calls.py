"""Host calls through the SDK, mapped onto the port failure contract (docs/HOST-FACTS.md 1.4):

- the host answered with an error (`ActionCallError`)  -> `HostError`, authoritative;
- no answer (timeout, lost connection)                 -> `OutcomeUnknown`;
- cancellation propagates unchanged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TypeVar

from langbot_plugin.entities.io.errors import (
    ActionCallError,
    ActionCallTimeoutError,
    ConnectionClosedError,
)

from ..errors import HostError, OutcomeUnknown

log = logging.getLogger("LongTermMemory")
T = TypeVar("T")

UNKNOWN_OUTCOME = (ActionCallTimeoutError, ConnectionClosedError, asyncio.TimeoutError, TimeoutError)
# What a host call through the SDK can raise (the query APIs also raise RuntimeError outside an invocation).
SDK_CALL_ERRORS = (ActionCallError, RuntimeError, *UNKNOWN_OUTCOME)


def shorten(message: str, limit: int = 240) -> str:
    message = " ".join(str(message).split())
    return message if len(message) <= limit else message[: limit - 3] + "..."


# The runtime relays its own failed hop to LangBot as an ActionCallError whose message starts with the
# original error's class name: the host never answered, so the outcome is unknown (docs/HOST-FACTS.md).
_RELAYED_UNKNOWN = ("ActionCallTimeoutError", "ConnectionClosedError", "TimeoutError")


def relayed_unknown(exc: ActionCallError) -> bool:
    return str(exc.message or "").lstrip().startswith(_RELAYED_UNKNOWN)


async def host_call(what: str, call: Awaitable[T]) -> T:
    """One host call through the SDK, its failures mapped onto the port failure contract."""
    try:
        return await call
    except ActionCallError as exc:
        if relayed_unknown(exc):
            raise OutcomeUnknown(f"no answer from the host on {what} (relayed by the plugin runtime)") from None
        raise HostError(f"host error on {what}: {shorten(exc.message)}") from None
    except UNKNOWN_OUTCOME as exc:
        raise OutcomeUnknown(f"no answer from the host on {what} ({type(exc).__name__})") from None


