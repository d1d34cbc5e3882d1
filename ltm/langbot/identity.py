"""Turn what LangBot hands a component into a turn's `Identity` (S1, T5 in docs/REQUIREMENTS.md).

The one place that reads the host's shapes for identity: session names, retrieval settings,
`Session` objects, events and query variables. It also answers the two questions every surface
asks of a turn before it builds one: is this message a `!memory` command, and is the memory KB
attached to this query's pipeline. Kept apart from `ltm/identity.py` because that module knows
no host shape.
"""

from __future__ import annotations

import logging
from typing import Any

from langbot_plugin.entities.io.errors import ActionCallError

from ..errors import HostError, LTMError, OutcomeUnknown
from ..host_values import clean_host_text
from ..identity import Identity
from .calls import SDK_CALL_ERRORS, relayed_unknown

log = logging.getLogger("LongTermMemory")

# LangBot's command prefix, its full-width form (a Chinese or Japanese keyboard) and `/` (new bots, LangBot 4.12).
COMMAND_PREFIXES = ("!", "！", "/")
COMMAND_WORD = "memory"


def is_memory_command(text: str) -> bool:
    """Whether a message is this plugin's command (`!memory ...`): such a turn never reaches a model."""
    stripped = text.strip()
    return stripped[:1] in COMMAND_PREFIXES and stripped[1:].split(" ", 1)[0].strip().lower() == COMMAND_WORD


def attached_kbs(variables: Any) -> list[str] | None:
    """The KB uuids the host gave this query's pipeline (query variable `_knowledge_base_uuids`);
    None when the variables do not say."""
    kb_ids = variables.get("_knowledge_base_uuids") if isinstance(variables, dict) else None
    return [str(k) for k in kb_ids] if isinstance(kb_ids, list) else None


def memory_kb_attached(variables: Any, kb_id: str) -> bool:
    """Whether the memory KB is attached to this query's pipeline (I4): automatic memory only there."""
    return kb_id in (attached_kbs(variables) or [])


async def pipeline_kb_ids(ctx: Any) -> list[str] | None:
    """KB uuids the host gave this query's pipeline (`_knowledge_base_uuids`, the same list automatic
    injection checks; the listener leaves it untouched on command turns), else the local-agent
    configuration; None (skip that check) when there is no live query."""
    try:
        kb_ids = attached_kbs(await ctx.get_query_vars())  # ExecuteContextProxy: a query-based API
        if kb_ids is not None:
            return kb_ids
        kbs = await ctx.list_pipeline_knowledge_bases()
    except Exception:  # noqa: BLE001 - e.g. "Query ... not found" outside a pipeline
        return None
    return [str(kb.get("uuid")) for kb in kbs or [] if isinstance(kb, dict) and kb.get("uuid")]


def user_text(variables: Any) -> str:
    """The user's own message (query variable `user_message_text`), cleaned; "" when there is none."""
    raw = variables.get("user_message_text") if isinstance(variables, dict) else None
    return clean_host_text(raw) if isinstance(raw, str) else ""


def split_session_name(session_name: str) -> tuple[str, str] | None:
    """`group_123` -> ("group", "123"); launcher ids may themselves contain '_'."""
    kind, sep, launcher_id = (session_name or "").partition("_")
    if not sep or kind not in ("group", "person") or not launcher_id:
        return None
    return kind, launcher_id


def identity_from_retrieval(settings: dict[str, Any]) -> Identity | None:
    """Local-agent retrieval passes bot_uuid, sender_id and session_name; a WebUI test passes none."""
    return identity_from_session_name(settings.get("session_name"), settings.get("bot_uuid"),
                                      sender_id=settings.get("sender_id"))


def identity_from_session_name(session_name: Any, bot_uuid: Any = None, *, sender_id: Any = None) -> Identity | None:
    """A chat named as the host names it (`group_<id>` / `person_<id>`, an optional bot uuid); None when
    the name is not one."""
    parts = split_session_name(str(session_name or ""))
    if parts is None:
        return None
    return Identity.from_host(launcher_type=parts[0], launcher_id=parts[1], bot_uuid=bot_uuid, sender_id=sender_id)


