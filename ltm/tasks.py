"""Background work in a fresh context, the one way the plugin starts a task that outlives its caller.

The SDK binds each handler invocation (a listener's event, a tool call, a command, a runner's run) to a
context variable; a task started with `asyncio.create_task` inherits it, and once the handler has
returned, the host refuses every call made under that invocation (docs/HOST-FACTS.md 10). Work that runs
after its caller (a snapshot written later, candidate extraction after the reply, an index saved in the
background) or that must not act as the caller (a platform event's memory work inside a Runner's run)
therefore starts in an empty `contextvars.Context`.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def detached(work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    """`work` as a task of the running loop that inherits nothing of the caller's context."""
    return asyncio.get_running_loop().create_task(work, context=contextvars.Context())
