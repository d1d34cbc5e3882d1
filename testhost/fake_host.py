"""In-process fake of the LangBot 4.11.2 host, as seen from a plugin.

Every Host API of the SDK funnels into ``Handler.call_action(action, data,
timeout)``; the harness replaces that method with ``FakeLangBotHost.call_action``.
The fake answers with the same payload shapes and, above all, fails with the
same ``ActionCallError`` messages as the real host (docs/HOST-FACTS.md 6-8 and 11.1), so
plugin error handling is exercised for real.

Everything here is deterministic: embeddings come from ``HashingEmbedder`` and
the LLM is a *scripted fake* (``llm_script``) that returns whatever the test
queued. Nothing talks to a network.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from langbot_plugin.entities.io.actions.enums import CommonAction, PluginToRuntimeAction, RuntimeToPluginAction
from langbot_plugin.entities.io.errors import ActionCallError

from .embedder import HashingEmbedder, cosine
from .vectors import VectorBackend

A = PluginToRuntimeAction
LANGBOT_VERSION = "4.11.2"
_FILE_CHUNK_BYTES = 16 * 1024  # the SDK's FILE_CHUNK_LENGTH
_RERANK_MAX_DOCUMENTS = 64

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
LLMReply = str | dict[str, Any] | BaseException
LLMScriptFn = Callable[[list[dict[str, Any]], dict[str, Any]], LLMReply]


@dataclass
class KnowledgeBase:
    uuid: str
    name: str
    description: str = ""
    creation_settings: dict[str, Any] = field(default_factory=dict)
    retrieval_settings: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {"uuid": self.uuid, "name": self.name, "description": self.description}


@dataclass
class LiveQuery:
    query_id: int
    query_uuid: str | None
    bot_uuid: str
    variables: dict[str, Any]
    pipeline_kbs: list[str]


@dataclass
class _Fault:
    exc: BaseException | type[BaseException]
    after_dispatch: bool
    remaining: int
    skip: int = 0


def _action_value(action: Any) -> str:
    return action.value if isinstance(action, Enum) else str(action)


def _wire(value: Any) -> Any:
    # Payloads cross a JSON wire in the real runtime; round-tripping here
    # catches tuples, mappingproxy config values, datetimes, bytes, ...
    return json.loads(json.dumps(value))


def _as_exception(exc: BaseException | type[BaseException], action: str) -> BaseException:
    if isinstance(exc, BaseException):
        return exc
    try:
        return exc(f"injected failure for {action}")
    except TypeError:
        return exc()


class FakeLangBotHost:
    """Routes ``PluginToRuntimeAction`` calls to in-memory state and a vector backend.

    Public state (tests read and set it freely):
      storage / workspace_storage: key -> bytes
      storage_bytes_written: sum of value sizes of every plugin-storage set
      calls: every (action value, payload) in call order
      kbs, embedding_models, rerank_models, llm_models, queries
      llm_script: queued fake LLM replies (see ``invoke_llm``)
      replies / sent_messages: what the plugin asked the host to send
      files: storage_path -> bytes served by get_knowledge_file_stream
    """

    def __init__(self, backend: VectorBackend, *, instance_uuid: str | None = None,
                 workspace_uuid: str | None = None) -> None:
        self.backend = backend
        self.instance_uuid = instance_uuid or str(uuid.uuid4())
        self.workspace_uuid = workspace_uuid or str(uuid.uuid4())
        self.version = LANGBOT_VERSION

        self.storage: dict[str, bytes] = {}
        self.workspace_storage: dict[str, bytes] = {}
        self.storage_bytes_written = 0
        self.calls: list[tuple[str, dict[str, Any]]] = []

        self.kbs: dict[str, KnowledgeBase] = {}
        self.embedding_models: dict[str, HashingEmbedder] = {}
        self.embedded_text_count = 0
        self.rerank_models: dict[str, HashingEmbedder] = {}
        self.llm_models: list[str] = ["llm-1"]
        # A scripted fake, not a model: either a list consumed front-first or a
        # callable(messages, payload). An item is a str (assistant content), a
        # message dict, or an exception instance to raise.
        self.llm_script: list[LLMReply] | LLMScriptFn = []
        self.llm_requests: list[dict[str, Any]] = []

        self.queries: dict[int, LiveQuery] = {}
        self.replies: list[dict[str, Any]] = []
        self.sent_messages: list[dict[str, Any]] = []
        self.bots: list[str] = []
        # A bot's platform adapter (LangBot's adapter names, e.g. "onebot-v11"), what `get_bot_info` answers;
        # a bot not listed here is unknown to `get_bot_info` (the WebUI debug chat's bot is not a stored bot).
        self.bot_adapters: dict[str, str] = {}
        self.files: dict[str, bytes] = {}

        self._faults: dict[str, deque[_Fault]] = {}
        self._query_counter = 10_000
        self._plugin_handler: Any = None
        self._routes: dict[str, Handler] = self._build_routes()

    # ------------------------------------------------------------------ setup

    def create_kb(self, kb_id: str | None = None, name: str = "memory", *,
                  description: str = "", creation_settings: dict[str, Any] | None = None,
                  retrieval_settings: dict[str, Any] | None = None) -> str:
        """Register a knowledge base row (what the host does before on_kb_create)."""
        kb_id = kb_id or str(uuid.uuid4())
        self.kbs[kb_id] = KnowledgeBase(kb_id, name, description, dict(creation_settings or {}),
                                        dict(retrieval_settings or {}))
        return kb_id

    def remove_kb(self, kb_id: str) -> None:
        """Delete the KB row only: like the host, the vectors are left behind."""
        self.kbs.pop(kb_id, None)

    def add_embedding_model(self, uuid: str = "emb-1", dim: int | None = None) -> str:
        # A store that takes only some sizes (pgvector) names the one its model gets; 256 otherwise.
        size = dim if dim is not None else getattr(self.backend, "embedding_dimension", 256)
        self.embedding_models[uuid] = HashingEmbedder(size)
        return uuid

    def add_rerank_model(self, uuid: str = "rerank-1") -> str:
        self.rerank_models[uuid] = HashingEmbedder(256)
        return uuid

    def register_file(self, storage_path: str, data: bytes) -> str:
        """Make ``data`` readable through ``get_knowledge_file_stream(storage_path)``."""
        self.files[storage_path] = bytes(data)
        return storage_path

    def attach_plugin_handler(self, handler: Any) -> None:
        """Give the host the plugin-side handler that receives FILE_CHUNK pushes."""
        self._plugin_handler = handler

    @staticmethod
    def collection_name(kb_id: str) -> str:
        return f"lb_{kb_id}"

    async def dump_kb(self, kb_id: str, limit: int = 100_000) -> list[dict[str, Any]]:
        """All stored records of a KB straight from the backend (test inspection aid)."""
        res = await self.backend.list(self.collection_name(kb_id), None, limit, 0)
        return res["items"]

    # ---------------------------------------------------------------- queries

    def next_query_id(self) -> int:
        """A fresh query id of this host (the host numbers its queries; hand-picked ids in tests stay
        below 10,000, so the two never collide)."""
        self._query_counter += 1
        while self._query_counter in self.queries:
            self._query_counter += 1
        return self._query_counter

    def open_query(self, query_id: int, *, bot_uuid: str, launcher_type: str,
                   launcher_id: str | int, sender_id: str | int, sender_name: str = "",
                   message_text: str = "", pipeline_kbs: list[str] | None = None,
                   extra_vars: dict[str, Any] | None = None, group_name: str | None = None,
                   query_uuid: str | None = None, message_id: str | int | None = None) -> dict[str, Any]:
        """Register a live pipeline query; returns its (live, mutable) variables.

        The variables mirror what the host PreProcessor sets before
        PromptPreProcessing. ``query_id`` 0 is valid: the host's first query is 0. ``message_id``: the
        platform message the query answers, named as the host names it (``_ingress_event_id``,
        docs/HOST-FACTS.md 14.7); None for a query without one (the WebUI debug chat here).
        """
        if group_name is None:
            group_name = f"group {launcher_id}" if launcher_type == "group" else ""
        variables: dict[str, Any] = {
            "launcher_type": launcher_type,
            "launcher_id": launcher_id,
            "sender_id": sender_id,
            "session_id": f"{launcher_type}_{launcher_id}",
            "conversation_id": str(uuid.uuid4()),
            "msg_create_time": int(time.time()),
            "group_name": group_name,
            "sender_name": sender_name,
            "user_message_text": message_text,
            "_knowledge_base_uuids": list(pipeline_kbs or []),
        }
        if message_id is not None:
            variables["_ingress_event_id"] = f"platform:{bot_uuid}:{message_id}"
        variables.update(extra_vars or {})
        self.queries[query_id] = LiveQuery(query_id, query_uuid, bot_uuid, variables,
                                           list(pipeline_kbs or []))
        return variables

    def close_query(self, query_id: int) -> None:
        """End a query: later query-scoped calls fail like on the host."""
        self.queries.pop(query_id, None)

    # --------------------------------------------------------------- counters

    def count(self, action: Any) -> int:
        value = _action_value(action)
        return sum(1 for name, _ in self.calls if name == value)

    def calls_of(self, action: Any) -> list[dict[str, Any]]:
        value = _action_value(action)
        return [data for name, data in self.calls if name == value]

    def reset_counts(self) -> None:
        self.calls.clear()
        self.storage_bytes_written = 0
        self.embedded_text_count = 0

    # -------------------------------------------------------- fault injection

    def fail_next(self, action: Any, exc: BaseException | type[BaseException], *,
                  after_dispatch: bool = True, count: int = 1, skip: int = 0) -> None:
        """Make the next ``count`` calls of ``action`` raise ``exc`` (after letting ``skip`` calls pass).

        ``after_dispatch=True`` applies the operation first and then raises (the
        host did the work but the answer was lost, e.g. a timeout);
        ``after_dispatch=False`` raises without touching any state.
        """
        self._faults.setdefault(_action_value(action), deque()).append(
            _Fault(exc, after_dispatch, count, skip))

    def _take_fault(self, value: str) -> _Fault | None:
        queue = self._faults.get(value)
        if not queue:
            return None
        fault = queue[0]
        if fault.skip:
            fault.skip -= 1
            return None
        fault.remaining -= 1
        if fault.remaining <= 0:
            queue.popleft()
        return fault

    # --------------------------------------------------------------- dispatch

    async def call_action(self, action: Any, data: dict[str, Any], timeout: float | None = 15.0,
                          **kw: Any) -> dict[str, Any]:
        """Entry point with the signature of ``Handler.call_action``."""
        del timeout, kw
        value = _action_value(action)
        try:
            payload = _wire(data)
        except (TypeError, ValueError) as exc:
            # The real handler fails while encoding and wraps it this way.
            raise ActionCallError(f"{type(exc).__name__}: {exc}") from None
        self.calls.append((value, payload))
        await asyncio.sleep(0)  # a real RPC always yields to other tasks

        fault = self._take_fault(value)
        if fault is not None and not fault.after_dispatch:
            raise _as_exception(fault.exc, value)

        route = self._routes.get(value)
        if route is None:
            raise ActionCallError(f"unsupported action {value}")
        try:
            result = await route(payload)
        except ActionCallError:
            raise
        except Exception as exc:  # the host turns handler exceptions into error replies
            raise ActionCallError(f"{type(exc).__name__}: {exc}") from exc

        if fault is not None:
            raise _as_exception(fault.exc, value)
        await asyncio.sleep(0)
        return _wire(result)

    def _build_routes(self) -> dict[str, Handler]:
        routes: dict[A, Handler] = {
            A.VECTOR_UPSERT: self._vector_upsert,
            A.VECTOR_SEARCH: self._vector_search,
            A.VECTOR_DELETE: self._vector_delete,
            A.VECTOR_LIST: self._vector_list,
            A.INVOKE_EMBEDDING: self._invoke_embedding,
            A.INVOKE_RERANK: self._invoke_rerank,
            A.INVOKE_LLM: self._invoke_llm,
            A.GET_LLM_MODELS: self._get_llm_models,
            A.SET_PLUGIN_STORAGE: self._storage_set(self.storage, count_bytes=True),
            A.GET_PLUGIN_STORAGE: self._storage_get(self.storage),
            A.GET_PLUGIN_STORAGE_KEYS: self._storage_keys(self.storage),
            A.DELETE_PLUGIN_STORAGE: self._storage_delete(self.storage),
            A.SET_WORKSPACE_STORAGE: self._storage_set(self.workspace_storage, count_bytes=False),
            A.GET_WORKSPACE_STORAGE: self._storage_get(self.workspace_storage),
            A.GET_WORKSPACE_STORAGE_KEYS: self._storage_keys(self.workspace_storage),
            A.DELETE_WORKSPACE_STORAGE: self._storage_delete(self.workspace_storage),
            A.GET_BOT_UUID: self._get_bot_uuid,
            A.GET_QUERY_VARS: self._get_query_vars,
            A.GET_QUERY_VAR: self._get_query_var,
            A.SET_QUERY_VAR: self._set_query_var,
            A.CREATE_NEW_CONVERSATION: self._create_new_conversation,
            A.REPLY_MESSAGE: self._reply_message,
            A.LIST_PIPELINE_KNOWLEDGE_BASES: self._list_pipeline_kbs,
            A.RETRIEVE_KNOWLEDGE_BASE: self._retrieve_knowledge_base,
            A.LIST_KNOWLEDGE_BASES: self._list_kbs,
            A.GET_LANGBOT_VERSION: self._get_version,
            A.GET_BOTS: self._get_bots,
            A.GET_BOT_INFO: self._get_bot_info,
            A.SEND_MESSAGE: self._send_message,
            A.GET_KNOWLEDEGE_FILE_STREAM: self._get_file_stream,
        }
        return {action.value: fn for action, fn in routes.items()}

    # ----------------------------------------------------------------- vectors

    def _resolve_kb(self, collection_id: str) -> KnowledgeBase:
        kb = self.kbs.get(collection_id)
        if kb is None:
            raise ActionCallError(
                f"[VectorStoreError/KnowledgeBaseNotFound] [collection_id={collection_id}] "
                "Knowledge base not found")
        return kb

    async def _vector_op(self, collection_id: str, op: Callable[[str], Awaitable[Any]]) -> Any:
        kb = self._resolve_kb(collection_id)
        try:
            return await op(self.collection_name(kb.uuid))
        except ActionCallError:
            raise
        except Exception as exc:
            # host handler.py:_make_rag_error_response
            raise ActionCallError(
                f"[VectorStoreError/{type(exc).__name__}] [collection_id={collection_id}] {exc}"
            ) from exc

    async def _vector_upsert(self, data: dict[str, Any]) -> dict[str, Any]:
        ids: list[str] = data["ids"]
        vectors: list[list[float]] = data["vectors"]
        metadata = data.get("metadata")
        documents = data.get("documents")

        kb_id = self._resolve_kb(data["collection_id"]).uuid

        async def op(collection: str) -> None:
            metas = metadata if metadata is not None else [{} for _ in ids]
            if not (len(ids) == len(vectors) == len(metas)):
                raise ValueError("ids, vectors and metadata must have the same length")
            stamped = [{**m, **self._host_metadata(kb_id)} for m in metas]
            await self.backend.upsert(collection, ids, vectors, stamped, documents)

        await self._vector_op(data["collection_id"], op)
        return {}

    def _host_metadata(self, kb_id: str) -> dict[str, str]:
        return {
            "_langbot_instance_uuid": self.instance_uuid,
            "_langbot_workspace_uuid": self.workspace_uuid,
            "_langbot_knowledge_base_uuid": kb_id,
        }

    async def _vector_search(self, data: dict[str, Any]) -> dict[str, Any]:
        async def op(collection: str) -> list[dict[str, Any]]:
            return await self.backend.search(
                collection, data["query_vector"], int(data.get("top_k", 5)),
                data.get("filters"), data.get("search_type") or "vector",
                data.get("query_text") or "", data.get("vector_weight"))

        return {"results": await self._vector_op(data["collection_id"], op)}

    async def _vector_delete(self, data: dict[str, Any]) -> dict[str, Any]:
        async def op(collection: str) -> int:
            return await self.backend.delete(collection, data.get("file_ids"), data.get("filters"))

        return {"count": await self._vector_op(data["collection_id"], op)}

    async def _vector_list(self, data: dict[str, Any]) -> dict[str, Any]:
        async def op(collection: str) -> dict[str, Any]:
            return await self.backend.list(collection, data.get("filters"),
                                           int(data.get("limit", 20)), int(data.get("offset", 0)))

        return await self._vector_op(data["collection_id"], op)

    # ------------------------------------------------------------------ models

    async def _invoke_embedding(self, data: dict[str, Any]) -> dict[str, Any]:
        model_id = data["embedding_model_uuid"]
        embedder = self.embedding_models.get(model_id)
        if embedder is None:
            raise ActionCallError(f"Embedding model with embedding_model_uuid {model_id} not found")
        texts = list(data["texts"])
        self.embedded_text_count += len(texts)
        return {"vectors": embedder.embed(texts)}

    async def _invoke_rerank(self, data: dict[str, Any]) -> dict[str, Any]:
        model_id = data["rerank_model_uuid"]
        scorer = self.rerank_models.get(model_id)
        if scorer is None:
            raise ActionCallError(f"Rerank model with rerank_model_uuid {model_id} not found")
        docs = list(data["documents"])[:_RERANK_MAX_DOCUMENTS]
        query_vec = scorer.embed_one(data["query"])
        scored = [{"index": i, "relevance_score": cosine(query_vec, scorer.embed_one(d))}
                  for i, d in enumerate(docs)]
        scored.sort(key=lambda r: r["relevance_score"], reverse=True)
        top_k = data.get("top_k")
        return {"results": scored[:top_k] if top_k else scored}

    async def _invoke_llm(self, data: dict[str, Any]) -> dict[str, Any]:
        model_id = data["llm_model_uuid"]
        if model_id not in self.llm_models:
            raise ActionCallError(f"LLM model with llm_model_uuid {model_id} not found")
        self.llm_requests.append(data)
        if callable(self.llm_script):
            reply = self.llm_script(data["messages"], data)
        elif self.llm_script:
            reply = self.llm_script.pop(0)
        else:
            raise ActionCallError("fake host: llm_script is empty (no scripted LLM reply queued)")
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, str):
            message: dict[str, Any] = {"role": "assistant", "content": reply}
        else:
            message = {"role": "assistant", **reply}
        return {"message": message}

    async def _get_llm_models(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"llm_models": list(self.llm_models)}

    # ----------------------------------------------------------------- storage

    def _storage_set(self, store: dict[str, bytes], *, count_bytes: bool) -> Handler:
        async def handler(data: dict[str, Any]) -> dict[str, Any]:
            value = base64.b64decode(data["value_base64"])
            store[data["key"]] = value
            if count_bytes:
                self.storage_bytes_written += len(value)
            return {}
        return handler

    @staticmethod
    def _storage_get(store: dict[str, bytes]) -> Handler:
        async def handler(data: dict[str, Any]) -> dict[str, Any]:
            key = data["key"]
            if key not in store:
                raise ActionCallError(f"Storage with key {key} not found")
            return {"value_base64": base64.b64encode(store[key]).decode("ascii")}
        return handler

    @staticmethod
    def _storage_keys(store: dict[str, bytes]) -> Handler:
        async def handler(data: dict[str, Any]) -> dict[str, Any]:
            return {"keys": list(store)}
        return handler

    @staticmethod
    def _storage_delete(store: dict[str, bytes]) -> Handler:
        async def handler(data: dict[str, Any]) -> dict[str, Any]:
            store.pop(data["key"], None)  # deleting a missing key is not an error
            return {}
        return handler

    # ------------------------------------------------------------ query scoped

    def _query(self, data: dict[str, Any]) -> LiveQuery:
        query_id = data.get("query_id")
        query = self.queries.get(query_id) if isinstance(query_id, int) else None
        wanted_uuid = data.get("query_uuid")
        if query is None or (wanted_uuid and query.query_uuid and wanted_uuid != query.query_uuid):
            raise ActionCallError(f"Query with query_id {query_id} not found")
        return query

    async def _get_bot_uuid(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"bot_uuid": self._query(data).bot_uuid}

    async def _get_query_vars(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"vars": dict(self._query(data).variables)}

    async def _get_query_var(self, data: dict[str, Any]) -> dict[str, Any]:
        # A missing key is a bare KeyError on the host -> "KeyError: 'key'".
        return {"value": self._query(data).variables[data["key"]]}

    async def _set_query_var(self, data: dict[str, Any]) -> dict[str, Any]:
        self._query(data).variables[data["key"]] = data.get("value")
        return {}

    async def _create_new_conversation(self, data: dict[str, Any]) -> dict[str, Any]:
        self._query(data).variables["conversation_id"] = str(uuid.uuid4())
        return {}

    async def _reply_message(self, data: dict[str, Any]) -> dict[str, Any]:
        query = self._query(data)
        self.replies.append({"query_id": query.query_id,
                             "message_chain": data.get("message_chain"),
                             "quote_origin": data.get("quote_origin", False)})
        return {}

    async def _retrieve_knowledge_base(self, data: dict[str, Any]) -> dict[str, Any]:
        """A plugin's query-scoped retrieval (no run id), as LangBot 4.11.2 answers it: the KB must be
        in the query's `_knowledge_base_uuids` *now*; the KB's engine then gets the turn's session."""
        query = self._query(data)
        kb_id = str(data.get("kb_id") or "")
        allowed = query.variables.get("_knowledge_base_uuids")
        if not isinstance(allowed, list) or kb_id not in allowed:
            raise ActionCallError(f"Knowledge base {kb_id} is not configured for this pipeline")
        if kb_id not in self.kbs:
            raise ActionCallError(f"Knowledge base {kb_id} not found")
        if self._plugin_handler is None:
            raise ActionCallError("fake host: no plugin handler attached for retrieval")
        kb = self.kbs[kb_id]
        variables = query.variables
        context = {
            "query": str(data.get("query_text") or ""), "knowledge_base_id": kb_id, "collection_id": kb_id,
            "retrieval_settings": {**kb.retrieval_settings, "top_k": data.get("top_k", 5),
                                   "session_name": f"{variables['launcher_type']}_{variables['launcher_id']}",
                                   "bot_uuid": query.bot_uuid, "sender_id": str(variables.get("sender_id"))},
            "creation_settings": dict(kb.creation_settings), "filters": data.get("filters") or {},
        }
        action = self._plugin_handler.actions[RuntimeToPluginAction.RETRIEVE_KNOWLEDGE.value]
        response = await action({"retriever_name": "", "retrieval_context": context})
        if response.code != 0:
            raise ActionCallError(response.message)
        return {"results": list((response.data or {}).get("results") or [])}

    async def _list_pipeline_kbs(self, data: dict[str, Any]) -> dict[str, Any]:
        query = self._query(data)
        # 4.11.2 answers from the query variable as it is now (a listener may have edited it).
        listed = query.variables.get("_knowledge_base_uuids", query.pipeline_kbs)
        return {"knowledge_bases": [self.kbs[k].summary() for k in listed if k in self.kbs]}

    # ------------------------------------------------------------------ global

    async def _list_kbs(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"knowledge_bases": [kb.summary() for kb in self.kbs.values()]}

    async def _get_version(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"version": self.version}

    async def _get_bots(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"bots": list(self.bots)}

    async def _get_bot_info(self, data: dict[str, Any]) -> dict[str, Any]:
        bot_uuid = str(data.get("bot_uuid"))
        if bot_uuid not in self.bot_adapters:
            raise ActionCallError(f"Bot with bot_uuid {bot_uuid} not found")
        return {"bot": {"uuid": bot_uuid, "name": bot_uuid, "adapter": self.bot_adapters[bot_uuid], "enable": True}}

    async def _send_message(self, data: dict[str, Any]) -> dict[str, Any]:
        self.sent_messages.append(data)
        return {"result": None}

    async def _get_file_stream(self, data: dict[str, Any]) -> dict[str, Any]:
        path = data["storage_path"]
        if path not in self.files:
            raise ActionCallError(f"FileNotFoundError: {path}")
        if self._plugin_handler is None:
            raise ActionCallError("fake host: no plugin handler attached for file transfer")
        # The host pushes the bytes as FILE_CHUNK actions into the plugin's
        # transfer directory and answers with the key; the SDK then reads and
        # deletes the local file through the real Handler code.
        content = self.files[path]
        file_key = f"ft1_{uuid.uuid4().hex}{uuid.uuid4().hex}"
        chunk_action = self._plugin_handler.actions[CommonAction.FILE_CHUNK.value]
        amount = max(1, -(-len(content) // _FILE_CHUNK_BYTES))
        for index in range(amount):
            chunk = content[index * _FILE_CHUNK_BYTES:(index + 1) * _FILE_CHUNK_BYTES]
            await chunk_action({
                "file_key": file_key,
                "file_length": len(content),
                "chunk_base64": base64.b64encode(chunk).decode("ascii"),
                "chunk_index": index,
                "chunk_amount": amount,
                "chunk_size": len(chunk),
            })
        return {"file_key": file_key}

    async def close(self) -> None:
        await self.backend.close()


__all__ = ["LANGBOT_VERSION", "FakeLangBotHost", "KnowledgeBase", "LiveQuery"]
