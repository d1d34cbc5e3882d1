"""In-memory fakes of the core's host ports (`ltm.ports`), for fast unit tests of `ltm/`.

    fake = InMemoryPorts()
    memory = MemoryService(fake.ports)
    fake.faults.fail(op="index.upsert", exc=OutcomeUnknown("lost"), after_apply=True)

Everything is plain Python and keeps its promises the way a good host would:

- `InMemoryStore`      a dict of bytes per key;
- `InMemoryIndex`      records per memory KB, exact filtering on space and speaker, cosine
                       distance (1 - cos), pages in insertion order, delete by id within a space,
                       a substring text search (or none, `text_search=False`) and an isolation
                       probe that runs the index's own filters. `ignore_space_filter = True`
                       turns it into a leaking backend (reads and deletes disregard the space)
                       so tests can prove that the core's own re-check drops foreign records;
- `InMemoryEmbedder`   the deterministic hashing embedder of the test host, per known model;
- `ScriptedLanguageModel`  a FAKE model: it answers from a queue or a function the test gives
                       it and records every request; it understands nothing;
- `InMemoryDirectory`  the knowledge bases the host knows: every KB the index holds plus
                       any the test adds.

Every port call is counted per operation (`fake.calls`) and can be made to fail or to stop
part-way (`fake.faults`), following the port failure contract: `HostError` for a refusal
(nothing applied), `OutcomeUnknown` for a lost answer (with `after_apply=True` the change
is applied and only the answer is lost), `asyncio.CancelledError` for cancellation.
Operation names are "<port>.<method>": `store.get`, `store.set`, `store.delete`,
`store.keys`, `index.upsert`, `index.search`, `index.search_text`, `index.get`,
`index.get_many`, `index.page`, `index.delete`, `index.drop_kb`, `index.probe_isolation`,
`embedder.embed`, `llm.complete`, `directory.knowledge_base_ids`.
"""

from __future__ import annotations

import asyncio
import copy
import math
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from ltm.errors import HostError, ValidationError
from ltm.ports import ChatMessage, HostPorts, IndexHit, IndexPage, IndexRecord, Vector
from ltm.spaces import L2Space

from .embedder import HashingEmbedder

T = TypeVar("T")

OPERATIONS: tuple[str, ...] = (
    "store.get", "store.set", "store.delete", "store.keys",
    "index.upsert", "index.search", "index.search_text", "index.get", "index.get_many", "index.page", "index.delete",
    "index.drop_kb", "index.probe_isolation",
    "embedder.embed", "llm.complete", "directory.knowledge_base_ids",
)
_FLAT = (str, int, float, bool)


@dataclass(frozen=True)
class Call:
    """One port call as the fake saw it. `args` holds the call's routing arguments:
    `key` (store.get/set/delete), `prefix` (store.keys); `kb_id` for every index call, and
    `space_key` for every call of one space, plus `ids` (upsert), `speaker`, `top_k` (search), `text`,
    `top_k` (search_text), `record_id` (get), `ids` (get_many), `limit`, `offset` (page), `ids` (delete);
    `model` and `texts` (embedder.embed), `model` (llm.complete)."""

    op: str
    args: Mapping[str, Any] = field(default_factory=dict)


class CallLog:
    """Every port call in order, counted per operation (failed and refused calls included)."""

    def __init__(self) -> None:
        self.log: list[Call] = []

    def record(self, call: Call) -> None:
        self.log.append(call)

    def count(self, op: str) -> int:
        """Calls of one operation ("index.search"), or of a whole port ("index.*")."""
        return sum(1 for call in self.log if _op_matches(op, call.op))

    def counts(self) -> Counter[str]:
        return Counter(call.op for call in self.log)

    def of(self, op: str) -> list[Call]:
        return [call for call in self.log if _op_matches(op, call.op)]

    def reset(self) -> None:
        self.log.clear()


def _op_matches(pattern: str, op: str) -> bool:
    if pattern.endswith(".*"):
        return op.startswith(pattern[:-1])
    return pattern == op


def _check_op(pattern: str) -> None:
    if not any(_op_matches(pattern, op) for op in OPERATIONS):
        raise ValueError(f"unknown port operation {pattern!r}; known: {', '.join(OPERATIONS)}")


@dataclass
class FaultRule:
    """Fail the matching calls: after `skip` matching calls have passed, the next `times` ones
    (None: all) raise a copy of `exc`, either instead of applying (`after_apply=False`) or after
    the change took effect (`after_apply=True`: the answer is lost, the change is not)."""

    op: str
    exc: BaseException
    after_apply: bool = False
    times: int | None = 1
    skip: int = 0
    where: Callable[[Call], bool] | None = None
    fired: int = 0

    def matches(self, call: Call) -> bool:
        return _op_matches(self.op, call.op) and (self.where is None or self.where(call))

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.fired >= self.times


