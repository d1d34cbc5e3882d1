"""Tests of the test host itself: it must fail where LangBot 4.11.2 fails.

Everything goes through ``FakeLangBotHost.call_action`` with the real
``PluginToRuntimeAction`` enum, i.e. exactly what the SDK proxies send. The
last section drives a small synthetic plugin through ``PluginHarness`` so the
harness is tested independently of the real plugin's progress.
"""

from __future__ import annotations

import asyncio
import base64
import math
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.entities.io.errors import (
    ActionCallError,
    ActionCallTimeoutError,
    ConnectionClosedError,
)

from testhost import (
    PLUGIN_ROOT,
    FakeLangBotHost,
    HashingEmbedder,
    PluginActionError,
    PluginHarness,
    make_backend,
    make_session,
)
from testhost.embedder import cosine, tokenize


def uid() -> str:
    return str(uuid.uuid4())


async def embed(host: FakeLangBotHost, texts: list[str]) -> list[list[float]]:
    res = await host.call_action(A.INVOKE_EMBEDDING, {"embedding_model_uuid": "emb-1", "texts": texts})
    return res["vectors"]


async def upsert(host: FakeLangBotHost, kb: str, records: list[dict[str, Any]],
                 *, documents: bool = True) -> list[str]:
    """Upsert records ``{"text", **metadata}`` the way LangBotAPIProxy.vector_upsert sends them."""
    ids = [r.pop("id", None) or uid() for r in records]
    texts = [r["text"] for r in records]
    data: dict[str, Any] = {"collection_id": kb, "vectors": await embed(host, texts), "ids": ids,
                            "metadata": records}
    if documents:
        data["documents"] = texts
    await host.call_action(A.VECTOR_UPSERT, data, timeout=60)
    return ids


async def search(host: FakeLangBotHost, kb: str, text: str, *, top_k: int = 10,
                 filters: dict[str, Any] | None = None, search_type: str = "vector") -> list[dict[str, Any]]:
    [vec] = await embed(host, [text])
    res = await host.call_action(A.VECTOR_SEARCH, {
        "collection_id": kb, "query_vector": vec, "top_k": top_k, "filters": filters,
        "search_type": search_type, "query_text": text, "vector_weight": None})
    return res["results"]


async def vlist(host: FakeLangBotHost, kb: str, filters: dict[str, Any] | None = None,
                limit: int = 20, offset: int = 0) -> dict[str, Any]:
    return await host.call_action(A.VECTOR_LIST, {"collection_id": kb, "filters": filters,
                                                  "limit": limit, "offset": offset})


# The host's filter translation is pinned on the original three stores here; the stores added for
# record layout 2 (Milvus Lite, the insert-only and Valkey stand-ins) have their own tests below.
@pytest.fixture(params=["chroma", "qdrant", "fixed"], ids=lambda name: name)
def backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=["chroma", "qdrant"], ids=lambda name: name)
def supported_backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def kb_with_scopes(host: FakeLangBotHost) -> str:
    kb = host.create_kb()
    await upsert(host, kb, [
        {"text": "alice likes green tea", "user_key": "u:alice", "sender_id": "alice", "file_id": "f1"},
        {"text": "alice owns a cat", "user_key": "u:alice", "sender_id": "bob", "file_id": "f1"},
        {"text": "bob likes coffee", "user_key": "u:bob", "sender_id": "bob", "file_id": "f2"},
    ])
    return kb


# --------------------------------------------------------------------------- embedder


def test_embedder_is_deterministic_and_normalized() -> None:
    emb = HashingEmbedder(dim=64)
    a, b = emb.embed(["Hello world", "Hello world"])
    assert a == b and len(a) == 64
    assert math.isclose(sum(x * x for x in a), 1.0, rel_tol=1e-9)
    assert HashingEmbedder(64).embed(["Hello world"])[0] == a  # no per-process salt


def test_embedder_similarity_and_cjk() -> None:
    emb = HashingEmbedder()
    q, near, far = emb.embed(["my cat is named Tom", "Tom the cat", "quarterly tax report"])
    assert cosine(q, near) > cosine(q, far)
    assert tokenize("我喜欢猫 and Cats!") == ["我", "喜", "欢", "猫", "and", "cats"]
    zero = emb.embed(["  ?! "])[0]
    assert zero[0] == 1.0 and sum(abs(x) for x in zero) == 1.0


# ----------------------------------------------------------------------- filters


async def test_flat_two_key_filter(host: FakeLangBotHost, backend_name: str, kb_with_scopes: str) -> None:
    flat = {"user_key": "u:alice", "sender_id": "alice"}
    if backend_name == "chroma":
        with pytest.raises(ActionCallError, match="exactly one operator"):
            await search(host, kb_with_scopes, "tea", filters=flat)
        with pytest.raises(ActionCallError, match=r"^\[VectorStoreError/ValueError\]"):
            await host.call_action(A.VECTOR_DELETE, {"collection_id": kb_with_scopes,
                                                     "file_ids": None, "filters": flat})
    elif backend_name == "qdrant":
        hits = await search(host, kb_with_scopes, "tea", filters=flat)
        assert [h["metadata"]["text"] for h in hits] == ["alice likes green tea"]
    else:  # both keys are unknown to the fixed schema and silently dropped
        assert len(await search(host, kb_with_scopes, "tea", filters=flat)) == 3


