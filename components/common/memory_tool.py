"""Shared shape of the four memory tools: identity in, one service call, a dict out.

LangBot 4.11 runners carry a tool result as a dict (a bare string fails the
runner's payload validation), so every tool answers with a JSON object, and
errors come back as `{"ok": false, "error": "<short message>", "code": ...}` (T6),
never as a traceback.

Models often add arguments of their own (`reason`, `user_key`, ...). Unknown
arguments are ignored and named in the result (`"ignored_params"`), never used:
identity always comes from the host, so an argument that claims another scope or
speaker changes nothing.
"""

from __future__ import annotations

import abc
import logging
from typing import Any

from langbot_plugin.api.definition.components.tool.tool import Tool
from langbot_plugin.api.entities.builtin.provider import session as provider_session
from langbot_plugin.api.proxies.query_based_api import QueryBasedAPIProxy

from components.common.credentials import refuse_credentials
from components.common.envelope import error_envelope, internal_error
from components.common.settle import settle
from ltm import MemoryScope, MemoryService, ValidationError
from ltm.langbot import identity_from_query

log = logging.getLogger("LongTermMemory")


class MemoryTool(Tool):
    """Subclasses set `allowed_params` and define
    `async def run(self, memory: MemoryService, scope: MemoryScope, params: dict) -> dict`."""

    allowed_params: frozenset[str] = frozenset()

    async def call(
        self, params: dict[str, Any], session: provider_session.Session, query_id: int, query_uuid: str | None = None
    ) -> dict[str, Any]:
        name = self.__class__.__name__

        async def answer() -> dict[str, Any]:
            if not isinstance(params, dict):
                raise ValidationError("parameters must be a JSON object")
            refuse_credentials(params)  # before any field is parsed (a parser's message quotes its input)
            known = {k: v for k, v in params.items() if k in self.allowed_params}
            ignored = sorted(str(k)[:40] for k in params if k not in self.allowed_params)[:20]
            api = self._query_api(query_id, query_uuid)
            identity = await identity_from_query(api, session, query_id)
            memory: MemoryService = self.plugin.memory
            scope = await memory.scope_for(identity)
            log.info(
                "[LongTermMemory] tool %s query=%s scope=%s user_key=%s sender=%s params=%s ignored=%d",
                name, query_id, scope.chat_key, scope.space_key, scope.sender_id or "-", sorted(known), len(ignored),
            )
            result = await self.run(memory, scope, known)
            if ignored:
                result["ignored_params"] = ignored
            return result

        return await settle(lambda: f"tool {name}", answer, refused=lambda exc: error_envelope(exc, "tool"),
                            failed=lambda: internal_error("tool"))

    @abc.abstractmethod
    async def run(self, memory: MemoryService, scope: MemoryScope, params: dict[str, Any]) -> dict[str, Any]:
        """The tool's one service call and its result, for the identity and parameters resolved above."""

    def _query_api(self, query_id: int | None, query_uuid: str | None) -> QueryBasedAPIProxy | None:
        if query_id is None:
            return None
        try:
            return QueryBasedAPIProxy(
                query_id=query_id, query_uuid=query_uuid, plugin_runtime_handler=self.plugin.plugin_runtime_handler
            )
        except (TypeError, ValueError):  # e.g. a handler the proxy does not accept: use the session only
            return None
