"""Scoped audit log (A1, A2 in docs/REQUIREMENTS.md).

One log per memory space (`l1:<scope_key>`, `l2:<kb>:<user_key>`, `installation`), so a
change to a space shared by several chats (bot isolation) is visible from every one of
them. Entries live in plugin storage (never in the vector DB) in fixed-size chunks: a
head record holds the count, chunk n holds entries n*CHUNK .. n*CHUNK+CHUNK-1. An append
rewrites only the last chunk and the small head record, so its cost does not grow with
the log. A chat reads the merge of its own logs, newest first.

Entries hold ids, names and counts, never memory text (a `remember` entry does not carry the
episode's tags either: they are words of the memory). A person's erasure leaves no trace here either:
`scrub` rewrites, in the logs of the spaces erased, the fields that name a sender id (`SENDER_FIELDS`:
who acted, a speaker profile as the target, who decided a candidate) where they name that id, so that
they name "(erased)" instead, with no display name; nothing else of any entry changes, so another
person's name, a chat key or an operation that happens to equal the id stays as it was. An entry
carried from another plugin's log (a migration) quotes that log's summary, words of whoever acted:
when it was the person, or the summary names their id, those words become "(erased)" too. The entry
itself stays (what happened, when, to which record id), so the log still accounts for every change.

Each log is kept in the order of its appends, which is time order except for carried entries (they
keep their own, older times): the head record notes when a log stops being in time order
(`ordered`), and paging over several logs then merges them walking instead of bisecting, so no entry
is shown twice or never.
"""

from __future__ import annotations

import re
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
from .wording import Said, said_from

