"""Ranked recall (E3, E6-E8 in docs/REQUIREMENTS.md): a fixed number of index calls per
query, whatever the space holds, then the whole recall window ranked before top_k."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from ..errors import HostError, HostFailure
from ..identity import MemoryScope
from ..kb_settings import KBSettings, RetrievalStrategy
from ..timefields import parse_stored, utc_now
from .adjacent import adjacent_entries
from .feedback import feedback_query
from .model import Episode, EpisodeStatus, Validity
from .question import Question
from .ranking import RecallRecipe, ScoredEpisode, WindowEntry, rank
from .space_index import SpaceIndex
from .store import EpisodeStore, Hit

log = logging.getLogger("LongTermMemory")
_VECTOR, _SPEAKER, _VERBATIM = "vector", "speaker", "verbatim"  # what found a window entry


@dataclass(frozen=True)
class RecallFilters:
    """Optional recall filters (E8), all of which must hold. Times are aware datetimes in UTC; `until`
    is exclusive. `speaker` is an id or a name; `speaker_id` an exact id, `speaker_name` a name (the
    official plugin's two filters); `sources` any of these stored sources."""

    speaker: str = ""
    since: datetime | None = None
    until: datetime | None = None
    time_field: str = "timestamp"
    tags: tuple[str, ...] = ()
    statuses: tuple[EpisodeStatus, ...] = (EpisodeStatus.ACTIVE,)
    speaker_id: str = ""
    speaker_name: str = ""
    importance_min: int = 1
    sources: tuple[str, ...] = ()

    def accepts(self, episode: Episode) -> bool:
        if episode.status not in self.statuses:
            return False
        if self.speaker:
            wanted = self.speaker.casefold()
            if wanted not in (episode.sender_id.casefold(), episode.sender_name.casefold()):
                return False
        if self.speaker_id and episode.sender_id != self.speaker_id:
            return False
        if self.speaker_name and episode.sender_name.casefold() != self.speaker_name.casefold():
            return False
        if episode.importance < self.importance_min:
            return False
        if self.sources and episode.source not in self.sources:
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
        names of speakers it names, found in the space's index) and one vector search of the space
        (`vector_window` rows); with `hybrid` also the store's full-text search; and, only when a
        record found by words alone ranks among the top_k, one keyed read of those records. Word
        matches of the whole space (and the speaker's own, S6) come from the plugin's index of the
        space (`lexical.py`, no host call once made), which also supplies what ranking reads of each
        vector hit, so only the records handed on are decoded. While the index is being made, the
        speaker's own window is one more vector search. The question is read once (`Question.of`) and
        every stage takes what it needs from it; the store keeps its index true to the rows it returns
        (`store.py`). `now` is the moment the question is asked (benchmarks replay old conversations,
        through `testhost/hooks.py`); surfaces never pass it."""
        recipe = recipe.resolved_for(settings)
        if not recipe.top_k or recipe.top_k <= 0:
            return []
        moment = now or utc_now()
        accepts = _accepting(filters, recipe, moment)
        # The space index does not hold a record's source: its partial records pass that one test here and
        # meet it once read whole (`_resolve`), so with a source filter every window entry is ranked before the
        # cut, never fewer than top_k for want of it.
        loose = _accepting(replace(filters, sources=()), recipe, moment) if filters.sources else accepts
        question = Question.of(query, filters.tags)
        if question.record_id:
            episode = await self._store.get(scope.l2, question.record_id)
            if episode is not None and accepts(episode):
                return [ScoredEpisode(episode, recipe.id_bonus, 1.0, 1.0, 1.0, recipe.id_bonus)]
        index = await self._space_index(scope) if recipe.uses_lexical or recipe.strip_named_speakers else None
        embedded = self._embedded_text(question, recipe, index)
        vector = (await self._store.embed(settings.embedding_model_uuid, [embedded]))[0]
        searches: list[Awaitable[list[Hit] | None]] = [
            self._store.search(scope.l2, vector, top_k=recipe.vector_window)]
        kinds = [_VECTOR]
        if index is None and scope.sender_id and recipe.speaker_window > 0:
            # S6 while the space's index is being made: the speaker's own window is asked of the store.
            searches.append(self._store.search(scope.l2, vector, top_k=recipe.speaker_window,
                                               sender_id=scope.sender_id))
            kinds.append(_SPEAKER)
        if recipe.strategy is RetrievalStrategy.HYBRID:
            searches.append(self._full_text(scope, question.text, vector, recipe))
            kinds.append(_VERBATIM)
        window = _Window(index)
        for found, kind in zip(await asyncio.gather(*searches), kinds):
            window.add(found or [], kind)
        lexical: dict[str, float] | None = None
        if recipe.uses_lexical and index is not None:
            lexical = self._lexical(index, scope, question, recipe, loose, window)
        accepted = [c for c in window.entries.values()
                    if (loose if c.episode.episode_id in window.partial else accepts)(c.episode)]
        if index is not None and lexical is not None:
            for entry in adjacent_entries(index, accepted, question, recipe, lexical, loose):
                window.entries[entry.episode.episode_id] = entry
                window.partial.add(entry.episode.episode_id)  # a partial record: read whole if handed on
                accepted.append(entry)
        # Folding: a summary takes the place of its sources before top_k is cut, so twice as many are ranked
        # and read whole (a summary's sources are named only in the whole record).
        wide = replace(recipe, top_k=2 * recipe.top_k) if recipe.fold_summary_sources else recipe
        if filters.sources:
            wide = replace(recipe, top_k=max(1, len(accepted)))
        ranked = rank(accepted, question, wide, moment, asking_speaker=scope.sender_id, lexical_scores=lexical)
        fed = feedback_query(ranked, question, recipe, index) if index is not None and lexical is not None else None
        if index is not None and fed is not None:  # the word search again, with words of the best records
            known = set(window.entries)
            lexical = self._lexical(index, scope, question, recipe, loose, window, fed)
            accepted += [c for i, c in window.entries.items() if i not in known and loose(c.episode)]
            ranked = rank(accepted, question, wide, moment, asking_speaker=scope.sender_id, lexical_scores=lexical)
        ranked = await self._resolve(scope, ranked, window, filters)
        if recipe.fold_summary_sources:
            ranked = fold_summary_sources(ranked)
        ranked = ranked[: recipe.top_k]
        log.info("[LongTermMemory] recall scope=%s space=%s entries=%d returned=%d",
                 scope.chat_key, scope.space_key, len(accepted), len(ranked))
        return ranked

    async def _space_index(self, scope: MemoryScope) -> SpaceIndex | None:
        """The space's index; None while it is being made (a big space is made in the background): ranking
        then scores words inside the vector window only, no speaker is named, and the rows are decoded."""
        try:
            return await self._store.word_index(scope.l2)
        except HostFailure as exc:
            log.info("[LongTermMemory] index of a space not built (%s); vector window only", exc.code)
            return None

    @staticmethod
    def _embedded_text(question: Question, recipe: RecallRecipe, index: SpaceIndex | None) -> str:
        """The question as embedded: without the names of the space's speakers it names (their records
        are preferred by ranking instead; see question_cues.py)."""
        if not recipe.strip_named_speakers or index is None:
            return question.text
        return question.without_speakers(index.speaker_names())

    @staticmethod
    def _lexical(index: SpaceIndex, scope: MemoryScope, question: Question, recipe: RecallRecipe,
                 accepts: Callable[[Episode], bool], window: _Window,
                 weighted: Mapping[str, float] | None = None) -> dict[str, float]:
        """Whole-space BM25 of the question's terms (or of `weighted` terms: feedback.py): adds the best
        `lexical_window` records the filters accept (and the speaker's own best `speaker_window`, S6) as
        window entries without a vector distance, and returns every entry's raw score."""
        speaker = None
        if scope.sender_id and recipe.speaker_window > 0:
            asking = scope.sender_id

            def own(episode: Episode) -> bool:
                return episode.sender_id == asking and accepts(episode)

            speaker = (recipe.speaker_window, own)
        hits, scores = index.search(weighted or question.terms, recipe.lexical_window, accepts, also=window.entries,
                                    speaker=speaker)
        for hit in hits:
            if hit.episode.episode_id not in window.entries:
                window.entries[hit.episode.episode_id] = WindowEntry(hit.episode, None)
                window.partial.add(hit.episode.episode_id)
        return scores

    async def _resolve(self, scope: MemoryScope, ranked: list[ScoredEpisode], window: _Window,
                       filters: RecallFilters) -> list[ScoredEpisode]:
        """Whole records for what ranking chose from the index's partial ones: the vector hit's own row
        where there is one, else one keyed read of the rest. A record the store no longer has, or no
        longer as the filters want it, is dropped: recall never hands on what the store does not hold."""
        wanted = [s.episode.episode_id for s in ranked if s.episode.episode_id in window.partial]
        whole: dict[str, Episode] = {}
        fetch = []
        for episode_id in wanted:
            hit = window.rows.get(episode_id)
            episode = hit.episode if hit is not None else None
            if episode is not None:
                whole[episode_id] = episode
            else:
                fetch.append(episode_id)
        if fetch:
            try:
                whole.update(await self._store.get_many(scope.l2, fetch))
            except HostError as exc:
                log.info("[LongTermMemory] records found by words could not be read (%s); left out", exc.code)
        out = []
        for scored in ranked:
            episode_id = scored.episode.episode_id
            if episode_id not in window.partial:
                out.append(scored)
            elif (episode := whole.get(episode_id)) is not None and filters.accepts(episode):
                out.append(replace(scored, episode=episode))
        return out

    async def _full_text(self, scope: MemoryScope, text: str, vector: list[float],
                         recipe: RecallRecipe) -> list[Hit] | None:
        """E7 `hybrid`: widen the window with the backend's verbatim-text matches.

        Only window entries are taken from it: scores always come from vector distances and the
        plugin's own lexical scoring (docs/ARCHITECTURE.md, "Decisions"). `hybrid` asks on every
        recall, as its setting says; a backend without usable text search answers None."""
        try:
            return await self._store.search_text(scope.l2, text, vector,
                                                 top_k=recipe.full_text_window)
        except HostError as exc:
            log.info("[LongTermMemory] full-text search failed on kb=%s (%s); vector only", scope.kb_id, exc.code)
            return None


class _Window:
    """The window entries of one recall from its searches. Ranking reads the space index's (partial) view
    of a hit when the index has it, so its row is decoded only if it is handed on (`rows`, `partial`);
    a hit the index does not know is decoded now (and the store's index learns it: `store.Hit`)."""

    def __init__(self, index: SpaceIndex | None) -> None:
        self.index = index
        self.entries: dict[str, WindowEntry] = {}
        self.rows: dict[str, Hit] = {}
        self.partial: set[str] = set()

    def add(self, hits: list[Hit], kind: str) -> None:
        for hit in hits:
            episode_id = hit.episode_id
            if episode_id in self.entries:
                continue
            episode = self.index.episode(episode_id) if self.index is not None else None
            if episode is not None:
                self.partial.add(episode_id)
                self.rows[episode_id] = hit
            else:
                episode = hit.episode
                if episode is None:
                    continue
            # A verbatim match (hybrid) carries no distance of its own: it enters like a word match.
            self.entries[episode_id] = WindowEntry(episode, None if kind == _VERBATIM else hit.distance,
                                                      kind == _SPEAKER)


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
