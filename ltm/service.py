"""The one scoped memory service every component calls (SPEC sections 2-4, 8, 12).

Callers pass an identity-derived `MemoryScope` and an operation; they never pass
raw storage keys or vector filters. The service:
- scopes every read and write to the caller's `scope_key` / `user_key`;
- serializes writes per memory space (L1 by scope_key, L2 by (kb, user_key));
- fences a space when a host write's outcome is unknown, and refuses writes there;
- audits every change in the caller's session scope.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypeVar

from .audit import AuditEntry, AuditLog, AuditPage
from .episode_store import EpisodeStore
from .episodes import (
    Episode,
    EpisodeDraft,
    EpisodeStatus,
    new_episode_id,
)
from .errors import (
    HostError,
    LTMError,
    NoKnowledgeBase,
    NotFound,
    OutcomeUnknown,
    ValidationError,
)
from .fences import INSTALLATION_SPACE, Fence, FenceRegistry, l1_space, l2_space
from .health import HealthItem, HealthReport, Level, check_embedding, check_isolation
from .host_port import HostPort
from .identity import Identity, Isolation, MemoryScope
from .kb_config import KBSettings, RetrievalStrategy
from .profiles import Profile, ProfileChange, ProfileLimits, ProfileTarget
from .ranking import Candidate, ScoredEpisode, SearchRecipe, rank
from .secrets_filter import secret_kind
from .store import JsonStore, KeyedLocks
from .timefields import now_iso, parse_aware, parse_stored, utc_now

log = logging.getLogger("LongTermMemory")
T = TypeVar("T")

KB_CONFIGS_KEY = "kb_configs"
INJECTION_TTL_SECONDS = 300.0
_UUID_LEN = 36


@dataclass(frozen=True)
class Profiles:
    session: Profile
    speaker: Profile | None


@dataclass(frozen=True)
class RecallFilters:
    """Optional recall filters (E8). Times are aware datetimes in UTC."""

    speaker: str = ""
    since: datetime | None = None
    until: datetime | None = None
    time_field: str = "timestamp"
    tags: tuple[str, ...] = ()
    statuses: tuple[EpisodeStatus, ...] = (EpisodeStatus.ACTIVE,)

    def accepts(self, episode: Episode) -> bool:
        if episode.status not in self.statuses:
            return False
        if self.speaker:
            wanted = self.speaker.casefold()
            if wanted not in (episode.sender_id.casefold(), episode.sender_name.casefold()):
                return False
        if self.tags and not set(self.tags) & set(episode.tags):
            return False
        if self.since or self.until:
            raw = episode.fact.event_at if self.time_field == "event_at" else episode.timestamp
            moment = parse_stored(raw)
            if moment is None:
                return False
            if self.since and moment < self.since:
                return False
            if self.until and moment >= self.until:
                return False
        return True


@dataclass(frozen=True)
class EpisodePage:
    episodes: list[Episode]
    page: int
    pages: int
    total: int
    truncated: bool = False


class MemoryService:
    def __init__(self, port: HostPort, limits: Callable[[], ProfileLimits] | None = None):
        self._port = port
        self._store = JsonStore(port)
        self._episodes = EpisodeStore(port)
        self.audit = AuditLog(self._store)
        self.fences = FenceRegistry(self._store)
        # Read per call: plugin config can change (and is empty during initialize on some hosts).
        self._limits = limits or ProfileLimits
        self._locks = KeyedLocks()
        self._kb_cache: dict[str, Any] | None = None
        self._no_full_text: set[str] = set()
        self._injected: dict[tuple[str, str], float] = {}

    # ------------------------------------------------------------------ fences
    async def _guarded(self, space: str, operation: str, call: Callable[[], Awaitable[T]]) -> T:
        """Run one host write; an unknown outcome fences `space` (F2), nothing else does (F3)."""
        try:
            return await call()
        except OutcomeUnknown as exc:
            await self.fences.raise_fence(space, operation, exc.message)
            raise OutcomeUnknown(
                f"{operation}: the host did not confirm the write, so writes to this memory are paused "
                "until an admin clears the fence"
            ) from None
        except asyncio.CancelledError:
            # Cancelled while the request was with the host: it may have been applied.
            await asyncio.shield(self.fences.raise_fence(space, operation, "cancelled after dispatch"))
            raise

    async def clear_fence(self, space: str, *, actor: MemoryScope | None = None) -> bool:
        """F4. Installation-wide fences are cleared only when named explicitly."""
        existed = await self.fences.clear(space)
        if existed:
            scope_key = actor.scope_key if actor else INSTALLATION_SPACE
            await self._audit(
                actor,
                AuditEntry(
                    operation="fence_clear", target_type="fence", target_id=space, scope_key=scope_key,
                    user_key=actor.user_key if actor else "", summary=f"cleared write fence {space}",
                ),
            )
        return existed

    async def clear_fences(self, scope: MemoryScope | None, *, installation: bool = False) -> list[str]:
        """F4 for an admin: the selected space's L1 and L2 fences; the installation-wide fence
        only when asked for by name. Returns the spaces that were fenced and are now clear."""
        targets: list[str] = []
        if scope is not None:
            targets.append(l1_space(scope.scope_key))
            if scope.kb_id:
                targets.append(l2_space(scope.kb_id, scope.user_key))
        if installation:
            targets.append(INSTALLATION_SPACE)
        return [space for space in targets if await self.clear_fence(space, actor=scope)]

    async def fence_for(self, scope: MemoryScope) -> dict[str, Fence | None]:
        return {
            "l1": await self.fences.get(l1_space(scope.scope_key)),
            "l2": await self.fences.get(l2_space(scope.kb_id, scope.user_key)) if scope.kb_id else None,
        }

    # ------------------------------------------------------------------ audit
    async def _audit(self, scope: MemoryScope | None, *entries: AuditEntry) -> None:
        """Audit never fails the change it records; an unknown outcome fences L1 (F2)."""
        if not entries:
            return
        scope_key = entries[0].scope_key

        async def guard(write: Callable[[], Awaitable[None]]) -> None:
            await self._guarded(l1_space(scope_key), "audit append", write)

        try:
            await self.audit.append_many(scope_key, list(entries), guard)
        except LTMError as exc:
            log.error("[LongTermMemory] audit append failed scope=%s: %s", scope_key, exc)

    def _entry(self, scope: MemoryScope, operation: str, target_type: str, target_id: str, summary: str,
               **meta: Any) -> AuditEntry:
        return AuditEntry(
            operation=operation, target_type=target_type, target_id=target_id, scope_key=scope.scope_key,
            user_key=scope.user_key, sender_id=scope.sender_id, sender_name=scope.sender_name,
            query_id=scope.query_id, summary=summary, meta=meta,
        )

    async def audit_page(self, scope: MemoryScope, page: int, page_size: int = 10) -> AuditPage:
        if page < 1:
            raise ValidationError("page numbers start at 1")
        result = await self.audit.page(scope.scope_key, page, page_size)
        if page > result.pages:
            raise ValidationError(f"page {page} is past the end (last page is {result.pages})")
        return result

    async def audit_export(self, scope: MemoryScope) -> list[dict[str, Any]]:
        return await self.audit.export(scope.scope_key)

    # ------------------------------------------------------------------ knowledge bases (S8)
    async def _kb_record(self) -> dict[str, Any]:
        if self._kb_cache is None:
            raw = await self._store.get(KB_CONFIGS_KEY, {})
            if not isinstance(raw, dict):
                raw = {}
            raw.setdefault("order", [])
            raw.setdefault("kbs", {})
            self._kb_cache = raw
        return self._kb_cache

    async def register_kb(self, kb_id: str, raw_settings: Any) -> KBSettings:
        if not kb_id:
            raise ValidationError("knowledge base id is required")
        settings = KBSettings.parse(raw_settings)
        async with self._locks.hold(INSTALLATION_SPACE):
            await self.fences.check(INSTALLATION_SPACE)
            record = await self._kb_record()
            others = [k for k in record["order"] if k != kb_id]
            if others:
                raise ValidationError(
                    f"LongTermMemory already has a memory knowledge base ({others[0]}); "
                    "one installation keeps one memory knowledge base"
                )
            new = {
                "order": [kb_id],
                "kbs": {kb_id: {**settings.to_dict(), "registered_at": now_iso()}},
            }
            await self._guarded(INSTALLATION_SPACE, "kb register", lambda: self._store.set(KB_CONFIGS_KEY, new))
            self._kb_cache = new
        await self._audit(None, AuditEntry(
            operation="kb_register", target_type="knowledge_base", target_id=kb_id, scope_key=INSTALLATION_SPACE,
            summary=f"memory knowledge base registered ({settings.isolation.value} isolation)",
        ))
        log.info("[LongTermMemory] memory knowledge base registered kb=%s isolation=%s", kb_id, settings.isolation.value)
        return settings

    async def unregister_kb(self, kb_id: str) -> bool:
        """Delete the KB's vectors, its config and its fences (F4)."""
        async with self._locks.hold(INSTALLATION_SPACE):
            record = await self._kb_record()
            known = kb_id in record["kbs"]
            try:
                await self._episodes.delete_collection_records(kb_id)
            except LTMError as exc:
                log.warning("[LongTermMemory] could not wipe vectors of kb=%s: %s", kb_id, exc)
            cleared = [f.space for f in await self.fences.all() if f.space.startswith(f"l2:{kb_id}:")]
            for space in cleared:
                await self.fences.clear(space)
            if known:
                new = {
                    "order": [k for k in record["order"] if k != kb_id],
                    "kbs": {k: v for k, v in record["kbs"].items() if k != kb_id},
                }
                await self._guarded(INSTALLATION_SPACE, "kb unregister", lambda: self._store.set(KB_CONFIGS_KEY, new))
                self._kb_cache = new
            for key in await self._store.keys(f"doc:{kb_id}:"):
                await self._store.delete(key)
        await self._audit(None, AuditEntry(
            operation="kb_unregister", target_type="knowledge_base", target_id=kb_id, scope_key=INSTALLATION_SPACE,
            summary="memory knowledge base removed with its vectors", meta={"fences_cleared": cleared},
        ), *[AuditEntry(operation="fence_clear", target_type="fence", target_id=space, scope_key=INSTALLATION_SPACE,
                        summary="cleared because the knowledge base was removed") for space in cleared])
        log.info("[LongTermMemory] memory knowledge base removed kb=%s", kb_id)
        return known

    async def memory_kb(self) -> tuple[str, KBSettings] | None:
        record = await self._kb_record()
        for kb_id in record["order"]:
            raw = record["kbs"].get(kb_id)
            if raw:
                return kb_id, KBSettings.parse(raw)
        return None

    async def kb_settings(self, kb_id: str) -> KBSettings:
        record = await self._kb_record()
        raw = record["kbs"].get(kb_id)
        if not raw:
            raise NoKnowledgeBase(f"knowledge base {kb_id} is not a LongTermMemory knowledge base")
        return KBSettings.parse(raw)

    # ------------------------------------------------------------------ scopes
    async def scope_for(self, identity: Identity, kb_id: str | None = None) -> MemoryScope:
        """The scope of a turn. Without a memory KB, L1 still works; L2 calls raise NoKnowledgeBase."""
        if kb_id:
            settings = await self.kb_settings(kb_id)
            return MemoryScope.for_identity(identity, settings.isolation, kb_id)
        found = await self.memory_kb()
        if found is None:
            return MemoryScope.for_identity(identity, Isolation.SESSION, "")
        return MemoryScope.for_identity(identity, found[1].isolation, found[0])

    async def _l2(self, scope: MemoryScope) -> KBSettings:
        if not scope.kb_id:
            raise NoKnowledgeBase()
        return await self.kb_settings(scope.kb_id)

    # ------------------------------------------------------------------ L1 profiles (P1-P3)
    @staticmethod
    def _profile_key(scope_key: str, target: ProfileTarget, sender_id: str = "") -> str:
        if target is ProfileTarget.SESSION:
            return f"profile:{scope_key}:session"
        return f"profile:{scope_key}:speaker:{sender_id}"

    async def profiles(self, scope: MemoryScope) -> Profiles:
        session = Profile.from_dict(await self._store.get(self._profile_key(scope.scope_key, ProfileTarget.SESSION)))
        speaker = None
        if scope.sender_id:
            speaker = Profile.from_dict(
                await self._store.get(self._profile_key(scope.scope_key, ProfileTarget.SPEAKER, scope.sender_id))
            )
        return Profiles(session, speaker)

    async def speaker_profiles(self, scope: MemoryScope) -> dict[str, Profile]:
        """Every speaker profile of one session (export and console)."""
        prefix = f"profile:{scope.scope_key}:speaker:"
        result: dict[str, Profile] = {}
        for key in await self._store.keys(prefix):
            result[key[len(prefix):]] = Profile.from_dict(await self._store.get(key))
        return result

    async def update_profile(self, scope: MemoryScope, target: str, raw_change: dict[str, Any]) -> Profile:
        try:
            which = ProfileTarget(str(target).strip().lower())
        except ValueError:
            raise ValidationError("scope must be 'session' or 'speaker'") from None
        if which is ProfileTarget.SPEAKER and not scope.sender_id:
            raise ValidationError("speaker profiles need a known sender; this turn has none")
        change = ProfileChange.parse(raw_change)
        for text in [change.name or "", change.notes or "", *(change.traits or []), *(change.preferences or [])]:
            kind = secret_kind(text)
            if kind:
                raise ValidationError(f"refused: the profile text looks like {kind}; secrets are never stored")
        key = self._profile_key(scope.scope_key, which, scope.sender_id)
        space = l1_space(scope.scope_key)
        async with self._locks.hold(space):
            await self.fences.check(space)
            updated = change.apply(Profile.from_dict(await self._store.get(key)), self._limits())
            await self._guarded(space, "profile update", lambda: self._store.set(key, updated.to_dict()))
        fields = [f for f in ("name", "traits", "preferences", "notes") if getattr(change, f) is not None]
        await self._audit(scope, self._entry(
            scope, "update_profile", f"{which.value}_profile", scope.sender_id if which is ProfileTarget.SPEAKER else "session",
            f"{change.mode.value} {', '.join(fields)}", fields=fields, mode=change.mode.value,
        ))
        log.info("[LongTermMemory] profile updated scope=%s target=%s fields=%s", scope.scope_key, which.value, fields)
        return updated

    # ------------------------------------------------------------------ L2 reads
    async def get_episode(self, scope: MemoryScope, episode_id: str) -> Episode:
        await self._l2(scope)
        eid = str(episode_id or "").strip()
        if not eid:
            raise ValidationError("an episode id is required")
        episode = await self._episodes.get(scope.kb_id, scope.user_key, eid)
        if episode is None:
            raise NotFound(f"episode {eid} not found in this scope")
        return episode

    async def recall(
        self, scope: MemoryScope, query: str, *, top_k: int | None = None, filters: RecallFilters | None = None,
        recipe: SearchRecipe | None = None,
    ) -> list[ScoredEpisode]:
        """Ranked recall (E3, E6-E8); a fixed number of host calls whatever the scope holds."""
        settings = await self._l2(scope)
        filters = filters or RecallFilters()
        k = settings.auto_recall_top_k if top_k is None else top_k
        if k <= 0:
            return []
        recipe = recipe or SearchRecipe.from_settings(settings, k)
        recipe = replace(recipe, top_k=k)
        text = (query or "").strip()
        if len(text) == _UUID_LEN and text.count("-") == 4:
            try:
                episode = await self.get_episode(scope, text)
            except NotFound:
                episode = None
            if episode is not None and filters.accepts(episode):
                return [ScoredEpisode(episode, recipe.id_bonus, 1.0, 1.0, 1.0, recipe.id_bonus)]
        if not text:
            text = " ".join(filters.tags) or "*"
        vector = (await self._episodes.embed(settings.embedding_model_uuid, [text]))[0]
        hits = await self._episodes.search(scope.kb_id, scope.user_key, vector, top_k=recipe.candidate_window)
        candidates: dict[str, Candidate] = {h.episode.episode_id: Candidate(h.episode, h.distance) for h in hits}
        if scope.sender_id and recipe.speaker_window > 0:
            # S6: the speaker's own episodes first, even when the space is crowded.
            for hit in await self._episodes.search(
                scope.kb_id, scope.user_key, vector, top_k=recipe.speaker_window, sender_id=scope.sender_id
            ):
                candidates.setdefault(hit.episode.episode_id, Candidate(hit.episode, hit.distance, True))
        if recipe.strategy is not RetrievalStrategy.VECTOR and scope.kb_id not in self._no_full_text:
            await self._add_full_text(scope, text, vector, recipe, candidates)
        window = [c for c in candidates.values() if filters.accepts(c.episode)]
        ranked = rank(window, text, recipe, utc_now(), preferred_sender=scope.sender_id)
        log.info(
            "[LongTermMemory] recall scope=%s user_key=%s candidates=%d returned=%d",
            scope.scope_key, scope.user_key, len(window), len(ranked),
        )
        return ranked

    async def _add_full_text(
        self, scope: MemoryScope, text: str, vector: list[float], recipe: SearchRecipe,
        candidates: dict[str, Candidate],
    ) -> None:
        """E7 hybrid: widen the window with the backend's verbatim-text matches.

        Only candidates are taken from it: LangBot's full-text search has no ranking (Chroma
        returns distance 0 for every substring match) and its hybrid mode replaces similarity
        by rank fusion, so scores always come from vector distances and the plugin's own
        lexical scoring. Backends without full text (Qdrant ignores the type and answers with
        plain vector hits; pgvector refuses) fall back to vector; `auto` remembers that and stops
        asking, `hybrid` keeps asking.
        """
        remember_verdict = recipe.strategy is RetrievalStrategy.AUTO
        try:
            rows = await self._episodes.search(
                scope.kb_id, scope.user_key, vector, top_k=recipe.full_text_window, search_type="full_text",
                query_text=text,
            )
        except HostError as exc:
            if remember_verdict:
                self._no_full_text.add(scope.kb_id)
            log.info("[LongTermMemory] full-text search unavailable on kb=%s (%s); vector only", scope.kb_id, exc)
            return
        if any(abs(hit.distance) > 1e-9 for hit in rows):
            if remember_verdict:
                self._no_full_text.add(scope.kb_id)
            log.info("[LongTermMemory] kb=%s ignores full-text search; vector only", scope.kb_id)
            return
        worst = max((c.distance for c in candidates.values()), default=1.0)
        for hit in rows:
            candidates.setdefault(hit.episode.episode_id, Candidate(hit.episode, worst))

    async def list_episodes(
        self, scope: MemoryScope, statuses: tuple[EpisodeStatus, ...] = (EpisodeStatus.ACTIVE,),
        page: int = 1, page_size: int = 10,
    ) -> EpisodePage:
        """Newest first, paged, with a correct total (management path: enumerates the space)."""
        await self._l2(scope)
        if page < 1:
            raise ValidationError("page numbers start at 1")
        listing = await self._episodes.enumerate(scope.kb_id, scope.user_key)
        chosen = [e for e in listing.episodes if e.status in statuses]
        chosen.sort(key=lambda e: e.timestamp, reverse=True)
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
    def _new_episode(self, scope: MemoryScope, draft: EpisodeDraft, **extra: Any) -> Episode:
        identity = scope.identity
        return Episode(
            episode_id=new_episode_id(),
            user_key=scope.user_key,
            content=draft.content,
            timestamp=now_iso(),
            importance=draft.importance,
            tags=draft.tags,
            sender_id=scope.sender_id,
            sender_name=scope.sender_name,
            bot_uuid=identity.bot_uuid if identity else "",
            session_name=identity.session_name if identity else "",
            source=draft.source,
            fact=draft.fact,
            **extra,
        )

    async def _write(self, scope: MemoryScope, settings: KBSettings, operation: str, episodes: list[Episode]) -> None:
        vectors = await self._episodes.embed(settings.embedding_model_uuid, [e.content for e in episodes])
        await self._guarded(
            l2_space(scope.kb_id, scope.user_key), operation,
            lambda: self._episodes.upsert(scope.kb_id, episodes, vectors),
        )

    async def remember(
        self, scope: MemoryScope, raw: dict[str, Any], *, supersedes: list[str] | None = None, source: str = "tool"
    ) -> Episode:
        """T1 / E4-E5: validate everything (including every supersede target) before any write."""
        settings = await self._l2(scope)
        draft = EpisodeDraft.parse(raw, source=source)
        kind = secret_kind(draft.content)
        if kind:
            raise ValidationError(f"refused: the content looks like {kind}; secrets are never stored")
        target_ids = _clean_ids(supersedes)
        space = l2_space(scope.kb_id, scope.user_key)
        async with self._locks.hold(space):
            await self.fences.check(space)
            targets: list[Episode] = []
            for target_id in target_ids:
                target = await self._episodes.get(scope.kb_id, scope.user_key, target_id)
                if target is None:
                    raise ValidationError(f"episode {target_id} is not in this scope; nothing was written")
                if not target.is_active:
                    raise ValidationError(
                        f"episode {target_id} is {target.status.value}, not active, in this scope; nothing was written"
                    )
                if target.sender_id != scope.sender_id:
                    raise ValidationError(
                        f"episode {target_id} belongs to another speaker; only its own speaker can correct it. "
                        "Nothing was written"
                    )
                targets.append(target)
            episode = self._new_episode(scope, draft, supersedes=tuple(t.episode_id for t in targets))
            await self._write(scope, settings, "remember", [episode])
            if targets:
                stamp = now_iso()
                replaced = [
                    t.with_status(EpisodeStatus.SUPERSEDED, superseded_by=episode.episode_id, superseded_at=stamp)
                    for t in targets
                ]
                await self._write(scope, settings, "supersede", replaced)
        entries = [self._entry(scope, "remember", "episode", episode.episode_id,
                               f"stored episode ({len(episode.content)} chars, importance {episode.importance})",
                               tags=list(episode.tags))]
        entries += [self._entry(scope, "supersede", "episode", t.episode_id, f"superseded by {episode.episode_id}")
                    for t in targets]
        await self._audit(scope, *entries)
        return episode

    async def _change_status(
        self, scope: MemoryScope, episode_id: str, allowed: tuple[EpisodeStatus, ...], new_status: EpisodeStatus,
        operation: str,
    ) -> Episode:
        settings = await self._l2(scope)
        space = l2_space(scope.kb_id, scope.user_key)
        async with self._locks.hold(space):
            await self.fences.check(space)
            episode = await self.get_episode(scope, episode_id)
            if episode.status not in allowed:
                raise ValidationError(f"episode {episode.episode_id} is {episode.status.value}; cannot {operation} it")
            changes: dict[str, Any] = {}
            if new_status is EpisodeStatus.ACTIVE:
                changes = {"superseded_by": None, "superseded_at": None}
            updated = episode.with_status(new_status, **changes)
            await self._write(scope, settings, operation, [updated])
        await self._audit(scope, self._entry(
            scope, operation, "episode", episode.episode_id, f"{episode.status.value} -> {new_status.value}",
            previous_status=episode.status.value,
        ))
        return updated

    async def archive(self, scope: MemoryScope, episode_id: str) -> Episode:
        return await self._change_status(scope, episode_id, (EpisodeStatus.ACTIVE,), EpisodeStatus.ARCHIVED, "archive")

    async def restore(self, scope: MemoryScope, episode_id: str) -> Episode:
        return await self._change_status(
            scope, episode_id, (EpisodeStatus.ARCHIVED, EpisodeStatus.SUPERSEDED), EpisodeStatus.ACTIVE, "restore"
        )

    async def forget(self, scope: MemoryScope, episode_id: str, *, operation: str = "forget") -> Episode:
        await self._l2(scope)
        space = l2_space(scope.kb_id, scope.user_key)
        async with self._locks.hold(space):
            await self.fences.check(space)
            episode = await self.get_episode(scope, episode_id)
            await self._guarded(space, operation,
                                lambda: self._episodes.delete(scope.kb_id, scope.user_key, [episode.episode_id]))
        await self._audit(scope, self._entry(
            scope, operation, "episode", episode.episode_id, f"deleted {episode.status.value} episode",
        ))
        return episode

    async def delete_many(self, scope: MemoryScope, episodes: list[Episode], operation: str = "bulk_delete") -> int:
        """Delete records already enumerated from this scope; each one audited."""
        await self._l2(scope)
        ids = [e.episode_id for e in episodes if e.user_key == scope.user_key]
        if not ids:
            return 0
        space = l2_space(scope.kb_id, scope.user_key)
        async with self._locks.hold(space):
            await self.fences.check(space)
            await self._guarded(space, operation, lambda: self._episodes.delete(scope.kb_id, scope.user_key, ids))
        await self._audit(scope, *[
            self._entry(scope, operation, "episode", i, "deleted by bulk delete") for i in ids
        ])
        return len(ids)

    async def import_episodes(
        self, scope: MemoryScope, records: list["ImportRecord"], *, operation: str = "import",
        document_id: str | None = None,
    ) -> list[Episode]:
        """Write a batch that was validated as a whole (E10, C import): new ids, current user_key."""
        settings = await self._l2(scope)
        if not records:
            raise ValidationError("the import has no episodes")
        id_map = {r.original_id: new_episode_id() for r in records if r.original_id}
        episodes: list[Episode] = []
        for record in records:
            episode = self._new_episode(scope, record.draft)
            new_id = id_map.get(record.original_id or "", episode.episode_id)
            episodes.append(replace(
                episode,
                episode_id=new_id,
                timestamp=record.timestamp or episode.timestamp,
                status=record.status,
                sender_id=record.sender_id if record.sender_id is not None else episode.sender_id,
                sender_name=record.sender_name if record.sender_name is not None else episode.sender_name,
                original_id=record.original_id,
                document_id=document_id,
                supersedes=tuple(id_map[i] for i in record.supersedes if i in id_map),
                superseded_by=id_map.get(record.superseded_by or ""),
                superseded_at=record.superseded_at if record.superseded_by in id_map else None,
            ))
        space = l2_space(scope.kb_id, scope.user_key)
        async with self._locks.hold(space):
            await self.fences.check(space)
            await self._write(scope, settings, operation, episodes)
            if document_id:
                await self._guarded(space, operation, lambda: self._store.set(
                    f"doc:{scope.kb_id}:{document_id}",
                    {"user_key": scope.user_key, "scope_key": scope.scope_key, "ids": [e.episode_id for e in episodes]},
                ))
        await self._audit(scope, *[
            self._entry(scope, operation, "episode", e.episode_id, f"imported ({e.status.value})",
                        original_id=e.original_id or "", document_id=document_id or "")
            for e in episodes
        ])
        log.info("[LongTermMemory] import scope=%s user_key=%s records=%d", scope.scope_key, scope.user_key,
                 len(episodes))
        return episodes

    async def delete_document(self, kb_id: str, document_id: str) -> int:
        """Remove exactly the records one ingested document created (E10)."""
        key = f"doc:{kb_id}:{document_id}"
        index = await self._store.get(key)
        if not isinstance(index, dict):
            return 0
        user_key, scope_key = str(index.get("user_key", "")), str(index.get("scope_key", ""))
        ids = [str(i) for i in index.get("ids") or []]
        space = l2_space(kb_id, user_key)
        async with self._locks.hold(space):
            await self.fences.check(space)
            await self._guarded(space, "document delete", lambda: self._episodes.delete(kb_id, user_key, ids))
            await self._store.delete(key)
        scope = MemoryScope(scope_key=scope_key, user_key=user_key, kb_id=kb_id)
        await self._audit(scope, *[
            self._entry(scope, "document_delete", "episode", i, f"document {document_id} deleted") for i in ids
        ])
        return len(ids)

    # ------------------------------------------------------------------ management: export, bulk delete, health
    async def export_profiles(self, scope: MemoryScope) -> dict[str, Any]:
        """L1 of exactly this session_key (S7)."""
        session = Profile.from_dict(await self._store.get(self._profile_key(scope.scope_key, ProfileTarget.SESSION)))
        speakers = await self.speaker_profiles(scope)
        return {
            "scope_key": scope.scope_key,
            "session_profile": session.to_dict(),
            "speaker_profiles": {sid: p.to_dict() for sid, p in sorted(speakers.items())},
        }

    async def export_episodes(self, scope: MemoryScope, statuses: tuple[EpisodeStatus, ...]) -> dict[str, Any]:
        await self._l2(scope)
        listing = await self._episodes.enumerate(scope.kb_id, scope.user_key)
        episodes = sorted((e for e in listing.episodes if e.status in statuses), key=lambda e: e.timestamp)
        export: dict[str, Any] = {
            "user_key": scope.user_key,
            "statuses": [s.value for s in statuses],
            "episodes": [e.to_public() for e in episodes],
        }
        if listing.truncated:
            # Never pass off a partial export as complete.
            export["truncated"] = True
        return export

    async def bulk_delete(self, scope: MemoryScope, criteria: "DeleteCriteria") -> list[Episode]:
        """Enumerate this space, delete only the matches, audit each (C delete).

        A space larger than one enumeration is handled in rounds: deleted records leave the
        listing, so each round sees records the previous one could not."""
        await self._l2(scope)
        deleted: list[Episode] = []
        while True:
            listing = await self._episodes.enumerate(scope.kb_id, scope.user_key)
            matches = [e for e in listing.episodes if criteria.matches(e)]
            await self.delete_many(scope, matches)
            deleted.extend(matches)
            if not listing.truncated or not matches:
                return deleted

    async def health(self, scope: MemoryScope | None, pipeline_kbs: list[str] | None = None) -> HealthReport:
        items: list[HealthItem] = []
        found = await self.memory_kb()
        if found is None:
            return HealthReport([HealthItem("kb", Level.RED, "no memory knowledge base configured")])
        kb_id, settings = found
        try:
            host_kbs = {str(kb.get("uuid")) for kb in await self._port.list_knowledge_bases()}
        except LTMError:
            host_kbs = set()
        if host_kbs and kb_id not in host_kbs:
            items.append(HealthItem("kb", Level.RED, f"memory knowledge base {kb_id} is registered but LangBot no longer has it"))
        else:
            items.append(HealthItem("kb", Level.GREEN, f"memory knowledge base {kb_id} registered ({settings.isolation.value} isolation)"))
        if pipeline_kbs is not None:
            if kb_id in pipeline_kbs:
                items.append(HealthItem("pipeline", Level.GREEN, "memory knowledge base is attached to this pipeline "
                                        "(its host RAG is skipped for turns the plugin already injected)"))
            else:
                items.append(HealthItem("pipeline", Level.AMBER, "memory knowledge base is not attached to this pipeline; "
                                        "automatic injection and tools still work"))
        embedding, vector = await check_embedding(self._port, settings)
        items.append(embedding)
        if vector is not None:
            items.append(await check_isolation(self._port, kb_id, vector))
        if scope is not None:
            scope = replace(scope, kb_id=scope.kb_id or kb_id)
            fenced = [f for f in (await self.fence_for(scope)).values() if f is not None]
            if fenced:
                items.append(HealthItem("fence", Level.AMBER, "writes paused by a fence since " + fenced[0].since))
            else:
                items.append(HealthItem("fence", Level.GREEN, "no write fence on this scope"))
        return HealthReport(items)

    # ------------------------------------------------------------------ injection bookkeeping (I5, double recall)
    async def save_snapshot(self, scope_key: str, snapshot: dict[str, Any]) -> None:
        """Latest injection of a scope (I5). Diagnostic data, not memory: no fence either way."""
        await self._store.set(f"snapshot:{scope_key}", snapshot)

    async def snapshot(self, scope_key: str) -> dict[str, Any] | None:
        value = await self._store.get(f"snapshot:{scope_key}")
        return value if isinstance(value, dict) else None

    def note_injection(self, scope_key: str, text: str) -> None:
        """Remember that this turn's memories were injected, so host RAG on the memory KB
        for the same turn returns nothing (host notes, constraint 3)."""
        now = time.monotonic()
        self._injected = {k: t for k, t in self._injected.items() if now - t < INJECTION_TTL_SECONDS}
        self._injected[(scope_key, " ".join(text.split()))] = now

    def consume_injection(self, scope_key: str, text: str) -> bool:
        """True once for the turn's own message: the runner's automatic re-retrieval of the memory
        KB is answered empty, while any later (explicit, agent-issued) retrieval is served (I4)."""
        stamp = self._injected.pop((scope_key, " ".join(text.split())), None)
        return stamp is not None and time.monotonic() - stamp < INJECTION_TTL_SECONDS

    # ------------------------------------------------------------------ known scopes (console)
    async def known_scopes(self) -> list[str]:
        keys = await self._store.keys("")
        scopes: set[str] = set()
        for key in keys:
            if key.startswith("profile:"):
                scopes.add(key[len("profile:"):].rsplit(":session", 1)[0].split(":speaker:")[0])
            elif key.startswith("audit:") and key.count(":") >= 1:
                rest = key[len("audit:"):]
                head, _, tail = rest.rpartition(":")
                scopes.add(head if tail.isdigit() and head else rest)
        return sorted(s for s in scopes if s and s != INSTALLATION_SPACE)


