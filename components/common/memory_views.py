"""Plain-text and plain-data views of service results shared by tools, the listener and the command."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ltm import Episode, EpisodeStatus, Profile, Validity, fact_key, utc_now


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


def fact_view(profile: Profile, list_field: Any, key: Any) -> dict[str, Any] | None:
    """The named fact a field/action call changed, for the model: its key, current value and what it
    held before (newest first), so a correction can be checked at once."""
    if list_field not in ("traits", "preferences") or not isinstance(key, str) or not key.strip():
        return None
    name = fact_key(key)
    fact = profile.facts.get(list_field, {}).get(name)
    if fact is None:
        return None
    return {"field": list_field, "key": name, "value": fact.value,
            "earlier": [{"value": p.value, "status": p.status, "until": p.until} for p in reversed(fact.history)]}


def episode_for_model(episode: Episode, now: datetime | None = None, current: tuple[str, str] = ("", "")
                      ) -> dict[str, Any]:
    """What `recall_memory` returns per episode (T2): the public view with the speaker as one
    object (its id, the name it had when stored, and `current_name` when it is the current speaker
    (`current`: id, name) under another name now: a card change is not another person); when its status
    last changed, its source and its platform message are left out, and its status too while it is
    active (what recall returns unless asked for another status). A fact whose validity ended says so
    (`"validity": "expired"`), and so does one that starts later."""
    view = episode.to_public()
    view["sender"] = {"id": view.pop("sender_id"), "name": view.pop("sender_name")}
    if current[0] and current[0] == episode.sender_id and current[1] and current[1] != episode.sender_name:
        view["sender"]["current_name"] = current[1]
    view.pop("message", None)
    if episode.status is EpisodeStatus.ACTIVE:
        view.pop("status")
    view.pop("status_changed_at", None)
    view.pop("source")
    validity = episode.validity_at(now or utc_now())
    if validity is not Validity.CURRENT:
        view["validity"] = validity.value
    return view


def validity_label(episode: Episode, now: datetime | None = None) -> str:
    """"expired" or "not yet valid" for a person looking at memory; "" for a fact that holds now."""
    validity = episode.validity_at(now or utc_now())
    return "" if validity is Validity.CURRENT else validity.value
