"""The LangBot adapter: the core's ports implemented over the plugin SDK.

Every host call goes through `_call`, which maps SDK failures onto the port
failure contract the write fences depend on (docs/HOST-FACTS.md, errors):

- the host answered with an error (`ActionCallError`)  -> `HostError`, authoritative;
- no answer (timeout, lost connection)                 -> `OutcomeUnknown`;
- cancellation propagates unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.entities.io.errors import (
    ActionCallError,
    ActionCallTimeoutError,
    ConnectionClosedError,
)

from ..errors import HostError, OutcomeUnknown, ValidationError
from ..ports import ChatMessage, HostPorts, IndexHit, IndexPage, IndexRecord, Vector
from . import layout

log = logging.getLogger("LongTermMemory")
T = TypeVar("T")

_UNKNOWN_OUTCOME = (ActionCallTimeoutError, ConnectionClosedError, asyncio.TimeoutError, TimeoutError)
# What a host call through the SDK can raise (the query APIs also raise RuntimeError outside an invocation).
SDK_CALL_ERRORS = (ActionCallError, RuntimeError, *_UNKNOWN_OUTCOME)
PROBE_TEXT = "LongTermMemory isolation probe"


def _short(message: str, limit: int = 240) -> str:
    message = " ".join(str(message).split())
    return message if len(message) <= limit else message[: limit - 3] + "..."


# The runtime relays its own failed hop to LangBot as an ActionCallError whose message starts with the
# original error's class name: the host never answered, so the outcome is unknown (docs/HOST-FACTS.md).
_RELAYED_UNKNOWN = ("ActionCallTimeoutError", "ConnectionClosedError", "TimeoutError")


def relayed_unknown(exc: ActionCallError) -> bool:
    return str(exc.message or "").lstrip().startswith(_RELAYED_UNKNOWN)


async def _call(what: str, call: Awaitable[T]) -> T:
    try:
        return await call
    except ActionCallError as exc:
        if relayed_unknown(exc):
            raise OutcomeUnknown(f"no answer from the host on {what} (relayed by the plugin runtime)") from None
        raise HostError(f"host error on {what}: {_short(exc.message)}") from None
    except _UNKNOWN_OUTCOME as exc:
        raise OutcomeUnknown(f"no answer from the host on {what} ({type(exc).__name__})") from None


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
            raise HostError(f"host error on storage read: {_short(exc.message)}") from None
        except _UNKNOWN_OUTCOME as exc:
            raise OutcomeUnknown(f"no answer from the host on storage read ({type(exc).__name__})") from None

    async def set(self, key: str, value: bytes) -> None:
        await _call("storage write", self._plugin.set_plugin_storage(key, value))

    async def delete(self, key: str) -> None:
        await _call("storage delete", self._plugin.delete_plugin_storage(key))

    async def keys(self, prefix: str = "") -> list[str]:
        keys = await _call("storage keys", self._plugin.get_plugin_storage_keys())
        return [str(k) for k in keys if str(k).startswith(prefix)]


class HostVectorIndex:
    """VectorIndex over the host's vector API, with the record layout of `layout`."""

    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin

    async def upsert(self, collection: str, records: Sequence[IndexRecord], vectors: Sequence[Vector]) -> None:
        await _call("vector upsert", self._plugin.vector_upsert(
            collection_id=collection, vectors=[list(v) for v in vectors], ids=[r.record_id for r in records],
            metadata=[layout.to_metadata(r) for r in records], documents=[r.text for r in records]))

    async def _search(self, collection: str, space: str, vector: Vector, top_k: int, filters: dict[str, Any],
                      search_type: str = "vector", query_text: str = "") -> list[tuple[IndexRecord, float]]:
        rows = await _call("vector search", self._plugin.vector_search(
            collection_id=collection, query_vector=list(vector), top_k=top_k, filters=filters,
            search_type=search_type, query_text=query_text))
        found: list[tuple[IndexRecord, float]] = []
        dropped = 0
        for row in rows or []:
            record = layout.from_metadata(row.get("metadata"), space, str(row.get("id") or ""))
            if record is None:
                dropped += 1
                continue
            found.append((record, float(row.get("distance") or 0.0)))
        if dropped:
            log.warning("[LongTermMemory] vector search returned %d record(s) outside the scope; dropped "
                        "(backend filter leak?)", dropped)
        log.info("[LongTermMemory] vector search kb=%s filter=%s type=%s results=%d", collection,
                 next(iter(filters)), search_type, len(found))
        return found

    async def search(self, collection: str, space: str, vector: Vector, top_k: int, *,
                     speaker: str | None = None) -> list[IndexHit]:
        filters = layout.speaker_filter(space, speaker) if speaker else layout.space_filter(space)
        return [IndexHit(r, d) for r, d in await self._search(collection, space, vector, top_k, filters)]

    async def search_text(self, collection: str, space: str, text: str, vector: Vector, top_k: int
                          ) -> list[IndexHit] | None:
        """LangBot's full-text mode: Chroma answers substring matches with distance 0; Qdrant and Milvus
        ignore the mode and answer plain vector hits (non-zero distances): then there is no text search."""
        rows = await self._search(collection, space, vector, top_k, layout.space_filter(space),
                                  search_type="full_text", query_text=text)
        if any(abs(distance) > 1e-9 for _, distance in rows):
            log.info("[LongTermMemory] kb=%s ignores full-text search; vector only", collection)
            return None
        return [IndexHit(r, d) for r, d in rows]

    async def _list(self, collection: str, filters: dict[str, Any], limit: int, offset: int) -> list[dict[str, Any]]:
        listing = await _call("vector list", self._plugin.vector_list(
            collection_id=collection, filters=filters, limit=limit, offset=offset))
        items = listing.get("items") if isinstance(listing, dict) else None
        return [i for i in items or [] if isinstance(i, dict)]

    async def get(self, collection: str, space: str, record_id: str) -> IndexRecord | None:
        for item in await self._list(collection, layout.record_filter(space, record_id), 2, 0):
            record = layout.from_metadata(item.get("metadata"), space, str(item.get("id") or ""))
            if record is not None and record.record_id == record_id:
                return record
        return None

    async def page(self, collection: str, space: str, limit: int, offset: int) -> IndexPage:
        items = await self._list(collection, layout.space_filter(space), limit, offset)
        records = [layout.from_metadata(i.get("metadata"), space, str(i.get("id") or "")) for i in items]
        own = [r for r in records if r is not None]
        if len(own) != len(records):
            log.warning("[LongTermMemory] vector list returned %d record(s) outside the scope; dropped",
                        len(records) - len(own))
        return IndexPage(own, more=len(items) >= limit)

    async def delete(self, collection: str, space: str, record_ids: Sequence[str]) -> None:
        await _call("vector delete", self._plugin.vector_delete(
            collection_id=collection, file_ids=[layout.packed_file_id(space, i) for i in record_ids]))

    async def drop_collection(self, collection: str) -> None:
        await _call("vector delete", self._plugin.vector_delete(
            collection_id=collection, filters=layout.collection_filter(collection)))

    async def probe_isolation(self, collection: str, vector: Vector) -> list[str]:
        """Two archived probe records in two fresh spaces; asks the host with exactly the filters the
        plugin uses whether search, list and delete on one ever see or remove the other."""
        run = uuid.uuid4().hex[:12]
        spaces = {"a": f"health-probe:{run}:a", "b": f"health-probe:{run}:b"}
        ids = {side: str(uuid.uuid4()) for side in spaces}
        records = [IndexRecord(ids[s], spaces[s], "", PROBE_TEXT,
                               {"episode_id": ids[s], "content": PROBE_TEXT, "status": "archived",
                                "source": "health_probe"}) for s in spaces]
        problems: list[str] = []
        try:
            await self.upsert(collection, records, [vector, vector])
            rows = await _call("vector search", self._plugin.vector_search(
                collection_id=collection, query_vector=list(vector), top_k=10,
                filters=layout.space_filter(spaces["a"])))
            if ids["b"] in {str(r.get("id")) for r in rows or []}:
                problems.append("search filtered on one scope returned another scope's record")
            items = await self._list(collection, layout.space_filter(spaces["a"]), 10, 0)
            if ids["b"] in {str(i.get("id")) for i in items}:
                problems.append("list filtered on one scope returned another scope's record")
            if not any((i.get("metadata") or {}).get("user_key") == spaces["a"] for i in items):
                problems.append("the store dropped the record's scope metadata")
            await _call("vector delete", self._plugin.vector_delete(
                collection_id=collection, filters=layout.space_filter(spaces["a"])))
            remaining = await self._list(collection, layout.record_filter(spaces["b"], ids["b"]), 10, 0)
            if ids["b"] not in {str(i.get("id")) for i in remaining}:
                problems.append("delete filtered on one scope removed another scope's record")
        except (HostError, OutcomeUnknown) as exc:
            problems.append(f"probe failed: {exc}")
        finally:
            try:
                await self.delete(collection, spaces["a"], [ids["a"]])
                await self.delete(collection, spaces["b"], [ids["b"]])
            except (HostError, OutcomeUnknown):
                problems.append("probe records could not be removed")
        return problems


class HostEmbedder:
    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        vectors = await _call("embedding", self._plugin.invoke_embedding(model, list(texts)))
        return [list(v) for v in vectors]


class HostLanguageModel:
    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin

    async def complete(self, model: str, messages: Sequence[ChatMessage], *, timeout_s: float,
                       max_output_chars: int) -> str:
        request = [Message(role=m.role, content=m.content) for m in messages]
        try:
            reply = await asyncio.wait_for(
                _call("model call", self._plugin.invoke_llm(model, request, timeout=timeout_s)), timeout_s + 5)
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
        kbs = await _call("knowledge base list", self._plugin.list_knowledge_bases())
        return [str(kb.get("uuid")) for kb in kbs or [] if isinstance(kb, dict) and kb.get("uuid")]


def langbot_ports(plugin: Any) -> HostPorts:
    """Every port over one LangBot plugin object (its methods are the host API)."""
    return HostPorts(store=PluginStorage(plugin), index=HostVectorIndex(plugin), embedder=HostEmbedder(plugin),
                     llm=HostLanguageModel(plugin), directory=HostKnowledgeBases(plugin))
