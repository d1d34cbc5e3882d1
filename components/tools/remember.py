"""Tool `remember` (T1, E4, E5, E9): store one L2 episode, optionally correcting earlier ones."""

from __future__ import annotations

from typing import Any

from components.common.memory_tool import MemoryTool
from ltm import MemoryScope, MemoryService


class Remember(MemoryTool):
    allowed_params = frozenset(
        {"content", "tags", "importance", "supersedes", "event_at", "valid_from", "valid_until", "source_ref",
         "claim_type"}
    )

    async def run(self, memory: MemoryService, scope: MemoryScope, params: dict[str, Any]) -> dict[str, Any]:
        episode = await memory.remember(scope, params)
        return {"ok": True, "episode_id": episode.episode_id, "superseded": list(episode.supersedes)}
