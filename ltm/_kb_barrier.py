"""The removal barrier of each memory knowledge base, which the write gate is (`WriteGate` inherits it).

LangBot removes a KB whatever the plugin answers, so its removal must neither race a write into it nor
let a later write land in a KB that is gone: every L2 write of a KB shares its barrier, a removal takes
it alone (waiting for the writes in flight; writes that arrive meanwhile wait, then find the KB gone).
A write that holds no space lock yet can hold the KB too (`kb_in_use`: a bounded model call whose result
goes into the KB, K8). Beside it, what the gate checks before an L2 write: that the KB was not removed,
and that its isolation is still the one the turn's scope was derived with.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator

from .errors import NoKnowledgeBase, StateError
from .identity import Isolation, MemoryScope

_HELD: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar("ltm_held_barriers", default=frozenset())


class _KbBarrier:
    """Writes of one memory KB share it; removing the KB takes it alone. Removal waits for the
    writes in flight, and writes that arrive meanwhile wait for it (then find the KB gone).
    Re-entrant within one task: a write inside `kb_in_use` does not wait for itself."""

    def __init__(self) -> None:
        self._writers = 0
        self._removing = False
        self._changed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        held = _HELD.get()
        if id(self) in held:
            yield
            return
        token = _HELD.set(held | {id(self)})
        try:
            async with self._shared():
                yield
        finally:
            _HELD.reset(token)

    @contextlib.asynccontextmanager
    async def _shared(self) -> AsyncIterator[None]:
        async with self._changed:
            await self._changed.wait_for(lambda: not self._removing)
            self._writers += 1
        try:
            yield
        finally:
            async with self._changed:
                self._writers -= 1
                self._changed.notify_all()

    @contextlib.asynccontextmanager
    async def alone(self) -> AsyncIterator[None]:
        async with self._changed:
            await self._changed.wait_for(lambda: not self._removing)
            self._removing = True
            await self._changed.wait_for(lambda: self._writers == 0)
        try:
            yield
        finally:
            async with self._changed:
                self._removing = False
                self._changed.notify_all()


class KbBarriers:
    """Every memory KB's barrier, the KBs removed in this process, and each KB's isolation as last read."""

    def __init__(self) -> None:
        self._barriers: dict[str, _KbBarrier] = {}
        self._removed: set[str] = set()
        self._isolation: dict[str, Isolation] = {}  # each memory KB's effective isolation, as last read

    @contextlib.asynccontextmanager
    async def kb_in_use(self, kb_id: str) -> AsyncIterator[None]:
        """Hold a memory KB against its removal without writing (e.g. a bounded model call whose
        result will be stored in that KB's spaces, K8). Raises NoKnowledgeBase once it is removed."""
        async with self._barrier(kb_id).shared():
            if kb_id in self._removed:
                raise NoKnowledgeBase(f"knowledge base {kb_id} was removed")
            yield

    @contextlib.asynccontextmanager
    async def removing_kb(self, kb_id: str) -> AsyncIterator[None]:
        """Removing a memory KB: waits for its writes in flight, refuses every later one."""
        async with self._barrier(kb_id).alone():
            try:
                yield
            finally:
                self._removed.add(kb_id)  # LangBot removes the KB whatever the clean-up achieved

    @contextlib.asynccontextmanager
    async def kb_alone(self, kb_id: str) -> AsyncIterator[None]:
        """No write of the KB runs meanwhile: writes in flight finish first, later ones wait (a settings
        change that must see the KB settled, e.g. whether it holds any memory)."""
        async with self._barrier(kb_id).alone():
            yield

    def kb_isolation(self, kb_id: str, isolation: Isolation) -> None:
        """The KB's effective isolation (the registry tells the gate each time it reads the settings)."""
        self._isolation[kb_id] = isolation

    def check_isolation(self, scope: MemoryScope | None, kb_id: str) -> None:
        """A turn's scope carries the isolation it was derived with; if the KB's isolation changed while
        the write waited, its space is no longer that chat's space: nothing is written."""
        current = self._isolation.get(kb_id)
        if scope is not None and scope.identity is not None and current is not None \
                and scope.isolation is not current:
            raise StateError(f"the memory knowledge base's isolation changed to {current.value} while this "
                             "request waited; nothing was written. Try again")

    def mark_removed(self, kb_id: str) -> None:
        """A KB LangBot no longer has (a registration rolled back): its writes are refused from now on."""
        self._removed.add(kb_id)

    def kb_registered(self, kb_id: str) -> None:
        self._removed.discard(kb_id)

    def kb_removed(self, kb_id: str) -> bool:
        return kb_id in self._removed

    def _barrier(self, kb_id: str) -> _KbBarrier:
        return self._barriers.setdefault(kb_id, _KbBarrier())