class Pause:
    """Hold matching calls until `release()`: the test can look at the world (or cancel the
    caller) while a call is "with the host". With `after_apply=True` the change is applied
    before the wait, so cancelling the caller loses only the answer."""

    def __init__(self, op: str, *, after_apply: bool, times: int | None, where: Callable[[Call], bool] | None
                 ) -> None:
        self.op = op
        self.after_apply = after_apply
        self.times = times
        self.where = where
        self.held: list[Call] = []
        self.reached = asyncio.Event()
        self._released = asyncio.Event()

    def matches(self, call: Call) -> bool:
        return _op_matches(self.op, call.op) and (self.where is None or self.where(call))

    @property
    def exhausted(self) -> bool:
        return self.times is not None and len(self.held) >= self.times

    def release(self) -> None:
        self._released.set()

    async def wait_reached(self) -> Call:
        await self.reached.wait()
        return self.held[-1]

    async def hold(self, call: Call) -> None:
        self.held.append(call)
        self.reached.set()
        await self._released.wait()


class Faults:
    """Per-operation fault injection. Rules are tried in the order they were added."""

    def __init__(self) -> None:
        self._rules: list[FaultRule | Pause] = []

    def fail(self, op: str, exc: BaseException, *, after_apply: bool = False, times: int | None = 1, skip: int = 0,
             where: Callable[[Call], bool] | None = None) -> FaultRule:
        _check_op(op)
        rule = FaultRule(op, exc, after_apply=after_apply, times=times, skip=skip, where=where)
        self._rules.append(rule)
        return rule

    def pause(self, op: str, *, after_apply: bool = False, times: int | None = 1,
              where: Callable[[Call], bool] | None = None) -> Pause:
        _check_op(op)
        pause = Pause(op, after_apply=after_apply, times=times, where=where)
        self._rules.append(pause)
        return pause

    def clear(self) -> None:
        """Drop every rule; calls held by a pause are released."""
        for rule in self._rules:
            if isinstance(rule, Pause):
                rule.release()
        self._rules.clear()

    def pick(self, call: Call) -> FaultRule | Pause | None:
        for rule in self._rules:
            if rule.exhausted or not rule.matches(call):
                continue
            if isinstance(rule, FaultRule) and rule.skip > 0:
                rule.skip -= 1
                continue
            if isinstance(rule, FaultRule):
                rule.fired += 1
            return rule
        return None


class _Host:
    """What every fake port shares: the call log and the faults."""

    def __init__(self, calls: CallLog, faults: Faults) -> None:
        self.calls = calls
        self.faults = faults

    async def run(self, call: Call, apply: Callable[[], T]) -> T:
        """Count the call, yield once (a host call is never instantaneous), then apply it,
        unless a fault says otherwise. `apply` is synchronous, so a change is all or nothing."""
        self.calls.record(call)
        await asyncio.sleep(0)
        rule = self.faults.pick(call)
        if rule is None:
            return apply()
        if isinstance(rule, Pause):
            if rule.after_apply:
                result = apply()
                await rule.hold(call)
                return result
            await rule.hold(call)
            return apply()
        if rule.after_apply:
            apply()
        raise copy.copy(rule.exc)


# ---------------------------------------------------------------------------------------------- ports
class InMemoryStore:
    """KeyValueStore: bytes per key, in a dict."""

    def __init__(self, host: _Host) -> None:
        self._host = host
        self.data: dict[str, bytes] = {}

    async def get(self, key: str) -> bytes | None:
        return await self._host.run(Call("store.get", {"key": key}), lambda: self.data.get(key))

    async def set(self, key: str, value: bytes) -> None:
        if not isinstance(value, bytes):
            raise TypeError("plugin storage keeps bytes")

        def apply() -> None:
            self.data[key] = bytes(value)

        await self._host.run(Call("store.set", {"key": key}), apply)

    async def delete(self, key: str) -> None:
        def apply() -> None:
            self.data.pop(key, None)

        await self._host.run(Call("store.delete", {"key": key}), apply)

    async def keys(self, prefix: str = "") -> list[str]:
        return await self._host.run(Call("store.keys", {"prefix": prefix}),
                                    lambda: sorted(k for k in self.data if k.startswith(prefix)))


@dataclass(frozen=True)
class StoredVector:
    record: IndexRecord
    vector: tuple[float, ...]
    norm: float


