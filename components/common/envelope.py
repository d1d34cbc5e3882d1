"""One error envelope for the surfaces that answer with JSON (tools, console endpoints).

The core's errors carry a stable `code` and structured `details`; each surface adds
its own hint (where to clear a fence, what to do after a partial write) here, so
`ltm/` never names a user interface.
"""

from __future__ import annotations

from typing import Any, Literal

from ltm import FencedError, LTMError, NotPermitted, OutcomeUnknown, PartialWrite, UnrecordedChange

Surface = Literal["tool", "command", "console"]

_FENCE_HINT: dict[Surface, str] = {
    "tool": "Tell the user that memory writes are paused until an admin clears the fence.",
    "command": "An admin clears it in the Memory Console (Diagnostics tab, Clear Fence) after checking the records.",
    "console": "Check the records, then use Clear Fence in the Diagnostics tab.",
}
_PARTIAL_HINT: dict[Surface, str] = {
    "tool": "Do not retry blindly: some of the change was stored.",
    "command": "See !memory audit for exactly what was stored.",
    "console": "The Audit tab shows exactly what was stored.",
}


def hint(exc: LTMError, surface: Surface) -> str:
    if isinstance(exc, (FencedError, OutcomeUnknown, UnrecordedChange)):
        return _FENCE_HINT[surface]
    if isinstance(exc, PartialWrite):
        return _PARTIAL_HINT[surface]
    if isinstance(exc, NotPermitted) and exc.details.get("episode_id") and surface != "console":
        return (f"Tell the user to ask a bot admin, who can delete it with !memory forget {exc.details['episode_id']}."
                if surface == "tool" else f"A bot admin can delete it: !memory forget {exc.details['episode_id']}.")
    return ""


def message(exc: LTMError, surface: Surface) -> str:
    """The error's message with this surface's hint."""
    extra = hint(exc, surface)
    text = exc.message.rstrip(".")
    return f"{text}. {extra}" if extra else text


def error_envelope(exc: LTMError, surface: Surface) -> dict[str, Any]:
    data: dict[str, Any] = {"ok": False, "error": message(exc, surface), "code": exc.code}
    applied = exc.details.get("applied")
    if applied:
        data["applied"] = list(applied)
    return data


def internal_error(surface: Surface) -> dict[str, Any]:
    where = {"tool": "memory is unavailable right now", "command": "memory is unavailable right now",
             "console": "internal error in the memory console"}[surface]
    return {"ok": False, "error": f"{where} (internal error, see the plugin log)", "code": "internal_error"}
