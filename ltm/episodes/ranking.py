"""Recall ranking as an explicit, tunable recipe (E6, E7 in docs/REQUIREMENTS.md).

The backend gives a bounded recall window (vector hits, filtered on one
isolation key). Everything after that happens here, over the whole window, before
`top_k` is cut:

    relevance = vector_weight * vector_similarity + lexical_weight * bm25
    score     = (relevance + context_weight * neighbour_relevance + session_weight * session_relevance)
                * importance_factor
                + exact bonuses + date_weight * date_match + time_cue_weight (a "when" question, a record
                saying when) - question_penalty (if the record is a question) + recency_weight * time_weight

- the window: the vector hits of the space (and of the speaker) plus the best word matches of
  the whole space from the plugin's own index (`lexical.py`, `lexical_window`), plus the records
  written just before and after the most relevant of them (`adjacent.py`, `adjacent_top`);
- vector_similarity is min-max normalized inside the vector window, because distance
  scales differ per backend (Chroma squared L2, Qdrant 1 - cos, RRF for hybrid); a
  candidate found by words only lies outside that window and scores 0 here;
- bm25 is the plugin's own Okapi BM25 over the whole space (index statistics), divided
  by the best candidate's; without the index (it could not be built this turn) it is
  computed inside the window (LangBot's Chroma "full text" is a substring match of the
  whole query, useless for questions); terms are `terms.tokenize` (light stems), the question's
  read once with the rest of it (`question.py`);
- time_weight = 0.5 ** (age / half_life): 1 now, 0.5 at `recency_half_life_days`, never 0. It
  is *added* with `recency_weight`, so it orders memories of comparable relevance (the newer
  first) and never divides relevance by age: a clearly relevant memory from years ago still
  outranks a weak match from yesterday. Decay never deletes anything;
- neighbour_relevance is the best relevance of the `context_reach` entries written just before
  or just after this one (within context_seconds; the second one away at context_decay): the
  other half of an exchange ("did you go?" / "yes, on Sunday") is recalled with the half that
  matched;
- session_relevance is the best relevance among the candidates of the same conversation burst
  (candidates no more than session_gap_seconds apart, one after another): a record said in the
  conversation the question is about ranks above an equally worded one from another day;
- question cues (`question_cues.py`): the sender bonus lifts the records of a speaker the
  question names; date_match lifts records from a day or month the question names; a question
  of time lifts records that say when something happened ("last week");
- a record that is itself a question ("what was it called?") holds less of an answer than a
  statement: it loses question_penalty; a superseded record (only recalled when a status filter
  asks for it) loses superseded_penalty, so its correction ranks above it;
- exact bonuses lift matches on episode id, tags, sender and verbatim snippets.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from .. import params
from ..kb_settings import DEFAULT_HALF_LIFE_DAYS, KBSettings, RetrievalStrategy
from ..timefields import parse_stored
from .model import Episode, EpisodeStatus
from .question import Question
from .question_cues import date_match, tells_when
from .terms import tokenize

__all__ = ["MAX_TOP_K", "RecallRecipe", "ScoredEpisode", "WindowEntry", "rank", "time_weight"]

MAX_TOP_K = 20  # every surface's recall, and automatic recall per turn


@dataclass(frozen=True)
class RecallRecipe:
    """How one kind of recall works: its `top_k` and the range a caller may ask for, the candidate
    windows, and the ranking weights. The named recipes are in `recipes.py`; `resolved_for` applies a
    memory KB's settings. Every default was chosen on the LoCoMo tuning split only; the figures behind
    each are in bench/RESULTS.md ("How the shipped defaults were chosen")."""

    name: str = "recall"
    top_k: int | None = 5  # None: the KB's `auto_recall_top_k` (automatic recall)
    max_top_k: int = MAX_TOP_K
    # Vector hits of the space; the word index supplies whole-space word candidates, so it can be small.
    vector_window: int = 50
    speaker_window: int = 20
    full_text_window: int = 20  # only with retrieval_strategy "hybrid" (the host's substring search)
    # Whole-space BM25 candidates from the in-process word index (lexical.py).
    lexical_window: int = 100
    strategy: RetrievalStrategy = RetrievalStrategy.AUTO
    # Fusion of min-max vector similarity and whole-space BM25 (max-normalized).
    vector_weight: float = 0.4
    lexical_weight: float = 0.6
    # Neighbouring context: an episode written right before or after a relevant one (the other half of
    # an exchange) gains context_weight x that neighbour's relevance, if within context_seconds. The
    # neighbours are the `context_reach` window entries either side; the n-th counts context_decay ** (n - 1).
    context_weight: float = 0.4
    context_seconds: float = 600.0
    context_reach: int = 2
    context_decay: float = 0.7
    # Adjacent records: the records written just before and after the `adjacent_top` most relevant window
    # entries (`adjacent_reach` either side, within context_seconds) join the window (adjacent.py).
    adjacent_top: int = 5
    adjacent_reach: int = 2
    # Words from the best records (feedback.py), off: the `feedback_terms` words that weigh most in the
    # `feedback_top` first-ranked records join the question's words, weighing feedback_weight x their number.
    feedback_top: int = 5
    feedback_terms: int = 0
    feedback_weight: float = 0.3
    # Session context: the best relevance in the candidate's conversation burst (gaps of at most
    # session_gap_seconds).
    session_weight: float = 0.3
    session_gap_seconds: float = 3600.0
    half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    # The time weight (0.5 at the half-life) is added, never multiplied: among comparable matches the
    # newer ranks first.
    recency_weight: float = 0.05
    importance_weight: float = 0.05
    exact_match_boost: bool = True
    id_bonus: float = 10.0
    snippet_bonus: float = 0.5
    tag_bonus: float = 0.25
    # A speaker the question names (question_cues.py); the name is also left out of the embedded text.
    named_speaker_bonus: float = 0.5
    strip_named_speakers: bool = True
    own_speaker_bonus: float = 0.05
    # A day or month the question names.
    date_weight: float = 0.7
    # A question of time ("When did ...?"): a record that says when, relative to its date ("last week").
    time_cue_weight: float = 0.2
    # A record that is itself a question holds less of an answer than a statement.
    question_penalty: float = 0.2
    # A superseded record (asked for with a status filter) ranks below its correction whatever the wording.
    superseded_penalty: float = 1.0
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    # What the recall hands on (recall.py): only facts that still hold (a `valid_until` that has passed
    # leaves the record out, before top_k), and a recalled summary in the place of its own sources.
    current_only: bool = False
    fold_summary_sources: bool = False
    resolved: bool = False  # the KB's settings are applied (a tuned benchmark recipe is resolved already)

    def with_top_k(self, value: Any) -> RecallRecipe:
        """This recipe with a caller's `top_k` (None: the recipe's own), validated against its range; the
        same bad value gets the same message on every surface (`ltm.params`)."""
        default = self.top_k if self.top_k is not None else 1
        return replace(self, top_k=params.bounded_int(value, "top_k", low=1, high=self.max_top_k, default=default))

    def with_host_top_k(self, value: Any) -> RecallRecipe:
        """This recipe with a `top_k` the host sent (not a user's): out-of-range values are brought into range."""
        try:
            number = max(1, min(int(value), self.max_top_k))
        except (TypeError, ValueError):
            return self
        return replace(self, top_k=number)

    def resolved_for(self, settings: KBSettings) -> RecallRecipe:
        """The recipe as one memory KB runs it; `top_k` is then always a number."""
        if self.resolved:
            return self
        recipe = replace(
            self,
            top_k=settings.auto_recall_top_k if self.top_k is None else self.top_k,
            strategy=settings.retrieval_strategy,
            half_life_days=settings.recency_half_life_days,
            exact_match_boost=settings.exact_match_boost,
            resolved=True,
        )
        if settings.retrieval_strategy is RetrievalStrategy.VECTOR:
            recipe = replace(recipe, vector_weight=1.0, lexical_weight=0.0, context_weight=0.0,
                             session_weight=0.0, adjacent_top=0, feedback_terms=0)
        return recipe

    @property
    def uses_lexical(self) -> bool:
        return self.lexical_weight > 0


@dataclass(frozen=True)
class WindowEntry:
    """One episode of the recall window, before ranking."""

    episode: Episode
    distance: float | None  # None: found by words only, outside the vector window
    from_speaker_search: bool = False


@dataclass(frozen=True)
class ScoredEpisode:
    episode: Episode
    score: float
    vector: float
    lexical: float
    time_weight: float  # 0.5 ** (age / half-life), added to the score with recency_weight
    bonus: float  # exact matches, a named speaker, a named date, minus the question penalty
    context: float = 0.0  # the best adjacent candidate's relevance (before context_weight)
    session: float = 0.0  # the best relevance in the candidate's conversation burst (before session_weight)
    distance: float | None = None  # the backend's vector distance; None: found by words only


def time_weight(age_days: float, half_life_days: float) -> float:
    """0.5 ** (age / half-life): 1.0 now, 0.5 at the half-life age; never 0."""
    return float(0.5 ** (max(0.0, age_days) / max(half_life_days, 1e-6)))


def _vector_scores(entries: list[WindowEntry]) -> list[float]:
    """Min-max similarity inside the vector window. A candidate found by words only lies outside
    that window, so it is at most as similar as the window's farthest hit: it scores 0."""
    distances = [c.distance for c in entries if c.distance is not None]
    if not distances:
        return [0.0] * len(entries)
    low, high = min(distances), max(distances)
    if high - low < 1e-12:
        return [0.0 if c.distance is None else 1.0 for c in entries]
    return [0.0 if c.distance is None else (high - c.distance) / (high - low) for c in entries]


def _bm25_scores(query_tokens: Sequence[str], docs: list[list[str]], k1: float, b: float) -> list[float]:
    if not query_tokens or not docs:
        return [0.0] * len(docs)
    avg_len = sum(len(d) for d in docs) / len(docs) or 1.0
    doc_freq: Counter[str] = Counter()
    for doc in docs:
        doc_freq.update(set(doc))
    n_docs = len(docs)
    weights = {t: math.log(1 + (n_docs - doc_freq[t] + 0.5) / (doc_freq[t] + 0.5)) for t in set(query_tokens)}
    scores = []
    for doc in docs:
        counts = Counter(doc)
        norm = k1 * (1 - b + b * len(doc) / avg_len)
        score = 0.0
        for term in query_tokens:
            tf = counts.get(term, 0)
            if tf:
                score += weights[term] * tf * (k1 + 1) / (tf + norm)
        scores.append(score)
    top = max(scores)
    return [s / top for s in scores] if top > 0 else scores


def _exact_bonus(recipe: RecallRecipe, question: Question, episode: Episode) -> float:
    if not recipe.exact_match_boost:
        return 0.0
    bonus = 0.0
    if question.ids and episode.episode_id.lower() in question.ids:
        bonus += recipe.id_bonus
    if len(question.lowered) >= 4 and question.lowered in episode.content.lower():
        bonus += recipe.snippet_bonus
    if question.words and any(tag in question.tag_words for tag in episode.tags):
        bonus += recipe.tag_bonus
    return bonus


def _named_speakers(question: Question, entries: list[WindowEntry]) -> set[str]:
    """Ids of the candidates' speakers the question names (by name or id), each speaker checked once."""
    out: set[str] = set()
    seen: set[tuple[str, str]] = set()
    for entry in entries:
        ep = entry.episode
        key = (ep.sender_id, ep.sender_name)
        if key in seen:
            continue
        seen.add(key)
        if any(question.names(who) for who in key if who):
            out.add(ep.sender_id or ep.sender_name)
    return out


def _neighbour_relevance(moments: list[datetime | None], relevance: list[float], recipe: RecallRecipe
                         ) -> list[float]:
    """For each window entry, the best relevance of the `context_reach` entries just before and just after
    it in time, the n-th away counted at context_decay ** (n - 1), and only within `context_seconds` of it
    (0 without a neighbour or a readable time)."""
    out = [0.0] * len(relevance)
    timed = sorted((m.timestamp(), i) for i, m in enumerate(moments) if m is not None)
    seconds = recipe.context_seconds
    for pos, (at, i) in enumerate(timed):
        best = 0.0
        share = 1.0
        for step in range(1, recipe.context_reach + 1):
            for other in (pos - step, pos + step):
                if 0 <= other < len(timed) and abs(timed[other][0] - at) <= seconds:
                    best = max(best, share * relevance[timed[other][1]])
            share *= recipe.context_decay
        out[i] = best
    return out


def _session_relevance(moments: list[datetime | None], relevance: list[float], gap_seconds: float) -> list[float]:
    """For each candidate, the best relevance among the candidates of its conversation burst: runs of
    candidates, in time order, each at most `gap_seconds` after the one before (0 without a time)."""
    out = [0.0] * len(relevance)
    timed = sorted((m.timestamp(), i) for i, m in enumerate(moments) if m is not None)
    start = 0
    for end in range(1, len(timed) + 1):
        if end == len(timed) or timed[end][0] - timed[end - 1][0] > gap_seconds:
            burst = [i for _, i in timed[start:end]]
            best = max(relevance[i] for i in burst)
            for i in burst:
                out[i] = best
            start = end
    return out


def _is_question(content: str) -> bool:
    return content.rstrip().endswith(("?", "？"))


def _lexical_scores(entries: list[WindowEntry], question: Question, recipe: RecallRecipe,
                    lexical_scores: dict[str, float] | None) -> list[float]:
    if not recipe.uses_lexical:
        return [0.0] * len(entries)
    if lexical_scores is not None:
        raw = [lexical_scores.get(c.episode.episode_id, 0.0) for c in entries]
        top = max(raw)
        return [r / top for r in raw] if top > 0 else raw
    docs = [tokenize(" ".join([c.episode.content, " ".join(c.episode.tags), c.episode.sender_name]))
            for c in entries]
    return _bm25_scores(question.terms, docs, recipe.bm25_k1, recipe.bm25_b)


def _relevance(entries: list[WindowEntry], question: Question, recipe: RecallRecipe,
               lexical_scores: dict[str, float] | None) -> tuple[list[float], list[float], list[float]]:
    """Each entry's vector score, word score and their weighted sum, its relevance."""
    vector = _vector_scores(entries)
    lexical = _lexical_scores(entries, question, recipe, lexical_scores)
    return vector, lexical, [recipe.vector_weight * v + recipe.lexical_weight * w for v, w in zip(vector, lexical)]


def most_relevant(entries: list[WindowEntry], question: Question, recipe: RecallRecipe,
                  lexical_scores: dict[str, float] | None, count: int) -> list[WindowEntry]:
    """The `count` entries of highest relevance (vector and word scores only, before any cue)."""
    relevance = _relevance(entries, question, recipe, lexical_scores)[2]
    order = sorted(range(len(entries)), key=relevance.__getitem__, reverse=True)
    return [entries[i] for i in order[:count]]


def rank(
    entries: list[WindowEntry],
    question: Question,
    recipe: RecallRecipe,
    now: datetime,
    asking_speaker: str = "",
    lexical_scores: dict[str, float] | None = None,
) -> list[ScoredEpisode]:
    """Score the whole window against the question (read once, `question.py`), then cut `top_k` (E6).
    `lexical_scores`: raw BM25 per episode id over the whole space (lexical.py); without them BM25 is
    computed inside the window."""
    if not entries:
        return []
    vector, lexical, relevance = _relevance(entries, question, recipe, lexical_scores)
    moments = [parse_stored(c.episode.timestamp) for c in entries]
    none = [0.0] * len(entries)
    context = _neighbour_relevance(moments, relevance, recipe) if recipe.context_weight > 0 else none
    session = _session_relevance(moments, relevance, recipe.session_gap_seconds) if recipe.session_weight > 0 \
        else none
    named_ids = _named_speakers(question, entries) if recipe.exact_match_boost and recipe.named_speaker_bonus else set()
    dates = question.dates if recipe.date_weight > 0 else ()
    when = question.asks_when and recipe.time_cue_weight > 0
    scored: list[ScoredEpisode] = []
    for entry, vec, lex, stored, rel, ctx, ses in zip(entries, vector, lexical, moments, relevance, context, session):
        ep = entry.episode
        age_days = (now - stored).total_seconds() / 86400 if stored else 0.0
        weight = time_weight(age_days, recipe.half_life_days)
        importance = 1 + recipe.importance_weight * (ep.importance - 2)
        bonus = _exact_bonus(recipe, question, ep)
        if named_ids and (ep.sender_id or ep.sender_name) in named_ids:
            bonus += recipe.named_speaker_bonus
        if asking_speaker and ep.sender_id == asking_speaker:
            bonus += recipe.own_speaker_bonus
        if dates:
            bonus += recipe.date_weight * date_match(dates, (stored, parse_stored(ep.fact.event_at)))
        if when and tells_when(ep.content):
            bonus += recipe.time_cue_weight
        if recipe.question_penalty and _is_question(ep.content):
            bonus -= recipe.question_penalty
        if ep.status is EpisodeStatus.SUPERSEDED:
            bonus -= recipe.superseded_penalty
        score = (rel + recipe.context_weight * ctx + recipe.session_weight * ses) * importance + bonus \
            + recipe.recency_weight * weight
        scored.append(ScoredEpisode(ep, score, vec, lex, weight, bonus, ctx, ses, entry.distance))
    # Newest first among equal scores, then by score (sort is stable).
    scored.sort(key=lambda s: s.episode.timestamp, reverse=True)
    scored.sort(key=lambda s: -s.score)
    return scored[: recipe.top_k]
