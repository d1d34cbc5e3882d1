"""Taking back what one recalled platform message made (X2 in docs/REQUIREMENTS.md).

What a message made is found by the audit: every entry of a turn names the message it answers
(`meta.message_id`, ltm/_gate.py), so the newest entries of the chat's L1 and L2 logs (at most
`MAX_SCANNED` each, none older than `MAX_AGE_DAYS`) name the records; each record is then read and
acts only if its own provenance is that message in that chat (`MessageRef`). Then, under the chat's
decision lock (no candidate is accepted meanwhile), L2 first, then L1, each in one gated write audited
as `message_withdraw`:
- episodes made from the message are deleted (what was derived from them first, K5), unless an admin
  confirmed them since (accepted the candidate they came from) or changed them since (archived or
  restored them): those stay, and the audit says why;
- pending candidates of the message are rejected (decided by `recalled`);
- profile changes of the message are taken back where they still stand (`profiles/sources.py`), unless an
  admin accepted a candidate of the message into that profile; a field changed since stays, audited.
Both writes run under their space's lock after the recall was noted (`ltm/recalls.py`), so a turn's write
either landed before them (and is found) or is refused.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from .._audit import CHUNK, AuditLog
from .._gate import WriteGate, WriteTx
from .._storage import JsonStore
from ..candidates.candidate import Candidate, CandidateStatus
from ..candidates.queue import CandidateQueue
from ..candidates.review import AUTO_REVIEWER
from ..episodes.lifecycle import EpisodeLifecycle
from ..episodes.model import STATUS_LABEL, Episode, EpisodeStatus
from ..episodes.store import EpisodeStore
from ..identity import MemoryScope
from ..operations import Operation
from ..profiles.book import ProfileRef
from ..profiles.model import ProfileTarget
from ..profiles.sources import withdrawn
from ..provenance import MessageRef
from ..spaces import Space
from ..timefields import now_iso, parse_stored
from ..wording import Phrase, Said

MAX_SCANNED = 2000  # newest audit entries read per log
MAX_AGE_DAYS = 7  # and none older than this

WITHDRAWN = Phrase("audit.withdrawn", "withdrawn: message {message_id} recalled")
PROFILE_WITHDRAWN = Phrase("audit.profile_withdrawn", "withdrawn: message {message_id} recalled; {fields} set back")
KEPT_CONFIRMED = Phrase("audit.withdraw_kept_confirmed",
                        "kept although message {message_id} was recalled: an admin confirmed it since")
KEPT_CHANGED = Phrase("audit.withdraw_kept_changed",
                      "kept although message {message_id} was recalled: changed since ({what})")
RESTORED = Phrase("withdraw.restored", "restored")
PROFILE_TYPES = {"speaker_profile": ProfileTarget.SPEAKER, "session_profile": ProfileTarget.SESSION}


@dataclass(frozen=True)
class Withdrawal:
    """What a recall took back: deleted episodes, rejected candidates, profiles set back (`<type>:<id>`),
    and what stayed (`<type>:<id>`) because an admin confirmed or changed it since."""

    message: MessageRef
    episodes: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.episodes or self.candidates or self.profiles)


def confirmed(candidates: Collection[Candidate], message: MessageRef) -> set[str]:
    """`<applied type>:<applied id>` of every candidate of the message a person (not auto-apply) accepted."""
    return {f"{c.applied_type}:{c.applied_id}" for c in candidates
            if c.status is CandidateStatus.ACCEPTED and c.decided_by != AUTO_REVIEWER and c.message == message}


class MessageWithdrawal:
    def __init__(self, gate: WriteGate, audit: AuditLog, store: JsonStore, episodes: EpisodeStore,
                 lifecycle: EpisodeLifecycle, queue: CandidateQueue) -> None:
        self._gate = gate
        self._audit = audit
        self._store = store
        self._episodes = episodes
        self._lifecycle = lifecycle
        self._queue = queue

    async def withdraw(self, scope: MemoryScope, message: MessageRef) -> Withdrawal:
        """Everything `message` made in the chat of `scope` (whose `chat_key` is the message's), taken back."""
        async with self._queue.deciding(scope):
            kept_for = confirmed(await self._queue.all(scope), message)
            episodes, kept = ((), ()) if not scope.kb_id else await self._l2(scope, message, kept_for)
            candidates, profiles, kept_l1 = await self._l1(scope, message, kept_for)
        return Withdrawal(message, episodes, candidates, profiles, (*kept, *kept_l1))

    async def _l2(self, scope: MemoryScope, message: MessageRef, kept_for: set[str]
                  ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        async with self._gate.write_l2(scope, Operation.MESSAGE_WITHDRAW) as tx:
            ids = await self._targets(Space.l2(scope.l2).key, message, ("episode",))
            found = [e for e in [await self._episodes.get(scope.l2, i) for _, i in sorted(ids)]
                     if e is not None and e.message == message]
            gone: list[Episode] = []
            kept: list[str] = []
            for episode in found:
                why = _kept(episode, kept_for, message)
                if why is None:
                    gone.append(episode)
                    continue
                kept.append(f"episode:{episode.episode_id}")
                tx.noted(Operation.MESSAGE_WITHDRAW, "episode", episode.episode_id, why)
            await self._lifecycle.delete_within(tx, scope, gone, WITHDRAWN(message_id=message.message_id))
        return tuple(e.episode_id for e in gone), tuple(kept)

    async def _l1(self, scope: MemoryScope, message: MessageRef, kept_for: set[str]
                  ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        async with self._gate.write_l1(scope, Operation.MESSAGE_WITHDRAW) as tx:
            rejected = await self._queue.withdraw_message(tx, scope, message,
                                                          WITHDRAWN(message_id=message.message_id))
            targets = await self._targets(Space.l1(scope.chat_key).key, message, tuple(PROFILE_TYPES))
            restored: list[str] = []
            kept: list[str] = []
            for target_type, target_id in sorted(targets):
                done = await self._profile(tx, scope, message, target_type, target_id,
                                           f"{target_type}:{target_id}" in kept_for)
                if done is not None:
                    (restored if done else kept).append(f"{target_type}:{target_id}")
        return tuple(c.candidate_id for c in rejected), tuple(restored), tuple(kept)

    async def _profile(self, tx: WriteTx, scope: MemoryScope, message: MessageRef, target_type: str,
                       target_id: str, was_confirmed: bool) -> bool | None:
        """One profile: True when the message's change was taken back, False when it was kept, None when the
        profile holds no change of the message (any more)."""
        ref = ProfileRef(PROFILE_TYPES[target_type], target_id if target_type == "speaker_profile" else "")
        key = ref.key(scope.chat_key)
        stored = await self._store.get(key)
        result = withdrawn(stored, message) if isinstance(stored, dict) else None
        if result is None:
            return None
        if was_confirmed:
            tx.noted(Operation.MESSAGE_WITHDRAW, target_type, target_id, KEPT_CONFIRMED(message_id=message.message_id))
            return False
        await tx.set(key, {**result.profile, "updated_at": now_iso()})
        fields = ", ".join(result.restored) or "-"
        tx.applied(Operation.MESSAGE_WITHDRAW, target_type, target_id,
                   PROFILE_WITHDRAWN(message_id=message.message_id, fields=fields),
                   restored=list(result.restored), kept=list(result.kept))
        if result.kept:
            tx.noted(Operation.MESSAGE_WITHDRAW, target_type, target_id,
                     KEPT_CHANGED(message_id=message.message_id, what=", ".join(result.kept)))
        return True

    async def _targets(self, log_id: str, message: MessageRef, kinds: tuple[str, ...]) -> set[tuple[str, str]]:
        """(target type, target id) of the log's newest entries that the message's turn wrote in its chat."""
        found: set[tuple[str, str]] = set()
        oldest = datetime.now(UTC) - timedelta(days=MAX_AGE_DAYS)
        page, scanned = 1, 0
        while scanned < MAX_SCANNED:
            got = await self._audit.page(log_id, page, CHUNK)
            for entry in got.entries:
                if (parse_stored(entry.get("time")) or oldest) < oldest:
                    return found
                if _names(entry, message) and entry.get("target_type") in kinds:
                    found.add((str(entry["target_type"]), str(entry.get("target_id") or "")))
            scanned += len(got.entries)
            if page >= got.pages or not got.entries:
                break
            page += 1
        return found


def _names(entry: dict[str, Any], message: MessageRef) -> bool:
    meta = entry.get("meta")
    return (isinstance(meta, dict) and meta.get("message_id") == message.message_id
            and entry.get("scope_key") == message.chat_key)


def _kept(episode: Episode, kept_for: set[str], message: MessageRef) -> Said | None:
    """Why an episode of the recalled message stays: an admin confirmed it (accepted its candidate) or
    changed it since (archived it, or restored it); None: it goes."""
    if f"episode:{episode.episode_id}" in kept_for:
        return KEPT_CONFIRMED(message_id=message.message_id)
    if episode.status is EpisodeStatus.ARCHIVED:
        return KEPT_CHANGED(message_id=message.message_id, what=STATUS_LABEL[episode.status]())
    if episode.is_active and episode.status_changed_at:
        return KEPT_CHANGED(message_id=message.message_id, what=RESTORED())
    return None
