"""Tool `forget` (T4): delete one episode of the current scope."""

from __future__ import annotations

from typing import Any

from components.common.memory_tool import MemoryTool
from ltm import MemoryScope, MemoryService


class Forget(MemoryTool):
    allowed_params = frozenset({"episode_id"})

    async def run(self, memory: MemoryService, scope: MemoryScope, params: dict[str, Any]) -> dict[str, Any]:
        episode = await memory.forget(scope, params.get("episode_id"))
        return {"ok": True, "deleted": episode.episode_id}
