"""The one seam to the outside world: plugin storage, vectors, embeddings, LLM.

`HostPort` is what the service needs from LangBot; `PluginHostPort` implements it
on top of the SDK's plugin proxy. It also classifies failures, which is what the
write fences (F2/F3) depend on:

- the host answered with an error (`ActionCallError`)  -> `HostError`, authoritative;
- no answer (timeout, lost connection)                 -> `OutcomeUnknown`;
- cancellation propagates unchanged; the service decides whether it came after
  dispatch.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from langbot_plugin.entities.io.errors import (
    ActionCallError,
    ActionCallTimeoutError,
    ConnectionClosedError,
)

from .errors import HostError, OutcomeUnknown

_UNKNOWN_OUTCOME = (ActionCallTimeoutError, ConnectionClosedError, asyncio.TimeoutError, TimeoutError)


class HostPort(Protocol):
    async def storage_get(self, key: str) -> bytes | None: ...
    async def storage_set(self, key: str, value: bytes) -> None: ...
    async def storage_delete(self, key: str) -> None: ...
    async def storage_keys(self) -> list[str]: ...
    async def embed(self, model_uuid: str, texts: list[str]) -> list[list[float]]: ...
    async def vector_upsert(
        self, collection: str, ids: list[str], vectors: list[list[float]],
        metadatas: list[dict[str, Any]], documents: list[str],
    ) -> None: ...
    async def vector_search(
        self, collection: str, vector: list[float], top_k: int, filters: dict[str, Any],
        search_type: str = "vector", query_text: str = "",
    ) -> list[dict[str, Any]]: ...
    async def vector_delete(
        self, collection: str, file_ids: list[str] | None = None, filters: dict[str, Any] | None = None
    ) -> int: ...
    async def vector_list(
        self, collection: str, filters: dict[str, Any], limit: int, offset: int
    ) -> dict[str, Any]: ...
    async def list_knowledge_bases(self) -> list[dict[str, Any]]: ...


def _short(message: str, limit: int = 240) -> str:
    message = " ".join(str(message).split())
    return message if len(message) <= limit else message[: limit - 3] + "..."


class PluginHostPort:
    """HostPort over a LangBot `BasePlugin` (its methods are the host API)."""

    def __init__(self, plugin: Any):
        self._plugin = plugin

    async def _call(self, what: str, coro: Any) -> Any:
        try:
            return await coro
        except ActionCallError as exc:
            raise HostError(f"host error on {what}: {_short(exc.message)}") from None
        except _UNKNOWN_OUTCOME as exc:
            raise OutcomeUnknown(f"no answer from the host on {what} ({type(exc).__name__})") from None

    async def storage_get(self, key: str) -> bytes | None:
        try:
            return await self._plugin.get_plugin_storage(key)
        except ActionCallError as exc:
            if "not found" in exc.message.lower():
                return None
            raise HostError(f"host error on storage read: {_short(exc.message)}") from None
        except _UNKNOWN_OUTCOME as exc:
            raise OutcomeUnknown(f"no answer from the host on storage read ({type(exc).__name__})") from None

    async def storage_set(self, key: str, value: bytes) -> None:
        await self._call("storage write", self._plugin.set_plugin_storage(key, value))

    async def storage_delete(self, key: str) -> None:
        await self._call("storage delete", self._plugin.delete_plugin_storage(key))

    async def storage_keys(self) -> list[str]:
        return list(await self._call("storage keys", self._plugin.get_plugin_storage_keys()))

    async def embed(self, model_uuid: str, texts: list[str]) -> list[list[float]]:
        return await self._call("embedding", self._plugin.invoke_embedding(model_uuid, texts))

    async def vector_upsert(self, collection, ids, vectors, metadatas, documents) -> None:
        await self._call(
            "vector upsert",
            self._plugin.vector_upsert(
                collection_id=collection, vectors=vectors, ids=ids, metadata=metadatas, documents=documents
            ),
        )

    async def vector_search(self, collection, vector, top_k, filters, search_type="vector", query_text=""):
        return await self._call(
            "vector search",
            self._plugin.vector_search(
                collection_id=collection, query_vector=vector, top_k=top_k, filters=filters,
                search_type=search_type, query_text=query_text,
            ),
        )

    async def vector_delete(self, collection, file_ids=None, filters=None) -> int:
        return int(
            await self._call(
                "vector delete",
                self._plugin.vector_delete(collection_id=collection, file_ids=file_ids, filters=filters),
            )
            or 0
        )

    async def vector_list(self, collection, filters, limit, offset) -> dict[str, Any]:
        return await self._call(
            "vector list",
            self._plugin.vector_list(collection_id=collection, filters=filters, limit=limit, offset=offset),
        )

    async def list_knowledge_bases(self) -> list[dict[str, Any]]:
        return list(await self._call("knowledge base list", self._plugin.list_knowledge_bases()))