@dataclass(frozen=True)
class ImportRecord:
    """One validated episode of an import batch (see ltm/imports.py)."""

    draft: EpisodeDraft
    status: EpisodeStatus = EpisodeStatus.ACTIVE
    timestamp: str | None = None
    sender_id: str | None = None
    sender_name: str | None = None
    original_id: str | None = None
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    superseded_at: str | None = None


def _clean_ids(value: Any) -> list[str]:
    if value in (None, "", []):
        return []
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split()]
    if not isinstance(value, (list, tuple)):
        raise ValidationError("supersedes must be a list of episode ids")
    ids: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ValidationError("supersedes must be a list of episode ids")
        if item.strip() not in ids:
            ids.append(item.strip())
    return ids


def parse_time_filter(value: Any, field: str) -> datetime | None:
    if value in (None, ""):
        return None
    return parse_aware(value, field)


@dataclass(frozen=True)
class DeleteCriteria:
    """Filters of `!memory delete`: all given ones must match; at least one is required."""

    speaker: str = ""
    tag: str = ""
    before: datetime | None = None
    status: EpisodeStatus | None = None

    def __post_init__(self) -> None:
        if not (self.speaker or self.tag or self.before or self.status):
            raise ValidationError("give at least one of --speaker, --tag, --before, --status")

    def matches(self, episode: Episode) -> bool:
        if self.speaker and self.speaker.casefold() not in (episode.sender_id.casefold(), episode.sender_name.casefold()):
            return False
        if self.tag and self.tag.lower() not in episode.tags:
            return False
        if self.status and episode.status is not self.status:
            return False
        if self.before:
            stored = parse_stored(episode.timestamp)
            if stored is None or stored >= self.before:
                return False
        return True
