"""What an admin needs to tell the installation's chats apart (M1): per noted chat, who and where it
is, when its memory last changed, how much it holds and how much waits for review.

Nothing here runs on a chat turn. Last activity is read from the audit logs the writes already keep
(the newest entry of the chat's L1 log, or of its L2 log that came from this chat: in bot isolation
that log is shared), so the per-turn path gains no host call. The counts cost one enumeration per L2
space (shared spaces are counted once) and one read of each chat's candidate queue, at the moment an
operator asks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ._audit import AuditLog
from .candidates.candidate import CandidateStatus
from .candidates.queue import CandidateQueue
from .chat_labels import ChatLabels
from .diagnostics import Diagnostics
from .episodes.listing import EpisodeListing
from .episodes.model import EpisodeStatus
from .errors import LTMError
from .identity import Isolation, MemoryScope, split_chat_key
from .kb_registry import KnowledgeBaseRegistry
from .spaces import Space, stored_names

# How many of the newest entries of a shared L2 log are read to find this chat's latest change.
SHARED_LOG_LOOKBACK = 20


@dataclass(frozen=True)
class SpaceActivity:
    chat_key: str
    space_key: str
    bot_uuid: str
    chat_type: str  # "group" or "person", as LangBot names the launcher type
    chat_id: str
    last_activity: str  # ISO time of the newest change this chat made ("" when none is audited)
    last_speaker: str  # the display name that made it ("" when an operator's page or nobody did)
    episodes: int | None  # active episodes of its L2 space; None without a memory KB or when unreadable
    pending_candidates: int
    chat_name: str = ""  # the group's name on the platform, as the latest turn gave it (`chat_labels.py`)
    sender_name: str = ""  # the latest speaker's display name, as that turn gave it

    def to_dict(self) -> dict[str, Any]:
        return stored_names(asdict(self))


class SpaceActivityReader:
    def __init__(self, audit: AuditLog, listing: EpisodeListing, queue: CandidateQueue, kbs: KnowledgeBaseRegistry,
                 diagnostics: Diagnostics, labels: ChatLabels) -> None:
        self._audit = audit
        self._labels = labels
        self._listing = listing
        self._queue = queue
        self._kbs = kbs
        self._diagnostics = diagnostics

    async def read(self) -> list[SpaceActivity]:
        """Every noted chat, the most recently active first (never active: last, by key)."""
        found = await self._kbs.memory_kb()
        kb_id, isolation = (found[0], found[1].isolation) if found else ("", Isolation.SESSION)
        if kb_id:
            await self._kbs.open_kb(kb_id)  # the records in the current layout before they are counted
        counted: dict[str, int | None] = {}
        out = []
        for chat_key in await self._diagnostics.known_scopes():
            scope = MemoryScope.of_chat_key(chat_key, kb_id, isolation)
            if scope.space_key not in counted:
                counted[scope.space_key] = await self._active_episodes(scope) if kb_id else None
            bot_uuid, session_name = split_chat_key(chat_key)
            chat_type, _, chat_id = session_name.partition("_")
            time, speaker = await self._last_change(scope)
            pending = sum(c.status is CandidateStatus.PENDING for c in await self._queue.all(scope))
            label = await self._labels.get(chat_key)
            out.append(SpaceActivity(chat_key, scope.space_key, bot_uuid, chat_type, chat_id, time, speaker,
                                     counted[scope.space_key], pending, label.chat_name, label.sender_name))
        out.sort(key=lambda a: a.chat_key)
        out.sort(key=lambda a: a.last_activity, reverse=True)  # stable: equal times stay in key order
        return out

    async def _active_episodes(self, scope: MemoryScope) -> int | None:
        try:
            return (await self._listing.page(scope, (EpisodeStatus.ACTIVE,), 1, 1)).total
        except LTMError:
            return None  # the list shows "?" rather than failing for every space

    async def _last_change(self, scope: MemoryScope) -> tuple[str, str]:
        newest: dict[str, Any] = {}
        logs = [Space.l1(scope.chat_key).key] + ([Space.l2(scope.l2).key] if scope.kb_id else [])
        for log_id in logs:
            page = await self._audit.page(log_id, 1, SHARED_LOG_LOOKBACK)
            mine = next((e for e in page.entries if e.get("scope_key") == scope.chat_key), None)
            if mine and str(mine.get("time") or "") > str(newest.get("time") or ""):
                newest = mine
        return str(newest.get("time") or ""), str(newest.get("sender_name") or "")
