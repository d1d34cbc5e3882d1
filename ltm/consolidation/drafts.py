"""Review drafts, closed proposals and summary lineage in plugin storage, and the K5 cascade.

Keys (built in `ltm/_storage.py`):
- a pending draft:    `v2/draft/<kb>/<user_key>/<scope_key>/<proposal_id>`: the draft of one session
  scope, over the L2 space `(kb, user_key)`; its key names the KB, the space and the scope, so a
  proposal of another chat or another knowledge base is told apart from a missing one;
- closed proposals:   `v2/draftlog/<kb>/<scope_key>`: id -> outcome and time (no text), for replays;
- lineage:            `v2/lineage/<kb>/<user_key>`: summary id -> the ids it was derived from, so the
  cascade never has to enumerate a space.

Locking: every change to the drafts or the lineage of an L2 space happens while that space's
lock is held (an L2 write, or `gate.hold` around an L1 write); locks are always taken L2 first,
then L1.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from typing import Any

from .._gate import WriteTx
from .._storage import (
    DRAFT_PREFIX,
    JsonStore,
    draft_key,
    draft_log_key,
    draft_scope_prefix,
    draft_space_prefix,
    lineage_key,
    parse_draft_key,
)
from ..episodes.store import EpisodeStore
from ..errors import NotFound, ProposalRejected
from ..identity import MemoryScope
from ..operations import Operation
from ..spaces import L2Space
from ..timefields import now_iso
from ..wording import Phrase, Said
from .model import MAX_CLOSED_KEPT, ClosedProposal, Draft

log = logging.getLogger("LongTermMemory")
DRAFT_SAVED = Phrase("audit.draft_saved", "review draft saved: statements {statements}, sources {sources}")
DRAFT_CLEARED = Phrase("audit.draft_cleared", "draft cleared: source {source} changed before review")
DRAFT_USED = Phrase("audit.draft_used", "draft used: run")
DRAFT_REJECTED = Phrase("audit.draft_rejected", "draft rejected: {reason}")
DRAFT_DISCARDED = Phrase("audit.draft_discarded", "draft discarded after review")
SUMMARY_REMOVED = Phrase("audit.summary_removed", "summary removed: {count} of its sources changed")


class DraftBook:
    """Drafts and lineage of every space; also the `DerivedRecords` the episode lifecycle calls (K5)."""

    def __init__(self, store: JsonStore, episodes: EpisodeStore) -> None:
        self._store = store
        self._episodes = episodes

    # ------------------------------------------------------------------ reads
    async def pending(self, space: L2Space, chat_key: str | None = None) -> list[tuple[str, Draft]]:
        """Pending drafts over one space (every scope sharing it, or one scope), oldest first."""
        prefix = draft_scope_prefix(space, chat_key) if chat_key else draft_space_prefix(space)
        found: list[tuple[str, Draft]] = []
        for key in await self._store.keys(prefix):
            if parse_draft_key(key) is None:
                continue
            draft = Draft.from_dict(await self._store.get(key))
            if draft is not None:
                found.append((key, draft))
        return sorted(found, key=lambda item: (item[1].created_at, item[1].proposal_id))

    async def closed(self, kb_id: str, chat_key: str) -> dict[str, ClosedProposal]:
        raw = await self._store.get(draft_log_key(kb_id, chat_key), {})
        entries = raw.get("closed") if isinstance(raw, dict) else None
        result: dict[str, ClosedProposal] = {}
        if not isinstance(entries, dict):
            return result
        for pid, value in entries.items():
            closed = ClosedProposal.from_dict(str(pid), value)
            if closed is not None:
                result[closed.proposal_id] = closed
        return result

    async def find(self, scope: MemoryScope, proposal_id: str) -> Draft:
        """The pending draft `proposal_id` of this scope; ProposalRejected when it was used or belongs to
        this chat on another memory KB; NotFound, word for word, when it exists nowhere or in another
        chat (docs/GUARANTEES.md: an id of another space is `not_found`, like an unknown one)."""
        closed = (await self.closed(scope.kb_id, scope.chat_key)).get(proposal_id)
        if closed is not None:
            raise ProposalRejected(
                f"proposal {proposal_id} was already {closed.status} ({closed.reason}); a proposal is used once. "
                "Run preview again for a new one", reason="used", proposal_id=proposal_id, status=closed.status)
        key = draft_key(scope.l2, scope.chat_key, proposal_id)
        draft = Draft.from_dict(await self._store.get(key))
        if draft is not None:
            if draft.kb_id != scope.kb_id:
                raise ProposalRejected(f"proposal {proposal_id} was made on another memory knowledge base",
                                       reason="cross_kb", proposal_id=proposal_id)
            if (draft.chat_key, draft.space_key) == (scope.chat_key, scope.space_key):
                return draft
        else:
            for other in await self._store.keys(DRAFT_PREFIX):
                parsed = parse_draft_key(other)
                # Only this chat's own draft, left on another memory KB, is told apart.
                if parsed is not None and parsed[1:] == (scope.space_key, scope.chat_key, proposal_id):
                    raise ProposalRejected(f"proposal {proposal_id} was made on another memory knowledge base; "
                                           "nothing was changed", reason="cross_kb", proposal_id=proposal_id)
        raise NotFound(f"no pending proposal {proposal_id} in this chat; run preview first",
                       proposal_id=proposal_id)

    async def lineage(self, space: L2Space) -> dict[str, list[str]]:
        raw = await self._store.get(lineage_key(space), {})
        summaries = raw.get("summaries") if isinstance(raw, dict) else None
        if not isinstance(summaries, dict):
            return {}
        return {str(k): [str(i) for i in v] for k, v in summaries.items() if isinstance(v, list)}

    # ------------------------------------------------------------------ writes (inside a gated write)
    async def save(self, tx: WriteTx, draft: Draft) -> None:
        key = draft_key(draft.l2, draft.chat_key, draft.proposal_id)
        await tx.set(key, draft.to_dict())
        tx.applied(Operation.CONSOLIDATION_PREVIEW, "draft", draft.proposal_id,
                   DRAFT_SAVED(statements=len(draft.statements), sources=len(draft.sources)),
                   sources=sorted(draft.source_ids), kb_id=draft.kb_id, model=draft.model)

    async def close(self, tx: WriteTx, draft: Draft, status: str, reason: str, operation: Operation, said: Said, *,
                    summary_id: str = "") -> None:
        """Leave the pending state: the outcome is logged first (so a replay is recognised even if the
        next step fails), then the draft and its quoted source texts are deleted."""
        log_key = draft_log_key(draft.kb_id, draft.chat_key)
        entries = {pid: c.to_dict() for pid, c in (await self.closed(draft.kb_id, draft.chat_key)).items()}
        entries[draft.proposal_id] = ClosedProposal(draft.proposal_id, status, reason, now_iso(), summary_id).to_dict()
        if len(entries) > MAX_CLOSED_KEPT:
            newest = sorted(entries.items(), key=lambda item: str(item[1].get("at")))[-MAX_CLOSED_KEPT:]
            entries = dict(newest)
        await tx.set(log_key, {"closed": entries})
        key = draft_key(draft.l2, draft.chat_key, draft.proposal_id)
        await tx.delete(key)
        meta: dict[str, Any] = {"status": status, "draft_scope_key": draft.chat_key}
        if summary_id:
            meta["summary_id"] = summary_id
        tx.applied(operation, "draft", draft.proposal_id, said, **meta)

    async def set_lineage(self, tx: WriteTx, space: L2Space, summaries: dict[str, list[str]]) -> None:
        key = lineage_key(space)
        if summaries:
            await tx.set(key, {"summaries": summaries})
        else:
            await tx.delete(key)

    # ------------------------------------------------------------------ K5 cascade (DerivedRecords)
    async def before_change(self, tx: WriteTx, scope: MemoryScope, episode_ids: Sequence[str], *,
                            removed: bool) -> None:
        """Before episodes of this space stop being active (or are deleted): delete the summaries of
        this space derived from any of them, and clear every pending draft over this space that quotes
        one of them. Other spaces are never read or touched."""
        ids = set(episode_ids)
        if not ids:
            return
        space = scope.l2
        lineage = await self.lineage(space)
        doomed = sorted(sid for sid, sources in lineage.items() if sid not in ids and ids.intersection(sources))
        if doomed:
            await tx.index_write("vector delete", partial(self._episodes.delete, space=space, episode_ids=doomed))
            for sid in doomed:
                changed = sorted(ids.intersection(lineage[sid]))
                tx.applied(Operation.SUMMARY_REMOVE, "episode", sid,
                           SUMMARY_REMOVED(count=len(changed)), sources=changed)
        gone = set(doomed) | (ids.intersection(lineage) if removed else set())
        if gone:
            await self.set_lineage(tx, space, {k: v for k, v in lineage.items() if k not in gone})
        for _, draft in await self.pending(space):
            hit = sorted(ids & draft.source_ids)
            if hit:
                await self.close(tx, draft, "cleared", f"source {hit[0]} changed before review", Operation.DRAFT_CLEAR,
                                 DRAFT_CLEARED(source=hit[0]))
        if doomed:
            log.info("[LongTermMemory] consolidation cascade kb=%s user_key=%s summaries_removed=%d", space.kb_id,
                     space.space_key, len(doomed))
