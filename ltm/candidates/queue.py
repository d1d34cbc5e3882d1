"""The review queue of one session scope: candidates, bounded, in plugin storage (Q2).

One JSON record per session scope (`v2/candidates/<scope_key>`, built in `_storage.py`)
holds every candidate of that scope in the order they were proposed, plus how many new
candidates were refused because the queue was full. Every change goes through the write
gate on the scope's L1 space, so it is serialized with the scope's profile writes, refused
while that space is fenced, and audited (`candidate_propose`, and the decisions).

Bound (docs/ARCHITECTURE.md, "Limits"): at most `MAX_CANDIDATES` per scope. When a new
candidate does not fit, the oldest rejected candidates are dropped first, then the oldest
accepted ones (their memory, if any, stays: it was written and audited when accepted).
Pending candidates are never dropped: when the queue holds only pending ones, new
candidates are refused, counted in the record (`refused`) and logged, so every review
surface can say so.

Decisions (accept, reject, auto-apply) are serialized per scope by `deciding(scope)`, held
across "check pending, apply, mark decided", so one candidate is never applied twice.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import params
from .._gate import WriteGate, WriteTx
from .._locks import KeyedLocks
from .._storage import JsonStore, candidates_key
from ..errors import NotFound, ValidationError
from ..identity import MemoryScope
from ..operations import Operation
from ..provenance import MessageRef
from ..spaces import Space
from ..timefields import now_iso
from ..wording import Phrase, Said
from .candidate import Candidate, CandidateOrigin, CandidateStatus, new_candidate_id
from .kinds import CandidateKind

PROPOSED = Phrase("audit.candidate_proposed", "proposed {what} candidate ({origin}, {rule})")
DECIDED = Phrase("audit.candidate_decided", "{status} {what} candidate ({origin})")
DECIDED_APPLIED = Phrase("audit.candidate_decided_applied",
                         "{status} {what} candidate ({origin}) -> {applied_type} {applied_id}")
APPLIED_AS = {kind: Phrase(f"candidate.applied.{kind}", kind.replace("_", " "))
              for kind in ("episode", "speaker_profile", "session_profile")}
ORIGIN = {o: Phrase(f"origin.{o.value}", o.value) for o in CandidateOrigin}
ERASED = Phrase("audit.candidate_erased", "{status} {what} candidate erased")
REDACTED = Phrase("audit.candidate_redacted",
                  "text of the accepted {what} candidate removed: its episode {applied_id} was deleted")
ADOPTED = Phrase("audit.candidate_migrated", "candidate migrated from the official plugin ({what}, {status})")
CANDIDATE_STATUS = {s: Phrase(f"candidate.status.{s.value}", s.value) for s in CandidateStatus}

log = logging.getLogger("LongTermMemory")

MAX_CANDIDATES = 200
RECALLED = "recalled"  # who decided a candidate rejected because its message was recalled on the platform
RECORD_VERSION = 1


@dataclass
class QueueRecord:
    items: list[Candidate] = field(default_factory=list)
    refused: int = 0
    last_refused_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"version": RECORD_VERSION, "items": [c.to_dict() for c in self.items], "refused": self.refused,
                "last_refused_at": self.last_refused_at}

    def ids(self) -> set[str]:
        return {c.candidate_id for c in self.items}

    def find(self, candidate_id: str) -> Candidate | None:
        return next((c for c in self.items if c.candidate_id == candidate_id), None)


@dataclass(frozen=True)
class ProposeResult:
    added: list[Candidate]
    refused: int = 0  # did not fit: the queue was full of pending candidates
    duplicates: int = 0  # the same proposal is already pending for the same speaker
    dropped: int = 0  # decided candidates removed to make room


@dataclass(frozen=True)
class CandidatePage:
    candidates: list[Candidate]
    page: int
    pages: int
    total: int
    counts: dict[str, int]
    refused: int
    last_refused_at: str | None


def make_room(items: list[Candidate], incoming: int, limit: int | None = None) -> tuple[list[Candidate], int, int]:
    """(kept items, how many were dropped, how many of `incoming` fit). Oldest rejected go first,
    then oldest accepted; pending candidates are never dropped. `limit` defaults to `MAX_CANDIDATES`."""
    limit = MAX_CANDIDATES if limit is None else limit
    excess = len(items) + incoming - limit
    if excess <= 0:
        return items, 0, incoming
    drop: set[str] = set()
    for status in (CandidateStatus.REJECTED, CandidateStatus.ACCEPTED):
        for candidate in items:  # oldest first: the record keeps proposal order
            if len(drop) >= excess:
                break
            if candidate.status is status:
                drop.add(candidate.candidate_id)
    kept = [c for c in items if c.candidate_id not in drop]
    return kept, len(drop), max(0, min(incoming, limit - len(kept)))


class CandidateQueue:
    def __init__(self, gate: WriteGate, store: JsonStore) -> None:
        self._gate = gate
        self._store = store
        self._deciding = KeyedLocks()

    async def _read(self, scope: MemoryScope) -> QueueRecord:
        raw = await self._store.get(candidates_key(scope.chat_key))
        record = QueueRecord()
        if not isinstance(raw, dict):
            return record
        skipped = 0
        for item in raw.get("items") or []:
            try:
                record.items.append(Candidate.from_dict(item))
            except ValidationError:
                skipped += 1
        if skipped:
            log.warning("[LongTermMemory] %d stored candidate(s) of scope=%s could not be read; skipped", skipped,
                        scope.chat_key)
        refused = raw.get("refused")
        record.refused = refused if isinstance(refused, int) and not isinstance(refused, bool) else 0
        record.last_refused_at = raw.get("last_refused_at") or None
        return record

    @staticmethod
    async def _write(tx: WriteTx, scope: MemoryScope, record: QueueRecord) -> None:
        await tx.set(candidates_key(scope.chat_key), record.to_dict())

    # ------------------------------------------------------------------ reads
    async def get(self, scope: MemoryScope, candidate_id: str) -> Candidate:
        found = (await self._read(scope)).find(candidate_id)
        if found is None:
            raise NotFound(f"candidate {candidate_id} not found in this scope", candidate_id=candidate_id)
        return found

    async def page(self, scope: MemoryScope, statuses: Sequence[CandidateStatus], page: int, page_size: int
                   ) -> CandidatePage:
        """Newest first, only the given statuses; counts cover every status."""
        record = await self._read(scope)
        counts = {status.value: 0 for status in CandidateStatus}
        for candidate in record.items:
            counts[candidate.status.value] += 1
        chosen = [c for c in reversed(record.items) if c.status in statuses]
        pages = max(1, -(-len(chosen) // page_size))
        params.check_page(page, pages)
        start = (page - 1) * page_size
        return CandidatePage(chosen[start:start + page_size], page, pages, len(chosen), counts, record.refused,
                             record.last_refused_at)

    async def all(self, scope: MemoryScope) -> list[Candidate]:
        """Every candidate of the scope's queue, in proposal order."""
        return (await self._read(scope)).items

    # ------------------------------------------------------------------ writes
    async def erase_speaker(self, tx: WriteTx, scope: MemoryScope, sender_id: str) -> list[Candidate]:
        """Inside an L1 write of the scope: drop every candidate proposed from `sender_id`'s messages
        (a person's erasure), whatever its status; each is audited as the write's operation."""
        record = await self._read(scope)
        theirs = [c for c in record.items if c.speaker.sender_id == sender_id]
        if not theirs:
            return []
        record.items = [c for c in record.items if c.speaker.sender_id != sender_id]
        await self._write(tx, scope, record)
        for candidate in theirs:
            tx.applied(tx.operation, "candidate", candidate.candidate_id,
                       ERASED(status=CANDIDATE_STATUS[candidate.status](), what=candidate.describe()))
        return theirs

    async def withdraw_message(self, tx: WriteTx, scope: MemoryScope, message: MessageRef, summary: Said
                               ) -> list[Candidate]:
        """Inside an L1 write of the scope: reject every pending candidate proposed from `message` (it was
        recalled on the platform), decided by `RECALLED`; each is audited as the write's operation."""
        record = await self._read(scope)
        mine = [c for c in record.items if c.is_pending and c.message == message]
        if not mine:
            return []
        rejected = {c.candidate_id: c.decided(CandidateStatus.REJECTED, RECALLED) for c in mine}
        record.items = [rejected.get(c.candidate_id, c) for c in record.items]
        await self._write(tx, scope, record)
        for candidate in mine:
            tx.applied(tx.operation, "candidate", candidate.candidate_id, summary, decided_by=RECALLED)
        return list(rejected.values())

    async def propose(self, scope: MemoryScope, new: Sequence[Candidate]) -> ProposeResult:
        """Store new pending candidates of one turn; each gets a fresh id, unique in the scope."""
        if not new:
            return ProposeResult([])
        async with self._gate.write_l1(scope, Operation.CANDIDATE_PROPOSE) as tx:
            record = await self._read(scope)
            pending = {c.same_as_key for c in record.items if c.is_pending}
            fresh: list[Candidate] = []
            for candidate in new:
                if candidate.same_as_key in pending:
                    continue
                pending.add(candidate.same_as_key)
                fresh.append(candidate)
            duplicates = len(new) - len(fresh)
            kept, dropped, fits = make_room(record.items, len(fresh))
            refused = len(fresh) - fits
            taken = record.ids()
            added: list[Candidate] = []
            for candidate in fresh[:fits]:
                added.append(replace(candidate, candidate_id=new_candidate_id(taken)))
                taken.add(added[-1].candidate_id)
            if not added and not refused:
                return ProposeResult([], duplicates=duplicates)
            record.items = kept + added
            if refused:
                record.refused += refused
                record.last_refused_at = now_iso()
            await self._write(tx, scope, record)
            for candidate in added:
                tx.applied(Operation.CANDIDATE_PROPOSE, "candidate", candidate.candidate_id,
                           PROPOSED(what=candidate.describe(), origin=ORIGIN[candidate.origin](), rule=candidate.rule),
                           kind=candidate.kind.value, origin=candidate.origin.value, rule=candidate.rule,
                           source_ref=candidate.source_ref)
        if refused:
            log.warning("[LongTermMemory] candidate queue of scope=%s is full (%d pending); %d new candidate(s) "
                        "refused", scope.chat_key, MAX_CANDIDATES, refused)
        if dropped:
            log.info("[LongTermMemory] candidate queue of scope=%s: %d decided candidate(s) dropped to make room",
                     scope.chat_key, dropped)
        return ProposeResult(added, refused, duplicates, dropped)

    async def adopt(self, scope: MemoryScope, incoming: Sequence[Candidate], operation: Operation
                    ) -> tuple[list[Candidate], int]:
        """Candidates carried over from elsewhere (a migration), each with its own id, status and times;
        one whose id the queue holds is not added again. Returns (added, refused for lack of room)."""
        async with self._gate.write_l1(scope, operation) as tx:
            record = await self._read(scope)
            taken = record.ids()
            fresh = [c for c in incoming if c.candidate_id not in taken]
            if not fresh:
                return [], 0
            kept, _dropped, fits = make_room(record.items, len(fresh))
            added = fresh[:fits]
            record.items = kept + added
            await self._write(tx, scope, record)
            for candidate in added:
                tx.applied(operation, "candidate", candidate.candidate_id,
                           ADOPTED(what=candidate.describe(), status=CANDIDATE_STATUS[candidate.status]()),
                           source_ref=candidate.source_ref)
        return added, len(fresh) - fits

    async def redact_applied(self, tx: WriteTx, scope: MemoryScope, episode_ids: set[str]) -> int:
        """Accepted candidates of this scope that became one of `episode_ids` lose their text and quote,
        audited as `candidate_redact`. Part of `tx`, the L2 change deleting those episodes (like the
        drafts it clears, so a fenced chat never blocks a forget); the queue's own lock is held for it."""
        if not any(c.applied_as_episode(episode_ids) for c in (await self._read(scope)).items):
            return 0
        async with self._gate.hold(Space.l1(scope.chat_key)):
            record = await self._read(scope)
            hits = [c for c in record.items if c.applied_as_episode(episode_ids)]
            if not hits:
                return 0
            chosen = {c.candidate_id for c in hits}
            record.items = [c.without_text() if c.candidate_id in chosen else c for c in record.items]
            await self._write(tx, scope, record)
            for candidate in hits:
                tx.applied(Operation.CANDIDATE_REDACT, "candidate", candidate.candidate_id,
                           REDACTED(what=candidate.describe(), applied_id=candidate.applied_id or ""),
                           applied_id=candidate.applied_id)
        return len(hits)

    async def redact_if_forgotten(self, scope: MemoryScope, accepted: Candidate,
                                  episode_there: Callable[[], Awaitable[bool]]) -> Candidate:
        """An accepted candidate whose episode was deleted between the accept's write and its mark loses
        its text now: the forget ran while the candidate was still pending, so it had nothing to redact.
        Checked under the episode space's lock, so a forget in progress has finished, and any later one
        sees the mark and redacts the candidate itself."""
        async with self._gate.hold(Space.l2(scope.l2)):
            if await episode_there():
                return accepted
        async with self._gate.write_l1(scope, Operation.CANDIDATE_REDACT) as tx:
            record = await self._read(scope)
            current = record.find(accepted.candidate_id)
            if current is None or current.applied_id != accepted.applied_id:
                return current or accepted
            redacted = current.without_text()
            record.items = [redacted if c.candidate_id == current.candidate_id else c for c in record.items]
            await self._write(tx, scope, record)
            tx.applied(Operation.CANDIDATE_REDACT, "candidate", current.candidate_id,
                       REDACTED(what=current.describe(), applied_id=current.applied_id or ""),
                       applied_id=current.applied_id)
        return redacted

    @contextlib.asynccontextmanager
    async def deciding(self, scope: MemoryScope) -> AsyncIterator[None]:
        """One decision at a time per scope, held from the pending check to the mark."""
        async with self._deciding.hold(scope.chat_key):
            yield

    @staticmethod
    def check_decidable(candidate: Candidate, *, accepting: bool) -> None:
        if not candidate.is_pending:
            raise ValidationError(f"candidate {candidate.candidate_id} is already {candidate.status.value}")
        if accepting and candidate.kind is CandidateKind.IGNORE:
            raise ValidationError(f"candidate {candidate.candidate_id} stands for a message that looked like a "
                                  "credential; there is nothing to apply. Reject it to dismiss it")

    async def decide(self, scope: MemoryScope, candidate_id: str, status: CandidateStatus, operation: Operation, *,
                     by: str, applied_type: str | None = None, applied_id: str | None = None,
                     applied_existing: bool = False) -> Candidate:
        """Mark a pending candidate accepted or rejected, audited as `operation`."""
        async with self._gate.write_l1(scope, operation) as tx:
            record = await self._read(scope)
            candidate = record.find(candidate_id)
            if candidate is None:
                raise NotFound(f"candidate {candidate_id} not found in this scope", candidate_id=candidate_id)
            self.check_decidable(candidate, accepting=False)
            decided = candidate.decided(status, by, applied_type, applied_id, applied_existing)
            record.items = [decided if c.candidate_id == candidate_id else c for c in record.items]
            await self._write(tx, scope, record)
            summary = (DECIDED_APPLIED(status=CANDIDATE_STATUS[status](), what=candidate.describe(),
                                       origin=ORIGIN[candidate.origin](),
                                       applied_type=APPLIED_AS[applied_type]() if applied_type in APPLIED_AS
                                       else applied_type, applied_id=applied_id or "")
                       if applied_type else
                       DECIDED(status=CANDIDATE_STATUS[status](), what=candidate.describe(),
                               origin=ORIGIN[candidate.origin]()))
            tx.applied(operation, "candidate", candidate_id, summary,
                       decided_by=by, source_ref=candidate.source_ref, claim_type=candidate.claim_type,
                       applied_type=applied_type, applied_id=applied_id,
                       **({"applied_existing": True} if applied_existing else {}))  # nothing new was written
        return decided
