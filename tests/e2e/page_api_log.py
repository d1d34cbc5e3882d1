"""What the Memory Console's page-api calls answered, as the browser saw them.

Each response's JSON body is read in Playwright's response handler. Chromium can no longer give a
body back when the browser is closing while a poll is still answering, or when the frame that asked
has gone; Playwright then raises one of a few known errors. Such a call cannot be judged either
way, so it is kept apart with its reason instead of being counted as a failed call; any other
unreadable body (not JSON, a wrong status) is a failure.
"""

from __future__ import annotations

import dataclasses
from typing import Any

# Playwright's words for "the body is gone", not "the body is bad".
_BODY_GONE = ("has been closed", "No resource with given identifier", "No data found for resource")


@dataclasses.dataclass
class PageApiLog:
    answered: list[tuple[int, Any]] = dataclasses.field(default_factory=list)
    unreadable: list[tuple[int, str, str]] = dataclasses.field(default_factory=list)

    def on_response(self, response: Any) -> None:
        if "/page-api" not in response.url:
            return
        try:
            body = response.json()
        except Exception as exc:  # the reason decides below whether it is a failure
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if any(gone in reason for gone in _BODY_GONE):
                self.unreadable.append((response.status, reason, _request_text(response)))
                return
            body = f"unreadable body: {reason}"
        self.answered.append((response.status, body))

    def failures(self) -> list[tuple[int, Any]]:
        """Every call that answered anything but HTTP 200 with `code: 0`."""
        return [(status, body) for status, body in self.answered
                if not (status == 200 and isinstance(body, dict) and body.get("code") == 0)]


def _request_text(response: Any) -> str:
    try:
        return str(response.request.post_data or "")[:200]
    except Exception:  # only for the report
        return ""
