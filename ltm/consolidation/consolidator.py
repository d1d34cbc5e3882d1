"""Consolidation (K1-K8): preview, run, and the review drafts of a scope.

Two paths:

- **Archival (no model).** `preview` lists superseded records old enough to archive, with
  risk notes; `run` (needs `consolidation_enabled`) archives exactly those, each audited.
- **Reviewed summaries (`consolidation_model_uuid`).** `preview` picks a bounded set of
  active sources, asks the model once (30 s, bounded input and output; the KB is held
  against removal for the whole call, K8), validates the answer and stores a review
  draft under a one-use proposal id. `run <proposal_id>` re-checks the draft and its
  sources, writes the summary `archived` with its lineage, reads it back, and only then
  makes it active. Sources stay active; the summary never outlives any of them.

Active records are never archived, folded away or replaced by counts: a summary is an
additional record next to its sources.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from dataclasses import replace

from .. import params
from .._gate import WriteGate, WriteTx
from ..episodes.lifecycle import write_episodes
from ..episodes.model import (
    MAX_RECORD_CHARS,
    Episode,
    EpisodeStatus,
    new_episode_id,
    record_chars,
)
from ..episodes.store import EpisodeStore
from ..errors import ConsolidationDisabled, HostFailure, LTMError, ProposalRejected, StateError, ValidationError
from ..guards import refuse_secrets
from ..identity import MemoryScope
from ..kb_settings import KBSettings
from ..operations import Operation
from ..ports import LanguageModel
from ..profiles.book import ProfileBook
from ..spaces import L2Space, Space
from ..timefields import now_iso, utc_now
from ..wording import Phrase, Said
from .archival import archivable_records
from .drafts import DRAFT_DISCARDED, DRAFT_REJECTED, DRAFT_USED, DraftBook
from .model import (
    MAX_OUTPUT_CHARS,
    MAX_PENDING_DRAFTS,
    MIN_SOURCES,
    MODEL_TIMEOUT_S,
    ConsolidationPreview,
    ConsolidationRun,
    Draft,
    DraftSource,
    common_validity,
    source_hash,
)
from .prompt import build_request, parse_reply
from .sources import over_budget, select_sources, summary_episode

log = logging.getLogger("LongTermMemory")
SUMMARY_STAGED = Phrase("audit.summary_staged", "summary written, hidden until it is verified (sources: {sources})")
SUMMARY_UNSTAGED = Phrase("audit.summary_unstaged", "staged summary removed: {problem}")
SUMMARY_ACTIVATED = Phrase("audit.summary_activated", "summary verified and activated")
_NOTE = {key: Phrase(f"consolidation.{key}", english) for key, english in {
    "no_model": "no consolidation model is set: archival only, no summary",
    "too_many_drafts": "this chat already has {count} pending drafts; run or discard one before asking for another",
    "nothing_new": "nothing new to summarize. A summary needs at least {count} active records that are not "
                   "already in a summary or a pending draft",
    "nothing_new_tag": "nothing new to summarize with tag {tag}. A summary needs at least {count} active records "
                       "that are not already in a summary or a pending draft",
    "not_saved": "{reason}; no draft was saved",
    "model_timeout": "the model did not answer within {seconds} s",
    "model_failed": "the model call failed: {error}",
    "answer_rejected": "the model's answer was rejected: {error}",
    "draft_over_budget": "the summary would be over the recall record budget ({size} > {limit} characters with its "
                         "lineage); fewer sources per draft are needed",
    "source_changed": "source {episode_id} changed while the model was drafting",
    "profile_off": "profile updates were proposed but consolidation_apply_profile_updates is off: L1 unchanged",
    "profile_failed": "profile updates not applied: {error}",
    "profile_updated": "session profile updated, items added: {count}",
}.items()}
ARCHIVED_BY_CONSOLIDATION = Phrase("audit.consolidation_archived", "superseded -> archived by consolidation")

def clean_proposal_id(value: object) -> str:
    text = params.record_id(value, "proposal_id")
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise ValidationError(f"{text[:40]!r} is not a proposal id (a UUID shown by preview)") from None


class Consolidator:
    def __init__(self, gate: WriteGate, store: EpisodeStore, llm: LanguageModel, drafts: DraftBook,
                 profiles: ProfileBook) -> None:
        self._gate = gate
        self._store = store
        self._llm = llm
        self._drafts = drafts
        self._profiles = profiles

    # ------------------------------------------------------------------ preview (K1, K3, K8)
    async def preview(self, scope: MemoryScope, settings: KBSettings, *, tag: str = "",
                      drafting: bool = True) -> ConsolidationPreview:
        """`drafting=False`: the archival part only, a pure read (no model call, no stored draft, no note)."""
        space = scope.l2
        model = settings.consolidation_model_uuid
        # K8: the KB is held against removal for the whole preview; a removed KB is refused here,
        # before any model call, and its removal waits until this preview has finished.
        async with self._gate.kb_in_use(space.kb_id):
            listing = await self._store.enumerate(space)
            archival, total = archivable_records(listing.episodes, settings, utc_now())
            result = ConsolidationPreview(
                enabled=settings.consolidation_enabled, model_configured=bool(model),
                min_age_days=settings.consolidation_min_age_days,
                max_sources=settings.consolidation_max_candidates,
                archival=archival, archival_total=total, listing_truncated=listing.truncated)
            if not model:
                return replace(result, note=_NOTE["no_model"]())
            if not drafting:
                return result
            if len(await self._drafts.pending(space, scope.chat_key)) >= MAX_PENDING_DRAFTS:
                return replace(result, note=_NOTE["too_many_drafts"](count=MAX_PENDING_DRAFTS))
            pending = {i for _, d in await self._drafts.pending(space) for i in d.source_ids}
            chosen = select_sources(listing.episodes, await self._drafts.lineage(space), pending,
                                    settings, tag)
            if len(chosen) < MIN_SOURCES:
                return replace(result, note=_NOTE["nothing_new_tag"](count=MIN_SOURCES, tag=tag) if tag
                               else _NOTE["nothing_new"](count=MIN_SOURCES))
            draft = await self._draft(scope, settings, chosen)
            if isinstance(draft, Said):
                reason = draft
                log.info("[LongTermMemory] consolidation draft rejected scope=%s sources=%d: %s", scope.chat_key,
                         len(chosen), reason)
                return replace(result, rejected=True, note=_NOTE["not_saved"](reason=reason))
            problem = await self._save(scope, draft, chosen)
            if problem is not None:
                return replace(result, rejected=True, note=_NOTE["not_saved"](reason=problem))
            log.info("[LongTermMemory] consolidation draft saved scope=%s proposal=%s sources=%d", scope.chat_key,
                     draft.proposal_id, len(draft.sources))
            return replace(result, draft=draft)

    async def _draft(self, scope: MemoryScope, settings: KBSettings, chosen: Sequence[Episode]
                     ) -> Draft | Said:
        """One bounded model call and the validation of its answer: a draft, or why there is none."""
        sources = tuple(DraftSource.of(e) for e in chosen)
        with_profile = settings.consolidation_apply_profile_updates
        messages = build_request(sources, profile_updates=with_profile)
        model = settings.consolidation_model_uuid
        try:
            reply = await asyncio.wait_for(
                self._llm.complete(model, messages, timeout_s=MODEL_TIMEOUT_S, max_output_chars=MAX_OUTPUT_CHARS),
                MODEL_TIMEOUT_S)
        except TimeoutError:
            return _NOTE["model_timeout"](seconds=f"{MODEL_TIMEOUT_S:g}")
        except HostFailure as exc:
            return _NOTE["model_failed"](error=exc.message)
        except ValidationError as exc:
            return _NOTE["answer_rejected"](error=exc.message)
        try:
            statements, updates = parse_reply(reply, sources, profile_updates=with_profile)
        except ValidationError as exc:
            return _NOTE["answer_rejected"](error=exc.message)
        validity = common_validity([(s.valid_from, s.valid_until) for s in sources]) or (None, None)
        identity = scope.identity
        draft = Draft(
            proposal_id=str(uuid.uuid4()), kb_id=scope.kb_id, space_key=scope.space_key, chat_key=scope.chat_key,
            isolation=scope.isolation.value, created_at=now_iso(), model=model, sources=sources,
            statements=statements, profile_updates=updates, valid_from=validity[0], valid_until=validity[1],
            created_by_id=identity.sender_id if identity else "",
            created_by_name=identity.sender_name if identity else "")
        size = over_budget(summary_episode(scope, draft, chosen, new_episode_id()))
        if size:
            return _NOTE["draft_over_budget"](size=size, limit=MAX_RECORD_CHARS)
        return draft

    async def _save(self, scope: MemoryScope, draft: Draft, chosen: Sequence[Episode]) -> Said | None:
        """Store the draft, unless a source changed while the model was drafting. Under the space's lock
        (L2 first, then L1), so no cascade can run between the check and the write."""
        async with self._gate.hold(Space.l2(scope.l2)):
            for episode in chosen:
                current = await self._store.get(scope.l2, episode.episode_id)
                if current is None or source_hash(current) != source_hash(episode):
                    return _NOTE["source_changed"](episode_id=episode.episode_id)
            async with self._gate.write_l1(scope, Operation.CONSOLIDATION_PREVIEW) as tx:
                if len(await self._drafts.pending(scope.l2, scope.chat_key)) >= MAX_PENDING_DRAFTS:
                    raise StateError(f"this chat already has {MAX_PENDING_DRAFTS} pending drafts; run or discard "
                                     "one first")
                await self._drafts.save(tx, draft)
        return None

    # ------------------------------------------------------------------ run (K2, K4, K6)
    async def run(self, scope: MemoryScope, settings: KBSettings, proposal_id: object = None) -> ConsolidationRun:
        pid = None if params.is_blank(proposal_id) else clean_proposal_id(proposal_id)
        if not settings.consolidation_enabled:
            raise ConsolidationDisabled(
                "consolidation is switched off on this memory knowledge base (consolidation_enabled is false); "
                "nothing was changed")
        if pid is None:
            return await self._archive(scope, settings)
        return await self._apply(scope, settings, pid)

    async def _archive(self, scope: MemoryScope, settings: KBSettings) -> ConsolidationRun:
        async with self._gate.write_l2(scope, Operation.CONSOLIDATION_ARCHIVE) as tx:
            listing = await self._store.enumerate(scope.l2)
            archivable, _ = archivable_records(listing.episodes, settings, utc_now())
            targets = [c.episode for c in archivable if c.episode.status is EpisodeStatus.SUPERSEDED]
            if not targets:
                return ConsolidationRun()
            await self._drafts.before_change(tx, scope, [e.episode_id for e in targets], removed=False)
            updated = [e.with_status(EpisodeStatus.ARCHIVED) for e in targets]
            await write_episodes(tx, self._store, settings, updated, lambda t, e: t.applied(
                Operation.CONSOLIDATION_ARCHIVE, "episode", e.episode_id, ARCHIVED_BY_CONSOLIDATION(),
                previous_status=EpisodeStatus.SUPERSEDED.value))
        log.info("[LongTermMemory] consolidation archived scope=%s user_key=%s records=%d", scope.chat_key,
                 scope.space_key, len(updated))
        return ConsolidationRun(archived=updated)

    async def _recheck(self, scope: MemoryScope, draft: Draft) -> tuple[list[Episode], ProposalRejected | None]:
        pid = draft.proposal_id
        current: list[Episode] = []
        for source in draft.sources:
            episode = await self._store.get(scope.l2, source.episode_id)
            if episode is None:
                return [], ProposalRejected(f"proposal {pid} is stale: source {source.episode_id} is no longer "
                                            "stored", reason="stale", proposal_id=pid)
            if not episode.is_active:
                return [], ProposalRejected(f"proposal {pid} is stale: source {source.episode_id} is "
                                            f"{episode.status.value}, not active", reason="inactive", proposal_id=pid)
            if source_hash(episode) != source.hash:
                return [], ProposalRejected(f"proposal {pid} is stale: source {source.episode_id} changed since the "
                                            "preview", reason="stale", proposal_id=pid)
            current.append(episode)
        validity = common_validity([(e.fact.valid_from, e.fact.valid_until) for e in current])
        if validity is None or validity != (draft.valid_from, draft.valid_until):
            return [], ProposalRejected(f"proposal {pid}: its sources no longer share the validity interval of the "
                                        "draft", reason="validity", proposal_id=pid)
        return current, None

    async def _apply(self, scope: MemoryScope, settings: KBSettings, pid: str) -> ConsolidationRun:
        rejection: ProposalRejected | None = None
        staged: Episode | None = None
        async with self._gate.write_l2(scope, Operation.CONSOLIDATION_RUN) as tx:
            draft = await self._drafts.find(scope, pid)
            sources, rejection = await self._recheck(scope, draft)
            if rejection is None:
                staged = summary_episode(scope, draft, sources, new_episode_id())
                refuse_secrets([("the summary", staged.content)])
                size = over_budget(staged)
                if size:
                    rejection = ProposalRejected(
                        f"proposal {pid}: the summary is over the recall record budget ({size} > {MAX_RECORD_CHARS} "
                        "characters); the sources are kept", reason="over_budget", proposal_id=pid)
            if rejection is not None or staged is None:
                reason = rejection.message if rejection else "refused"
                await self._close_draft(scope, draft, "rejected", reason, DRAFT_REJECTED(reason=reason))
            else:
                rejection = await self._publish(tx, scope, settings, draft, staged, sources)
        if rejection is not None:
            log.info("[LongTermMemory] consolidation run refused scope=%s proposal=%s: %s", scope.chat_key, pid,
                     rejection.details.get("reason"))
            raise rejection
        assert staged is not None
        summary = staged.with_status(EpisodeStatus.ACTIVE)
        note = await self._profile_updates(scope, settings, draft)
        log.info("[LongTermMemory] consolidation summary activated scope=%s proposal=%s summary=%s sources=%d",
                 scope.chat_key, pid, summary.episode_id, len(sources))
        return ConsolidationRun(summary=summary, proposal_id=pid, sources=sources, profile=note)

    async def _close_draft(self, scope: MemoryScope, draft: Draft, status: str, reason: str, said: Said,
                           summary_id: str = "") -> None:
        """The draft leaves the pending state in its own L1 space (inside the caller's L2 lock)."""
        async with self._gate.write_l1(scope, Operation.CONSOLIDATION_RUN) as l1:
            await self._drafts.close(l1, draft, status, reason, Operation.CONSOLIDATION_RUN, said,
                                     summary_id=summary_id)

    async def _publish(self, tx: WriteTx, scope: MemoryScope, settings: KBSettings, draft: Draft, staged: Episode,
                       sources: Sequence[Episode]) -> ProposalRejected | None:
        """Stage archived, read back, activate. The draft is spent first (one use), after the only step
        that cannot write (the embedding); a refused read-back removes the staged record again."""
        pid, space = draft.proposal_id, scope.l2
        vectors = await self._store.embed(settings.embedding_model_uuid, [staged.content])
        await self._close_draft(scope, draft, "used", "run", DRAFT_USED(), staged.episode_id)
        lineage = await self._drafts.lineage(space)
        lineage[staged.episode_id] = [s.episode_id for s in sources]
        await self._drafts.set_lineage(tx, space, lineage)  # before the record: never untracked
        await write_episodes(tx, self._store, settings, [staged], lambda t, e: t.applied(
            Operation.CONSOLIDATION_STAGE, "episode", e.episode_id,
            SUMMARY_STAGED(sources=len(sources)), proposal_id=pid,
            derived_from=list(e.derived_from)), vectors=vectors)
        problem = await self._verify(space, staged)
        if problem:
            await tx.index_write("vector delete", lambda index: self._store.delete(index, space, [staged.episode_id]))
            tx.reverted(Operation.CONSOLIDATION_UNSTAGE, "episode", staged.episode_id,
                        SUMMARY_UNSTAGED(problem=problem), proposal_id=pid)
            lineage.pop(staged.episode_id, None)
            await self._drafts.set_lineage(tx, space, lineage)
            return ProposalRejected(f"proposal {pid}: {problem}; the sources are kept", proposal_id=pid,
                                    reason="over_budget" if "budget" in problem else "not_verified")
        await write_episodes(tx, self._store, settings, [staged.with_status(EpisodeStatus.ACTIVE)],
                             lambda t, e: t.applied(Operation.CONSOLIDATION_RUN, "episode", e.episode_id,
                                                    SUMMARY_ACTIVATED(), proposal_id=pid),
                             vectors=vectors)
        return None

    async def _verify(self, space: L2Space, staged: Episode) -> str:
        """Read the staged record back: it must be there, as written, and within the record budget
        counting whatever the host keeps with it. Returns the problem, or "" when it is fine."""
        record = await self._store.get_record(space, staged.episode_id)
        if record is None:
            return "the staged summary could not be read back"
        if Episode.from_record(record).to_record() != staged.to_record():
            return "the store did not keep the staged summary as written"
        size = record_chars(record)
        if size > MAX_RECORD_CHARS:
            return (f"the stored summary is over the recall record budget ({size} > {MAX_RECORD_CHARS} characters "
                    "with the host's metadata)")
        return ""

    async def _profile_updates(self, scope: MemoryScope, settings: KBSettings, draft: Draft) -> Said | None:
        """K6: a draft's profile changes reach L1 only with consolidation_apply_profile_updates on."""
        if not draft.profile_updates:
            return None
        if not settings.consolidation_apply_profile_updates:
            return _NOTE["profile_off"]()
        change: dict[str, object] = {"mode": "merge"}
        for field_name in ("traits", "preferences"):
            values = [u.value for u in draft.profile_updates if u.field == field_name]
            if values:
                change[field_name] = values
        try:
            await self._profiles.update(scope, "session", change)
        except LTMError as exc:
            return _NOTE["profile_failed"](error=exc.message)
        return _NOTE["profile_updated"](count=len(draft.profile_updates))

    # ------------------------------------------------------------------ drafts (K7)
    async def drafts(self, scope: MemoryScope) -> list[Draft]:
        return [d for _, d in await self._drafts.pending(scope.l2, scope.chat_key)]

    async def discard(self, scope: MemoryScope, proposal_id: object) -> Draft:
        pid = clean_proposal_id(proposal_id)
        async with self._gate.kb_in_use(scope.kb_id), \
                self._gate.hold(Space.l2(scope.l2)), \
                self._gate.write_l1(scope, Operation.DRAFT_DISCARD) as tx:
            draft = await self._drafts.find(scope, pid)
            await self._drafts.close(tx, draft, "discarded", "discarded after review", Operation.DRAFT_DISCARD,
                                     DRAFT_DISCARDED())
        return draft
