"""Scoped audit log (A1, A2 in docs/REQUIREMENTS.md).

One log per memory space (`l1:<scope_key>`, `l2:<kb>:<user_key>`, `installation`), so a
change to a space shared by several chats (bot isolation) is visible from every one of
them. Entries live in plugin storage (never in the vector DB) in fixed-size chunks: a
head record holds the count, chunk n holds entries n*CHUNK .. n*CHUNK+CHUNK-1. An append
rewrites only the last chunk and the small head record, so its cost does not grow with
the log. A chat reads the merge of its own logs, newest first.

Entries hold ids, names and counts, never memory text (a `remember` entry does not carry the
episode's tags either: they are words of the memory). A person's erasure leaves no trace here either:
`scrub` rewrites, in the logs of the spaces erased, every entry that names that sender id (as who
acted, as the target, in a field) so that it names "(erased)" instead, with no display name. The
entry itself stays (what happened, when, to which record id), so the log still accounts for every
change.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any, NewType

from ._bookkeeping import Bookkeeping
from ._locks import KeyedLocks
from ._storage import AUDIT_PREFIX, JsonStore, audit_chunk_key, audit_head_key, audit_log_ids
from .operations import Operation
from .spaces import stored_names
from .timefields import now_iso, parse_stored
from .wording import Said

CHUNK = 50
MAX_SUMMARY_CHARS = 200
ERASED_PERSON = "(erased)"  # what an entry names instead of an erased person's sender id

# The operation of an entry carried over from another plugin's log (a migration), kept as that log named
# it: not one of ours, so no surface has a word for it and it is shown as stored. Only `WriteTx.carried`
# takes such an entry; everything this plugin does is audited under an `Operation`.
ForeignOperation = NewType("ForeignOperation", str)

WriteStep = Callable[[Callable[[], Awaitable[None]]], Awaitable[None]]


async def _direct(write: Callable[[], Awaitable[None]]) -> None:
    await write()


@dataclass(frozen=True)
class AuditEntry:
    """One change. The summary is stored as its English text (`summary`, what exports and old readers
    show) and as its code and parameters (`summary_code`, `summary_params`), which the surfaces show
    in their reader's language."""

    operation: Operation | ForeignOperation
    target_type: str
    target_id: str
    chat_key: str
    space_key: str = ""
    sender_id: str = ""
    sender_name: str = ""
    query_id: int | None = None
    summary: Said | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    time: str = field(default_factory=now_iso)

    def to_dict(self) -> dict[str, Any]:
        data = stored_names(asdict(self))
        data["operation"] = str(self.operation)  # the plain value, as stored before `Operation` existed
        said = self.summary
        data["summary"] = said.english[:MAX_SUMMARY_CHARS] if said else ""
        if said is not None:
            coded = said.to_dict()
            data["summary_code"], data["summary_params"] = coded["code"], coded["params"]
        return data


@dataclass(frozen=True)
class AuditPage:
    entries: list[dict[str, Any]]
    page: int
    pages: int
    total: int


