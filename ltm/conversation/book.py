"""The chat's conversation record in plugin storage, and the one place it is written (V1, V2, V4).

Every change is `ConversationBook.change`: one gated write on the chat's L1 space (serialized with its
profile and candidate writes, refused while that space is fenced, its write-ahead marker around the one
storage write), in which a pure function turns the record read under the lock into the new record and
the audit entries to write. So no change can skip the gate, and the record is always written whole.

Appending a turn is not audited (`Operation.CONVERSATION_RECORD` names its marker and any fence): the
record itself says who spoke when, and an entry per message would grow the chat's audit log without
bound while the record stays within its budget, and bury every other change in the chat's audit view.
Folds, clears and erasures are audited (their entries hold turn numbers, counts and speaker ids, never
what was said).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from .._gate import WriteGate
from .._storage import JsonStore, conversation_key
from ..identity import MemoryScope
from ..operations import Operation
from ..wording import Said
from .model import ConversationRecord

R = TypeVar("R")

@dataclass(frozen=True)
class Audited:
    """One audit entry of a change: what the gate's `tx.applied` takes."""

    operation: Operation
    target_id: str
    summary: Said
    meta: dict[str, object]


@dataclass(frozen=True)
class Change(Generic[R]):
    """What a change function decided: the new record (None: leave the record as it is; `delete`: remove
    it), the caller's result, and the audit entries."""

    record: ConversationRecord | None
    result: R
    audited: tuple[Audited, ...] = ()
    delete: bool = False


class ConversationBook:
    def __init__(self, gate: WriteGate, store: JsonStore) -> None:
        self._gate = gate
        self._store = store

    async def read(self, scope: MemoryScope) -> ConversationRecord:
        return ConversationRecord.from_dict(await self._store.get(conversation_key(scope.chat_key)))

    async def change(self, scope: MemoryScope, operation: Operation,
                     decide: Callable[[ConversationRecord], Change[R]]) -> R:
        """Read the record under the chat's L1 lock, let `decide` make the change, write it: the one gated
        write of the conversation record. A change that keeps the record as it is writes nothing."""
        key = conversation_key(scope.chat_key)
        async with self._gate.write_l1(scope, operation) as tx:
            stored = await self._store.get(key)
            current = ConversationRecord.from_dict(stored)
            change = decide(current)
            if change.delete:
                if stored is not None:
                    await tx.delete(key)
            elif change.record is not None and change.record != current:
                await tx.set(key, change.record.to_dict())
            for entry in change.audited:
                tx.applied(entry.operation, "conversation", entry.target_id, entry.summary, **entry.meta)
        return change.result
