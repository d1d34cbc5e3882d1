"""Tool `forget` (T4): delete one episode of the current scope.

In a shared chat (a group, or any chat in bot isolation) the model acts for whoever wrote the
message, and anyone there can ask it anything: the tool deletes only the current speaker's own
episodes (and those stored without a speaker). Another speaker's episode is refused with the way
to go: a bot admin's `!memory forget <id>`."""

from __future__ import annotations

from typing import Any

from components.common.memory_tool import MemoryTool
from ltm import MemoryScope, MemoryService


class Forget(MemoryTool):
    allowed_params = frozenset({"episode_id"})

    async def run(self, memory: MemoryService, scope: MemoryScope, params: dict[str, Any]) -> dict[str, Any]:
        episode = await memory.forget(scope, params.get("episode_id"), own_only=True)
        return {"ok": True, "deleted": episode.episode_id}
