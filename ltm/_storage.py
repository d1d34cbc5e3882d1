"""JSON records in plugin storage, per-key async locks, and the storage key layout.

Plugin storage has no compare-and-set, and one plugin is one process, so a
process-local lock per memory space serializes read-modify-write (F1 in
docs/REQUIREMENTS.md). Every storage key the core writes is built here, so the
layout is described in one place (docs/ARCHITECTURE.md, "Storage layout").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from .errors import HostError
from .ports import KeyValueStore

log = logging.getLogger("LongTermMemory")

KB_CONFIGS_KEY = "kb_configs"


def profile_key(scope_key: str, sender_id: str = "") -> str:
    """The session profile of a scope, or one speaker's profile in it."""
    return f"profile:{scope_key}:speaker:{sender_id}" if sender_id else f"profile:{scope_key}:session"


def speaker_profile_prefix(scope_key: str) -> str:
    return f"profile:{scope_key}:speaker:"


def audit_head_key(log_id: str) -> str:
    return f"audit:{log_id}"


def audit_chunk_key(log_id: str, index: int) -> str:
    return f"audit:{log_id}:{index}"


def fence_key(space_key: str) -> str:
    return f"fence:{space_key}"


FENCE_PREFIX = "fence:"


def snapshot_key(scope_key: str) -> str:
    return f"snapshot:{scope_key}"


def document_key(kb_id: str, document_id: str) -> str:
    return f"doc:{kb_id}:{document_id}"


def document_prefix(kb_id: str) -> str:
    return f"doc:{kb_id}:"


def scope_of_key(key: str) -> str | None:
    """The session scope a stored profile, audit or snapshot key belongs to (for the console's list)."""
    if key.startswith("profile:"):
        return key[len("profile:"):].rsplit(":session", 1)[0].split(":speaker:")[0]
    if key.startswith("audit:"):
        head, _, tail = key[len("audit:"):].rpartition(":")
        return head if tail.isdigit() and head else key[len("audit:"):]
    if key.startswith("snapshot:"):
        return key[len("snapshot:"):]
    return None


class JsonStore:
    """JSON values over the key-value port. A damaged record reads as missing and is logged."""

    def __init__(self, port: KeyValueStore) -> None:
        self._port = port

    async def get(self, key: str, default: Any = None) -> Any:
        raw = await self._port.get(key)
        if raw is None:
            return default
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            # A damaged record must not take the whole plugin down; keep it, report it.
            log.warning("[LongTermMemory] storage record %s is not valid JSON; treated as empty", key)
            return default

    async def set(self, key: str, value: Any) -> None:
        try:
            data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError) as exc:
            # Nothing reached the host: an authoritative, local refusal.
            raise HostError(f"storage record {key[:60]} could not be encoded ({type(exc).__name__})") from None
        await self._port.set(key, data)

    async def delete(self, key: str) -> None:
        await self._port.delete(key)

    async def keys(self, prefix: str = "") -> list[str]:
        return [k for k in await self._port.keys(prefix) if k.startswith(prefix)]


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
