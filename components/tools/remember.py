"""Tool `remember` (T1, E4, E5, E9): store one L2 episode, optionally correcting earlier ones.

A fact already stored for this speaker is not stored twice: the answer names the episode that
holds it (`already_remembered`). Near-identical memories are named (`similar`) so the model can
forget an outdated one."""

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
        result = await memory.remember(scope, params)
        episode = result.episode
        if not result.created:
            return {"ok": True, "episode_id": episode.episode_id, "already_remembered": True, "superseded": [],
                    "note": f"already remembered as episode {episode.episode_id}; nothing new was stored"}
        answer: dict[str, Any] = {"ok": True, "episode_id": episode.episode_id, "superseded": list(episode.supersedes)}
        if result.similar:
            answer["similar"] = [{"id": e.episode_id, "content": e.content} for e in result.similar]
            answer["note"] = ("stored; similar memories exist: if the new one replaces one of them, forget the "
                              "outdated one")
        return answer