def identity_from_scope_spec(spec: Any) -> Identity | None:
    """A document's declared scope: {bot_uuid?, launcher_type, launcher_id} or {bot_uuid?, session_name}."""
    if not isinstance(spec, dict):
        return None
    if spec.get("session_name"):
        return identity_from_session_name(spec["session_name"], spec.get("bot_uuid"))
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
    variables: Any = None
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
        if isinstance(variables, dict) and not bot_uuid:
            try:
                bot_uuid = await api.get_bot_uuid() or ""
            except SDK_CALL_ERRORS as exc:
                if not _no_live_query(exc):
                    raise _failed("the bot", exc) from None  # a wrong bot would be a wrong scope
                bot_uuid = ""
    return _turn_identity(variables, launcher_type=launcher_type, launcher_id=launcher_id, bot_uuid=bot_uuid,
                          sender_id=sender_id, query_id=query_id)


def identity_from_event(event: Any, variables: Any, *, bot_uuid: Any, query_id: int | None) -> Identity:
    """Identity for an event listener's turn (I1, Q1): the query variables name the chat and the current
    speaker; what they leave out comes from the event (`NormalMessageResponded` carries the launcher and
    sender, `PromptPreProcessing` only the session name). `bot_uuid` is what the live query answered;
    None (it could not be read) asks the event's session, when the event has one."""
    launcher_type = getattr(event, "launcher_type", None)
    launcher_id = getattr(event, "launcher_id", None)
    if launcher_type is None:
        launcher_type, launcher_id = split_session_name(str(getattr(event, "session_name", "") or "")) or ("", "")
    if bot_uuid is None:
        bot_uuid = getattr(getattr(event, "session", None), "bot_uuid", None)
    return _turn_identity(variables, launcher_type=launcher_type, launcher_id=launcher_id, bot_uuid=bot_uuid,
                          sender_id=getattr(event, "sender_id", None), query_id=query_id)


async def live_bot_uuid(api: Any) -> str | None:
    """The bot of the live query; None when the host could not say (the caller has another source)."""
    try:
        return str(await api.get_bot_uuid() or "")
    except Exception:  # noqa: BLE001 - any failure means "ask elsewhere", never "no bot"
        return None


INGRESS_VARIABLE = "_ingress_event_id"  # `platform:<bot uuid>:<message id>` (docs/HOST-FACTS.md 14.7)


def ingress_message_id(variables: Any, bot_uuid: Any) -> str:
    """The platform message a query answers, from `_ingress_event_id`; "" when the variables name none,
    or name another bot's (a message id means something only within its bot and chat)."""
    raw = variables.get(INGRESS_VARIABLE) if isinstance(variables, dict) else None
    if not isinstance(raw, str) or not raw.startswith("platform:"):
        return ""
    bot, sep, message_id = raw[len("platform:"):].partition(":")
    if not sep or not message_id or (bot_uuid and bot != str(bot_uuid)):
        return ""
    return message_id


def _turn_identity(variables: Any, *, launcher_type: Any, launcher_id: Any, bot_uuid: Any, sender_id: Any,
                   query_id: int | None) -> Identity:
    """The query variables win (in a group the session's sender is whoever spoke first); a launcher the
    variables leave blank, or a sender they leave out, comes from the session or the event. The message
    id is the platform's (X1), when the host names one for this bot."""
    given: dict[str, Any] = variables if isinstance(variables, dict) else {}
    variable_launcher = given.get("launcher_id")
    return Identity.from_host(
        launcher_type=given.get("launcher_type") or launcher_type,
        launcher_id=launcher_id if variable_launcher in (None, "") else variable_launcher,
        bot_uuid=bot_uuid,
        sender_id=given.get("sender_id", sender_id),
        sender_name=given.get("sender_name"),
        query_id=query_id,
        message_id=ingress_message_id(given, bot_uuid),
    )
