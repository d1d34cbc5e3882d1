"""Plain-data views of service results shared by tools and the listener."""

from __future__ import annotations

from typing import Any

from ltm.episodes import Episode


def episode_for_model(episode: Episode) -> dict[str, Any]:
    """What `recall_memory` returns per episode (T2): enough to cite, correct or forget it."""
    view: dict[str, Any] = {
        "id": episode.episode_id,
        "content": episode.content,
        "timestamp": episode.timestamp,
        "sender": {"id": episode.sender_id, "name": episode.sender_name},
        "tags": list(episode.tags),
        "importance": episode.importance,
        "event_at": episode.fact.event_at,
        "valid_from": episode.fact.valid_from,
        "valid_until": episode.fact.valid_until,
        "source_ref": episode.fact.source_ref,
        "claim_type": episode.fact.claim_type.value,
    }
    if episode.supersedes:
        view["supersedes"] = list(episode.supersedes)
    return view
