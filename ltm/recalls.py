"""Messages recalled on the platform lately, remembered so that a turn still running cannot write after
its message was withdrawn (X2 in docs/REQUIREMENTS.md).

A recall can arrive while the turn its message started is still running (LangBot queues the message's
query and hands the recall to the event processor at once, docs/HOST-FACTS.md 14.7): the model may call
`remember` after the withdrawal looked, and candidate extraction runs after the reply. So a recall is
noted here first; the gate refuses, under the space's lock, every write of an operation that makes memory
from a message (`operations.FROM_MESSAGE`) whose turn answers a noted message (`MessageRecalled`), and the
withdrawal then runs under the same lock, after any such write that got in first. Either the write landed
before the withdrawal looked (and is withdrawn) or it is refused.

Process memory, bounded: `MAX_NOTED` messages for `TTL_SECONDS` (a turn lasts minutes at most). A recall
noted before a restart is forgotten by it; the turn it raced died with the process.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from .provenance import MessageRef

TTL_SECONDS = 1800.0
MAX_NOTED = 10_000


class RecalledMessages:
    def __init__(self) -> None:
        self._noted: OrderedDict[MessageRef, float] = OrderedDict()

    def note(self, message: MessageRef) -> None:
        self._expire()
        self._noted[message] = time.monotonic()
        self._noted.move_to_end(message)
        while len(self._noted) > MAX_NOTED:
            self._noted.popitem(last=False)

    def holds(self, message: MessageRef | None) -> bool:
        """Whether `message` was recalled lately (None, a turn without a message id: never)."""
        if message is None:
            return False
        self._expire()
        return message in self._noted

    def _expire(self) -> None:
        limit = time.monotonic() - TTL_SECONDS
        while self._noted and next(iter(self._noted.values())) < limit:
            self._noted.popitem(last=False)