def _distance(query: Sequence[float], query_norm: float, stored: StoredVector) -> float:
    """Cosine distance, 1 - cos: 0 for the same direction, 2 for the opposite one."""
    if query_norm == 0.0 or stored.norm == 0.0:
        return 1.0
    dot = sum(a * b for a, b in zip(query, stored.vector))
    return 1.0 - dot / (query_norm * stored.norm)


def _norm(vector: Sequence[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


class InMemoryIndex:
    """VectorIndex: one dict of records per memory knowledge base, keyed by record id (ids are unique
    in a KB, as on the host)."""

    def __init__(self, host: _Host, *, text_search: bool = True) -> None:
        self._host = host
        self.text_search = text_search
        # A leaking backend: reads and deletes disregard the space (speaker filters still hold).
        self.ignore_space_filter = False
        self.kbs: dict[str, dict[str, StoredVector]] = {}

    # -------------------------------------------------------------- the index's own filters
    def _in_space(self, stored: StoredVector, space: L2Space) -> bool:
        return self.ignore_space_filter or stored.record.space_key == space.space_key

    def _rows(self, space: L2Space, speaker: str | None = None) -> list[StoredVector]:
        rows = self.kbs.get(space.kb_id, {}).values()
        return [s for s in rows if self._in_space(s, space) and (speaker is None or s.record.speaker == speaker)]

    def _ranked(self, rows: Iterable[StoredVector], vector: Vector, top_k: int) -> list[IndexHit]:
        query = [float(x) for x in vector]
        query_norm = _norm(query)
        hits = [IndexHit(s.record, _distance(query, query_norm, s)) for s in rows]
        hits.sort(key=lambda h: (h.distance, h.record.record_id))
        return hits[: max(0, top_k)]

    def _upsert_now(self, space: L2Space, records: Sequence[IndexRecord], vectors: Sequence[Vector]) -> None:
        if len(records) != len(vectors):
            raise HostError(f"vector upsert: {len(records)} records but {len(vectors)} vectors")
        target = self.kbs.get(space.kb_id, {})
        dims = {len(s.vector) for s in target.values()} | {len(v) for v in vectors}
        if len(dims) > 1:
            raise HostError(f"vector upsert: dimensions differ in knowledge base {space.kb_id} ({sorted(dims)})")
        rows: list[StoredVector] = []
        for record, vector in zip(records, vectors):
            bad = [k for k, v in record.fields.items() if not isinstance(v, _FLAT)]
            if bad or not record.record_id:
                raise HostError(f"vector upsert: record {record.record_id!r} has non-flat fields {bad}")
            stored = IndexRecord(record.record_id, record.space_key, record.speaker, record.text, dict(record.fields))
            values = tuple(float(x) for x in vector)
            rows.append(StoredVector(stored, values, _norm(values)))
        target = self.kbs.setdefault(space.kb_id, {})
        for row in rows:  # all checked first: an upsert is applied whole or not at all
            target[row.record.record_id] = row

    def _get_now(self, space: L2Space, record_id: str) -> IndexRecord | None:
        stored = self.kbs.get(space.kb_id, {}).get(record_id)
        return stored.record if stored is not None and self._in_space(stored, space) else None

    def _page_now(self, space: L2Space, limit: int, offset: int) -> IndexPage:
        rows = self._rows(space)
        chosen = rows[offset : offset + limit]
        return IndexPage([s.record for s in chosen], more=offset + limit < len(rows))

    def _delete_now(self, space: L2Space, record_ids: Sequence[str]) -> None:
        target = self.kbs.get(space.kb_id, {})
        for record_id in record_ids:
            stored = target.get(record_id)
            if stored is not None and self._in_space(stored, space):
                del target[record_id]

    def _text_now(self, space: L2Space, text: str, vector: Vector, top_k: int) -> list[IndexHit] | None:
        if not self.text_search:
            return None
        needle = text.casefold()
        rows = [s for s in self._rows(space) if needle and needle in s.record.text.casefold()]
        return self._ranked(rows, vector, top_k)

    def _probe_now(self, kb_id: str, vector: Vector) -> list[str]:
        run = uuid.uuid4().hex[:12]
        space_a, space_b = L2Space(kb_id, f"isolation-probe:{run}:a"), L2Space(kb_id, f"isolation-probe:{run}:b")
        id_a, id_b = str(uuid.uuid4()), str(uuid.uuid4())
        text = "isolation probe record"
        self._upsert_now(space_a, [IndexRecord(id_a, space_a.space_key, "probe-a", text, {"status": "archived"})],
                         [vector])
        self._upsert_now(space_b, [IndexRecord(id_b, space_b.space_key, "probe-b", text, {"status": "archived"})],
                         [vector])
        problems: list[str] = []
        try:
            if id_b in {h.record.record_id for h in self._ranked(self._rows(space_a), vector, 10)}:
                problems.append("search filtered on one space returned another space's record")
            speaker_rows = self._rows(space_a, "probe-b")
            if id_b in {s.record.record_id for s in speaker_rows}:
                problems.append("speaker search filtered on one space returned another space's record")
            if id_b in {r.record_id for r in self._page_now(space_a, 10, 0).records}:
                problems.append("list filtered on one space returned another space's record")
            if self._get_now(space_a, id_b) is not None:
                problems.append("get filtered on one space returned another space's record")
            found = self._text_now(space_a, text, vector, 10)
            if found is not None and id_b in {h.record.record_id for h in found}:
                problems.append("text search filtered on one space returned another space's record")
            self._delete_now(space_a, [id_b])
            if id_b not in self.kbs.get(kb_id, {}):
                problems.append("delete filtered on one space removed another space's record")
        finally:
            target = self.kbs.get(kb_id, {})
            target.pop(id_a, None)
            target.pop(id_b, None)
        return problems

    # -------------------------------------------------------------- the port
    @staticmethod
    def _where(space: L2Space) -> dict[str, str]:
        return {"kb_id": space.kb_id, "space_key": space.space_key}

    async def upsert(self, space: L2Space, records: Sequence[IndexRecord], vectors: Sequence[Vector]) -> None:
        if any(r.space_key != space.space_key for r in records):
            raise ValueError("a vector write holds records of one space only")
        call = Call("index.upsert", {**self._where(space), "ids": tuple(r.record_id for r in records)})
        await self._host.run(call, lambda: self._upsert_now(space, records, vectors))

    async def search(self, space: L2Space, vector: Vector, top_k: int, *,
                     speaker: str | None = None) -> list[IndexHit]:
        call = Call("index.search", {**self._where(space), "speaker": speaker, "top_k": top_k})
        return await self._host.run(call, lambda: self._ranked(self._rows(space, speaker), vector, top_k))

    async def search_text(self, space: L2Space, text: str, vector: Vector, top_k: int) -> list[IndexHit] | None:
        call = Call("index.search_text", {**self._where(space), "text": text, "top_k": top_k})
        return await self._host.run(call, lambda: self._text_now(space, text, vector, top_k))

    async def get(self, space: L2Space, record_id: str) -> IndexRecord | None:
        call = Call("index.get", {**self._where(space), "record_id": record_id})
        return await self._host.run(call, lambda: self._get_now(space, record_id))

    async def get_many(self, space: L2Space, record_ids: Sequence[str]) -> list[IndexRecord]:
        call = Call("index.get_many", {**self._where(space), "ids": tuple(record_ids)})
        return await self._host.run(call, lambda: [r for i in dict.fromkeys(record_ids)
                                                   if (r := self._get_now(space, i)) is not None])

    async def page(self, space: L2Space, limit: int, offset: int) -> IndexPage:
        call = Call("index.page", {**self._where(space), "limit": limit, "offset": offset})
        return await self._host.run(call, lambda: self._page_now(space, limit, offset))

    async def delete(self, space: L2Space, record_ids: Sequence[str]) -> None:
        call = Call("index.delete", {**self._where(space), "ids": tuple(record_ids)})
        await self._host.run(call, lambda: self._delete_now(space, record_ids))

    async def drop_kb(self, kb_id: str) -> None:
        def apply() -> None:
            self.kbs.pop(kb_id, None)

        await self._host.run(Call("index.drop_kb", {"kb_id": kb_id}), apply)

    async def probe_isolation(self, kb_id: str, vector: Vector) -> list[str]:
        return await self._host.run(Call("index.probe_isolation", {"kb_id": kb_id}),
                                    lambda: self._probe_now(kb_id, vector))

    # -------------------------------------------------------------- for assertions
    def records(self, kb_id: str, space_key: str | None = None) -> list[IndexRecord]:
        """What the KB holds (all spaces, or one), bypassing faults, counts and leaks."""
        rows = self.kbs.get(kb_id, {}).values()
        return [s.record for s in rows if space_key is None or s.record.space_key == space_key]


class TextEmbedder(Protocol):
    def embed(self, texts: list[str]) -> list[list[float]]: ...


class InMemoryEmbedder:
    """Embedder: `HashingEmbedder` vectors (or the given embedder's) for the models the fake knows; others
    are refused."""

    def __init__(self, host: _Host, hashing: TextEmbedder, models: Iterable[str]) -> None:
        self._host = host
        self._hashing = hashing
        self.models = set(models)

    def _embed_now(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        if model not in self.models:
            raise HostError(f"embedding model {model} not found")
        return self._hashing.embed(list(texts))

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        call = Call("embedder.embed", {"model": model, "texts": tuple(texts)})
        return await self._host.run(call, lambda: self._embed_now(model, texts))


@dataclass(frozen=True)
class ModelRequest:
    model: str
    messages: tuple[ChatMessage, ...]
    timeout_s: float
    max_output_chars: int


Script = Callable[[ModelRequest], str]


class ScriptedLanguageModel:
    """A FAKE LanguageModel for tests. It does not understand anything: each request gets the
    next queued reply (or whatever the script function returns) and is recorded in `requests`.
    An empty queue without a script is a refusal (`HostError`), so a test never gets a reply it
    did not write."""

    def __init__(self, host: _Host, script: Script | None = None) -> None:
        self._host = host
        self.script = script
        self.replies: list[str] = []
        self.requests: list[ModelRequest] = []

    def queue(self, *replies: str) -> None:
        self.replies.extend(replies)

    def _reply_now(self, request: ModelRequest) -> str:
        if self.replies:
            reply = self.replies.pop(0)
        elif self.script is not None:
            reply = self.script(request)
        else:
            raise HostError(f"the scripted model {request.model} has no reply queued")
        if len(reply) > request.max_output_chars:
            raise ValidationError(f"the model's answer is longer than {request.max_output_chars} characters")
        return reply

    async def complete(self, model: str, messages: Sequence[ChatMessage], *, timeout_s: float,
                       max_output_chars: int) -> str:
        request = ModelRequest(model, tuple(messages), timeout_s, max_output_chars)
        self.requests.append(request)
        return await self._host.run(Call("llm.complete", {"model": model}), lambda: self._reply_now(request))


class InMemoryDirectory:
    """HostDirectory: the index's knowledge bases plus the ones a test adds."""

    def __init__(self, host: _Host, index: InMemoryIndex) -> None:
        self._host = host
        self._index = index
        self.added: set[str] = set()
        self.removed: set[str] = set()

    def _ids_now(self) -> list[str]:
        return sorted((set(self._index.kbs) | self.added) - self.removed)

    async def knowledge_base_ids(self) -> list[str]:
        return await self._host.run(Call("directory.knowledge_base_ids"), self._ids_now)

    async def bot_ids(self) -> list[str] | None:
        return None  # this host has no bot list


# ---------------------------------------------------------------------------------------------- bundle
@dataclass(frozen=True)
class MemoryState:
    """A comparable copy of everything the fake stores (for "nothing changed" assertions)."""

    kv: dict[str, bytes]
    index: dict[str, dict[str, tuple[IndexRecord, tuple[float, ...]]]]


class InMemoryPorts:
    """All five ports over plain Python state, sharing one call log and one fault list."""

    def __init__(self, *, text_search: bool = True, dim: int = 128,
                 embedding_models: Iterable[str] = ("emb-1",), script: Script | None = None,
                 embedder: TextEmbedder | None = None) -> None:
        self.calls = CallLog()
        self.faults = Faults()
        host = _Host(self.calls, self.faults)
        self.store = InMemoryStore(host)
        self.index = InMemoryIndex(host, text_search=text_search)
        # `embedder`: another deterministic embedder for the known models (a benchmark's cached vectors).
        self.embedder = InMemoryEmbedder(host, embedder or HashingEmbedder(dim), embedding_models)
        self.llm = ScriptedLanguageModel(host, script)
        self.directory = InMemoryDirectory(host, self.index)
        self.ports = HostPorts(store=self.store, index=self.index, embedder=self.embedder, llm=self.llm,
                               directory=self.directory)

    def state(self) -> MemoryState:
        return MemoryState(
            kv=dict(self.store.data),
            index={name: {rid: (IndexRecord(s.record.record_id, s.record.space_key, s.record.speaker, s.record.text,
                                            dict(s.record.fields)), s.vector)
                          for rid, s in rows.items()}
                   for name, rows in self.index.kbs.items()},
        )


__all__ = [
    "OPERATIONS",
    "Call",
    "CallLog",
    "FaultRule",
    "Faults",
    "InMemoryDirectory",
    "InMemoryEmbedder",
    "InMemoryIndex",
    "InMemoryPorts",
    "InMemoryStore",
    "MemoryState",
    "ModelRequest",
    "Pause",
    "ScriptedLanguageModel",
    "StoredVector",
]
