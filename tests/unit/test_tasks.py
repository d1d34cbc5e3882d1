"""`detached` starts work that inherits nothing of its caller's context: the SDK binds a handler's
invocation to a context variable, and a task that inherited it fails once the handler has returned
(docs/HOST-FACTS.md 10)."""

from __future__ import annotations

import asyncio
import contextvars

from ltm import detached

BOUND: contextvars.ContextVar[str] = contextvars.ContextVar("bound", default="none")


async def _seen() -> str:
    return BOUND.get()


async def test_detached_work_does_not_see_the_callers_context() -> None:
    BOUND.set("the handler's invocation")
    assert await asyncio.create_task(_seen()) == "the handler's invocation"  # what a plain task inherits
    assert await detached(_seen()) == "none"


async def test_detached_work_outlives_its_caller_and_returns_its_result() -> None:
    async def caller() -> asyncio.Task[str]:
        BOUND.set("gone with the caller")
        return detached(_seen())

    task = await caller()
    assert await task == "none"
