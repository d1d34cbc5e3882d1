"""The LangBot adapter: the core's ports implemented over the plugin SDK.

Every host call goes through `host_call`, which maps SDK failures onto the port
failure contract the write fences depend on (docs/HOST-FACTS.md, errors):

- the host answered with an error (`ActionCallError`)  -> `HostError`, authoritative;
- no answer (timeout, lost connection)                 -> `OutcomeUnknown`;
- cancellation propagates unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Iterator, Sequence
from typing import Any

from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction
from langbot_plugin.entities.io.errors import ActionCallError

from ..errors import HostError, OutcomeUnknown, ValidationError
from ..ports import ChatMessage, HostPorts
from .calls import UNKNOWN_OUTCOME, host_call, relayed_unknown, shorten
from .vector_index import HostVectorIndex

log = logging.getLogger("LongTermMemory")


class PluginStorage:
    """KeyValueStore over the plugin's binary storage (a missing key is an error on the host)."""

    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin

    async def get(self, key: str) -> bytes | None:
        try:
            value: bytes = await self._plugin.get_plugin_storage(key)
            return value
        except ActionCallError as exc:
            if relayed_unknown(exc):
                raise OutcomeUnknown("no answer from the host on storage read (relayed by the plugin runtime)") \
                    from None
            if "not found" in exc.message.lower():
                return None
            raise HostError(f"host error on storage read: {shorten(exc.message)}") from None
        except UNKNOWN_OUTCOME as exc:
            raise OutcomeUnknown(f"no answer from the host on storage read ({type(exc).__name__})") from None

    async def set(self, key: str, value: bytes) -> None:
        await host_call("storage write", self._plugin.set_plugin_storage(key, value))

    async def delete(self, key: str) -> None:
        await host_call("storage delete", self._plugin.delete_plugin_storage(key))

    async def keys(self, prefix: str = "") -> list[str]:
        keys = await host_call("storage keys", self._plugin.get_plugin_storage_keys())
        return [str(k) for k in keys if str(k).startswith(prefix)]


class HostEmbedder:
    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        vectors = await host_call("embedding", self._plugin.invoke_embedding(model, list(texts)))
        return [list(v) for v in vectors]


# The live query a model call is made for (a `!memory` command's), when there is one.
_LIVE_QUERY: contextvars.ContextVar[int | str | None] = contextvars.ContextVar("ltm_live_query", default=None)


@contextlib.contextmanager
def on_live_query(query_id: int | None, query_uuid: str | None = None) -> Iterator[None]:
    """Model calls made inside this block belong to this live query. LangBot 4.11.2 records every model
    call for its monitoring under the query that made it: a plugin's call without one gets a stand-in
    query that has no launcher, and its monitoring logs `[ERROR] Failed to record LLM call ...
    'launcher_type'` for each (langbot/pkg/plugin/handler.py `_build_plugin_action_query`). The SDK's
    `invoke_llm` cannot name a query; the INVOKE_LLM action takes a `query_id` (the uuid where the host
    gave one), which LangBot resolves to the live query while it is being processed."""
    token = _LIVE_QUERY.set(query_uuid or query_id)
    try:
        yield
    finally:
        _LIVE_QUERY.reset(token)


class HostLanguageModel:
    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin

    async def _invoke(self, model: str, request: list[Message], timeout_s: float) -> Any:
        query = _LIVE_QUERY.get()
        if query is None:
            return await self._plugin.invoke_llm(model, request, timeout=timeout_s)
        # The SDK's own payload (langbot_plugin/api/proxies/langbot_api.py), plus the query it is for.
        answer = await self._plugin.plugin_runtime_handler.call_action(PluginToRuntimeAction.INVOKE_LLM, {
            "llm_model_uuid": model, "messages": [m.model_dump() for m in request], "funcs": [],
            "extra_args": {}, "timeout": timeout_s, "query_id": query}, timeout=timeout_s)
        return Message.model_validate(answer["message"])

    async def complete(self, model: str, messages: Sequence[ChatMessage], *, timeout_s: float,
                       max_output_chars: int) -> str:
        request = [Message(role=m.role, content=m.content) for m in messages]
        try:
            reply = await asyncio.wait_for(host_call("model call", self._invoke(model, request, timeout_s)),
                                           timeout_s + 5)
        except TimeoutError:
            raise OutcomeUnknown(f"the model did not answer within {timeout_s:g} s") from None
        content = getattr(reply, "content", "")
        text = content if isinstance(content, str) else "".join(
            str(getattr(part, "text", "") or "") for part in content or [])
        if len(text) > max_output_chars:
            raise ValidationError(f"the model's answer is longer than {max_output_chars} characters")
        return text


class HostKnowledgeBases:
    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin

    async def knowledge_base_ids(self) -> list[str]:
        kbs = await host_call("knowledge base list", self._plugin.list_knowledge_bases())
        return [str(kb.get("uuid")) for kb in kbs or [] if isinstance(kb, dict) and kb.get("uuid")]

    async def bot_ids(self) -> list[str] | None:
        try:
            found = await self._plugin.get_bots()
        except Exception as exc:  # noqa: BLE001 - an older host or a failed call: nothing is decided by the list
            log.warning("[LongTermMemory] bot list not available: %s", type(exc).__name__)
            return None
        # The SDK says list[str]; LangBot 4.11.2 sends each bot as a dict with its uuid.
        return [str(b.get("uuid")) if isinstance(b, dict) else str(b) for b in found or []
                if isinstance(b, str) or (isinstance(b, dict) and b.get("uuid"))]


def langbot_ports(plugin: Any) -> HostPorts:
    """Every port over one LangBot plugin object (its methods are the host API)."""
    return HostPorts(store=PluginStorage(plugin), index=HostVectorIndex(plugin), embedder=HostEmbedder(plugin),
                     llm=HostLanguageModel(plugin), directory=HostKnowledgeBases(plugin))
