"""What the memory core needs from the outside world, split by capability.

The core never talks to LangBot directly. It asks these small protocols, which the
LangBot adapter (`ltm.langbot`) implements over the plugin SDK, and which the
in-memory fake (`testhost.memory_ports`) implements for fast unit tests.

Failure contract for every port method (the write fences depend on it):
- an authoritative refusal raises `HostError` (nothing was applied);
- no answer (timeout, lost connection) raises `OutcomeUnknown`;
- cancellation propagates unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .spaces import L2Space
from .wording import Said

Vector = Sequence[float]
# The text of the throwaway records and embeddings that probe a vector store (creation, health).
PROBE_TEXT = "LongTermMemory isolation probe"


class KeyValueStore(Protocol):
    """Plugin storage: bytes per key, no transactions, no compare-and-set."""

    async def get(self, key: str) -> bytes | None: ...
    async def set(self, key: str, value: bytes) -> None: ...
    async def delete(self, key: str) -> None: ...
    async def keys(self, prefix: str = "") -> list[str]: ...


@dataclass(frozen=True)
class IndexRecord:
    """One episode as the vector index keeps it.

    `space_key` is the memory space's key and `speaker` the speaker's sender id ("" when
    unknown): the index must be able to filter on both. `fields` are the episode's
    own flat fields (str/int/float/bool values), stored verbatim and returned as
    stored. `text` is what full-text search matches."""

    record_id: str
    space_key: str
    speaker: str
    text: str
    fields: Mapping[str, Any] = field(default_factory=dict)


class IndexHit:
    """One search result: the record's id and distance at once, the record itself when first asked for.

    A search answer holds far more rows than a recall keeps (the vector window against `top_k`), and
    the plugin's own index of the space already knows what ranking needs of each, so an adapter may
    hand over `decode` instead of a parsed record: it runs at most once, and answers None when the row
    turns out not to be a record of the asked space (fail closed). `distance`: lower is better; the
    scale depends on the backend, so only compare within one list."""

    __slots__ = ("_decode", "_record", "distance", "record_id")

    def __init__(self, record: IndexRecord | None, distance: float, *, record_id: str = "",
                 decode: Callable[[], IndexRecord | None] | None = None) -> None:
        if record is None and (decode is None or not record_id):
            raise ValueError("an index hit needs its record, or its id and a decoder")
        self.record_id = record.record_id if record is not None else record_id
        self.distance = distance
        self._record = record
        self._decode = decode

    @property
    def record(self) -> IndexRecord | None:
        if self._decode is not None:
            self._record, self._decode = self._decode(), None
        return self._record

    def __repr__(self) -> str:
        return f"IndexHit({self.record_id!r}, {self.distance!r})"


@dataclass(frozen=True)
class IndexPage:
    records: list[IndexRecord]
    more: bool  # the backend may hold further records of the space after this page


class VectorIndex(Protocol):
    """The read side of the vector store: the records of many isolated L2 spaces in one memory knowledge
    base. Every module that reads memory receives the store typed as this protocol, which has no write
    method: a record is written only through `VectorWrites`, which the write gate alone holds (see
    `VectorWrites`).

    Every read takes the space as one value (`L2Space`: the KB and the space key) and returns records of
    that space only; an implementation whose backend cannot filter must drop foreign records rather than
    return them."""

    async def search(
        self, space: L2Space, vector: Vector, top_k: int, *, speaker: str | None = None
    ) -> list[IndexHit]: ...

    async def search_text(
        self, space: L2Space, text: str, vector: Vector, top_k: int
    ) -> list[IndexHit] | None:
        """Records whose text matches `text`, or None when this backend has no usable text search."""
        ...

    async def get(self, space: L2Space, record_id: str) -> IndexRecord | None: ...

    async def get_many(self, space: L2Space, record_ids: Sequence[str]) -> list[IndexRecord]:
        """The records of `space` among these ids, in one host call where the store can look records up
        by key (a page of a listing, the few recall winners the vector search did not return)."""
        ...

    async def page(self, space: L2Space, limit: int, offset: int) -> IndexPage: ...

    async def probe_isolation(self, kb_id: str, vector: Vector) -> list[str]:
        """Write two throwaway records in two throwaway spaces of the KB and report every way the backend
        let one space see or remove the other (empty list: isolated). Cleans up after itself.
        The one write on this side: it never touches a memory space, only its own probe spaces."""
        ...


class VectorWrites(Protocol):
    """The write side of the vector store. The write gate (ltm/_gate.py) holds the only reference the
    core keeps, and hands it only to a step running inside a gated write (`WriteTx.index_write`): a
    module outside the gate cannot obtain it, so a vector write outside the gate fails type checking."""

    async def upsert(self, space: L2Space, records: Sequence[IndexRecord], vectors: Sequence[Vector]) -> None:
        """Write records of this one space (each `IndexRecord.space_key` is `space.space_key`; a record of
        another space is a ValueError, nothing written)."""
        ...

    async def delete(self, space: L2Space, record_ids: Sequence[str]) -> None: ...

    async def drop_kb(self, kb_id: str) -> None:
        """Every record of the memory knowledge base (it is being removed)."""
        ...


class VectorStore(VectorIndex, VectorWrites, Protocol):
    """Both sides, as the host adapter implements them; only the assembly (ltm/parts.py) sees this type."""


@dataclass(frozen=True)
class StoreProfile:
    """What a vector store showed it can do when the index probed it (health names it)."""

    kind: Said  # e.g. "keeps and filters plugin metadata (like Chroma, Qdrant or SeekDB)"
    supported: bool  # every operation works (possibly emulated); False: do not use it for memory
    can: tuple[Said, ...] = ()
    cannot: tuple[Said, ...] = ()


@runtime_checkable
class DescribedIndex(Protocol):
    """Optional capability: an index that can say what its store can and cannot do."""

    async def prepare(self, kb_id: str, vector: Vector) -> StoreProfile:
        """Learn the store's behaviour with throwaway records (the first call on a new KB's store
        is then a write of real vectors); raises HostError when the store could not be probed."""
        ...

    def profile(self, kb_id: str) -> StoreProfile | None: ...


class Embedder(Protocol):
    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


class LanguageModel(Protocol):
    async def complete(
        self, model: str, messages: Sequence[ChatMessage], *, timeout_s: float, max_output_chars: int
    ) -> str:
        """The model's reply text. Raises `HostError` for a refusal, `OutcomeUnknown` on timeout,
        `ValidationError` when the reply exceeds `max_output_chars`."""
        ...


class HostDirectory(Protocol):
    async def knowledge_base_ids(self) -> list[str]: ...

    async def bot_ids(self) -> list[str] | None:
        """The bots this LangBot has; None when the host cannot say (then nothing is decided by it)."""
        ...


@dataclass(frozen=True)
class HostPorts:
    """Everything the core uses from the host, passed in once."""

    store: KeyValueStore
    index: VectorStore  # the assembly splits it: readers get `VectorIndex`, the gate `VectorWrites`
    embedder: Embedder
    llm: LanguageModel
    directory: HostDirectory


# --------------------------------------------------------------------------- writes in flight
@dataclass
class WriteProbe:
    """Whether a host write left during one gated call. The write gate fences a space when a caller
    is cancelled while a write may be with the host; a port that reports its writes lets it tell a
    call cancelled while it was still reading (nothing to fence) from one with a write out."""

    reporting: bool = False
    sent: int = 0

    @property
    def nothing_sent(self) -> bool:
        return self.reporting and self.sent == 0


_PROBE: ContextVar[WriteProbe | None] = ContextVar("ltm_write_probe", default=None)


def watch_writes() -> tuple[WriteProbe, Token[WriteProbe | None]]:
    probe = WriteProbe()
    return probe, _PROBE.set(probe)


def stop_watching(token: Token[WriteProbe | None]) -> None:
    _PROBE.reset(token)


def reports_writes() -> None:
    """Called by a port method that calls `write_sent` before each host write it sends."""
    probe = _PROBE.get()
    if probe is not None:
        probe.reporting = True


def write_sent() -> None:
    probe = _PROBE.get()
    if probe is not None:
        probe.sent += 1