async def test_and_filter(host: FakeLangBotHost, backend_name: str, kb_with_scopes: str) -> None:
    anded = {"$and": [{"user_key": "u:alice"}, {"sender_id": "alice"}]}
    if backend_name == "chroma":
        hits = await search(host, kb_with_scopes, "tea", filters=anded)
        assert [h["metadata"]["text"] for h in hits] == ["alice likes green tea"]
    elif backend_name == "qdrant":
        # "$and" is read as a field name; its list value fails pydantic validation.
        with pytest.raises(ActionCallError, match="VectorStoreError/ValidationError"):
            await search(host, kb_with_scopes, "tea", filters=anded)
    else:
        assert len(await search(host, kb_with_scopes, "tea", filters=anded)) == 3


async def test_single_key_filter_is_portable_except_fixed(
        host: FakeLangBotHost, backend_name: str, kb_with_scopes: str) -> None:
    hits = await search(host, kb_with_scopes, "likes", filters={"user_key": "u:bob"})
    texts = sorted(h["metadata"]["text"] for h in hits)
    if backend_name == "fixed":
        assert len(texts) == 3  # user_key dropped: other scopes leak in
    else:
        assert texts == ["bob likes coffee"]
    # file_id survives everywhere, including the fixed schema
    hits = await search(host, kb_with_scopes, "likes", filters={"file_id": {"$in": ["f2"]}})
    assert [h["metadata"]["text"] for h in hits] == ["bob likes coffee"]


async def test_unsupported_operator(host: FakeLangBotHost, backend_name: str, kb_with_scopes: str) -> None:
    with pytest.raises(ActionCallError):
        await search(host, kb_with_scopes, "x", filters={"user_key": {"$regex": "a.*"}})
    if backend_name != "chroma":  # Chroma rejects it with its own message
        with pytest.raises(ActionCallError, match="Unsupported filter operator"):
            await search(host, kb_with_scopes, "x", filters={"user_key": {"$regex": "a.*"}})


async def test_fixed_schema_drops_metadata_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    host = FakeLangBotHost(make_backend("fixed"))
    host.add_embedding_model()
    kb = host.create_kb()
    rid = uid()
    await upsert(host, kb, [{"id": rid, "text": "alice likes tea", "uuid": "rec-1",
                             "file_id": "scope-a", "user_key": "u:alice", "kind": "episode"}])
    await upsert(host, kb, [{"text": "bob likes coffee", "uuid": "rec-2", "file_id": "scope-b",
                             "user_key": "u:bob"}])
    with caplog.at_level("WARNING"):
        hits = await search(host, kb, "likes", filters={"user_key": "u:alice"})
    assert len(hits) == 2  # the filter became "no filter"
    assert "user_key" in caplog.text
    mine = next(h for h in hits if h["id"] == rid)
    assert mine["metadata"] == {"text": "alice likes tea", "file_id": "scope-a", "uuid": "rec-1"}
    # delete by an unsupported filter is skipped, not a wipe-out
    res = await host.call_action(A.VECTOR_DELETE, {"collection_id": kb, "file_ids": None,
                                                   "filters": {"user_key": "u:alice"}})
    assert res == {"count": 0} and (await vlist(host, kb))["total"] == 2
    with pytest.raises(ActionCallError, match="vector search only"):
        await search(host, kb, "likes", search_type="hybrid")


# ------------------------------------------------------------------ ids/metadata


async def test_qdrant_rejects_non_uuid_ids(host: FakeLangBotHost, backend_name: str) -> None:
    kb = host.create_kb()
    if backend_name == "qdrant":
        with pytest.raises(ActionCallError, match="not a valid UUID"):
            await upsert(host, kb, [{"id": "mem-1", "text": "x"}])
    else:
        await upsert(host, kb, [{"id": "mem-1", "text": "x"}])
        assert [i["id"] for i in (await vlist(host, kb))["items"]] == ["mem-1"]


async def test_search_returns_no_document_and_host_metadata(
        host: FakeLangBotHost, backend_name: str, kb_with_scopes: str) -> None:
    hits = await search(host, kb_with_scopes, "green tea", top_k=2)
    assert len(hits) == 2
    for hit in hits:
        assert set(hit) == {"id", "distance", "metadata"}
    assert hits[0]["metadata"]["text"] == "alice likes green tea"
    assert hits[0]["distance"] <= hits[1]["distance"]
    meta = hits[0]["metadata"]
    if backend_name == "fixed":
        assert "_langbot_knowledge_base_uuid" not in meta
    else:
        assert meta["_langbot_knowledge_base_uuid"] == kb_with_scopes
        assert meta["_langbot_workspace_uuid"] == host.workspace_uuid
        assert meta["_langbot_instance_uuid"] == host.instance_uuid
        assert meta["user_key"] == "u:alice"


