"""Tool `recall_memory` (T2, E3, E8): ranked episodes plus both profiles, as JSON.

It also takes the official plugin's parameters unchanged (`speaker_id`, `speaker_name`,
`time_after`, `time_before`, `importance_min`, `source`, `status`), so a prompt written for that
plugin keeps working; the schema offers one name per idea (docs/OFFICIAL-PLUGIN.md,
"Tools: recall_memory"). The reply keeps this plugin's shape.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from components.common.memory_tool import MemoryTool
from components.common.memory_views import episode_for_model, profile_text
from ltm import (
    QUERY_RECALL,
    MemoryScope,
    MemoryService,
    RecallFilters,
    ValidationError,
    clean_tags,
    params,
    parse_status,
)

# The official plugin called what the model stored with `remember` "agent" (ours: "tool"), and both an
# `import l2` and a KB upload "import" (ours: "import" and "document"); each name finds both.
_SAME_SOURCE = {"agent": ("agent", "tool"), "tool": ("agent", "tool"), "import": ("import", "document")}
# The smallest step of a stored time: `time_before` includes its own instant, `until` does not.
_INSTANT = timedelta(microseconds=1)


class RecallMemory(MemoryTool):
    allowed_params = frozenset({"query", "speaker", "since", "until", "time_field", "tags", "top_k",
                                "speaker_id", "speaker_name", "time_after", "time_before", "importance_min",
                                "source", "status"})

    async def run(self, memory: MemoryService, scope: MemoryScope, args: dict[str, Any]) -> dict[str, Any]:
        query = params.text(args.get("query"), "query", max_chars=1000, required=False, multiline=True)
        time_field = params.choice(args.get("time_field"), "time_field", ["timestamp", "event_at"],
                                   default="timestamp")
        recipe = QUERY_RECALL.with_top_k(args.get("top_k"))
        since, until = _window(args)
        source = params.text(args.get("source"), "source", max_chars=40, required=False).lower()
        filters = RecallFilters(
            speaker=params.text(args.get("speaker"), "speaker", max_chars=200, required=False),
            speaker_id=params.text(args.get("speaker_id"), "speaker_id", max_chars=200, required=False),
            speaker_name=params.text(args.get("speaker_name"), "speaker_name", max_chars=200, required=False),
            since=since, until=until, time_field=time_field, tags=clean_tags(args.get("tags")),
            importance_min=params.bounded_int(args.get("importance_min"), "importance_min", low=1, high=5, default=1),
            sources=_SAME_SOURCE.get(source, (source,)) if source else (),
            statuses=(parse_status(args.get("status") if not params.is_blank(args.get("status")) else "active"),),
        )
        profiles = await memory.profiles(scope)
        hits = await memory.recall(scope, query, recipe=recipe, filters=filters)
        return {
            "session_profile": profile_text(profiles.session),
            "speaker_profile": profile_text(profiles.speaker) if profiles.speaker else "",
            "episodes": [episode_for_model(hit.episode, current=(scope.sender_id, scope.sender_name)) for hit in hits],
        }


def _window(args: dict[str, Any]) -> tuple[Any, Any]:
    """`since`/`until` (a zone required, `until` exclusive) or the official `time_after`/`time_before`
    (a naive time is UTC, both ends included), never both names for one end."""
    for ours, theirs in (("since", "time_after"), ("until", "time_before")):
        if not params.is_blank(args.get(ours)) and not params.is_blank(args.get(theirs)):
            raise ValidationError(f"give {ours} or {theirs}, not both")
    since, until = params.time_range(args.get("since"), args.get("until"))
    after, before = params.utc_time(args.get("time_after"), "time_after"), params.utc_time(
        args.get("time_before"), "time_before")
    since = since or after
    until = until or (before + _INSTANT if before else None)
    if since and until and since >= until:
        raise ValidationError("the start of the time window must be earlier than its end")
    return since, until
