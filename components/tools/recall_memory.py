"""Tool `recall_memory` (T2, E3, E8): ranked active episodes plus both profiles, as JSON."""

from __future__ import annotations

from typing import Any

from components.common.memory_tool import MemoryTool
from components.common.render import episode_for_model
from ltm.episodes import clean_tags
from ltm.errors import ValidationError
from ltm.identity import MemoryScope
from ltm.service import MemoryService, RecallFilters, parse_time_filter

MAX_TOP_K = 20


class RecallMemory(MemoryTool):
    allowed_params = frozenset({"query", "speaker", "since", "until", "time_field", "tags", "top_k"})

    async def run(self, memory: MemoryService, scope: MemoryScope, params: dict[str, Any]) -> dict[str, Any]:
        query = params.get("query") or ""
        if not isinstance(query, str):
            raise ValidationError("query must be a string")
        speaker = params.get("speaker") or ""
        if not isinstance(speaker, str):
            raise ValidationError("speaker must be a string (a sender id or name)")
        time_field = params.get("time_field") or "timestamp"
        if time_field not in ("timestamp", "event_at"):
            raise ValidationError("time_field must be 'timestamp' or 'event_at'")
        top_k = params.get("top_k", 5)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise ValidationError(f"top_k must be an integer from 1 to {MAX_TOP_K}")
        filters = RecallFilters(
            speaker=speaker.strip(),
            since=parse_time_filter(params.get("since"), "since"),
            until=parse_time_filter(params.get("until"), "until"),
            time_field=time_field,
            tags=clean_tags(params.get("tags")),
        )
        if filters.since and filters.until and filters.since >= filters.until:
            raise ValidationError("since must be earlier than until")
        profiles = await memory.profiles(scope)
        hits = await memory.recall(scope, query, top_k=top_k, filters=filters)
        return {
            "session_profile": profiles.session.render(),
            "speaker_profile": profiles.speaker.render() if profiles.speaker else "",
            "episodes": [episode_for_model(hit.episode) for hit in hits],
        }
