"""Ranked recall (E3, E6-E8 in docs/REQUIREMENTS.md): a fixed number of index calls per
query, whatever the space holds, then the whole candidate window ranked before top_k."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime

from ..errors import HostError
from ..identity import MemoryScope
from ..kb_settings import KBSettings, RetrievalStrategy
from ..timefields import parse_stored, utc_now
from .model import Episode, EpisodeStatus
from .ranking import Candidate, ScoredEpisode, SearchRecipe, rank
from .store import EpisodeStore

log = logging.getLogger("LongTermMemory")
_UUID_LEN = 36


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


class Recaller:
    def __init__(self, store: EpisodeStore) -> None:
        self._store = store
        self._no_full_text: set[str] = set()

    async def recall(self, scope: MemoryScope, settings: KBSettings, query: str, *, top_k: int,
                     filters: RecallFilters, recipe: SearchRecipe | None = None) -> list[ScoredEpisode]:
        if top_k <= 0:
            return []
        recipe = replace(recipe or SearchRecipe.from_settings(settings, top_k), top_k=top_k)
        text = (query or "").strip()
        if len(text) == _UUID_LEN and text.count("-") == 4:
            episode = await self._store.get(scope.kb_id, scope.user_key, text)
            if episode is not None and filters.accepts(episode):
                return [ScoredEpisode(episode, recipe.id_bonus, 1.0, 1.0, 1.0, recipe.id_bonus)]
        if not text:
            text = " ".join(filters.tags) or "*"
        vector = (await self._store.embed(settings.embedding_model_uuid, [text]))[0]
        hits = await self._store.search(scope.kb_id, scope.user_key, vector, top_k=recipe.candidate_window)
        candidates: dict[str, Candidate] = {h.episode.episode_id: Candidate(h.episode, h.distance) for h in hits}
        if scope.sender_id and recipe.speaker_window > 0:
            # S6: the speaker's own episodes first, even when the space is crowded.
            for hit in await self._store.search(scope.kb_id, scope.user_key, vector, top_k=recipe.speaker_window,
                                                sender_id=scope.sender_id):
                candidates.setdefault(hit.episode.episode_id, Candidate(hit.episode, hit.distance, True))
        if recipe.strategy is not RetrievalStrategy.VECTOR and scope.kb_id not in self._no_full_text:
            await self._add_full_text(scope, text, vector, recipe, candidates)
        window = [c for c in candidates.values() if filters.accepts(c.episode)]
        ranked = rank(window, text, recipe, utc_now(), preferred_sender=scope.sender_id)
        log.info("[LongTermMemory] recall scope=%s user_key=%s candidates=%d returned=%d",
                 scope.scope_key, scope.user_key, len(window), len(ranked))
        return ranked

    async def _add_full_text(self, scope: MemoryScope, text: str, vector: list[float], recipe: SearchRecipe,
                             candidates: dict[str, Candidate]) -> None:
        """E7 hybrid: widen the window with the backend's verbatim-text matches.

        Only candidates are taken from it: scores always come from vector distances and the
        plugin's own lexical scoring (docs/ARCHITECTURE.md, "Decisions"). A backend without
        usable text search answers None; `auto` remembers that and stops asking, `hybrid`
        keeps asking."""
        remember_verdict = recipe.strategy is RetrievalStrategy.AUTO
        try:
            rows = await self._store.search_text(scope.kb_id, scope.user_key, text, vector,
                                                 top_k=recipe.full_text_window)
        except HostError as exc:
            rows = None
            log.info("[LongTermMemory] full-text search failed on kb=%s (%s); vector only", scope.kb_id, exc.code)
        if rows is None:
            if remember_verdict:
                self._no_full_text.add(scope.kb_id)
            return
        worst = max((c.distance for c in candidates.values()), default=1.0)
        for hit in rows:
            candidates.setdefault(hit.episode.episode_id, Candidate(hit.episode, worst))