async def test_distance_scales(host: FakeLangBotHost, backend_name: str) -> None:
    kb = host.create_kb()
    await upsert(host, kb, [{"text": "alpha beta"}, {"text": "gamma delta"}])
    [q] = await embed(host, ["alpha beta gamma"])
    [doc] = await embed(host, ["alpha beta"])
    cos = cosine(q, doc)
    res = await host.call_action(A.VECTOR_SEARCH, {"collection_id": kb, "query_vector": q, "top_k": 1,
                                                   "filters": None, "search_type": "vector",
                                                   "query_text": "", "vector_weight": None})
    dist = res["results"][0]["distance"]
    expected = 2 - 2 * cos if backend_name == "chroma" else 1 - cos  # squared L2 vs cosine
    assert math.isclose(dist, expected, abs_tol=1e-4)


async def test_search_types(host: FakeLangBotHost, backend_name: str, kb_with_scopes: str) -> None:
    if backend_name == "fixed":
        with pytest.raises(ActionCallError, match="vector search only"):
            await search(host, kb_with_scopes, "coffee", search_type="full_text")
        return
    full = await search(host, kb_with_scopes, "coffee", search_type="full_text")
    hybrid = await search(host, kb_with_scopes, "coffee", search_type="hybrid")
    if backend_name == "chroma":
        assert [(h["metadata"]["text"], h["distance"]) for h in full] == [("bob likes coffee", 0.0)]
        assert hybrid[0]["metadata"]["text"] == "bob likes coffee"
        assert hybrid[0]["distance"] == 0.0 and hybrid[-1]["distance"] == 1.0
    else:  # Qdrant ignores search_type: plain vector results
        assert len(full) == 3 and full[0]["metadata"]["text"] == "bob likes coffee"


async def test_length_mismatch_and_unknown_kb(host: FakeLangBotHost) -> None:
    kb = host.create_kb()
    [vec] = await embed(host, ["x"])
    with pytest.raises(ActionCallError, match="same length"):
        await host.call_action(A.VECTOR_UPSERT, {"collection_id": kb, "vectors": [vec],
                                                 "ids": [uid(), uid()], "metadata": None})
    missing = uid()
    with pytest.raises(ActionCallError) as err:
        await search(host, missing, "x")
    assert str(err.value) == (f"[VectorStoreError/KnowledgeBaseNotFound] [collection_id={missing}] "
                              "Knowledge base not found")


async def test_empty_collection_is_empty(host: FakeLangBotHost, backend_name: str) -> None:
    kb = host.create_kb()
    if backend_name == "fixed":  # pgvector: no dimension is selected before the KB's first write
        with pytest.raises(ActionCallError, match="no selected pgvector embedding dimension"):
            await search(host, kb, "anything")
    else:
        assert await search(host, kb, "anything") == []
    assert (await vlist(host, kb))["items"] == []


# ------------------------------------------------------------------- list/delete


async def test_vector_list_totals(host: FakeLangBotHost, backend_name: str, kb_with_scopes: str) -> None:
    unfiltered = await vlist(host, kb_with_scopes)
    assert unfiltered["total"] == 3
    assert {i["document"] for i in unfiltered["items"]} == {
        "alice likes green tea", "alice owns a cat", "bob likes coffee"}
    filtered = await vlist(host, kb_with_scopes, filters={"file_id": "f1"})
    assert len(filtered["items"]) == 2
    assert filtered["total"] == (-1 if backend_name == "chroma" else 2)
    page = await vlist(host, kb_with_scopes, limit=2, offset=2)
    assert len(page["items"]) == 1


async def test_vector_delete_counts(host: FakeLangBotHost, backend_name: str, kb_with_scopes: str) -> None:
    res = await host.call_action(A.VECTOR_DELETE, {"collection_id": kb_with_scopes,
                                                   "file_ids": ["f2", "nope"], "filters": None})
    assert res == {"count": 2}  # len(file_ids), not what was really deleted
    assert (await vlist(host, kb_with_scopes))["total"] == 2
    res = await host.call_action(A.VECTOR_DELETE, {"collection_id": kb_with_scopes,
                                                   "file_ids": None, "filters": {"file_id": "f1"}})
    assert (await vlist(host, kb_with_scopes))["total"] == 0
    if backend_name != "fixed":
        assert res == {"count": 0}  # best-effort count on Chroma/Qdrant
    res = await host.call_action(A.VECTOR_DELETE, {"collection_id": kb_with_scopes,
                                                   "file_ids": None, "filters": None})
    assert res == {"count": 0}


async def test_chroma_instances_are_isolated() -> None:
    one, two = make_backend("chroma"), make_backend("chroma")
    try:
        await one.upsert("lb_shared", ["a"], [[1.0, 0.0]], [{"k": 1}])
        assert await two.search("lb_shared", [1.0, 0.0], 5) == []
        with pytest.raises(ValueError, match="Invalid Chroma collection name"):
            await one.upsert("x", ["a"], [[1.0, 0.0]], [{"k": 1}])
    finally:
        await one.close()
        await two.close()


# ------------------------------------------------------------------------ storage


