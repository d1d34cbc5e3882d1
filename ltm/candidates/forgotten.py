"""Deleting a memory that came from a candidate also deletes the candidate's words (Q2, K5).

An accepted candidate names the episode it became (`applied_id`). When that episode is deleted
(forget on any surface, a bulk delete, the removal of its document), the candidate keeps its
decision (accepted, by whom, when, as which episode) but not its text or its quote of what the
user said: otherwise the review queue (every status), each surface that lists it and plugin storage would keep
what the user asked to forget. The same rule as consolidation's drafts that quote a deleted source.

Runs inside the L2 write that deletes the episodes, before the deletion (`DerivedRecords`), and is
part of that change, audited in its log, as consolidation's cleared drafts are: a chat whose L1
space is fenced never blocks a forget. Each chat's queue is rewritten under that queue's own lock
(locks are taken L2 first, then L1, as everywhere); a queue that cannot be rewritten stops the
deletion before any episode is deleted (or fences the space when the answer is lost).
"""

from __future__ import annotations

from collections.abc import Sequence

from .._gate import WriteTx
from .._storage import CANDIDATES_PREFIX, JsonStore, scope_of_key
from ..identity import Isolation, MemoryScope, space_key_for_chat_key
from .queue import CandidateQueue


class ForgottenCandidates:
    def __init__(self, queue: CandidateQueue, store: JsonStore) -> None:
        self._queue = queue
        self._store = store

    async def before_change(self, tx: WriteTx, scope: MemoryScope, episode_ids: Sequence[str], *,
                            removed: bool) -> None:
        if not removed or not episode_ids:
            return  # an episode that is only superseded or archived is still there: its candidate stays
        ids = set(episode_ids)
        for chat in await self._chats_of_space(scope):
            await self._queue.redact_applied(tx, chat, ids)

    async def _chats_of_space(self, scope: MemoryScope) -> list[MemoryScope]:
        """Every chat whose candidates may have been accepted into this L2 space: in session isolation
        the chat itself, in bot isolation every chat of the bot (they share the space)."""
        chats: list[MemoryScope] = []
        for key in await self._store.keys(CANDIDATES_PREFIX):
            chat_key = scope_of_key(key)
            if chat_key is None:
                continue
            if chat_key == scope.space_key or space_key_for_chat_key(chat_key, Isolation.BOT) == scope.space_key:
                chats.append(MemoryScope.stored(chat_key, scope.space_key, scope.kb_id, scope.isolation))
        return chats
