"""Turn what LangBot hands a component into an `Identity` (S1, T5 in docs/REQUIREMENTS.md).

Kept apart from `ltm/identity.py` because it knows the host's shapes: session
names, retrieval settings, `Session` objects and query variables.
"""

from __future__ import annotations

import logging
from typing import Any

from langbot_plugin.entities.io.errors import ActionCallError

from ..errors import HostError, LTMError, OutcomeUnknown
from ..identity import Identity
from .calls import SDK_CALL_ERRORS, relayed_unknown

log = logging.getLogger("LongTermMemory")


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
    return Identity.from_host(
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
        return Identity.from_host(launcher_type=parts[0], launcher_id=parts[1], bot_uuid=spec.get("bot_uuid"))
    if spec.get("launcher_type") and spec.get("launcher_id") not in (None, ""):
        return Identity.from_host(
            launcher_type=spec["launcher_type"], launcher_id=spec["launcher_id"], bot_uuid=spec.get("bot_uuid")
        )
    return None


def _no_live_query(exc: BaseException) -> bool:
    """The query APIs' answer when there is no live pipeline query (the agent-runner path)."""
    if isinstance(exc, RuntimeError):  # outside any invocation: no query to ask
        return True
    return isinstance(exc, ActionCallError) and "not found" in str(exc.message or "").lower()


def _failed(what: str, exc: BaseException) -> LTMError:
    if isinstance(exc, ActionCallError) and not relayed_unknown(exc):
        return HostError(f"could not read {what} of this message from the host; nothing was done")
    return OutcomeUnknown(f"no answer from the host while reading {what} of this message; nothing was done")


async def identity_from_query(api: Any, session: Any, query_id: int | None) -> Identity:
    """Identity for a tool or command call (T5).

    Inside a live pipeline query the current speaker is the query variable
    `sender_id` (the cached `Session.sender_id` is whoever spoke first in a group).
    Without a live query (agent runner path) the query APIs answer "query not
    found"; then the host-provided session is all there is.
    """
    launcher_type = getattr(getattr(session, "launcher_type", None), "value", getattr(session, "launcher_type", ""))
    launcher_id = getattr(session, "launcher_id", "")
    bot_uuid = getattr(session, "bot_uuid", None) or ""
    sender_id: Any = getattr(session, "sender_id", None)
    sender_name = ""
    if api is not None and query_id is not None:
        try:
            variables = await api.get_query_vars()
        except SDK_CALL_ERRORS as exc:
            if not _no_live_query(exc):
                # The query exists but its variables could not be read: the session's sender would be
                # whoever spoke first in a group, so refuse rather than write as another person.
                raise _failed("the current speaker", exc) from None
            log.debug("[LongTermMemory] no live query %s (%s); identity from the session", query_id,
                      type(exc).__name__)
            variables = None
        if isinstance(variables, dict):
            sender_id = variables.get("sender_id", sender_id)
            sender_name = str(variables.get("sender_name") or "")
            launcher_type = variables.get("launcher_type") or launcher_type
            launcher_id = variables.get("launcher_id", launcher_id)
            if not bot_uuid:
                try:
                    bot_uuid = await api.get_bot_uuid() or ""
                except SDK_CALL_ERRORS as exc:
                    if not _no_live_query(exc):
                        raise _failed("the bot", exc) from None  # a wrong bot would be a wrong scope
                    bot_uuid = ""
    return Identity.from_host(
        launcher_type=launcher_type, launcher_id=launcher_id, bot_uuid=bot_uuid,
        sender_id=sender_id, sender_name=sender_name, query_id=query_id,
    )