async def test_plugin_storage(host: FakeLangBotHost) -> None:
    with pytest.raises(ActionCallError, match="^Storage with key missing not found$"):
        await host.call_action(A.GET_PLUGIN_STORAGE, {"key": "missing"})
    value = base64.b64encode(b"hello").decode()
    await host.call_action(A.SET_PLUGIN_STORAGE, {"key": "k", "value_base64": value})
    await host.call_action(A.SET_PLUGIN_STORAGE, {"key": "k", "value_base64": value})
    assert host.storage_bytes_written == 10 and host.count(A.SET_PLUGIN_STORAGE) == 2
    got = await host.call_action(A.GET_PLUGIN_STORAGE, {"key": "k"})
    assert base64.b64decode(got["value_base64"]) == b"hello"
    assert (await host.call_action(A.GET_PLUGIN_STORAGE_KEYS, {}))["keys"] == ["k"]
    await host.call_action(A.DELETE_PLUGIN_STORAGE, {"key": "k"})
    await host.call_action(A.DELETE_PLUGIN_STORAGE, {"key": "k"})  # missing key: fine
    assert host.storage == {}
    with pytest.raises(ActionCallError, match="Storage with key w not found"):
        await host.call_action(A.GET_WORKSPACE_STORAGE, {"key": "w"})
    host.reset_counts()
    assert host.count("set_plugin_storage") == 0 and host.storage_bytes_written == 0


async def test_payload_must_be_json(host: FakeLangBotHost) -> None:
    with pytest.raises(ActionCallError, match="TypeError"):
        await host.call_action(A.SET_QUERY_VAR, {"query_id": 1, "key": "k", "value": {1, 2}})


# --------------------------------------------------------------- fault injection


async def test_fail_next_after_dispatch_applies_then_raises(host: FakeLangBotHost) -> None:
    value = base64.b64encode(b"v1").decode()
    host.fail_next(A.SET_PLUGIN_STORAGE, ActionCallTimeoutError("Action set_plugin_storage call timed out"))
    with pytest.raises(ActionCallTimeoutError):
        await host.call_action(A.SET_PLUGIN_STORAGE, {"key": "k", "value_base64": value})
    assert host.storage["k"] == b"v1"  # the host did it; only the answer was lost

    kb = host.create_kb()
    host.fail_next(A.VECTOR_UPSERT, asyncio.CancelledError)
    with pytest.raises(asyncio.CancelledError):
        await upsert(host, kb, [{"text": "applied anyway"}])
    assert (await vlist(host, kb))["total"] == 1


async def test_fail_next_before_dispatch_does_nothing(host: FakeLangBotHost) -> None:
    value = base64.b64encode(b"v1").decode()
    host.fail_next(A.SET_PLUGIN_STORAGE, ConnectionClosedError, after_dispatch=False, count=2)
    for _ in range(2):
        with pytest.raises(ConnectionClosedError):
            await host.call_action(A.SET_PLUGIN_STORAGE, {"key": "k", "value_base64": value})
    assert host.storage == {}
    await host.call_action(A.SET_PLUGIN_STORAGE, {"key": "k", "value_base64": value})
    assert host.storage == {"k": b"v1"} and host.count(A.SET_PLUGIN_STORAGE) == 3


# ------------------------------------------------------------------------ queries


async def test_query_apis_and_dead_query(host: FakeLangBotHost) -> None:
    kb = host.create_kb(name="memory")
    variables = host.open_query(0, bot_uuid="bot-1", launcher_type="group", launcher_id="g1",
                                sender_id="u2", sender_name="Bob", message_text="hi",
                                pipeline_kbs=[kb])
    assert variables["session_id"] == "group_g1" and variables["_knowledge_base_uuids"] == [kb]
    assert (await host.call_action(A.GET_BOT_UUID, {"query_id": 0}))["bot_uuid"] == "bot-1"
    got = (await host.call_action(A.GET_QUERY_VARS, {"query_id": 0}))["vars"]
    assert got["sender_id"] == "u2" and got["sender_name"] == "Bob" and got["group_name"]
    await host.call_action(A.SET_QUERY_VAR, {"query_id": 0, "key": "_ltm_context", "value": "ctx"})
    assert variables["_ltm_context"] == "ctx"
    assert (await host.call_action(A.GET_QUERY_VAR, {"query_id": 0, "key": "_ltm_context"}))["value"] == "ctx"
    with pytest.raises(ActionCallError, match="KeyError"):
        await host.call_action(A.GET_QUERY_VAR, {"query_id": 0, "key": "nope"})
    kbs = (await host.call_action(A.LIST_PIPELINE_KNOWLEDGE_BASES, {"query_id": 0}))["knowledge_bases"]
    assert kbs == [{"uuid": kb, "name": "memory", "description": ""}]
    await host.call_action(A.REPLY_MESSAGE, {"query_id": 0, "message_chain": [], "quote_origin": False})
    assert host.replies[0]["query_id"] == 0

    host.close_query(0)
    for action, extra in [(A.GET_BOT_UUID, {}), (A.GET_QUERY_VARS, {}),
                          (A.SET_QUERY_VAR, {"key": "k", "value": 1}),
                          (A.LIST_PIPELINE_KNOWLEDGE_BASES, {})]:
        with pytest.raises(ActionCallError, match="^Query with query_id 0 not found$"):
            await host.call_action(action, {"query_id": 0, **extra})
    with pytest.raises(ActionCallError, match="Query with query_id 7 not found"):
        await host.call_action(A.GET_QUERY_VARS, {"query_id": 7})


