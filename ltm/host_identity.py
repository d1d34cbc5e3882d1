"""Turn what LangBot hands a component into an `Identity` (SPEC S1, T5).

Kept apart from `identity.py` because it knows the host's shapes: retrieval
settings, `Session` objects and query variables.
"""

from __future__ import annotations

from typing import Any

from .identity import Identity


def split_session_name(session_name: str) -> tuple[str, str] | None:
    """`group_123` -> ("group", "123"); launcher ids may themselves contain '_'."""
    kind, sep, launcher_id = (session_name or "").partition("_")
    if not sep or kind not in ("group", "person") or not launcher_id:
        return None
    return kind, launcher_id


def identity_from_retrieval(settings: dict[str, Any]) -> Identity | None:
    """Local-agent retrieval passes bot_uuid, sender_id and session_name; a WebUI test passes none."""
    parts = split_session_name(str(settings.get("session_name") or ""))
    if parts is None:
        return None
    return Identity.build(
        launcher_type=parts[0], launcher_id=parts[1],
        bot_uuid=settings.get("bot_uuid"), sender_id=settings.get("sender_id"),
    )


def identity_from_scope_spec(spec: Any) -> Identity | None:
    """A document's declared scope: {bot_uuid?, launcher_type, launcher_id} or {bot_uuid?, session_name}."""
    if not isinstance(spec, dict):
        return None
    if spec.get("session_name"):
        parts = split_session_name(str(spec["session_name"]))
        if parts is None:
            return None
        return Identity.build(launcher_type=parts[0], launcher_id=parts[1], bot_uuid=spec.get("bot_uuid"))
    if spec.get("launcher_type") and spec.get("launcher_id") not in (None, ""):
        return Identity.build(
            launcher_type=spec["launcher_type"], launcher_id=spec["launcher_id"], bot_uuid=spec.get("bot_uuid")
        )
    return None
