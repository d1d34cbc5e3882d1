"""JSON records in plugin storage, and per-key async locks.

Plugin storage has no compare-and-set, and one plugin is one process, so a
process-local lock per memory space serializes read-modify-write (F1).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from .host_port import HostPort

log = logging.getLogger("LongTermMemory")


class JsonStore:
    def __init__(self, port: HostPort):
        self._port = port

    async def get(self, key: str, default: Any = None) -> Any:
        raw = await self._port.storage_get(key)
        if raw is None:
            return default
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            # A damaged record must not take the whole plugin down; keep it, report it.
            log.warning("[LongTermMemory] storage record %s is not valid JSON; treated as empty", key)
            return default

    async def set(self, key: str, value: Any) -> None:
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        await self._port.storage_set(key, data)

    async def delete(self, key: str) -> None:
        await self._port.storage_delete(key)

    async def keys(self, prefix: str = "") -> list[str]:
        return [k for k in await self._port.storage_keys() if k.startswith(prefix)]


class KeyedLocks:
    """One asyncio.Lock per key, dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if self._users[key] == 0:
                del self._users[key]
                del self._locks[key]