async def test_models_and_misc(host: FakeLangBotHost) -> None:
    with pytest.raises(ActionCallError, match="Embedding model with embedding_model_uuid nope not found"):
        await host.call_action(A.INVOKE_EMBEDDING, {"embedding_model_uuid": "nope", "texts": ["a"]})
    assert (await host.call_action(A.GET_LANGBOT_VERSION, {}))["version"] == "4.11.2"
    assert (await host.call_action(A.GET_LLM_MODELS, {}))["llm_models"] == ["llm-1"]
    host.llm_script = ["first", {"content": "second"}, RuntimeError("boom")]
    call = {"llm_model_uuid": "llm-1", "messages": [{"role": "user", "content": "q"}],
            "funcs": [], "extra_args": {}, "timeout": 120}
    assert (await host.call_action(A.INVOKE_LLM, call))["message"] == {"role": "assistant", "content": "first"}
    assert (await host.call_action(A.INVOKE_LLM, call))["message"]["content"] == "second"
    with pytest.raises(ActionCallError, match="RuntimeError: boom"):
        await host.call_action(A.INVOKE_LLM, call)
    with pytest.raises(ActionCallError, match="llm_script is empty"):
        await host.call_action(A.INVOKE_LLM, call)
    host.llm_script = lambda messages, data: f"echo {messages[-1]['content']}"
    assert (await host.call_action(A.INVOKE_LLM, call))["message"]["content"] == "echo q"
    host.add_rerank_model()
    res = await host.call_action(A.INVOKE_RERANK, {"rerank_model_uuid": "rerank-1", "query": "cat food",
                                                   "documents": ["tax law", "cat food brands"],
                                                   "top_k": 1, "extra_args": {}})
    assert [r["index"] for r in res["results"]] == [1]
    kb = host.create_kb(name="m")
    assert (await host.call_action(A.LIST_KNOWLEDGE_BASES, {}))["knowledge_bases"][0]["uuid"] == kb
    with pytest.raises(ActionCallError, match="^unsupported action get_box_status$"):
        await host.call_action(A.GET_BOX_STATUS, {})


# ----------------------------------------------------------- harness (synthetic)

