"""`MemoryService`: the one entry point every component calls.

A small facade. Callers pass a `MemoryScope` (built from the turn's identity, or
from keys an admin selected) and plain values; the service picks the operation
module that does the work:

- `profiles.book`       L1 profiles (P, S7)
- `episodes.recall`     ranked recall (E3, E6-E8)
- `episodes.lifecycle`  remember/supersede, archive, restore, forget, bulk delete (E4, E5, C)
- `episodes.transfer`   import, export, KB documents (C, E10)
- `kb_registry`         the memory knowledge base and scopes (S4, S8)
- `diagnostics`         health, snapshots, double-recall note, known scopes (H, I4, I5, M1)

Every write in those modules goes through the one `WriteGate` (serialize, fence,
guard unknown outcomes, audit). Requirement IDs refer to docs/REQUIREMENTS.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from . import params
from ._audit import AuditLog, AuditPage
from ._fences import Fence, FenceRegistry
from ._storage import JsonStore
from .diagnostics import Diagnostics, HealthReport
from .episodes.lifecycle import DeleteCriteria, EpisodeLifecycle, RestoreResult
from .episodes.model import Episode, EpisodeDraft, EpisodeStatus
from .episodes.ranking import ScoredEpisode
from .episodes.recall import Recaller, RecallFilters
from .episodes.recipes import AUTO_RECALL, RecallRecipe
from .episodes.store import EpisodeStore
from .episodes.transfer import EpisodeTransfer, ImportRecord
from .errors import NoKnowledgeBase, NotFound, ValidationError
from .gate import INSTALLATION_LOG, WriteGate
from .identity import Identity, MemoryScope
from .kb_registry import KnowledgeBaseRegistry
from .kb_settings import KBSettings
from .layout_migration import LayoutMigrations, MigrationReport
from .ports import HostPorts
from .profiles.book import ProfileBook, Profiles
from .profiles.model import Profile, ProfileLimits
from .spaces import Space

MAX_ID_CHARS = 100


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
        self._fences = FenceRegistry(store)
        self._audit = AuditLog(store)
        self._gate = WriteGate(self._fences, self._audit)
        self._episodes = EpisodeStore(ports.index, ports.embedder)
        # Limits are read per call: plugin config can change (and is empty during initialize on some hosts).
        self._profiles = ProfileBook(self._gate, store, limits or ProfileLimits)
        self._kbs = KnowledgeBaseRegistry(self._gate, store, self._fences, self._episodes)
        self._recaller = Recaller(self._episodes)
        self._lifecycle = EpisodeLifecycle(self._gate, self._episodes)
        self._transfer = EpisodeTransfer(self._gate, self._episodes, store)
        self._diagnostics = Diagnostics(store, self._fences, ports.index, ports.embedder, ports.directory)
        self._layout = LayoutMigrations(self._gate, store, ports.index, ports.embedder)

    # ------------------------------------------------------------------ knowledge base and scopes
    async def register_kb(self, kb_id: str, raw_settings: Any) -> KBSettings:
        settings = await self._kbs.register(kb_id, raw_settings)
        await self._layout.prepare(kb_id, settings)
        return settings

    async def migrate_layout(self, kb_id: str) -> MigrationReport:
        """Rewrite records of an older record layout now (also done once at the KB's first use)."""
        return await self._layout.migrate(kb_id, await self._kbs.settings(kb_id))

    async def unregister_kb(self, kb_id: str) -> bool:
        return await self._kbs.unregister(kb_id)

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
                     top_k: int | None = None, filters: RecallFilters | None = None) -> list[ScoredEpisode]:
        """Ranked recall. `top_k` was validated by the caller's recipe; None means the recipe's default
        (for automatic recall, the KB's `auto_recall_top_k`)."""
        settings = await self._l2(scope)
        if top_k is None:
            top_k = settings.auto_recall_top_k if recipe is AUTO_RECALL else recipe.default_top_k
        return await self._recaller.recall(scope, settings, query, top_k=top_k, filters=filters or RecallFilters())

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

    # ------------------------------------------------------------------ audit (A)
    async def audit_page(self, scope: MemoryScope, page: int, page_size: int = 10) -> AuditPage:
        result = await self._audit.page(WriteGate.log_id(scope), page, page_size)
        if page > result.pages:
            raise ValidationError(f"page {page} is past the end (last page is {result.pages})")
        return result

    async def audit_export(self, scope: MemoryScope) -> list[dict[str, Any]]:
        return await self._audit.export(WriteGate.log_id(scope))

    async def audit_count(self, scope: MemoryScope) -> int:
        return await self._audit.count(WriteGate.log_id(scope))

    async def installation_audit(self) -> list[dict[str, Any]]:
        return await self._audit.export(INSTALLATION_LOG)

    # ------------------------------------------------------------------ fences (F)
    async def fences_of(self, scope: MemoryScope) -> dict[str, Fence | None]:
        l1, *l2 = await self._diagnostics.fences_of(scope)
        return {"l1": l1, "l2": l2[0] if l2 else None}

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
