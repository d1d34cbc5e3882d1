"""Audit equals store, checked from the outside: a space's console export against its audit export.

Used by the proofs that drive the plugin through its surfaces (`tests/test_hostile_identity.py`,
`bench/load.py`). The audit says, for every memory, what happened to it last: created (active),
superseded, archived, restored (active) or removed. What the store holds must be exactly that, and
every non-empty profile must have been audited.
"""

from __future__ import annotations

from typing import Any

from ltm.operations import REMOVING, STATUS_AFTER

_PROFILE_FIELDS = ("name", "traits", "preferences", "notes")


def _filled(profile: dict[str, Any] | None) -> bool:
    return any((profile or {}).get(k) for k in _PROFILE_FIELDS)


def audit_mismatches(entries: list[dict[str, Any]], episodes: list[dict[str, Any]], l1: dict[str, Any]) -> list[str]:
    """What the store holds that the audit does not explain, and what the audit says that the store lacks.

    `entries`: the space's audit export (oldest first); `episodes`: its L2 export with every listed status;
    `l1`: its L1 export (`session_profile`, `speaker_profiles`)."""
    expected: dict[str, str | None] = {}  # episode id -> the status the audit last gave it (None: removed)
    profiles: set[str] = set()
    for entry in entries:
        target = str(entry.get("target_id") or "")
        if entry.get("target_type") == "episode" and not target:
            continue  # a record an import skipped (`import_skipped`): it names its place, it never had an id
        if entry.get("target_type") == "episode":
            operation = entry["operation"]
            if operation in REMOVING:
                expected[target] = None
            else:
                expected[target] = STATUS_AFTER.get(operation, expected.get(target) or "active")
        elif entry.get("target_type") in ("speaker_profile", "session_profile"):
            profiles.add(target)
    problems = []
    stored = {e["id"]: e["status"] for e in episodes}
    for episode_id, status in stored.items():
        if episode_id not in expected:
            problems.append(f"unaudited memory {episode_id} ({status})")
        elif expected[episode_id] != status:
            problems.append(f"memory {episode_id} is {status}, the audit says {expected[episode_id]}")
    for episode_id, status in expected.items():
        if status is not None and episode_id not in stored:
            problems.append(f"memory {episode_id} is audited as {status} but not stored")
    for speaker, profile in (l1.get("speaker_profiles") or {}).items():
        if _filled(profile) and speaker not in profiles:
            problems.append(f"unaudited speaker profile {speaker!r:.100}")
    if _filled(l1.get("session_profile")) and "session" not in profiles:
        problems.append("unaudited session profile")
    return problems