_SYNTH_FILES = {
    "manifest.yaml": """
        apiVersion: v1
        kind: Plugin
        metadata:
          author: test
          name: Synth
          version: 0.1.0
          label: {en_US: Synth}
          description: {en_US: Synthetic plugin for harness tests}
        spec:
          config: []
          components:
            Tool: {fromDirs: [{path: synth_components/tools/}]}
            EventListener: {fromDirs: [{path: synth_components/listener/}]}
            Command: {fromDirs: [{path: synth_components/commands/}]}
            KnowledgeEngine: {fromDirs: [{path: synth_components/engine/}]}
            Page: {fromDirs: [{path: synth_components/pages/, maxDepth: 2}]}
        execution:
          python: {path: synth_main.py, attr: SynthPlugin}
        """,
    "synth_main.py": """
        from langbot_plugin.api.definition.plugin import BasePlugin

        STARTS = 0

        class SynthPlugin(BasePlugin):
            async def initialize(self):
                global STARTS
                STARTS += 1
                self.starts = STARTS
                self.config_at_init = dict(self.get_config())
                self.background_error = None
        """,
    "synth_components/tools/echo.yaml": """
        apiVersion: v1
        kind: Tool
        metadata: {name: echo, label: {en_US: Echo}, description: {en_US: Echo}}
        spec: {parameters: {type: object, properties: {}}, llm_prompt: echo}
        execution: {python: {path: echo.py, attr: Echo}}
        """,
    "synth_components/tools/echo.py": """
        import asyncio, json
        from langbot_plugin.api.definition.components.tool.tool import Tool
        from langbot_plugin.api.proxies.query_based_api import QueryBasedAPIProxy
        from langbot_plugin.entities.io.errors import ActionCallError

        class Echo(Tool):
            async def call(self, params, session, query_id):
                api = QueryBasedAPIProxy(query_id=query_id,
                                         plugin_runtime_handler=self.plugin.plugin_runtime_handler)
                try:
                    sender = (await api.get_query_vars())["sender_id"]
                except ActionCallError:
                    sender = session.sender_id
                await self.plugin.set_plugin_storage("last_echo", json.dumps(params).encode())
                if params.get("spawn"):
                    asyncio.create_task(self._late())
                return {"sender": sender, "starts": self.plugin.starts,
                        "config": dict(self.plugin.get_config())}

            async def _late(self):
                await asyncio.sleep(0.01)
                try:
                    await self.plugin.get_plugin_storage_keys()
                except Exception as exc:
                    self.plugin.background_error = repr(exc)
        """,
    "synth_components/listener/listener.yaml": """
        apiVersion: v1
        kind: EventListener
        metadata: {name: listener, label: {en_US: Listener}}
        spec: {}
        execution: {python: {path: listener.py, attr: Listener}}
        """,
    "synth_components/listener/listener.py": """
        from langbot_plugin.api.definition.components.common.event_listener import EventListener
        from langbot_plugin.api.entities import events
        from langbot_plugin.api.entities.builtin.provider.message import Message

        class Listener(EventListener):
            def __init__(self):
                super().__init__()

                @self.handler(events.PromptPreProcessing)
                async def on_prompt(ctx):
                    variables = await ctx.get_query_vars()
                    ctx.event.default_prompt.append(
                        Message(role="system", content="memory of " + variables["sender_name"]))
                    await ctx.set_query_var("_ltm_context", "injected")
        """,
    "synth_components/commands/synth.yaml": """
        apiVersion: v1
        kind: Command
        metadata: {name: synth, label: {en_US: Synth}}
        spec: {}
        execution: {python: {path: synth.py, attr: SynthCommand}}
        """,
    "synth_components/commands/synth.py": """
        from langbot_plugin.api.definition.components.command.command import Command
        from langbot_plugin.api.entities.builtin.command.context import CommandReturn

        class SynthCommand(Command):
            def __init__(self):
                super().__init__()

                @self.subcommand("*")
                async def fallback(self, ctx):
                    yield CommandReturn(text="|".join(ctx.crt_params) + f" priv={ctx.privilege}")
        """,
    "synth_components/engine/engine.yaml": """
        apiVersion: v1
        kind: KnowledgeEngine
        metadata: {name: engine, label: {en_US: Engine}}
        spec: {creation_schema: [], retrieval_schema: []}
        execution: {python: {path: engine.py, attr: Engine}}
        """,
    "synth_components/engine/engine.py": """
        import json, uuid
        from langbot_plugin.api.definition.components.knowledge_engine.engine import KnowledgeEngine
        from langbot_plugin.api.entities.builtin.provider.message import ContentElement
        from langbot_plugin.api.entities.builtin.rag.context import (
            RetrievalResponse, RetrievalResultEntry)
        from langbot_plugin.api.entities.builtin.rag.enums import DocumentStatus
        from langbot_plugin.api.entities.builtin.rag.models import IngestionResult

        class Engine(KnowledgeEngine):
            @classmethod
            def get_capabilities(cls):
                return ["doc_ingestion"]

            async def on_knowledge_base_create(self, kb_id, config):
                if config.get("fail"):
                    raise ValueError("bad config")
                await self.plugin.set_plugin_storage("kb:" + kb_id, json.dumps(config).encode())

            async def on_knowledge_base_delete(self, kb_id):
                await self.plugin.vector_delete(
                    kb_id, filters={"_langbot_knowledge_base_uuid": kb_id})
                await self.plugin.delete_plugin_storage("kb:" + kb_id)

            async def ingest(self, context):
                raw = await self.plugin.get_knowledge_file_stream(context.file_object.storage_path)
                lines = [line for line in raw.decode().splitlines() if line.strip()]
                vectors = await self.plugin.invoke_embedding("emb-1", lines)
                doc_id = context.file_object.metadata.document_id
                await self.plugin.vector_upsert(
                    context.knowledge_base_id, vectors, [str(uuid.uuid4()) for _ in lines],
                    [{"text": line, "file_id": doc_id} for line in lines], documents=lines)
                return IngestionResult(document_id=doc_id, status=DocumentStatus.COMPLETED,
                                       chunks_created=len(lines))

            async def delete_document(self, kb_id, document_id):
                await self.plugin.vector_delete(kb_id, file_ids=[document_id])
                return True

            async def retrieve(self, context):
                [vector] = await self.plugin.invoke_embedding("emb-1", [context.query])
                hits = await self.plugin.vector_search(
                    context.get_collection_id(), vector, context.retrieval_settings["top_k"])
                entries = [RetrievalResultEntry(
                    id=h["id"], content=[ContentElement.from_text(h["metadata"]["text"])],
                    metadata=h["metadata"], distance=h["distance"]) for h in hits]
                return RetrievalResponse(results=entries, total_found=len(entries))
        """,
    "synth_components/pages/console/console.yaml": """
        apiVersion: v1
        kind: Page
        metadata: {name: console, label: {en_US: Console}}
        spec: {path: index.html}
        execution: {python: {path: console.py, attr: Console}}
        """,
    "synth_components/pages/console/index.html": "<html></html>\n",
    "synth_components/pages/console/console.py": """
        from langbot_plugin.api.definition.components.page import Page, PageResponse

        class Console(Page):
            async def handle_api(self, request):
                if request.endpoint == "/fail":
                    return PageResponse.fail("nope")
                return PageResponse.ok({"endpoint": request.endpoint, "method": request.method,
                                        "body": request.body})
        """,
}


def _forget_synth_modules() -> None:
    # Each test writes the synthetic plugin to a new tmp dir under the same
    # module names; drop stale copies so every test imports its own files.
    for name in [n for n in sys.modules if n == "synth_main" or n.startswith("synth_components")]:
        del sys.modules[name]


