"""Ranked recall (E3, E6-E8 in docs/REQUIREMENTS.md): a fixed number of index calls per
query, whatever the space holds, then the whole candidate window ranked before top_k."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime

from ..errors import HostError, HostFailure
from ..identity import MemoryScope
from ..kb_settings import KBSettings, RetrievalStrategy
from ..timefields import parse_stored, utc_now
from .lexical import SpaceIndex
from .model import Episode, EpisodeStatus, Validity
from .question_cues import named_speakers, without_speakers
from .ranking import RecallRecipe, ScoredEpisode, WindowEntry, rank, tokenize
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

    async def recall(self, scope: MemoryScope, settings: KBSettings, query: str, recipe: RecallRecipe, *,
                     filters: RecallFilters, now: datetime | None = None) -> list[ScoredEpisode]:
        """Host calls per recall, whatever the space holds: one embedding (of the question without the
        names of speakers it names, found in the space's word index), then concurrently the
        space's vector window and (with a sender) the speaker's window; with `hybrid` also the
        store's full-text search. Lexical candidates come from the in-process word index of the
        whole space (`lexical.py`, no host call once built). `now` is the moment the question is
        asked (benchmarks replay old conversations, through `testhost/hooks.py`); surfaces never pass it."""
        recipe = recipe.resolved_for(settings)
        if not recipe.top_k or recipe.top_k <= 0:
            return []
        moment = now or utc_now()
        accepts = _accepting(filters, recipe, moment)
        text = (query or "").strip()
        if len(text) == _UUID_LEN and text.count("-") == 4:
            episode = await self._store.get(scope.kb_id, scope.user_key, text)
            if episode is not None and accepts(episode):
                return [ScoredEpisode(episode, recipe.id_bonus, 1.0, 1.0, 1.0, recipe.id_bonus)]
        if not text:
            text = " ".join(filters.tags) or "*"
        index = await self._space_index(scope) if recipe.uses_lexical or recipe.strip_named_speakers else None
        vector = (await self._store.embed(settings.embedding_model_uuid, [self._embedded_text(text, recipe, index)]))[0]
        searches: list[Awaitable[list[WindowEntry]]] = [
            self._vector(scope, vector, recipe.candidate_window)]
        if scope.sender_id and recipe.speaker_window > 0:
            # S6: the speaker's own episodes first, even when the space is crowded.
            searches.append(self._vector(scope, vector, recipe.speaker_window, scope.sender_id))
        if recipe.strategy is RetrievalStrategy.HYBRID:
            searches.append(self._full_text(scope, text, vector, recipe))
        candidates: dict[str, WindowEntry] = {}
        for found in await asyncio.gather(*searches):
            for cand in found:
                candidates.setdefault(cand.episode.episode_id, cand)
        lexical: dict[str, float] | None = None
        if recipe.uses_lexical and index is not None:
            lexical = self._lexical(index, text, recipe, accepts, candidates)
        window = [c for c in candidates.values() if accepts(c.episode)]
        if recipe.fold_summary_sources:
            # The whole window is ranked, then a summary takes the place of its sources before top_k is cut.
            ranked = fold_summary_sources(rank(window, text, replace(recipe, top_k=max(1, len(window))), moment,
                                               preferred_sender=scope.sender_id, lexical_scores=lexical))
            ranked = ranked[: recipe.top_k]
        else:
            ranked = rank(window, text, recipe, moment, preferred_sender=scope.sender_id, lexical_scores=lexical)
        log.info("[LongTermMemory] recall scope=%s user_key=%s candidates=%d returned=%d",
                 scope.scope_key, scope.user_key, len(window), len(ranked))
        return ranked

    async def _space_index(self, scope: MemoryScope) -> SpaceIndex | None:
        """The space's word index; None when it could not be built now (a big space is built in the
        background): ranking then scores words inside the vector window only, and no speaker is named."""
        try:
            return await self._store.word_index(scope.kb_id, scope.user_key)
        except HostFailure as exc:
            log.info("[LongTermMemory] lexical index of a space not built (%s); vector window only", exc.code)
            return None

    @staticmethod
    def _embedded_text(text: str, recipe: RecallRecipe, index: SpaceIndex | None) -> str:
        """The question as embedded: without the names of the space's speakers it names (their records
        are preferred by ranking instead; see question_cues.py)."""
        if not recipe.strip_named_speakers or index is None:
            return text
        return without_speakers(text, named_speakers(text, index.speaker_names()))

    @staticmethod
    def _lexical(index: SpaceIndex, text: str, recipe: RecallRecipe, accepts: Callable[[Episode], bool],
                 candidates: dict[str, WindowEntry]) -> dict[str, float]:
        """Whole-space BM25: adds the best `lexical_window` records the filters accept as candidates
        (without a vector distance) and returns every candidate's raw score."""
        hits, scores = index.search(tokenize(text), recipe.lexical_window, accepts, also=candidates)
        for hit in hits:
            candidates.setdefault(hit.episode.episode_id, WindowEntry(hit.episode, None))
        return scores

    async def _vector(self, scope: MemoryScope, vector: list[float], top_k: int,
                      sender_id: str = "") -> list[WindowEntry]:
        hits = await self._store.search(scope.kb_id, scope.user_key, vector, top_k=top_k, sender_id=sender_id)
        return [WindowEntry(h.episode, h.distance, bool(sender_id)) for h in hits]

    async def _full_text(self, scope: MemoryScope, text: str, vector: list[float],
                         recipe: RecallRecipe) -> list[WindowEntry]:
        """E7 `hybrid`: widen the window with the backend's verbatim-text matches.

        Only candidates are taken from it: scores always come from vector distances and the
        plugin's own lexical scoring (docs/ARCHITECTURE.md, "Decisions"). `hybrid` asks on every
        recall, as its setting says; a backend without usable text search answers None."""
        try:
            rows = await self._store.search_text(scope.kb_id, scope.user_key, text, vector,
                                                 top_k=recipe.full_text_window)
        except HostError as exc:
            log.info("[LongTermMemory] full-text search failed on kb=%s (%s); vector only", scope.kb_id, exc.code)
            return []
        if rows is None:
            return []
        # A verbatim match carries no distance of its own: it enters like a lexical candidate.
        return [WindowEntry(h.episode, None) for h in rows]


def _accepting(filters: RecallFilters, recipe: RecallRecipe, moment: datetime) -> Callable[[Episode], bool]:
    """The filters, and for a recipe that hands on current facts only, validity at `moment` (a fact whose
    `valid_until` has passed is left out; one that starts later still holds something about the future and
    stays, its `valid_from` shown with it)."""
    if not recipe.current_only:
        return filters.accepts
    return lambda e: filters.accepts(e) and e.validity_at(moment) is not Validity.EXPIRED


def fold_summary_sources(ranked: list[ScoredEpisode]) -> list[ScoredEpisode]:
    """A recalled summary and its own sources take one place: the best of their places, held by the
    summary (its `derived_from` names the sources). Sources of a summary outside the window stay."""
    summaries = {s.episode.episode_id: s for s in ranked if s.episode.is_summary}
    summary_of: dict[str, str] = {}
    for summary_id, scored in summaries.items():
        for source_id in scored.episode.derived_from:
            if source_id != summary_id:
                summary_of.setdefault(source_id, summary_id)
    folded: list[ScoredEpisode] = []
    placed: set[str] = set()
    for scored in ranked:
        own = scored.episode.episode_id
        held_by = summary_of.get(own, own)
        if held_by in placed:
            continue
        placed.add(held_by)
        folded.append(summaries.get(held_by, scored))
    return folded
