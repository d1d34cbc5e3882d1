"""Plain-data views of service results shared by tools and the listener."""

from __future__ import annotations

from typing import Any

from ltm.episodes import Episode


def episode_for_model(episode: Episode) -> dict[str, Any]:
    """What `recall_memory` returns per episode (T2): the public view with the speaker as one
    object; status and source are left out because recall returns active episodes only."""
    view = episode.to_public()
    view["sender"] = {"id": view.pop("sender_id"), "name": view.pop("sender_name")}
    view.pop("status")
    view.pop("source")
    return view
