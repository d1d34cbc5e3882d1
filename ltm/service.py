"""`MemoryService`: the one entry point every component calls.

A small facade. Callers pass a `MemoryScope` (built from the turn's identity, or
from keys an admin selected) and plain values; the service picks the operation
module that does the work:

- `profiles.book`       L1 profiles (P, S7)
- `episodes.recall`     ranked recall (E3, E6-E8)
- `episodes.lifecycle`  remember/supersede, archive, restore, forget, bulk delete (E4, E5, C)
- `episodes.transfer`   import, export, KB documents (C, E10)
- `consolidation`       archival of superseded records, reviewed summaries and their drafts (K)
- `kb_registry`         the memory knowledge base and scopes (S4, S8)
- `diagnostics`         health, snapshots, double-recall note, known scopes (H, I4, I5, M1)
- `candidates`          candidate extraction and its review queue (Q1-Q4)

Every write in those modules goes through the one `WriteGate` (serialize, fence,
guard unknown outcomes, audit). Requirement IDs refer to docs/REQUIREMENTS.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from . import params
from ._audit import AuditLog, AuditPage
from ._fences import Fence, FenceRegistry
from ._storage import JsonStore
from .candidates.extraction import extract
from .candidates.kinds import SPEAKER, CandidateKind
from .candidates.queue import CandidatePage, CandidateQueue
from .candidates.records import ALL_STATUSES, Candidate, CandidateOrigin, CandidateStatus, Speaker
from .candidates.review import EPISODE_SOURCE, CandidateRun, episode_fields, profile_change, speaker_scope
from .consolidation import ConsolidationPreview, ConsolidationRun, Consolidator, Draft, DraftBook
from .diagnostics import Diagnostics, HealthReport
from .episodes.lifecycle import DeleteCriteria, EpisodeLifecycle, RestoreResult
from .episodes.model import MAX_TAG_CHARS, Episode, EpisodeDraft, EpisodeStatus
from .episodes.ranking import ScoredEpisode, SearchRecipe
from .episodes.recall import Recaller, RecallFilters
from .episodes.recipes import AUTO_RECALL, RecallRecipe
from .episodes.store import EpisodeStore
from .episodes.transfer import EpisodeTransfer, ImportRecord
from .errors import FencedError, HostError, LTMError, NoKnowledgeBase, NotFound, PartialWrite, ValidationError
from .gate import INSTALLATION_LOG, WriteGate
from .identity import Identity, MemoryScope
from .kb_registry import KnowledgeBaseRegistry
from .kb_settings import KBSettings
from .layout_migration import LayoutMigrations, MigrationReport
from .ports import HostPorts
from .profiles.book import ProfileBook, Profiles
from .profiles.model import Profile, ProfileLimits
from .spaces import Space
from .storage_migration import migrate_storage

MAX_ID_CHARS = 100
log = logging.getLogger("LongTermMemory")


@dataclass(frozen=True)
class EpisodePage:
    episodes: list[Episode]
    page: int
    pages: int
    total: int
    truncated: bool = False


class MemoryService:
    def __init__(self, ports: HostPorts, limits: Callable[[], ProfileLimits] | None = None) -> None:
        store = JsonStore(ports.store)
        raw = store.raw()
        store.before_first_use(lambda: self._migrate(raw))
        self._fences = FenceRegistry(store)
        self._audit = AuditLog(store)
        self._gate = WriteGate(self._fences, self._audit, self._note_scope)
        self._episodes = EpisodeStore(ports.index, ports.embedder)
        # Limits are read per call: plugin config can change (and is empty during initialize on some hosts).
        self._profiles = ProfileBook(self._gate, store, limits or ProfileLimits)
        self._kbs = KnowledgeBaseRegistry(self._gate, store, self._fences, self._episodes, ports.directory)
        self._recaller = Recaller(self._episodes)
        # Summaries and review drafts derived from episodes are removed before their sources change (K5).
        self._drafts = DraftBook(store, self._episodes)
        self._lifecycle = EpisodeLifecycle(self._gate, self._episodes, self._drafts)
        self._transfer = EpisodeTransfer(self._gate, self._episodes, store, self._drafts)
        self._consolidator = Consolidator(self._gate, self._episodes, ports.index, ports.llm, self._drafts,
                                          self._profiles)
        self._diagnostics = Diagnostics(store, self._fences, ports.index, ports.embedder, ports.directory)
        self._layout = LayoutMigrations(self._gate, store, ports.index, ports.embedder,
                                        on_rewrite=self._episodes.records_rewritten)
        # ---- candidate extraction (Q)
        self._llm = ports.llm
        self._candidates = CandidateQueue(self._gate, store)

    async def _note_scope(self, scope: MemoryScope) -> None:
        await self._diagnostics.note_scope(scope)

    @staticmethod
    async def _migrate(raw: JsonStore) -> None:
        await migrate_storage(raw)

    # ------------------------------------------------------------------ knowledge base and scopes
    async def register_kb(self, kb_id: str, raw_settings: Any) -> KBSettings:
        previous = await self._kbs.configuration()
        settings = await self._kbs.register(kb_id, raw_settings)
        try:
            await self._layout.prepare(kb_id, settings)
        except BaseException as exc:
            reason = "the vector store could not be prepared" if isinstance(exc, LTMError) else "creation was cancelled"
            await asyncio.shield(self._kbs.withdraw(kb_id, previous, reason))
            raise
        return settings

    async def migrate_layout(self, kb_id: str) -> MigrationReport:
        """Rewrite records of an older record layout now (also done once at the KB's first use)."""
        return await self._layout.migrate(kb_id, await self._kbs.settings(kb_id))

    async def unregister_kb(self, kb_id: str) -> bool:
        try:
            return await self._kbs.unregister(kb_id)
        finally:
            self._episodes.records_rewritten(kb_id)  # no lexical index of a removed KB survives

    async def memory_kb(self) -> tuple[str, KBSettings] | None:
        return await self._kbs.memory_kb()

    async def scope_for(self, identity: Identity, kb_id: str | None = None) -> MemoryScope:
        return await self._kbs.scope_for(identity, kb_id)

    async def _l2(self, scope: MemoryScope) -> KBSettings:
        if not scope.kb_id:
            raise NoKnowledgeBase()
        settings = await self._kbs.settings(scope.kb_id)
        await self._layout.ensure(scope.kb_id, settings)
        return settings

    # ------------------------------------------------------------------ L1 profiles
    async def profiles(self, scope: MemoryScope) -> Profiles:
        return await self._profiles.current(scope)

    async def speaker_profiles(self, scope: MemoryScope) -> dict[str, Profile]:
        return await self._profiles.speakers(scope)

    async def update_profile(self, scope: MemoryScope, target: Any, raw_change: dict[str, Any]) -> Profile:
        return await self._profiles.update(scope, target, raw_change)

    async def export_profiles(self, scope: MemoryScope) -> dict[str, Any]:
        return await self._profiles.export(scope)

    # ------------------------------------------------------------------ L2 reads
    async def get_episode(self, scope: MemoryScope, episode_id: Any) -> Episode:
        await self._l2(scope)
        eid = params.text(episode_id, "episode_id", max_chars=MAX_ID_CHARS)
        episode = await self._episodes.get(scope.kb_id, scope.user_key, eid)
        if episode is None:
            raise NotFound(f"episode {eid} not found in this scope", episode_id=eid)
        return episode

    async def recall(self, scope: MemoryScope, query: str, *, recipe: RecallRecipe = AUTO_RECALL,
                     top_k: int | None = None, filters: RecallFilters | None = None,
                     search: SearchRecipe | None = None, now: datetime | None = None) -> list[ScoredEpisode]:
        """Ranked recall. `top_k` was validated by the caller's recipe; None means the recipe's default
        (for automatic recall, the KB's `auto_recall_top_k`). `search` and `now` are for benchmarks
        only (a tuned ranking recipe; the moment an old conversation is asked at); surfaces never pass them."""
        settings = await self._l2(scope)
        if top_k is None:
            top_k = settings.auto_recall_top_k if recipe is AUTO_RECALL else recipe.default_top_k
        return await self._recaller.recall(scope, settings, query, top_k=top_k, filters=filters or RecallFilters(),
                                           recipe=search, now=now)

    async def list_episodes(self, scope: MemoryScope, statuses: tuple[EpisodeStatus, ...] = (EpisodeStatus.ACTIVE,),
                            page: int = 1, page_size: int = 10) -> EpisodePage:
        """Newest first, paged, with a correct total (management path: enumerates the space)."""
        await self._l2(scope)
        listing = await self._episodes.enumerate(scope.kb_id, scope.user_key)
        chosen = sorted((e for e in listing.episodes if e.status in statuses), key=lambda e: e.timestamp, reverse=True)
        pages = max(1, -(-len(chosen) // page_size))
        if page > pages:
            raise ValidationError(f"page {page} is past the end (last page is {pages})")
        start = (page - 1) * page_size
        return EpisodePage(chosen[start : start + page_size], page, pages, len(chosen), listing.truncated)

    async def all_episodes(self, scope: MemoryScope) -> list[Episode]:
        await self._l2(scope)
        listing = await self._episodes.enumerate(scope.kb_id, scope.user_key)
        return sorted(listing.episodes, key=lambda e: e.timestamp)

    # ------------------------------------------------------------------ L2 writes
    async def remember(self, scope: MemoryScope, raw: dict[str, Any], *, source: str = "tool") -> Episode:
        settings = await self._l2(scope)
        draft = EpisodeDraft.parse(raw, source=source)
        supersedes = params.word_list(raw.get("supersedes"), "supersedes", max_items=20, item_chars=MAX_ID_CHARS)
        return await self._lifecycle.remember(scope, settings, draft, supersedes)

    async def archive(self, scope: MemoryScope, episode_id: Any) -> Episode:
        settings = await self._l2(scope)
        eid = params.text(episode_id, "episode_id", max_chars=MAX_ID_CHARS)
        result = await self._lifecycle.set_status(scope, settings, eid, (EpisodeStatus.ACTIVE,),
                                                  EpisodeStatus.ARCHIVED, "archive")
        return result.episode

    async def restore(self, scope: MemoryScope, episode_id: Any) -> RestoreResult:
        settings = await self._l2(scope)
        eid = params.text(episode_id, "episode_id", max_chars=MAX_ID_CHARS)
        return await self._lifecycle.set_status(scope, settings, eid,
                                                (EpisodeStatus.ARCHIVED, EpisodeStatus.SUPERSEDED),
                                                EpisodeStatus.ACTIVE, "restore")

    async def forget(self, scope: MemoryScope, episode_id: Any) -> Episode:
        await self._l2(scope)
        return await self._lifecycle.forget(scope, params.text(episode_id, "episode_id", max_chars=MAX_ID_CHARS))

    async def bulk_delete(self, scope: MemoryScope, criteria: DeleteCriteria) -> list[Episode]:
        await self._l2(scope)
        return await self._lifecycle.bulk_delete(scope, criteria)

    async def import_episodes(self, scope: MemoryScope, records: list[ImportRecord], *,
                              keep_senders: bool = True) -> list[Episode]:
        """A batch validated as a whole (see `episodes.transfer.parse_records`): new ids, this space.
        `keep_senders=False` attributes every record to the importer."""
        settings = await self._l2(scope)
        return await self._transfer.import_episodes(scope, settings, records, keep_senders=keep_senders)

    async def ingest_document(self, scope: MemoryScope, records: list[ImportRecord], document_id: str
                              ) -> list[Episode]:
        settings = await self._l2(scope)
        return await self._transfer.ingest_document(scope, settings, records, document_id)

    async def delete_document(self, kb_id: str, document_id: str) -> int:
        return await self._transfer.delete_document(kb_id, document_id)

    async def export_episodes(self, scope: MemoryScope, statuses: tuple[EpisodeStatus, ...]) -> dict[str, Any]:
        await self._l2(scope)
        return await self._transfer.export(scope, statuses)

    # ------------------------------------------------------------------ consolidation (K)
    async def consolidation_preview(self, scope: MemoryScope, *, tag: Any = None) -> ConsolidationPreview:
        """K1/K3: archival candidates with risk notes; with a consolidation model, also one review draft
        (stored in the scope under a one-use proposal id). Never changes an episode."""
        settings = await self._l2(scope)
        chosen_tag = params.text(tag, "tag", max_chars=MAX_TAG_CHARS, required=False).lower()
        return await self._consolidator.preview(scope, settings, tag=chosen_tag)

    async def consolidation_run(self, scope: MemoryScope, proposal_id: Any = None) -> ConsolidationRun:
        """K2 without a proposal id (archive old superseded records); K4/K6 with one (apply a reviewed
        draft). Both need consolidation_enabled."""
        settings = await self._l2(scope)
        return await self._consolidator.run(scope, settings, proposal_id)

    async def consolidation_drafts(self, scope: MemoryScope) -> list[Draft]:
        """The scope's pending review drafts, oldest first (K7)."""
        await self._l2(scope)
        return await self._consolidator.drafts(scope)

    async def discard_draft(self, scope: MemoryScope, proposal_id: Any) -> Draft:
        await self._l2(scope)
        return await self._consolidator.discard(scope, proposal_id)

    # ------------------------------------------------------------------ audit (A)
    async def audit_page(self, scope: MemoryScope, page: int, page_size: int = 10) -> AuditPage:
        """Newest first: this chat's own changes and those of any space it shares (A2)."""
        result = await self._audit.merged_page(WriteGate.logs_of(scope), page, page_size)
        if page > result.pages:
            raise ValidationError(f"page {page} is past the end (last page is {result.pages})")
        return result

    async def audit_export(self, scope: MemoryScope) -> list[dict[str, Any]]:
        return await self._audit.merged_export(WriteGate.logs_of(scope))

    async def audit_count(self, scope: MemoryScope) -> int:
        return sum([await self._audit.count(log_id) for log_id in WriteGate.logs_of(scope)])

    async def installation_audit(self, page: int = 1, page_size: int = 10) -> AuditPage:
        return await self._audit.page(INSTALLATION_LOG, page, page_size)

    # ------------------------------------------------------------------ fences (F)
    async def fences_of(self, scope: MemoryScope) -> dict[str, Fence | None]:
        l1, *l2 = await self._diagnostics.fences_of(scope)
        return {"l1": l1, "l2": l2[0] if l2 else None}

    async def index_space(self, scope: MemoryScope) -> None:
        """Build the scope's word index now and wait for it (benchmarks and tests; recall never waits
        for a big space, see episodes/lexical.py)."""
        await self._episodes.lexical.space(scope.kb_id, scope.user_key)
        await self._episodes.lexical.settled()

    async def list_fences(self) -> list[Fence]:
        return await self._fences.all()

    async def clear_fences(self, scope: MemoryScope | None, *, installation: bool = False) -> list[str]:
        """F4: the scope's L1 and L2 fences; the installation-wide fence only when asked for by name.
        Returns the spaces that were fenced and are now clear; each clear is audited."""
        targets: list[Space] = []
        if scope is not None:
            targets.append(Space.l1(scope.scope_key))
            if scope.kb_id:
                targets.append(Space.l2(scope.kb_id, scope.user_key))
        if installation:
            targets.append(Space.installation())
        cleared: list[str] = []
        for space in targets:
            async with self._gate.write(scope, space, "fence_clear", enforce_fence=False) as tx:
                if await self._fences.get(space) is not None:
                    await tx.call("storage delete", partial(self._fences.clear, space))
                    tx.applied("fence_clear", "fence", space.key, f"cleared write fence {space.key}")
                    cleared.append(space.key)
        return cleared

    # ------------------------------------------------------------------ diagnostics (H, I4, I5, M1)
    async def health(self, scope: MemoryScope | None, pipeline_kbs: list[str] | None = None) -> HealthReport:
        return await self._diagnostics.health(await self.memory_kb(), scope, pipeline_kbs)

    async def save_snapshot(self, scope: MemoryScope, snapshot: dict[str, Any]) -> None:
        await self._diagnostics.save_snapshot(scope, snapshot)

    async def snapshot(self, scope: MemoryScope) -> dict[str, Any] | None:
        return await self._diagnostics.snapshot(scope)

    def note_injection(self, scope: MemoryScope, text: str) -> None:
        self._diagnostics.note_injection(scope, text)

    def consume_injection(self, scope: MemoryScope, text: str) -> bool:
        return self._diagnostics.consume_injection(scope, text)

    async def known_scopes(self) -> list[str]:
        return await self._diagnostics.known_scopes()

    # ------------------------------------------------------------------ candidate extraction (Q1-Q4)
    async def propose_candidates(self, scope: MemoryScope, user_text: str) -> CandidateRun:
        """The candidates one user message proposes, queued as pending in the scope of that turn; with
        `candidate_auto_apply`, rule candidates are accepted at once (model candidates never are).
        `user_text` is the user's own message text: the assistant's reply must never be passed."""
        settings = await self._l2(scope)
        origin = CandidateOrigin.MODEL if settings.candidate_model_uuid else CandidateOrigin.RULES
        if not settings.candidate_extraction_enabled:
            return CandidateRun(origin, skipped="candidate extraction is off for this memory knowledge base")
        identity, query_id = scope.identity, scope.query_id
        if identity is None or query_id is None:
            raise ValidationError("candidates come from a live turn: its speaker and query id are required")
        result = await extract(user_text, max_candidates=settings.candidate_max_per_turn,
                               model_uuid=settings.candidate_model_uuid, llm=self._llm)
        if result.rejected:
            log.warning("[LongTermMemory] candidate model answer rejected query=%s scope=%s: %s", query_id,
                        scope.scope_key, result.rejected)
        usable = [p for p in result.proposals if identity.sender_id or p.target != SPEAKER]
        speaker = Speaker.of(identity)
        queued = await self._candidates.propose(scope, [
            Candidate.proposed(p, origin=result.origin, speaker=speaker, query_id=query_id, candidate_id="")
            for p in usable])
        applied: list[Candidate] = []
        if settings.candidate_auto_apply:
            for candidate in queued.added:
                if candidate.origin is not CandidateOrigin.RULES or candidate.kind is CandidateKind.IGNORE:
                    continue
                try:
                    applied.append(await self._accept(scope, candidate.candidate_id, "candidate_auto_apply", "auto"))
                except LTMError as exc:
                    log.warning("[LongTermMemory] candidate %s not auto-applied scope=%s: %s",
                                candidate.candidate_id, scope.scope_key, exc.code)
        return CandidateRun(result.origin, queued.added, applied, queued.refused, queued.duplicates,
                            len(result.proposals) - len(usable), result.skipped, result.rejected)

    async def candidate_page(self, scope: MemoryScope, *, all_statuses: bool = False, page: int = 1,
                             page_size: int = 10) -> CandidatePage:
        """Newest first: pending candidates, or every status."""
        statuses = ALL_STATUSES if all_statuses else (CandidateStatus.PENDING,)
        return await self._candidates.page(scope, statuses, page, page_size)

    async def get_candidate(self, scope: MemoryScope, candidate_id: Any) -> Candidate:
        return await self._candidates.get(scope, params.text(candidate_id, "candidate_id", max_chars=MAX_ID_CHARS))

    async def accept_candidate(self, scope: MemoryScope, candidate_id: Any) -> Candidate:
        """Apply a pending candidate through the ordinary profile or episode write (audited there) and
        mark it accepted (audited as `candidate_accept`)."""
        cid = params.text(candidate_id, "candidate_id", max_chars=MAX_ID_CHARS)
        return await self._accept(scope, cid, "candidate_accept", self._reviewer(scope))

    async def reject_candidate(self, scope: MemoryScope, candidate_id: Any) -> Candidate:
        """Writes no memory; the candidate stays listed (`--all-statuses`) as rejected."""
        cid = params.text(candidate_id, "candidate_id", max_chars=MAX_ID_CHARS)
        async with self._candidates.deciding(scope):
            return await self._candidates.decide(scope, cid, CandidateStatus.REJECTED, "candidate_reject",
                                                 by=self._reviewer(scope))

    @staticmethod
    def _reviewer(scope: MemoryScope) -> str:
        if scope.identity is None:
            return "console"
        return scope.sender_id or "unknown"

    async def _accept(self, scope: MemoryScope, candidate_id: str, operation: str, by: str) -> Candidate:
        async with self._candidates.deciding(scope):
            candidate = await self._candidates.get(scope, candidate_id)
            self._candidates.check_decidable(candidate, accepting=True)
            as_speaker = speaker_scope(scope, candidate)
            # The queue must take the mark before memory changes, or the candidate would stay pending.
            await self._fences.check(Space.l1(scope.scope_key))
            if candidate.kind is CandidateKind.EPISODE:
                episode = await self.remember(as_speaker, episode_fields(candidate), source=EPISODE_SOURCE)
                applied_type, applied_id = "episode", episode.episode_id
            else:
                target, change = profile_change(candidate)
                await self.update_profile(as_speaker, target, change)
                applied_type = f"{target}_profile"
                applied_id = candidate.speaker.sender_id if target == SPEAKER else "session"
            try:
                return await self._candidates.decide(scope, candidate_id, CandidateStatus.ACCEPTED, operation,
                                                     by=by, applied_type=applied_type, applied_id=applied_id)
            except (HostError, FencedError) as exc:
                raise PartialWrite(
                    f"candidate {candidate_id} was applied ({applied_type} {applied_id}) but could not be marked "
                    f"accepted ({exc.message}); it still shows as pending, so reject it instead of accepting it "
                    "again", applied=[f"{applied_type}:{applied_id}"], cause=exc.code) from exc
