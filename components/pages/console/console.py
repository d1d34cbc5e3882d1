"""Memory Console page component (M in docs/REQUIREMENTS.md): routes page API calls to `api.py`."""

from __future__ import annotations

import logging

from langbot_plugin.api.definition.components.page import Page, PageRequest, PageResponse

from components.pages.console import api

log = logging.getLogger("LongTermMemory")


class MemoryConsole(Page):
    """Every answer is `PageResponse.ok({...})`; application errors are `{"ok": false, ...}` data,
    because `PageResponse.fail` reaches the page as "[object Object]" (docs/HOST-FACTS.md)."""

    async def handle_api(self, request: PageRequest) -> PageResponse:
        try:
            memory = getattr(self.plugin, "memory", None)
            data = await api.dispatch(memory, request.endpoint, request.method, request.body)
        except Exception:
            log.exception("[LongTermMemory] console request failed")
            data = {"ok": False, "error": "internal error in the memory console", "code": "internal_error"}
        return PageResponse.ok(data)
