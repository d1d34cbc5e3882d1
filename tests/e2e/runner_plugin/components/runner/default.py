"""The E2E test Runner: host prompt + `_ltm_context` + user text -> model, with a tool loop.

- The prompt comes from the host (`get_prompt`): the pipeline's prompt after
  PromptPreProcessing, so it carries LongTermMemory's "[LongTermMemory]" system message.
- `_ltm_context` is a query variable whose name starts with "_", which the host keeps out of
  `ctx.variables`; the host does put the legacy `query_id` there, and GET_QUERY_VARS with it
  returns every variable. It is sent to the model as a system message "LTM_CONTEXT: <json>".
- Knowledge bases: the manifest declares knowledge retrieval, so the host grants the KBs of
  the runner config (and lists them in `_knowledge_base_uuids`, which LongTermMemory checks
  before it injects). The runner retrieves only when the user text holds a marker
  "[kb? <query>]": first, like LocalAgent, every granted KB with the whole user message
  (the automatic retrieval), then every granted KB with <query> (an explicit retrieval by
  the agent). Both result lists go to the model as a system message "KB_RESULTS: <json>".
- Tools: every granted non-platform tool is offered; calls go through the host
  (`call_tool`). The SDK's traced `ctx.api.call_tool` validates the result as a dict, but
  plugin tools return strings, so the runner calls the untraced API and reports each call
  itself with the result wrapped as {"result": <str>}.
- History: none is sent to the model. When the user text holds the marker "[history?]", the runner
  reads the transcript page a LocalAgent-like runner would read (`history_page`, the `history: [page]`
  permission) and only logs it as `HISTORY_PROBE runner=<json>` (tests/e2e/test_real_host_history.py);
  other turns make no extra host call, so the benchmarks' counts stay comparable.
- Logs go to stderr through `logging` (stdout is the plugin's channel to the runtime).
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import AsyncGenerator
from typing import Any

from langbot_plugin.api.definition.components.runner.runner import Runner
from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
from langbot_plugin.api.entities.builtin.runner.context import RunnerContext
from langbot_plugin.api.entities.builtin.runner.result import RunnerResult
from langbot_plugin.api.proxies.query_based_api import QueryBasedAPIProxy

log = logging.getLogger("E2ERunner")

MAX_MODEL_CALLS = 6
HOST_TOOL_TYPES = {"platform", "event"}
KB_MARKER = re.compile(r"\[kb\?\s*(?P<query>[^\]]+)\]")
HISTORY_MARKER = "[history?]"


def _entry_text(entry: Any) -> str:
    """Text of one retrieval result (`RetrievalResultEntry` dumped as JSON)."""
    if not isinstance(entry, dict):
        return str(entry)
    parts = entry.get("content") or []
    if isinstance(parts, str):
        return parts
    return " ".join(str(p.get("text") or "") for p in parts if isinstance(p, dict) and p.get("type") == "text")


async def _noop(*_args: Any, **_kwargs: Any) -> None:
    return None


def _model_uuid(ctx: RunnerContext) -> str:
    selected = ctx.config.get("model")
    if isinstance(selected, dict) and selected.get("primary"):
        return str(selected["primary"])
    if isinstance(selected, str) and selected:
        return selected
    for model in ctx.resources.models:
        if "invoke" in model.operations:
            return model.model_id
    raise ValueError("no model configured or granted")


def _as_dict(result: Any) -> dict[str, Any]:
    if isinstance(result, dict):
        return result
    return {"result": result if isinstance(result, (str, int, float, bool)) or result is None else str(result)}


def _as_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(result)


class E2ERunner(Runner):
    async def _ltm_context(self, ctx: RunnerContext) -> str | None:
        """`_ltm_context` from the live query, or None when it cannot be reached."""
        query_id = ctx.variables.get("query_id")
        if query_id is None:
            log.warning("E2ERunner: no query_id in ctx.variables; _ltm_context unreachable")
            return None
        handler = self._plugin_runtime_handler or getattr(self.plugin, "plugin_runtime_handler", None)
        try:
            proxy = QueryBasedAPIProxy(query_id=int(query_id), plugin_runtime_handler=handler)
            variables = await proxy.get_query_vars()
        except Exception as exc:
            log.warning("E2ERunner: get_query_vars(%s) failed: %s", query_id, exc)
            return None
        value = variables.get("_ltm_context")
        if value is None:
            return None
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    async def _retrieve(self, api: Any, kb_ids: list[str], text: str) -> list[str]:
        found: list[str] = []
        for kb_id in kb_ids:
            try:
                found += [_entry_text(e) for e in await api.retrieve_knowledge(kb_id, text, top_k=5)]
            except Exception as exc:
                log.warning("E2ERunner: retrieve_knowledge(%s) failed: %s", kb_id, exc)
                found.append(f"error: {exc}")
        return found

    async def _kb_results(self, ctx: RunnerContext, api: Any, user_text: str) -> dict[str, Any] | None:
        marker = KB_MARKER.search(user_text)
        if marker is None:
            return None
        kb_ids = [kb.kb_id for kb in ctx.resources.knowledge_bases if "retrieve" in kb.operations]
        automatic = await self._retrieve(api, kb_ids, user_text)  # what LocalAgent does every turn
        explicit = await self._retrieve(api, kb_ids, marker.group("query").strip())
        log.info("E2ERunner: kb retrieval kbs=%s automatic=%d explicit=%d", kb_ids, len(automatic), len(explicit))
        return {"kbs": kb_ids, "automatic": automatic, "explicit": explicit}

    async def _probe_history(self, ctx: RunnerContext) -> None:
        """Log what the host's transcript holds for this run's conversation (never sent to the model)."""
        try:
            page = await ctx.history_page(limit=100)
            items = [{"role": getattr(i, "role", None), "text": str(getattr(i, "content", "") or "")[:60]}
                     for i in page.items]
            conversation = ctx.conversation.conversation_id if ctx.conversation else None
            log.warning("HISTORY_PROBE runner=%s", json.dumps({"conversation_id": conversation, "items": items},
                                                             ensure_ascii=False))
        except Exception as exc:  # a probe never fails the run
            log.warning("HISTORY_PROBE runner failed: %s", exc)

    async def run(self, ctx: RunnerContext) -> AsyncGenerator[RunnerResult, None]:
        api = getattr(ctx.api, "_api", ctx.api)  # untraced: tool results may be strings
        if HISTORY_MARKER in ctx.input.to_text():
            await self._probe_history(ctx)
        try:
            prompt = await api.get_prompt()
        except Exception as exc:
            log.warning("E2ERunner: get_prompt failed (%s); using the configured prompt", exc)
            prompt = list(ctx.config.get("prompt") or [])
        messages = [Message.model_validate(m) for m in prompt]
        ltm_context = await self._ltm_context(ctx)
        if ltm_context is not None:
            messages.append(Message(role="system", content=f"LTM_CONTEXT: {ltm_context}"))
        user_text = ctx.input.to_text()
        kb_results = await self._kb_results(ctx, api, user_text)
        if kb_results is not None:
            messages.append(Message(role="system", content="KB_RESULTS: " + json.dumps(kb_results, ensure_ascii=False)))
        messages.append(Message(role="user", content=user_text))

        tools = [
            LLMTool(name=t["name"], human_desc=t.get("description") or t["name"],
                    description=t.get("description") or t["name"],
                    parameters=t.get("parameters") or {"type": "object", "properties": {}}, func=_noop)
            for t in await api.list_tools()
            if (t.get("type") or "") not in HOST_TOOL_TYPES
        ]
        model = _model_uuid(ctx)
        log.info("E2ERunner: run=%s query=%s model=%s tools=%s prompt_msgs=%d ltm_context=%s", ctx.run_id,
                 ctx.variables.get("query_id"), model, [t.name for t in tools], len(prompt), ltm_context is not None)

        for _ in range(MAX_MODEL_CALLS):
            reply = await api.invoke_llm(model, messages, funcs=tools)
            if not reply.tool_calls:
                yield RunnerResult.run_completed(
                    ctx.run_id, Message(role="assistant", content=reply.content or ""), finish_reason="stop")
                return
            messages.append(Message(role="assistant", content=reply.content, tool_calls=reply.tool_calls))
            for call in reply.tool_calls:
                name = call.function.name
                try:
                    params = json.loads(call.function.arguments or "{}")
                except json.JSONDecodeError:
                    params = {}
                call_id = call.id or str(uuid.uuid4())
                yield RunnerResult.tool_call_started(ctx.run_id, call_id, name, params)
                try:
                    result = await api.call_tool(name, params)
                    yield RunnerResult.tool_call_completed(ctx.run_id, call_id, name, result=_as_dict(result))
                    text = _as_text(result)
                except Exception as exc:
                    log.warning("E2ERunner: tool %s failed: %s", name, exc)
                    yield RunnerResult.tool_call_completed(ctx.run_id, call_id, name, error=str(exc))
                    text = f"error: {exc}"
                messages.append(Message(role="tool", tool_call_id=call_id, name=name, content=text))
        yield RunnerResult.run_completed(
            ctx.run_id, Message(role="assistant", content="[E2ERunner] tool loop limit reached"), finish_reason="length")