@pytest.fixture
def synth_root(tmp_path: Path) -> Path:
    root = tmp_path / "synth"
    for rel, content in _SYNTH_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip(), encoding="utf-8")
    _forget_synth_modules()
    return root


@pytest.fixture
async def synth(supported_host: FakeLangBotHost, synth_root: Path):
    harness = PluginHarness(supported_host, plugin_root=synth_root)
    await harness.start({"greeting": "hi"})
    try:
        yield harness
    finally:
        await harness.stop()
        _forget_synth_modules()


async def test_harness_tool_event_command_page(synth: PluginHarness) -> None:
    host = synth.host
    assert synth.discovery_warnings == []
    assert synth.plugin.config_at_init == {"greeting": "hi"}
    session = make_session("group", "g1", sender_id="first-speaker")

    # No live query: the tool falls back to the (stale) session sender.
    out = await synth.call_tool("echo", {"a": 1}, session=session, query_id=0)
    assert out == {"sender": "first-speaker", "starts": out["starts"], "config": {"greeting": "hi"}}
    assert host.storage["last_echo"] == b'{"a": 1}'

    host.open_query(0, bot_uuid="bot-1", launcher_type="group", launcher_id="g1",
                    sender_id="current-speaker", sender_name="Carol")
    assert (await synth.call_tool("echo", {}, session=session, query_id=0))["sender"] == "current-speaker"

    ctx = await synth.emit_event("PromptPreProcessing", {
        "session_name": "group_g1", "default_prompt": [{"role": "system", "content": "base"}],
        "prompt": []}, query_id=0)
    assert synth.last_event_emitted is True
    assert [m["content"] for m in ctx["event"]["default_prompt"]] == ["base", "memory of Carol"]
    assert host.queries[0].variables["_ltm_context"] == "injected"

    assert await synth.execute_command("!synth list  two", session=session, query_id=0,
                                       privilege=2) == [
        {"text": "list||two priv=2", "image_base64": None, "image_url": None, "file_url": None,
         "file_name": None, "error": None}]

    assert await synth.page_api("console", "/x", "post", {"k": 1}) == {
        "data": {"endpoint": "/x", "method": "POST", "body": {"k": 1}}, "error": None}
    assert (await synth.page_api("console", "/fail"))["error"] == "nope"

    with pytest.raises(PluginActionError, match="Tool nope not found"):
        await synth.call_tool("nope", {}, session=session, query_id=0)


async def test_harness_knowledge_engine(synth: PluginHarness) -> None:
    host = synth.host
    assert await synth.rag_capabilities() == ["doc_ingestion"]
    kb = await synth.create_memory_kb()
    assert host.storage[f"kb:{kb}"] == b'{"embedding_model_uuid": "emb-1"}'
    with pytest.raises(ValueError, match="bad config"):
        await synth.kb_create(config={"fail": True})
    assert list(host.kbs) == [kb]  # the failed KB row was rolled back

    doc = b"cats purr when happy\n\nthe stock market fell\n"
    result = await synth.ingest(kb, "doc-1", "notes.txt", doc)
    assert result["status"] == "completed" and result["chunks_created"] == 2
    assert list(host.storage) == [f"kb:{kb}"]

    found = await synth.retrieve(kb, "happy cats", retrieval_settings={"top_k": 1})
    assert [e["content"][0]["text"] for e in found["results"]] == ["cats purr when happy"]

    assert await synth.delete_document(kb, "doc-1") is True
    assert await host.dump_kb(kb) == []
    await synth.ingest(kb, "doc-2", "more.txt", b"one line\n")
    await synth.kb_delete(kb)
    assert kb not in host.kbs and f"kb:{kb}" not in host.storage
    assert await host.dump_kb(kb) == []  # the hook wiped the vectors itself


async def test_harness_restart_keeps_host_state(synth: PluginHarness) -> None:
    session = make_session()
    first = await synth.call_tool("echo", {"n": 1}, session=session, query_id=5)
    await synth.restart()
    second = await synth.call_tool("echo", {"n": 2}, session=session, query_id=5)
    # fresh modules: module-level counters start over, as in a new process
    assert first["starts"] == second["starts"] == 1
    assert synth.host.storage["last_echo"] == b'{"n": 2}'
    await synth.restart(fresh_modules=False)
    assert (await synth.call_tool("echo", {}, session=session, query_id=5))["starts"] == 2


async def test_harness_installed_mode_scopes_invocations(
        supported_host: FakeLangBotHost, synth_root: Path) -> None:
    harness = PluginHarness(supported_host, plugin_root=synth_root, installed_mode=True)
    await harness.start({"greeting": "hi"})
    try:
        out = await harness.call_tool("echo", {"spawn": True}, session=make_session(), query_id=1)
        assert out["config"] == {"greeting": "hi"}
        await harness.settle()
        # A plain create_task outlives its invocation and loses Host API access.
        # (LangBotAPIProxy's run_scoped wrapper says "Runner invocation has
        # ended"; a direct handler call or config access says "Plugin ...".)
        assert "invocation has ended" in (harness.plugin.background_error or "")
        # SDK 0.7.18 quirk: the INITIALIZE_PLUGIN scope snapshots the container
        # config *before* the new settings are stored, so initialize() sees {}.
        assert harness.plugin.config_at_init == {}
    finally:
        await harness.stop()