class AuditLog:
    def __init__(self, store: Bookkeeping) -> None:
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

    async def log_ids(self) -> list[str]:
        """Every audit log of the installation."""
        return audit_log_ids(await self._store.keys(AUDIT_PREFIX))

    async def scrub(self, log_id: str, sender_id: str, records: Collection[str], step: WriteStep | None = None) -> int:
        """A person's erasure: every entry of the log that names `sender_id` names ERASED_PERSON instead (and
        loses the display name), and an entry about one of `records` (their erased episodes) loses any tags
        an older version recorded. Under the log's lock, so no append is lost; only changed chunks are
        written. Returns how many entries changed."""
        run = step or _direct
        changed = 0
        async with self._locks.hold(log_id):
            for index in range(-(-await self.count(log_id) // CHUNK)):
                chunk = await self._store.get(audit_chunk_key(log_id, index), [], keep=False)
                if not isinstance(chunk, list):
                    continue
                new = [without_person(e, sender_id, records) for e in chunk]
                count = sum(1 for before, after in zip(chunk, new, strict=True) if before is not after)
                if count:
                    await run(partial(self._store.set, audit_chunk_key(log_id, index), new))
                    changed += count
        return changed

    async def merged_page(self, log_ids: Sequence[str], page: int, page_size: int = 10) -> AuditPage:
        """Newest first over several logs (a chat's own space and the spaces it shares): by time, then in
        the order the logs are given. Each log is in time order already (its appends are serialized), so
        the entries before the page are counted by bisection, not walked: a deep page of two logs of
        100,000 entries reads a few dozen entries, not 100,000 (`_Reader` keeps the chunks it read)."""
        counts = {log_id: await self.count(log_id) for log_id in dict.fromkeys(log_ids)}
        total = sum(counts.values())
        pages = max(1, -(-total // page_size))
        filled = [log_id for log_id, n in counts.items() if n]
        if len(filled) <= 1:
            single = await self.page(filled[0], page, page_size) if filled else AuditPage([], page, 1, 0)
            return AuditPage(single.entries, page, pages, total)
        readers = [_Reader(self._store, log_id, counts[log_id], rank) for rank, log_id in enumerate(filled)]
        skip = min(total, (page - 1) * page_size)
        taken = await _split(readers, skip)
        entries: list[dict[str, Any]] = []
        while len(entries) < page_size:
            heads = [(await r.at(t), r) for r, t in zip(readers, taken) if t < r.count]
            if not heads:
                break
            best, reader = heads[0]
            for entry, other in heads[1:]:
                if _before(entry, other.rank, best, reader.rank):
                    best, reader = entry, other
            entries.append(best)
            taken[readers.index(reader)] += 1
        return AuditPage(entries, page, pages, total)

    async def merged_export(self, log_ids: Sequence[str]) -> list[dict[str, Any]]:
        """Oldest first over several logs."""
        merged: list[dict[str, Any]] = []
        for log_id in dict.fromkeys(log_ids):
            merged.extend(await self.export(log_id))
        return sorted(merged, key=_moment)


def without_person(entry: Any, sender_id: str, records: Collection[str]) -> Any:
    """`entry` naming ERASED_PERSON wherever it named `sender_id` (the same object when it never did)."""
    if not isinstance(entry, dict):
        return entry
    new = {key: _replaced(value, sender_id) for key, value in entry.items()}
    if entry.get("sender_id") == sender_id:
        new["sender_name"] = ""  # the display name the person had when they acted
    meta = new.get("meta")
    if isinstance(meta, dict) and "tags" in meta and (entry.get("target_id") in records
                                                      or entry.get("sender_id") == sender_id):
        new["meta"] = {k: v for k, v in meta.items() if k != "tags"}
    return new if new != entry else entry


def _replaced(value: Any, sender_id: str) -> Any:
    if isinstance(value, str):
        return ERASED_PERSON if value == sender_id else value
    if isinstance(value, list):
        return [_replaced(v, sender_id) for v in value]
    if isinstance(value, dict):
        return {k: _replaced(v, sender_id) for k, v in value.items()}
    return value


def _moment(entry: dict[str, Any]) -> datetime:
    return parse_stored(entry.get("time")) or datetime.min.replace(tzinfo=UTC)


class _Reader:
    """One log read newest first by index (0 = newest), a chunk at a time, chunks kept."""

    def __init__(self, store: JsonStore, log_id: str, count: int, rank: int) -> None:
        self._store = store
        self.log_id = log_id
        self.count = count
        self.rank = rank  # the log's place in the merge order, for entries of the same time
        self._chunks: dict[int, list[dict[str, Any]]] = {}

    async def at(self, newest_index: int) -> dict[str, Any]:
        index, offset = divmod(self.count - 1 - newest_index, CHUNK)
        chunk = self._chunks.get(index)
        if chunk is None:
            raw = await self._store.get(audit_chunk_key(self.log_id, index), [])
            chunk = self._chunks[index] = raw if isinstance(raw, list) else []
        return chunk[offset] if offset < len(chunk) and isinstance(chunk[offset], dict) else {}


def _before(a: dict[str, Any], a_rank: int, b: dict[str, Any], b_rank: int) -> bool:
    """Whether entry `a` (of the log ranked `a_rank`) comes before `b` in the merged, newest-first order."""
    moment_a, moment_b = _moment(a), _moment(b)
    return moment_a > moment_b or (moment_a == moment_b and a_rank < b_rank)


async def _split(readers: list[_Reader], skip: int) -> list[int]:
    """How many of each log's newest entries come before the first `skip` entries of the merge ends."""
    taken = [0] * len(readers)
    first = readers[0]
    if len(readers) > 2:  # not reached by the chats of today (two logs each): walk, as a merge would
        for _ in range(skip):
            heads = [(await r.at(t), i) for i, (r, t) in enumerate(zip(readers, taken)) if t < r.count]
            best, i = heads[0]
            for entry, j in heads[1:]:
                if _before(entry, readers[j].rank, best, readers[i].rank):
                    best, i = entry, j
            taken[i] += 1
        return taken
    second = readers[1]
    low, high = max(0, skip - second.count), min(skip, first.count)
    while low <= high:
        a = (low + high) // 2
        b = skip - a
        if a > 0 and b < second.count and _before(await second.at(b), second.rank, await first.at(a - 1), first.rank):
            high = a - 1  # the first log gave too many
        elif b > 0 and a < first.count and _before(await first.at(a), first.rank, await second.at(b - 1),
                                                   second.rank):
            low = a + 1  # too few
        else:
            return [a, b]
    return [low, skip - low]
