"""Memory Console page API (M1-M3, F4, H, K7, Q2 in docs/REQUIREMENTS.md): routing and answers.

The endpoints are declared next to their handlers, one group per feature
(`installation_endpoints.py`, `memory_endpoints.py`, `conversation_endpoints.py`, `review_endpoints.py`,
`person_endpoints.py`), and
listed once here (`ROUTES`); the selected space is resolved by `spaces.py`, bodies are read by `requests.py`.

Every answer is a plain dict: `{"ok": true, ...}` or `{"ok": false, "error": "...", "code": "..."}`.
A success that changes what the overview shows also carries `"changes_spaces": true` (read from the
route's `read_only`, `routes.py`): the page reads the overview again after it.
`dispatch` never raises: `PageResponse.fail` reaches the page as "[object Object]"
(docs/HOST-FACTS.md, page component), so application errors travel as data.
"""

from __future__ import annotations

import logging
from typing import Any

from components.common.credentials import refuse_credentials
from components.common.envelope import error_envelope, internal_error
from components.common.settle import settle
from components.pages.console import (
    conversation_endpoints,
    installation_endpoints,
    memory_endpoints,
    person_endpoints,
    review_endpoints,
)
from components.pages.console.requests import Result
from components.pages.console.routes import Endpoints
from ltm import MemoryService

log = logging.getLogger("LongTermMemory")

# Every endpoint group of the page.
ROUTES = Endpoints.table((installation_endpoints.ROUTES, memory_endpoints.ROUTES, conversation_endpoints.ROUTES,
                          review_endpoints.ROUTES, person_endpoints.ROUTES))


def _fail(message: str, code: str) -> Result:
    return {"ok": False, "error": message, "code": code}


async def dispatch(memory: MemoryService | None, endpoint: Any, method: Any, body: Any) -> Result:
    """Route one page request; always returns a JSON-able dict, never raises."""
    path = str(endpoint or "").strip()
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/")
    route = ROUTES.get(path)
    if route is None:
        return _fail(f"unknown endpoint {path[:80]!r}", "unknown_endpoint")
    verb = str(method or "POST").upper()
    if verb != "POST" and not (route.read_only and verb == "GET"):
        allowed = "GET or POST" if route.read_only else "POST"
        return _fail(f"{path} accepts {allowed}, not {verb[:10]}", "method_not_allowed")
    if body is None:
        body = {}
    if not isinstance(body, dict):
        return _fail("the request body must be a JSON object", "invalid_input")
    if memory is None:
        return _fail("the memory service is not initialized", "unavailable")
    service = memory

    async def answer() -> Result:
        # Before any field is parsed (a parser's message quotes its input); a vetted field is checked by the
        # core record by record.
        refuse_credentials({name: value for name, value in body.items() if name not in route.vetted})
        result = {"ok": True, **await route.handler(service, body)}
        if route.changes_spaces(body):
            result["changes_spaces"] = True
        return result

    return await settle(lambda: f"console {path}", answer, refused=lambda exc: error_envelope(exc, "console"),
                        failed=lambda: internal_error("console"))