CHUNK = 50
MAX_SUMMARY_CHARS = 200
ERASED_PERSON = "(erased)"  # what an entry names instead of an erased person's sender id
# The fields that name a sender id: who acted (`sender_id`, and with it `sender_name`), the target when it is
# a speaker profile, and in `meta` who decided a candidate and the speakers a conversation fold took in
# (a list of sender ids). Only these change at a person's erasure.
PERSON_TARGETS = frozenset({"speaker_profile"})
PERSON_META = ("decided_by",)
PERSON_META_LISTS = ("speakers",)
CARRIED_FROM = "migrated_from"  # meta key of an entry carried from another plugin's log
CARRIED_WORDS = "summary"  # the summary parameter that quotes that log's own words

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
            if not isinstance(head, dict):
                head = {}
            count = int(head.get("count", 0))
            pending = [e.to_dict() for e in entries]
            last, ordered = head.get("last"), head.get("ordered", True) is not False
            if last is None and count and count % CHUNK == 0:  # a head written before `last` existed
                last = _last_time(await self._store.get(audit_chunk_key(log_id, count // CHUNK - 1), []))
            writes: list[tuple[str, Any]] = []
            while pending:
                index, offset = divmod(count, CHUNK)
                chunk = await self._store.get(audit_chunk_key(log_id, index), []) if offset else []
                if not isinstance(chunk, list):
                    chunk = []
                chunk = chunk[:offset]
                if last is None and chunk:
                    last = _last_time(chunk)
                room = CHUNK - len(chunk)
                chunk.extend(pending[:room])
                pending = pending[room:]
                writes.append((audit_chunk_key(log_id, index), chunk))
                count = index * CHUNK + len(chunk)
            for entry in entries:
                if last is not None and _moment({"time": entry.time}) < _moment({"time": last}):
                    ordered = False  # an entry older than the one before it: a carried entry
                last = entry.time
            writes.append((audit_head_key(log_id), {"count": count, "chunk": CHUNK, "last": last,
                                                   "ordered": ordered}))
            for key, value in writes:
                await run(partial(self._store.set, key, value))

    async def count(self, log_id: str) -> int:
        head = await self._store.get(audit_head_key(log_id), {"count": 0})
        return int(head.get("count", 0)) if isinstance(head, dict) else 0

    async def in_time_order(self, log_id: str) -> bool:
        """Whether every entry of the log is at least as new as the one appended before it."""
        head = await self._store.get(audit_head_key(log_id), {})
        return not isinstance(head, dict) or head.get("ordered", True) is not False

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
        ordered = all([await self.in_time_order(log_id) for log_id in filled])
        taken = await _split(readers, skip, ordered)
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
    """`entry` naming ERASED_PERSON in each field of `SENDER_FIELDS` that named `sender_id` (the same object
    when none did); an entry about one of `records` loses the tags an older version recorded, and a carried
    entry of the person, or whose quoted words name their id, loses those words."""
    if not isinstance(entry, dict) or not sender_id:
        return entry
    new = dict(entry)
    acted = entry.get("sender_id") == sender_id
    if acted:
        new["sender_id"], new["sender_name"] = ERASED_PERSON, ""  # and the display name they had then
    if entry.get("target_type") in PERSON_TARGETS and entry.get("target_id") == sender_id:
        new["target_id"] = ERASED_PERSON
    meta = entry.get("meta")
    if isinstance(meta, dict):
        changed: dict[str, Any] = {k: ERASED_PERSON for k in PERSON_META if meta.get(k) == sender_id}
        changed.update({k: [ERASED_PERSON if item == sender_id else item for item in meta[k]]
                        for k in PERSON_META_LISTS if isinstance(meta.get(k), list) and sender_id in meta[k]})
        if "tags" in meta and (entry.get("target_id") in records or acted):
            changed["tags"] = None
        if meta.get(CARRIED_FROM) and (acted or _names(entry, sender_id)):
            new.update(_words_erased(entry))
            if isinstance(meta.get("full_values"), dict):
                changed["full_values"] = {k: v for k, v in meta["full_values"].items() if k != CARRIED_WORDS} or None
        if changed:
            new["meta"] = {k: v for k, v in {**meta, **changed}.items() if v is not None}
    return new if new != entry else entry


def _names(entry: dict[str, Any], sender_id: str) -> bool:
    """Whether the carried words of `entry` name `sender_id` as a word of their own."""
    params = entry.get("summary_params")
    words = [str(params.get(CARRIED_WORDS) or "")] if isinstance(params, dict) else []
    meta = entry.get("meta")
    full = meta.get("full_values") if isinstance(meta, dict) else None
    if isinstance(full, dict):
        words.append(str(full.get(CARRIED_WORDS) or ""))
    pattern = re.compile(rf"(?<![\w]){re.escape(sender_id)}(?![\w])")
    return any(pattern.search(w) for w in words)


def _words_erased(entry: dict[str, Any]) -> dict[str, Any]:
    """The summary of a carried entry with its quoted words replaced by ERASED_PERSON."""
    params = entry.get("summary_params")
    if not isinstance(params, dict) or CARRIED_WORDS not in params:
        return {"summary": ERASED_PERSON}
    said = said_from({"code": entry.get("summary_code"), "params": {**params, CARRIED_WORDS: ERASED_PERSON}})
    coded = said.to_dict() if said else {"params": {**params, CARRIED_WORDS: ERASED_PERSON}}
    return {"summary": said.english[:MAX_SUMMARY_CHARS] if said else ERASED_PERSON,
            "summary_params": coded["params"]}


def _last_time(chunk: Any) -> Any:
    return chunk[-1].get("time") if isinstance(chunk, list) and chunk and isinstance(chunk[-1], dict) else None


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


async def _split(readers: list[_Reader], skip: int, ordered: bool = True) -> list[int]:
    """How many of each log's newest entries come before the first `skip` entries of the merge ends.
    Bisection needs each log in time order; a log holding carried entries (`ordered` false) is walked."""
    taken = [0] * len(readers)
    first = readers[0]
    if len(readers) > 2 or not ordered:  # walk, as the merge itself does
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
