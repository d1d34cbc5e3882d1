"""Plain-text and plain-data views of service results shared by tools, the listener and the command."""

from __future__ import annotations

from typing import Any

from ltm import Episode, Profile


def profile_text(profile: Profile) -> str:
    """Compact, stable profile text for prompts and tools (P3): "Name: …", "Traits: …"."""
    lines = []
    if profile.name:
        lines.append(f"Name: {profile.name}")
    if profile.traits:
        lines.append("Traits: " + "; ".join(profile.traits))
    if profile.preferences:
        lines.append("Preferences: " + "; ".join(profile.preferences))
    if profile.notes:
        lines.append(f"Notes: {profile.notes}")
    return "\n".join(lines)


def episode_for_model(episode: Episode) -> dict[str, Any]:
    """What `recall_memory` returns per episode (T2): the public view with the speaker as one
    object; status, when it last changed and source are left out because recall returns active episodes only."""
    view = episode.to_public()
    view["sender"] = {"id": view.pop("sender_id"), "name": view.pop("sender_name")}
    view.pop("status")
    view.pop("status_changed_at", None)
    view.pop("source")
    return view
