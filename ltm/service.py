"""`MemoryService`: the one entry point every component calls.

A facade that only delegates. Callers pass a `MemoryScope` (built from the turn's identity, or
from keys an admin selected) and plain values; each method hands them to the module that does
the work (`parts.py` builds them):

- `kb_registry`         the memory knowledge base and scopes (S4, S8); `open` before every L2 call
- `kb_overrides`        the installation's overrides of the KB's creation settings
- `profiles.book`       L1 profiles (P, S7)
- `episodes.recall`     ranked recall with a named recipe (E3, E6-E8; `episodes/recipes.py`)
- `episodes.listing`    management listings (C)
- `episodes.lifecycle`  remember/supersede, archive, restore, forget, bulk delete (E4, E5, C)
- `episodes.transfer`   import, export, KB documents (C, E10)
- `consolidation`       archival of superseded records, reviewed summaries and their drafts (K)
- `candidates.review`   candidate extraction and its review queue (Q1-Q4)
- `diagnostics`         health, snapshots, double-recall note, known scopes (H, I4, I5, M1)
- `person`              one sender id across every known space: find, export, erase
- `conversation`        each chat's recent turns and rolling summary, and the context pack (V)
- `platform_events`     a recalled message's memory taken back, a member who left erased (X)
- `_gate`, `_audit`     fences and their clearing (F), the audit logs (A)

Every write in those modules goes through the one `WriteGate` (serialize, fence, guard unknown
outcomes, audit). Requirement IDs refer to docs/REQUIREMENTS.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import params
from ._audit import AuditPage
from ._fences import Fence
from ._gate import WriteGate
from .candidates.candidate import Candidate, CandidateStatus
from .candidates.queue import CandidatePage
from .candidates.review import CandidateRun
from .chat_labels import ChatLabel
from .consolidation import ConsolidationPreview, ConsolidationRun, Draft
from .diagnostics import HealthReport
from .episodes.lifecycle import DeleteCriteria, Remembered, RestoreResult
from .episodes.listing import EpisodePage
from .episodes.model import MAX_TAG_CHARS, Episode, EpisodeStatus
from .episodes.ranking import RecallRecipe, ScoredEpisode
from .episodes.recall import RecallFilters
from .episodes.recipes import AUTO_RECALL
from .episodes.transfer import ImportRecord, ImportResult
from .identity import Identity, Isolation, MemoryScope
from .kb_overrides import SettingChange
from .kb_settings import EffectiveSettings, KBSettings
from .official.bundle.importer import MigrationReport
from .official.keyed_upload import ingest_keyed
from .parts import MemoryParts, assemble
from .person import PersonErasure, PersonRecords
from .ports import HostPorts
from .profiles.book import ProfileRef, Profiles
from .profiles.model import Profile, ProfileLimits
from .profiles.transfer import ProfileImport
from .service_chat import ChatFacade
from .skipped import SkippedRecord
from .space_activity import SpaceActivity


class MemoryService(ChatFacade):
    def __init__(self, ports: HostPorts, limits: Callable[[], ProfileLimits] | None = None) -> None:
        # The assembled modules, for the test host and benchmarks (testhost/hooks.py); components call
        # the methods below.
        self.parts: MemoryParts = assemble(ports, limits or ProfileLimits)
        self._m = self.parts

    # ------------------------------------------------------------------ knowledge base and scopes
    async def register_kb(self, kb_id: str, raw_settings: Any) -> KBSettings:
        return await self._m.kbs.register(kb_id, raw_settings)

    async def unregister_kb(self, kb_id: str) -> bool:
        return await self._m.kbs.unregister(kb_id)

    async def memory_kb(self) -> tuple[str, KBSettings] | None:
        return await self._m.kbs.memory_kb()

    async def scope_for(self, identity: Identity, kb_id: str | None = None) -> MemoryScope:
        return await self._m.kbs.scope_for(identity, kb_id)

    async def selected_scope(self, chat_key: str, space_key: str) -> MemoryScope:
        """The scope of a chat an operator's surface selected by its two keys, on the memory KB. Only a pair
        this plugin derives for one chat selects it (else `ValidationError`), so no pair of keys reads one
        chat's records and writes them into another chat's space."""
        found = await self._m.kbs.memory_kb()
        kb_id, isolation = (found[0], found[1].isolation) if found else ("", Isolation.SESSION)
        return MemoryScope.selected(chat_key, space_key, kb_id, isolation)

    # ------------------------------------------------------------------ settings and their overrides
    async def settings(self) -> EffectiveSettings:
        """The memory KB's effective settings, each with its origin (creation or override)."""
        return await self._m.overrides.view()

    async def set_setting(self, name: Any, value: Any, *, actor: MemoryScope | None = None) -> SettingChange:
        """Override one setting for the installation (validated like creation, audited); applies from
        the next call on. `actor`: the chat that asked (None for an operator's page)."""
        return await self._m.overrides.set(name, value, actor=actor)

    async def reset_setting(self, name: Any, *, actor: MemoryScope | None = None) -> SettingChange:
        return await self._m.overrides.reset(name, actor=actor)

    # ------------------------------------------------------------------ L1 profiles
    async def profiles(self, scope: MemoryScope) -> Profiles:
        return await self._m.profiles.current(scope)

    async def speaker_profiles(self, scope: MemoryScope) -> dict[str, Profile]:
        return await self._m.profiles.speakers(scope)

    async def update_profile(self, scope: MemoryScope, target: Any, raw_change: dict[str, Any]) -> Profile:
        return await self._m.profiles.update(scope, target, raw_change)

    async def export_profiles(self, scope: MemoryScope) -> dict[str, Any]:
        return await self._m.profiles.export(scope)

    async def edit_profile(self, scope: MemoryScope, target: Any, sender_id: Any, raw_change: dict[str, Any]
                           ) -> Profile:
        """An operator's change to one profile of this session: the session's (`target` "session") or the
        speaker profile of `sender_id`; validated like `update_profile`, audited as `profile_edit`."""
        return await self._m.profiles.edit(scope, ProfileRef.parse(target, sender_id), raw_change)

    async def clear_profile(self, scope: MemoryScope, target: Any, sender_id: Any = None) -> bool:
        """Delete one profile of this session; False when none was stored (nothing written)."""
        return await self._m.profiles.clear(scope, ProfileRef.parse(target, sender_id))

    async def import_profiles(self, scope: MemoryScope, payload: Any) -> ProfileImport:
        """What `export_profiles` produced, validated whole first, written into this session."""
        return await self._m.profiles.import_profiles(scope, payload)

    # ------------------------------------------------------------------ L2 reads
    # Every L2 method opens its memory KB first, on a line of its own (`kbs.open`: NoKnowledgeBase
    # without one, records in the current layout), and keeps the settings it returns as `settings`
    # when the operation takes them.
    async def get_episode(self, scope: MemoryScope, episode_id: Any) -> Episode:
        await self._m.kbs.open(scope)
        return await self._m.lifecycle.episode(scope, episode_id)

    async def recall(self, scope: MemoryScope, query: str, *, recipe: RecallRecipe = AUTO_RECALL,
                     filters: RecallFilters | None = None) -> list[ScoredEpisode]:
        """Ranked recall with a named recipe (`episodes/recipes.py`), its `top_k` already chosen by the
        caller (`recipe.with_top_k`); automatic recall takes it from the KB's `auto_recall_top_k`."""
        settings = await self._m.kbs.open(scope)
        return await self._m.recaller.recall(scope, settings, query, recipe, filters=filters or RecallFilters())

    async def list_episodes(self, scope: MemoryScope, statuses: tuple[EpisodeStatus, ...] = (EpisodeStatus.ACTIVE,),
                            page: int = 1, page_size: int = 10) -> EpisodePage:
        """Newest first, paged, with a correct total (from the space's index: episodes/listing.py)."""
        await self._m.kbs.open(scope)
        return await self._m.listing.page(scope, statuses, page, page_size)

    async def all_episodes(self, scope: MemoryScope) -> list[Episode]:
        await self._m.kbs.open(scope)
        return await self._m.listing.every(scope)

    # ------------------------------------------------------------------ L2 writes
    async def remember(self, scope: MemoryScope, raw: dict[str, Any], *, source: str = "tool") -> Remembered:
        """One episode; when the speaker's active episodes already state the same fact, that one is
        returned and nothing is written (`Remembered.created`); near duplicates are named."""
        settings = await self._m.kbs.open(scope)
        return await self._m.lifecycle.remember(scope, settings, raw, source=source)

    async def archive(self, scope: MemoryScope, episode_id: Any) -> Episode:
        settings = await self._m.kbs.open(scope)
        return await self._m.lifecycle.archive(scope, settings, episode_id)

    async def restore(self, scope: MemoryScope, episode_id: Any) -> RestoreResult:
        settings = await self._m.kbs.open(scope)
        return await self._m.lifecycle.restore(scope, settings, episode_id)

    async def forget(self, scope: MemoryScope, episode_id: Any, *, own_only: bool = False) -> Episode:
        """`own_only`: in a shared chat (`scope.shared`), only the speaker's own episodes or those with no
        speaker; another speaker's is refused (`NotPermitted`)."""
        await self._m.kbs.open(scope)
        return await self._m.lifecycle.forget(scope, episode_id, own_only=own_only)

    async def bulk_delete(self, scope: MemoryScope, criteria: DeleteCriteria) -> list[Episode]:
        await self._m.kbs.open(scope)
        return await self._m.lifecycle.bulk_delete(scope, criteria)

    async def import_episodes(self, scope: MemoryScope, records: list[ImportRecord], *,
                              skipped: Sequence[SkippedRecord[int]] = (), keep_speakers: bool = True) -> ImportResult:
        """A validated batch (see `episodes.transfer.parse_batch`): new ids, this space. `skipped` are the
        records it refused, named in the result and the audit. `keep_senders=False` attributes every record
        to the importer. Records that repeat a stored fact (or an earlier record of the batch), or were
        imported before (their `original_id`), are not written and are named in the result."""
        settings = await self._m.kbs.open(scope)
        return await self._m.transfer.import_episodes(scope, settings, records, skipped=skipped,
                                                      keep_speakers=keep_speakers)

    async def ingest_document(self, scope: MemoryScope, records: list[ImportRecord], document_id: str,
                              skipped: Sequence[SkippedRecord[int]] = ()) -> ImportResult:
        settings = await self._m.kbs.open(scope)
        return await self._m.transfer.ingest_document(scope, settings, records, document_id, skipped)

    async def ingest_keyed_document(self, kb_id: str, payload: Any, document_id: str,
                                    bots: Sequence[str] | None = None) -> list[ImportResult]:
        """A document in the official plugin's upload form: each record names its memory space by
        `user_key`, kept only for one of `bots` (see `official/keyed_upload.py`)."""
        settings = await self._m.kbs.open_kb(kb_id)
        return await ingest_keyed(self._m.transfer, kb_id, settings, payload, document_id, bots)

    async def delete_document(self, kb_id: str, document_id: str) -> int:
        await self._m.kbs.open_kb(kb_id)
        return await self._m.transfer.delete_document(kb_id, document_id)

    async def export_episodes(self, scope: MemoryScope, statuses: tuple[EpisodeStatus, ...]) -> dict[str, Any]:
        await self._m.kbs.open(scope)
        return await self._m.transfer.export(scope, statuses)

    # ------------------------------------------------------------------ migration from the official plugin
    async def host_bots(self) -> list[str] | None:
        """The bot uuids this LangBot has; None when the host cannot say."""
        return await self._m.bundles.host_bots()

    async def migrate_bundle(self, data: str | bytes, *, dry_run: bool,
                             include_forgotten: bool = False) -> MigrationReport:
        """A migration bundle (`ltm/official/bundle/`) into every chat it names; `dry_run` writes nothing and
        says per chat what would be written, what is here already and what would be skipped and why.
        The host's bot list decides which chats (and whether the bundle) belong to this installation.
        `include_forgotten`: also the records the official plugin was asked to forget or delete."""
        return await self._m.bundles.run(data, dry_run=dry_run, include_forgotten=include_forgotten)

    # ------------------------------------------------------------------ consolidation (K)
    async def consolidation_preview(self, scope: MemoryScope, *, tag: Any = None,
                                    drafting: bool = True) -> ConsolidationPreview:
        """K1/K3: archival candidates with risk notes; with a consolidation model, also one review draft
        (stored in the scope under a one-use proposal id). Never changes an episode. `drafting=False` is a
        pure read: no model call and no stored draft."""
        chosen_tag = params.text(tag, "tag", max_chars=MAX_TAG_CHARS, required=False).lower()
        settings = await self._m.kbs.open(scope)
        return await self._m.consolidator.preview(scope, settings, tag=chosen_tag, drafting=drafting)

    async def consolidation_run(self, scope: MemoryScope, proposal_id: Any = None) -> ConsolidationRun:
        """K2 without a proposal id (archive old superseded records); K4/K6 with one (apply a reviewed
        draft). Both need consolidation_enabled."""
        settings = await self._m.kbs.open(scope)
        return await self._m.consolidator.run(scope, settings, proposal_id)

    async def consolidation_drafts(self, scope: MemoryScope) -> list[Draft]:
        """The scope's pending review drafts, oldest first (K7)."""
        await self._m.kbs.open(scope)
        return await self._m.consolidator.drafts(scope)

    async def discard_draft(self, scope: MemoryScope, proposal_id: Any) -> Draft:
        await self._m.kbs.open(scope)
        return await self._m.consolidator.discard(scope, proposal_id)

    # ------------------------------------------------------------------ audit (A)
    async def audit_page(self, scope: MemoryScope, page: int, page_size: int = 10) -> AuditPage:
        """Newest first: this chat's own changes and those of any space it shares (A2)."""
        result = await self._m.audit.merged_page(WriteGate.logs_of(scope), page, page_size)
        params.check_page(page, result.pages)
        return result

    async def audit_export(self, scope: MemoryScope) -> list[dict[str, Any]]:
        return await self._m.audit.merged_export(WriteGate.logs_of(scope))

    async def audit_count(self, scope: MemoryScope) -> int:
        return sum([await self._m.audit.count(log_id) for log_id in WriteGate.logs_of(scope)])

    # ------------------------------------------------------------------ fences (F)
    async def fences_of(self, scope: MemoryScope) -> dict[str, Fence | None]:
        l1, *l2 = await self._m.diagnostics.fences_of(scope)
        return {"l1": l1, "l2": l2[0] if l2 else None}

    async def list_fences(self) -> list[Fence]:
        return await self._m.fences.all()

    async def clear_fences(self, scope: MemoryScope | None, *, installation: bool = False) -> list[str]:
        """F4: the scope's L1 and L2 fences; the installation-wide fence only when asked for by name."""
        return await self._m.gate.clear_fences(scope, installation=installation)

    # ------------------------------------------------------------------ diagnostics (H, I4, I5, M1)
    async def health(self, scope: MemoryScope | None, pipeline_kbs: list[str] | None = None) -> HealthReport:
        found = await self.memory_kb()
        described = await self._m.kbs.described(found[0]) if found else None
        return await self._m.diagnostics.health(found, scope, pipeline_kbs, described)

    async def save_snapshot(self, scope: MemoryScope, snapshot: dict[str, Any]) -> None:
        await self._m.diagnostics.save_snapshot(scope, snapshot)

    def save_snapshot_later(self, scope: MemoryScope, snapshot: dict[str, Any]) -> None:
        """The injection's snapshot, written after the turn (the reply does not wait for it)."""
        self._m.diagnostics.save_snapshot_later(scope, snapshot)

    async def snapshot(self, scope: MemoryScope) -> dict[str, Any] | None:
        return await self._m.diagnostics.snapshot(scope)

    def note_injection(self, scope: MemoryScope, text: str) -> None:
        self._m.diagnostics.note_injection(scope, text)

    def consume_injection(self, scope: MemoryScope, text: str) -> bool:
        return self._m.diagnostics.consume_injection(scope, text)

    async def known_scopes(self) -> list[str]:
        return await self._m.diagnostics.known_scopes()

    async def note_names(self, scope: MemoryScope, chat_name: Any) -> None:
        """The chat's and the speaker's names this turn came with, kept as labels (never raises)."""
        await self._m.labels.note(scope, chat_name)

    async def chat_label(self, scope: MemoryScope) -> ChatLabel:
        """The names this chat and its latest speaker went by on their latest turn."""
        return await self._m.labels.get(scope.chat_key)

    async def last_opened_space(self) -> tuple[str, str] | None:
        """The (chat key, space key) an operator last opened in the Memory Console, if any."""
        return await self._m.opened.get()

    async def open_space(self, scope: MemoryScope) -> None:
        """Note the space an operator opened (a selected scope), so a reload of the console opens it again."""
        await self._m.opened.set(scope)

    async def space_activity(self) -> list[SpaceActivity]:
        """Every noted chat with its last change, who made it, its active episodes and pending candidates,
        the most recently active first (read from what writes already keep: no per-turn cost)."""
        return await self._m.activity.read()

    # ------------------------------------------------------------------ one person across chats
    async def find_person(self, sender_id: Any, *, chat: MemoryScope | None = None) -> PersonRecords:
        """Everything kept about one sender id (its episodes in every status, the summaries built from
        them, its speaker profiles, the candidates of its messages, snapshots that show it), in every
        space the installation noted, or only in `chat`'s own spaces."""
        return await self._m.people.find_speaker(sender_id, chat)

    async def erase_person(self, sender_id: Any, *, dry_run: bool, chat: MemoryScope | None = None,
                           actor: Identity | None = None) -> PersonErasure:
        """Erase what `find_person` finds, space by space, each audited in its own log; a fenced space is
        reported and not written. `dry_run` writes nothing and says what would go."""
        return await self._m.people.erase_speaker(sender_id, dry_run=dry_run, chat=chat, actor=actor)

    # ------------------------------------------------------------------ candidates (Q1-Q4)
    async def propose_candidates(self, scope: MemoryScope, user_text: str) -> CandidateRun:
        """The candidates one user message proposes, in the scope of that turn. `user_text` is the
        user's own message text: the assistant's reply must never be passed."""
        settings = await self._m.kbs.open(scope)
        return await self._m.candidates.propose(scope, settings, user_text)

    async def candidate_page(self, scope: MemoryScope, *, all_statuses: bool = False, page: int = 1,
                             page_size: int = 10, statuses: Sequence[CandidateStatus] = ()) -> CandidatePage:
        """Newest first: pending candidates, every status, or only `statuses` when given."""
        return await self._m.candidates.page(scope, all_statuses=all_statuses, page=page, page_size=page_size,
                                             statuses=statuses)

    async def get_candidate(self, scope: MemoryScope, candidate_id: Any) -> Candidate:
        return await self._m.candidates.get(scope, candidate_id)

    async def accept_candidate(self, scope: MemoryScope, candidate_id: Any, *, reviewer: str = "") -> Candidate:
        """Apply a pending candidate through the ordinary profile or episode write and mark it accepted.
        `reviewer` names a caller without a chat identity; otherwise the scope's sender decided."""
        return await self._m.candidates.accept(scope, candidate_id, reviewer)

    async def reject_candidate(self, scope: MemoryScope, candidate_id: Any, *, reviewer: str = "") -> Candidate:
        """Writes no memory; the candidate stays listed (all statuses) as rejected."""
        return await self._m.candidates.reject(scope, candidate_id, reviewer)
