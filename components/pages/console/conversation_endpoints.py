"""Console endpoints over one selected space's conversation record (V4): its turns and summary, the
summary edited by an operator, and clearing it. The record's export is part of `/export`."""

from __future__ import annotations

from typing import Any

from components.pages.console.requests import Body, Result, allowed
from components.pages.console.routes import Endpoints
from components.pages.console.spaces import SelectedSpace, resolve_space
from ltm import ConversationRecord, MemoryService

ROUTES = Endpoints()


async def view(memory: MemoryService, space: SelectedSpace, record: ConversationRecord) -> Result:
    found = await memory.memory_kb()
    settings: dict[str, Any] = {}
    if found is not None:
        s = found[1]
        settings = {"enabled": s.conversation_enabled, "max_turns": s.conversation_max_turns,
                    "max_chars": s.conversation_max_chars, "summary_max_chars": s.conversation_summary_max_chars,
                    "host_window": s.conversation_host_window}
    return {"space": space.to_dict(), "settings": settings, "record": record.to_dict(),
            "chars": record.chars}


@ROUTES("/conversation", read_only=True)
async def conversation(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space"})
    space = await resolve_space(memory, body)
    return await view(memory, space, await memory.conversation(space.scope))


@ROUTES("/conversation/summary")
async def summary(memory: MemoryService, body: Body) -> Result:
    """Replace the summary's text (checked like a model's summary: its budget, no credential; audited)."""
    allowed(body, {"space", "text"})
    space = await resolve_space(memory, body)
    return await view(memory, space, await memory.edit_conversation_summary(space.scope, body.get("text")))


@ROUTES("/conversation/clear")
async def clear(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space"})
    space = await resolve_space(memory, body)
    turns = await memory.clear_conversation(space.scope)
    return {**await view(memory, space, await memory.conversation(space.scope)), "cleared": turns}
