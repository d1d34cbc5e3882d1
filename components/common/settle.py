"""How every surface ends a call into memory: a refusal is answered, anything else is logged and answered.

The tools, `!memory`, the console and the candidate listener each wrapped their call in the same two
`except` clauses; they pass their own answers here instead, so "memory errors never break a chat turn"
is written once. A core refusal (`LTMError`) is expected and logged by its code only; any other error is
a bug and logged with its traceback. Neither ever propagates.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ltm import LTMError

log = logging.getLogger("LongTermMemory")
T = TypeVar("T")


async def settle(label: Callable[[], str], work: Callable[[], Awaitable[T]], *,
                 refused: Callable[[LTMError], T], failed: Callable[[], T], refusal_level: int = logging.INFO) -> T:
    """`label` is read when the call ends (a command learns its subcommand's name on the way)."""
    try:
        return await work()
    except LTMError as exc:
        log.log(refusal_level, "[LongTermMemory] %s refused: %s", label(), exc.code)
        return refused(exc)
    except Exception:
        log.exception("[LongTermMemory] %s failed", label())
        return failed()
