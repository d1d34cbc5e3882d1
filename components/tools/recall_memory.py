"""Tool `recall_memory` (T2, E3, E8): ranked active episodes plus both profiles, as JSON."""

from __future__ import annotations

from typing import Any

from components.common.memory_tool import MemoryTool
from components.common.memory_views import episode_for_model, profile_text
from ltm import QUERY_RECALL, MemoryScope, MemoryService, RecallFilters, clean_tags, params


class RecallMemory(MemoryTool):
    allowed_params = frozenset({"query", "speaker", "since", "until", "time_field", "tags", "top_k"})

    async def run(self, memory: MemoryService, scope: MemoryScope, args: dict[str, Any]) -> dict[str, Any]:
        query = params.text(args.get("query"), "query", max_chars=1000, required=False, multiline=True)
        speaker = params.text(args.get("speaker"), "speaker", max_chars=200, required=False)
        time_field = params.choice(args.get("time_field"), "time_field", ["timestamp", "event_at"],
                                   default="timestamp")
        recipe = QUERY_RECALL.with_top_k(args.get("top_k"))
        since, until = params.time_range(args.get("since"), args.get("until"))
        filters = RecallFilters(speaker=speaker, since=since, until=until, time_field=time_field,
                                tags=clean_tags(args.get("tags")))
        profiles = await memory.profiles(scope)
        hits = await memory.recall(scope, query, recipe=recipe, filters=filters)
        return {
            "session_profile": profile_text(profiles.session),
            "speaker_profile": profile_text(profiles.speaker) if profiles.speaker else "",
            "episodes": [episode_for_model(hit.episode) for hit in hits],
        }
