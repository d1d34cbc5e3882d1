"""Scoped audit log (A1, A2 in docs/REQUIREMENTS.md).

Entries live in plugin storage (never in the vector DB), one log per audit id, in
fixed-size chunks: `audit:<id>` holds the count, `audit:<id>:<n>` holds entries
n*CHUNK .. n*CHUNK+CHUNK-1. An append rewrites only the last chunk and the small
head record, so its cost does not grow with the log.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from ._storage import JsonStore, KeyedLocks, audit_chunk_key, audit_head_key
from .timefields import now_iso

CHUNK = 50
MAX_SUMMARY_CHARS = 200

WriteStep = Callable[[Callable[[], Awaitable[None]]], Awaitable[None]]


async def _direct(write: Callable[[], Awaitable[None]]) -> None:
    await write()


@dataclass(frozen=True)
class AuditEntry:
    operation: str
    target_type: str
    target_id: str
    scope_key: str
    user_key: str = ""
    sender_id: str = ""
    sender_name: str = ""
    query_id: int | None = None
    summary: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    time: str = field(default_factory=now_iso)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["summary"] = data["summary"][:MAX_SUMMARY_CHARS]
        return data


@dataclass(frozen=True)
class AuditPage:
    entries: list[dict[str, Any]]
    page: int
    pages: int
    total: int


class AuditLog:
    def __init__(self, store: JsonStore) -> None:
        self._store = store
        self._locks = KeyedLocks()

    async def append_many(self, log_id: str, entries: Sequence[AuditEntry], step: WriteStep | None = None) -> None:
        """Reads the head and the last chunk, then writes. `step` wraps each write only, so a failed
        read (nothing written yet) is never mistaken for a write of unknown outcome."""
        if not entries:
            return
        run = step or _direct
        async with self._locks.hold(log_id):
            head = await self._store.get(audit_head_key(log_id), {"count": 0})
            count = int(head.get("count", 0)) if isinstance(head, dict) else 0
            pending = [e.to_dict() for e in entries]
            writes: list[tuple[str, Any]] = []
            while pending:
                index, offset = divmod(count, CHUNK)
                chunk = await self._store.get(audit_chunk_key(log_id, index), []) if offset else []
                if not isinstance(chunk, list):
                    chunk = []
                chunk = chunk[:offset]
                room = CHUNK - len(chunk)
                chunk.extend(pending[:room])
                pending = pending[room:]
                writes.append((audit_chunk_key(log_id, index), chunk))
                count = index * CHUNK + len(chunk)
            writes.append((audit_head_key(log_id), {"count": count, "chunk": CHUNK}))
            for key, value in writes:
                await run(partial(self._store.set, key, value))

    async def count(self, log_id: str) -> int:
        head = await self._store.get(audit_head_key(log_id), {"count": 0})
        return int(head.get("count", 0)) if isinstance(head, dict) else 0

    async def page(self, log_id: str, page: int, page_size: int = 10) -> AuditPage:
        """Newest first; `page` is 1-based. Reads only the chunks the page touches."""
        total = await self.count(log_id)
        pages = max(1, -(-total // page_size))
        newest = total - 1 - (page - 1) * page_size
        oldest = max(0, newest - page_size + 1)
        entries: list[dict[str, Any]] = []
        if total and newest >= 0:
            chunks: dict[int, list[dict[str, Any]]] = {}
            for position in range(newest, oldest - 1, -1):
                index, offset = divmod(position, CHUNK)
                if index not in chunks:
                    chunks[index] = await self._store.get(audit_chunk_key(log_id, index), [])
                if offset < len(chunks[index]):
                    entries.append(chunks[index][offset])
        return AuditPage(entries, page, pages, total)

    async def export(self, log_id: str) -> list[dict[str, Any]]:
        """Oldest first, the whole log."""
        total = await self.count(log_id)
        result: list[dict[str, Any]] = []
        for index in range(-(-total // CHUNK)):
            result.extend(await self._store.get(audit_chunk_key(log_id, index), []))
        return result[:total]
