"""The one write gate: every change to memory goes through it.

    async with gate.write_l2(scope, Operation.REMEMBER) as tx:
        ...validate under the lock...
        await tx.index_write("vector upsert", lambda index: store.upsert_batch(index, scope.l2, ...))
        tx.applied(Operation.REMEMBER, "episode", episode_id, STORED(chars=120, importance=3))

A chat's write names its scope only: `write_l1(scope, ...)` locks the chat's L1 space,
`write_l2(scope, ...)` its L2 space (`scope.l2`), so the space written and the scope audited cannot
disagree. `write(scope, space, ...)` names a space only where no scope has it: the installation
space (the scope, if any, is the acting admin's, for the audit), the layout migration (no scope).

In that one construct the gate
1. serializes writes per memory space (a process-local lock; F1),
2. refuses the write when the space is fenced (F2),
3. runs each host write through the unknown-outcome guard: a write whose outcome
   is unknown (timeout, lost link, cancellation while the request was with the host)
   fences the space (F2); an authoritative refusal or a failed read does not (F3),
4. audits exactly what was applied (A1), also when a later step fails, and
5. tells the caller the truth about partial outcomes: an authoritative failure
   after something was applied becomes `PartialWrite` naming what was applied; a
   change whose audit entry cannot be written fences the space and becomes
   `UnrecordedChange`.
6. stores the space's write-ahead marker before the first host write and removes it
   once the audit is complete, so a process that dies in between leaves the space
   fenced at the next start (F5; `_fences.py`).

A step that is undone inside the block (a rollback) is reported with
`tx.reverted(...)`: it is audited, and it no longer counts as applied.

A vector record is written only by a step the transaction runs: `tx.index_write(what, step)` hands
`step` the write side of the vector store (`VectorWrites`, ltm/ports.py), which the gate alone holds;
every other module receives the store typed as the read-only `VectorIndex`, so a vector write outside
the gate fails type checking.

A plugin-storage record of memory is written with `tx.set(key, value)` / `tx.delete(key)`: the
gate holds the only writer of plugin storage (`Bookkeeping`, ltm/_bookkeeping.py), and every other
module gets storage typed read-only. Not memory, so written by the few holders of that writer
outside a gated write: the audit log, the fences and write-ahead markers, the injection snapshot and
the per-scope marker, the saved word-index pages, the layout marker and the one-time storage-layout
migration (ltm/_bookkeeping.py lists them and why).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

from ._audit import AuditEntry, AuditLog
from ._bookkeeping import Bookkeeping
from ._fences import FenceRegistry
from ._kb_barrier import KbBarriers
from ._locks import KeyedLocks
from .errors import (
    HostFailure,
    LTMError,
    MessageRecalled,
    OutcomeUnknown,
    PartialWrite,
    UnrecordedChange,
)
from .identity import MemoryScope
from .operations import FROM_MESSAGE, Operation
from .ports import VectorWrites, stop_watching, watch_writes
from .provenance import MessageRef
from .recalls import RecalledMessages
from .spaces import INSTALLATION_KEY, Space, SpaceKind
from .wording import Phrase, Said

log = logging.getLogger("LongTermMemory")
T = TypeVar("T")

class WriteTx:
    """One gated write: its host calls and what it applied."""

    def __init__(self, storage: Bookkeeping, vectors: VectorWrites, scope: MemoryScope | None, space: Space,
                 operation: Operation, mark: Callable[[], Awaitable[None]] | None = None, target: str = "") -> None:
        self._storage = storage
        self._vectors = vectors
        self.scope = scope
        self.space = space
        self.operation = operation
        self.target = target
        self.entries: list[AuditEntry] = []
        self._net: dict[str, str] = {}
        self.unknown: str | None = None
        self._mark = mark
        self.marked = False

    async def call(self, what: str, write: Callable[[], Awaitable[T]]) -> T:
        """Run one host write. Only writes go through here: a failed read never fences. The first one
        stores the space's write-ahead marker before it (a crash from then on fences the space at the
        next start); the marker write is guarded like any write, and a refused one sends nothing else."""
        if not self.marked and self._mark is not None:
            await self._guarded("write-ahead marker", self._mark)
            self.marked = True
        return await self._guarded(what, write)

    async def index_write(self, what: str, step: Callable[[VectorWrites], Awaitable[T]], *,
                          guarded: bool = True) -> T:
        """Run one vector write: `step` receives the write side of the vector store, which nothing outside
        a gated write can reach. `guarded=False` only for a write whose lost answer must not fence the
        space (dropping a removed KB's collection: its records guard nothing)."""
        if not guarded:
            return await step(self._vectors)
        return await self.call(what, partial(step, self._vectors))

    async def set(self, key: str, value: Any, *, attempts: int = 1) -> None:
        """Store one plugin-storage record of this write (a whole record: `attempts` > 1 re-sends it)."""
        await self.call("storage write", partial(resend, partial(self._storage.set, key, value), attempts))

    async def delete(self, key: str, *, attempts: int = 1) -> None:
        """Delete one plugin-storage record of this write (`attempts` > 1 re-sends the delete)."""
        await self.call("storage delete", partial(resend, partial(self._storage.delete, key), attempts))

    async def _guarded(self, what: str, write: Callable[[], Awaitable[T]]) -> T:
        probe, token = watch_writes()
        try:
            return await write()
        except OutcomeUnknown as exc:
            self.unknown = f"{what}: {exc.message}"
            raise
        except asyncio.CancelledError:
            if not probe.nothing_sent:  # a call cancelled while it was still reading changed nothing
                self.unknown = f"{what}: cancelled while the request was with the host"
            raise
        finally:
            stop_watching(token)

    def entry(self, operation: Operation, target_type: str, target_id: str, summary: Said, **meta: Any) -> AuditEntry:
        scope = self.scope
        return AuditEntry(
            operation=operation, target_type=target_type, target_id=target_id,
            chat_key=scope.chat_key if scope else INSTALLATION_KEY,
            space_key=scope.space_key if scope else "",
            sender_id=scope.sender_id if scope else "", sender_name=scope.sender_name if scope else "",
            query_id=scope.query_id if scope else None, summary=summary,
            meta={**meta, "message_id": message.message_id} if (message := _message(scope)) else meta,
        )

    def applied(self, operation: Operation, target_type: str, target_id: str, summary: Said, **meta: Any) -> None:
        """A change that reached the store: audited, and counted as applied."""
        self.entries.append(self.entry(operation, target_type, target_id, summary, **meta))
        self._net[f"{target_type}:{target_id}"] = operation

    def reverted(self, operation: Operation, target_type: str, target_id: str, summary: Said, **meta: Any) -> None:
        """A change undone inside this write: audited, and no longer counted as applied."""
        self.entries.append(self.entry(operation, target_type, target_id, summary, **meta))
        self._net.pop(f"{target_type}:{target_id}", None)

    def noted(self, operation: Operation, target_type: str, target_id: str, summary: Said, **meta: Any) -> None:
        """An audit-only entry (e.g. fences cleared as a side effect)."""
        self.entries.append(self.entry(operation, target_type, target_id, summary, **meta))

    def carried(self, entry: AuditEntry) -> None:
        """An entry of another log carried over as it was, with its own time and speaker (a migration)."""
        self.entries.append(entry)

    @property
    def applied_targets(self) -> list[str]:
        return list(self._net)


def _message(scope: MemoryScope | None) -> MessageRef | None:
    """The platform message a scope's turn answers (an entry of that turn names it: X1), or None."""
    return scope.identity.message if scope is not None and scope.identity is not None else None


FENCE_CLEARED = Phrase("audit.fence_cleared", "cleared write fence {space}")
ScopeHook = Callable[[MemoryScope], Awaitable[None]]


class WriteGate(KbBarriers):
    """The write gate; as `KbBarriers`, also each memory KB's removal barrier (ltm/_kb_barrier.py)."""

    def __init__(self, storage: Bookkeeping, vectors: VectorWrites, fences: FenceRegistry, audit: AuditLog,
                 on_scope_write: ScopeHook | None = None, recalled: RecalledMessages | None = None) -> None:
        self._storage = storage
        self.recalled = recalled or RecalledMessages()  # messages recalled lately (ltm/recalls.py)
        self._vectors = vectors
        self._fences = fences
        self._audit = audit
        self._locks = KeyedLocks()
        self._on_scope_write = on_scope_write
        super().__init__()

    def write_l1(self, scope: MemoryScope, operation: Operation) -> contextlib.AbstractAsyncContextManager[WriteTx]:
        """A write to the chat's L1 space (profiles, candidates, drafts' bookkeeping)."""
        return self._gated(scope, Space.l1(scope.chat_key), operation)

    def write_l2(self, scope: MemoryScope, operation: Operation, *, target: str = ""
                 ) -> contextlib.AbstractAsyncContextManager[WriteTx]:
        """A write to the chat's L2 space (`scope.l2`; NoKnowledgeBase without a KB). A `target` goes into
        the marker and any fence."""
        return self._gated(scope, Space.l2(scope.l2), operation, target=target)

    def write(self, scope: MemoryScope | None, space: Space, operation: Operation, *, enforce_fence: bool = True,
              target: str = "") -> contextlib.AbstractAsyncContextManager[WriteTx]:
        """A write to a space no scope names: the installation space (`scope`: the acting admin's, or None),
        or a KB's L2 space without a scope (the layout migration). A chat's space is written with
        `write_l1`/`write_l2`, which take it from the scope: given here with a scope, ValueError.
        `enforce_fence=False` only for the operations that resolve a fence: clearing it and removing the
        knowledge base it belongs to (F4)."""
        if scope is not None and space.kind is not SpaceKind.INSTALLATION:
            raise ValueError("a chat's space is written through write_l1/write_l2, which take it from the scope")
        return self._gated(scope, space, operation, enforce_fence=enforce_fence, target=target)

    @contextlib.asynccontextmanager
    async def _gated(self, scope: MemoryScope | None, space: Space, operation: Operation, *,
                     enforce_fence: bool = True, target: str = "") -> AsyncIterator[WriteTx]:
        if space.kind is SpaceKind.L2:
            async with self.kb_in_use(space.kb_id):
                self.check_isolation(scope, space.kb_id)
                async with self._write(scope, space, operation, enforce_fence, target) as tx:
                    yield tx
        else:
            async with self._write(scope, space, operation, enforce_fence, target) as tx:
                yield tx

    @contextlib.asynccontextmanager
    async def _write(self, scope: MemoryScope | None, space: Space, operation: Operation,
                     enforce_fence: bool, target: str) -> AsyncIterator[WriteTx]:
        async with self._locks.hold(space.key):
            if enforce_fence:
                await self._fences.check(space)
            message = _message(scope)
            if message is not None and operation in FROM_MESSAGE and self.recalled.holds(message):
                raise MessageRecalled("the message this turn answers was recalled; nothing of it is remembered",
                                      message_id=message.message_id)
            # The writes that resolve a fence cannot wait for an admin (LangBot removes a KB whatever the
            # plugin answers): their marker, a whole record, is re-sent like their other idempotent writes.
            mark = partial(self._fences.mark, space, operation, attempts=1 if enforce_fence else 3, target=target)
            tx = WriteTx(self._storage, self._vectors, scope, space, operation, mark, target)
            try:
                yield tx
            except BaseException as exc:
                replacement = await self._after_failure(tx, exc)
                await self._end_mark(tx)
                if replacement is exc:
                    raise
                raise replacement from exc
            try:
                await self._record(tx)
            except asyncio.CancelledError:
                # Cancelled while the audit entry was being written: the change is stored, its record
                # may not be. Fence the space so it does not look recorded (the caller sees the cancel).
                if tx.entries:
                    await asyncio.shield(self._fence(tx, "cancelled while the audit entry was written"))
                await self._end_mark(tx)
                raise
            except BaseException:
                await self._end_mark(tx)
                raise
            await self._end_mark(tx)
        if tx.scope is not None and tx.entries and self._on_scope_write is not None:
            await self._on_scope_write(tx.scope)

    @contextlib.asynccontextmanager
    async def hold(self, space: Space) -> AsyncIterator[None]:
        """The space's lock without a write: for reads that must see a settled space."""
        async with self._locks.hold(space.key):
            yield

    async def _end_mark(self, tx: WriteTx) -> None:
        """The write's audit is complete, or its space fenced: remove its write-ahead marker. A fence not
        stored yet keeps the marker until it is. A marker that cannot be removed would fence the space at
        the next start, so it fences the space now: this process and the next one agree."""
        if not tx.marked:
            return
        tx.marked = False
        if tx.space.key in self._fences.unpersisted:
            self._fences.leave_mark(tx.space)
            return
        try:
            await self._fences.unmark(tx.space)
        except (LTMError, asyncio.CancelledError) as exc:
            self._fences.leave_mark(tx.space)
            if await self._fences.get(tx.space) is None:
                code = exc.code if isinstance(exc, LTMError) else "cancelled"
                await asyncio.shield(self._fence(tx, f"write-ahead marker not removed: {code}"))
            if isinstance(exc, asyncio.CancelledError):
                raise

    async def _fence(self, tx: WriteTx, reason: str) -> None:
        await self._fences.raise_fence(tx.space, tx.operation, reason, tx.target)

    async def _after_failure(self, tx: WriteTx, exc: BaseException) -> BaseException:
        if tx.unknown is not None:
            # The last write may or may not have been applied: fence, then record what surely was.
            await asyncio.shield(self._fence(tx, tx.unknown))
            await self._record_or_fence(tx)
            if isinstance(exc, asyncio.CancelledError):
                return exc
            return OutcomeUnknown(
                f"{tx.operation}: the host did not confirm a write, so writes to this memory are paused until an "
                "admin checks the records and clears the fence",
                applied=tx.applied_targets, space=tx.space.describe(),
            )
        await self._record_or_fence(tx)
        if tx.applied_targets and isinstance(exc, LTMError):
            return PartialWrite(
                f"{tx.operation} stopped part-way: {exc.message}. Applied and audited: "
                f"{len(tx.applied_targets)} change(s); the rest was not applied",
                applied=tx.applied_targets, cause=exc.code,
            )
        return exc

    async def _record(self, tx: WriteTx) -> None:
        if not await self._appended(tx):
            raise UnrecordedChange(
                f"{tx.operation} was applied, but its audit entry could not be written; writes to this memory "
                "are paused until an admin checks it and clears the fence",
                applied=tx.applied_targets, space=tx.space.describe(),
            )

    async def _record_or_fence(self, tx: WriteTx) -> None:
        """Audit after a failure, shielded from the caller's cancellation; a caller cancelled while that
        entry is being written leaves the space fenced, so the change never looks recorded (D2). If even
        the audit fails, the space is fenced and the original error still reaches the caller."""
        if not tx.entries:
            return
        try:
            await asyncio.shield(self._appended(tx))
        except asyncio.CancelledError:
            await asyncio.shield(self._fence(tx, "cancelled while the audit entry was written"))
            raise

    async def _appended(self, tx: WriteTx) -> bool:
        """Append the write's audit entries; when they cannot be written, fence the space (False)."""
        if not tx.entries:
            return True
        try:
            await self._audit.append_many(tx.space.key, tx.entries)
        except LTMError as exc:
            log.error("[LongTermMemory] audit of %s not written (%s); fencing", tx.operation, exc.code)
            await self._fence(tx, f"audit entry not written: {exc.code}")
            return False
        return True

    async def clear_fences(self, scope: MemoryScope | None, *, installation: bool = False) -> list[str]:
        """F4: the scope's L1 and L2 fences; the installation-wide fence only when asked for by name.
        Returns the spaces that were fenced and are now clear; each clear is audited in its space."""
        targets: list[Space] = []
        if scope is not None:
            targets.append(Space.l1(scope.chat_key))
            if scope.kb_id:
                targets.append(Space.l2(scope.l2))
        if installation:
            targets.append(Space.installation())
        cleared: list[str] = []
        for space in targets:
            async with self._gated(scope, space, Operation.FENCE_CLEAR, enforce_fence=False) as tx:
                if await self._fences.get(space) is not None:
                    await tx.call("storage delete", partial(self._fences.clear, space))
                    tx.applied(Operation.FENCE_CLEAR, "fence", space.key, FENCE_CLEARED(space=space.key))
                    cleared.append(space.key)
        return cleared

    @staticmethod
    def logs_of(scope: MemoryScope) -> list[str]:
        """The audit logs a chat sees: its L1 space and, with a memory KB, its L2 space (shared with
        every chat of the bot in bot isolation)."""
        logs = [Space.l1(scope.chat_key).key]
        if scope.kb_id:
            logs.append(Space.l2(scope.l2).key)
        return logs


async def resend(write: Callable[[], Awaitable[Any]], attempts: int = 1) -> None:
    """An idempotent storage write (a whole record, or a delete) re-sent on a refusal or a lost answer:
    the KB's removal cannot wait for an admin, LangBot removes the KB whatever the plugin answers."""
    for attempt in range(attempts):
        try:
            await write()
            return
        except HostFailure:
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(0.05 * (attempt + 1))
