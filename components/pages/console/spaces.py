"""The memory space a console request is about, and the views of spaces and fences it returns.

The console has no end-user identity (the host route is admin-only and `PageRequest.caller` is
always None). Every space-scoped endpoint takes the selected memory space from the body,
`{"space": {"scope_key", "user_key"}}`, and asks the facade for that chat's scope on the
installation's memory knowledge base (`MemoryService.selected_scope`), which gives one only for a
pair the plugin derives for a chat (the scope_key names a chat, the user_key is that chat's key in
the KB's isolation mode); any other pair is refused here, for every endpoint, before anything is
read or written. The service filters every read and write on that scope's `user_key` /
`scope_key`, so an id of another space comes back as "not found".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from components.pages.console.requests import Body, Result, allowed, text
from ltm import (
    Fence,
    Isolation,
    MemoryScope,
    MemoryService,
    SpaceKind,
    ValidationError,
    params,
    space_key_for_chat_key,
    split_chat_key,
)

T = TypeVar("T")


@dataclass(frozen=True)
class SelectedSpace:
    """The space a request names, as a scope (only a pair of keys the plugin derives)."""

    scope: MemoryScope

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope_key": self.scope.chat_key,
            "user_key": self.scope.space_key,
            "kb_id": self.scope.kb_id,
            "isolation": self.scope.isolation.value,
        }


async def memory_kb(memory: MemoryService) -> tuple[str, Isolation]:
    found = await memory.memory_kb()
    if found is None:
        return "", Isolation.SESSION
    return found[0], found[1].isolation


async def optional_space(memory: MemoryService, body: Body) -> SelectedSpace | None:
    """The selected space, or None when the body names none."""
    if body.get("space") is None:
        return None
    return await resolve_space(memory, body)


async def resolve_space(memory: MemoryService, body: Body) -> SelectedSpace:
    raw = body.get("space")
    if not isinstance(raw, dict):
        raise ValidationError("space is required: an object {scope_key, user_key}; select a memory space first")
    unknown = sorted(set(raw) - {"scope_key", "user_key"})
    if unknown:
        raise ValidationError(f"unknown field(s) in space: {', '.join(unknown)}; allowed: scope_key, user_key")
    chat_key = text(raw.get("scope_key"), "space.scope_key")
    space_key = text(raw.get("user_key"), "space.user_key")
    # The one check of every endpoint (the facade's): only a pair the plugin derives selects a space.
    try:
        return SelectedSpace(await memory.selected_scope(chat_key, space_key))
    except ValidationError as exc:
        raise ValidationError(f"space: {exc}; select a space from the list") from None


def space_entry(chat_key: str, isolation: Isolation) -> dict[str, str]:
    bot_uuid, session_name = split_chat_key(chat_key)
    return {"scope_key": chat_key, "user_key": space_key_for_chat_key(chat_key, isolation),
            "bot_uuid": bot_uuid, "session_name": session_name}


def fence_entry(fence: Fence, kb_id: str) -> dict[str, Any]:
    data: dict[str, Any] = {**fence.to_dict(), **fence.space.describe()}
    if fence.space.kind is SpaceKind.L2:
        data["current_kb"] = fence.space.kb_id == kb_id
    return data


def one_record(id_field: str, reply_field: str, act: Callable[[MemoryService, MemoryScope, str], Awaitable[T]],
               view: Callable[[T], dict[str, Any]]) -> Callable[[MemoryService, Body], Awaitable[Result]]:
    """An endpoint that acts on one record of the selected space: `{"space", <id_field>}` in,
    `{"space", <reply_field>: view(result)}` out."""
    async def endpoint(memory: MemoryService, body: Body) -> Result:
        allowed(body, {"space", id_field})
        space = await resolve_space(memory, body)
        result = await act(memory, space.scope, params.record_id(body.get(id_field), id_field))
        return {"space": space.to_dict(), reply_field: view(result)}

    return endpoint
