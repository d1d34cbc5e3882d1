"""Tool `forget` (T4): delete one episode of the current scope."""

from __future__ import annotations

from typing import Any

from components.common.memory_tool import MemoryTool
from ltm.errors import ValidationError
from ltm.identity import MemoryScope
from ltm.service import MemoryService


class Forget(MemoryTool):
    allowed_params = frozenset({"episode_id"})

    async def run(self, memory: MemoryService, scope: MemoryScope, params: dict[str, Any]) -> dict[str, Any]:
        episode_id = params.get("episode_id")
        if not isinstance(episode_id, str) or not episode_id.strip():
            raise ValidationError("episode_id is required")
        episode = await memory.forget(scope, episode_id)
        return {"ok": True, "deleted": episode.episode_id}