async def test_harness_streams_multi_chunk_file(synth: PluginHarness) -> None:
    kb = await synth.kb_create(config={})
    big = "".join(f"line {i} about cats\n" for i in range(1200)).encode()
    assert len(big) > 16 * 1024  # more than one FILE_CHUNK
    result = await synth.ingest(kb, "big", "big.txt", big)
    assert result["chunks_created"] == 1200


# --------------------------------------------------------------- the real plugin


@pytest.mark.skipif(not (PLUGIN_ROOT / "main.py").exists(), reason="plugin main.py not written yet")
async def test_real_plugin_loads_without_discovery_warnings(harness: PluginHarness) -> None:
    assert harness.discovery_warnings == []
    assert harness.plugin is not None


# ------------------------------------------------------------------- stores of record layout 2


async def _host_on(name: str) -> FakeLangBotHost:
    host = FakeLangBotHost(make_backend(name))
    host.add_embedding_model("emb-1")
    return host


async def test_milvus_lite_reproduces_the_hosts_milvus() -> None:
    """Real Milvus Lite through the host's translation: a first call that is not a write creates the
    collection with 1536 dimensions (a later write of another size fails), a write needs text, file_id
    and uuid, only those come back, the distance is a similarity and other filter keys are dropped."""
    host = await _host_on("milvus")
    try:
        early = host.create_kb()
        assert (await vlist(host, early))["items"] == []
        assert host.backend.dimension(host.collection_name(early)) == 1536
        with pytest.raises(ActionCallError, match="dim"):
            await upsert(host, early, [{"text": "x", "file_id": "f", "uuid": "u"}])
        kb = host.create_kb()
        with pytest.raises(ActionCallError, match="chunk_uuid"):
            await upsert(host, kb, [{"text": "no uuid", "file_id": "f"}])
        await upsert(host, kb, [{"text": "alice likes green tea", "file_id": "f1", "uuid": "u1", "user_key": "a"},
                                {"text": "bob likes coffee", "file_id": "f2", "uuid": "u2", "user_key": "b"}])
        assert host.backend.dimension(host.collection_name(kb)) == 256
        hits = await search(host, kb, "alice likes green tea", top_k=5)
        assert hits[0]["metadata"] == {"text": "alice likes green tea", "file_id": "f1", "uuid": "u1"}
        assert hits[0]["distance"] > hits[1]["distance"] and hits[0]["distance"] > 0.99  # similarity
        dropped = await search(host, kb, "alice", filters={"user_key": "a"})
        assert {h["metadata"]["file_id"] for h in dropped} == {"f1", "f2"}
        by_file = await search(host, kb, "alice", filters={"file_id": "f2"})
        assert [h["metadata"]["uuid"] for h in by_file] == ["u2"]
        await host.call_action(A.VECTOR_DELETE, {"collection_id": kb, "filters": {"uuid": "u1"}})
        assert [i["metadata"]["uuid"] for i in (await vlist(host, kb))["items"]] == ["u2"]
    finally:
        await host.close()


async def test_insert_only_store_keeps_both_rows_of_a_rewrite() -> None:
    host = await _host_on("milvus-insert")
    try:
        kb = host.create_kb()
        await upsert(host, kb, [{"id": "r1", "text": "first", "file_id": "f", "uuid": "u"}])
        await upsert(host, kb, [{"id": "r1", "text": "second", "file_id": "f", "uuid": "u"}])
        assert sorted(i["document"] for i in (await vlist(host, kb))["items"]) == ["first", "second"]
        await host.call_action(A.VECTOR_DELETE, {"collection_id": kb, "filters": {"uuid": "u"}})
        assert (await vlist(host, kb))["items"] == []
    finally:
        await host.close()


async def test_valkey_stand_in_filters_on_file_id_only() -> None:
    host = await _host_on("valkey")
    try:
        kb = host.create_kb()
        await upsert(host, kb, [{"id": "r1", "text": "alice tea", "file_id": "f1", "uuid": "u1", "k": 1},
                                {"id": "r2", "text": "bob coffee", "file_id": "f2", "uuid": "u2", "k": 2}])
        assert {i["id"] for i in (await vlist(host, kb, filters={"uuid": "u1"}))["items"]} == {"r1", "r2"}
        assert [i["metadata"]["k"] for i in (await vlist(host, kb, filters={"file_id": "f2"}))["items"]] == [2]
        gone = await host.call_action(A.VECTOR_DELETE, {"collection_id": kb, "filters": {"uuid": "u1"}})
        assert gone["count"] == 0 and len((await vlist(host, kb))["items"]) == 2  # skipped, not a wipe
        await upsert(host, kb, [{"id": "r1", "text": "alice tea", "file_id": "moved", "uuid": "u1"}])
        await host.call_action(A.VECTOR_DELETE, {"collection_id": kb, "file_ids": ["moved"]})
        assert [i["id"] for i in (await vlist(host, kb))["items"]] == ["r2"]
    finally:
        await host.close()
