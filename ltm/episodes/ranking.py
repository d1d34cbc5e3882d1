"""Recall ranking as an explicit, tunable recipe (E6, E7 in docs/REQUIREMENTS.md).

The backend gives a bounded recall window (vector hits, filtered on one
isolation key). Everything after that happens here, over the whole window, before
`top_k` is cut:

    relevance = vector_weight * vector_similarity + lexical_weight * bm25
    score     = ((relevance + context_weight * neighbour_relevance) * importance_factor
                 + exact bonuses) * time_factor

- the window: the vector hits of the space (and of the speaker) plus the best word matches of
  the whole space from the plugin's own index (`lexical.py`, `lexical_window`);
- vector_similarity is min-max normalized inside the vector window, because distance
  scales differ per backend (Chroma squared L2, Qdrant 1 - cos, RRF for hybrid); a
  an entry found by words only lies outside that window and scores 0 here;
- bm25 is the plugin's own Okapi BM25 over the whole space (index statistics), divided
  by the best candidate's; without the index (it could not be built this turn) it is
  computed inside the window (LangBot's Chroma "full text" is a substring match of the
  whole query, useless for questions);
- time_factor = (1 - recency_weight) + recency_weight * 0.5 ** (age / half_life), with
  recency_weight 1 by default: as documented, an otherwise identical memory at the
  half-life age scores half of a fresh one (a quarter at two half-lives). Decay never
  deletes anything and never reaches 0; `recency_half_life_days` is the admin's knob
  (recency_weight < 1 would keep a floor, e.g. for benchmarks without realistic time);
- neighbour_relevance is the relevance of the candidate written just before or just after
  this one (within context_seconds): the other half of an exchange ("did you go?" / "yes,
  on Sunday") is recalled with the half that matched;
- exact bonuses lift matches on episode id, tags, sender and verbatim snippets.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from .. import params
from ..kb_settings import DEFAULT_HALF_LIFE_DAYS, KBSettings, RetrievalStrategy
from ..timefields import parse_stored
from .model import Episode

_WORD = re.compile(r"[0-9a-z\u00c0-\u024f]+(?:['’][a-z]+)?", re.IGNORECASE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
MAX_TOP_K = 20  # every surface's recall, and automatic recall per turn
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)

# Function words carry no evidence of which memory is meant; questions are full of them.
STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being am
    do does did doing have has had having i me my we our you your he him his she her it its they them
    their this that these those what which who whom whose when where why how there here not no so than
    too very can could will would shall should may might must about into over after before up down out
    just also any some all each both few more most other such only own same s t don't didn't""".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased words without stopwords; CJK runs become character bigrams."""
    lowered = text.lower()
    tokens = [w for w in _WORD.findall(lowered) if w not in STOPWORDS]
    for run in _CJK.findall(lowered):
        if len(run) == 1:
            tokens.append(run)
        tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


@dataclass(frozen=True)
class RecallRecipe:
    """How one kind of recall works: its `top_k` and the range a caller may ask for, the candidate
    windows, and the ranking weights. The named recipes are in `recipes.py`; `resolved_for` applies a
    memory KB's settings (strategy, half-life, exact-match boost, and `top_k` where it is None)."""

    name: str = "recall"
    top_k: int | None = 5  # None: the KB's `auto_recall_top_k` (automatic recall)
    max_top_k: int = MAX_TOP_K
    candidate_window: int = 200  # vector hits of the space (tuning: bench/RESULTS.md, "What was tried")
    speaker_window: int = 20
    full_text_window: int = 20  # only with retrieval_strategy "hybrid" (the host's substring search)
    # Whole-space BM25 candidates from the in-process word index (lexical.py).
    lexical_window: int = 50
    strategy: RetrievalStrategy = RetrievalStrategy.AUTO
    # Fusion of min-max vector similarity and whole-space BM25 (max-normalized).
    vector_weight: float = 0.4
    lexical_weight: float = 0.6
    # Neighbouring context: an episode written right before or after a relevant one (the other half of
    # an exchange) gains context_weight x that neighbour's relevance, if within context_seconds.
    context_weight: float = 0.5
    context_seconds: float = 600.0
    half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    recency_weight: float = 1.0  # documented half-life semantics: half the score at the half-life age
    importance_weight: float = 0.05
    exact_match_boost: bool = True
    id_bonus: float = 10.0
    snippet_bonus: float = 0.5
    tag_bonus: float = 0.25
    sender_bonus: float = 0.15
    speaker_bonus: float = 0.05
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
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
            recipe = replace(recipe, vector_weight=1.0, lexical_weight=0.0, context_weight=0.0)
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
    time_factor: float
    bonus: float
    context: float = 0.0  # the best adjacent candidate's relevance (before context_weight)


def time_weight(age_days: float, half_life_days: float) -> float:
    """0.5 ** (age / half-life): 1.0 now, 0.5 at the half-life age; never 0."""
    return float(0.5 ** (max(0.0, age_days) / max(half_life_days, 1e-6)))


def _vector_scores(candidates: list[WindowEntry]) -> list[float]:
    """Min-max similarity inside the vector window. An entry found by words only lies outside
    that window, so it is at most as similar as the window's farthest hit: it scores 0."""
    distances = [c.distance for c in candidates if c.distance is not None]
    if not distances:
        return [0.0] * len(candidates)
    low, high = min(distances), max(distances)
    if high - low < 1e-12:
        return [0.0 if c.distance is None else 1.0 for c in candidates]
    return [0.0 if c.distance is None else (high - c.distance) / (high - low) for c in candidates]


def _bm25_scores(query_tokens: list[str], docs: list[list[str]], k1: float, b: float) -> list[float]:
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


def _exact_bonus(recipe: RecallRecipe, query: str, tokens: set[str], episode: Episode) -> float:
    if not recipe.exact_match_boost:
        return 0.0
    bonus = 0.0
    lowered = query.strip().lower()
    ids = {m.lower() for m in _UUID.findall(lowered)}
    if episode.episode_id.lower() in ids:
        bonus += recipe.id_bonus
    if len(lowered) >= 4 and lowered in episode.content.lower():
        bonus += recipe.snippet_bonus
    if tokens and any(tag in tokens or tag in lowered.split() for tag in episode.tags):
        bonus += recipe.tag_bonus
    sender = {episode.sender_id.lower(), episode.sender_name.lower()} - {""}
    if sender and (sender & tokens or sender & set(lowered.split())):
        bonus += recipe.sender_bonus
    return bonus


def _neighbour_relevance(moments: list[datetime | None], relevance: list[float], seconds: float) -> list[float]:
    """For each candidate, the higher relevance of the candidates just before and just after it in
    time, counted only within `seconds` of it (0 without a neighbour or a readable time)."""
    out = [0.0] * len(relevance)
    timed = sorted((m.timestamp(), i) for i, m in enumerate(moments) if m is not None)
    for pos, (at, i) in enumerate(timed):
        best = 0.0
        for other in (pos - 1, pos + 1):
            if 0 <= other < len(timed) and abs(timed[other][0] - at) <= seconds:
                best = max(best, relevance[timed[other][1]])
        out[i] = best
    return out


def rank(
    candidates: list[WindowEntry],
    query: str,
    recipe: RecallRecipe,
    now: datetime,
    preferred_sender: str = "",
    lexical_scores: dict[str, float] | None = None,
) -> list[ScoredEpisode]:
    """Score the whole window, then cut `top_k` (E6). `lexical_scores`: raw BM25 per episode id over
    the whole space (lexical.py); without them BM25 is computed inside the window."""
    if not candidates:
        return []
    vector = _vector_scores(candidates)
    query_tokens = tokenize(query)
    if recipe.uses_lexical and lexical_scores is not None:
        raw = [lexical_scores.get(c.episode.episode_id, 0.0) for c in candidates]
        top = max(raw)
        lexical = [r / top for r in raw] if top > 0 else raw
    elif recipe.uses_lexical:
        docs = [
            tokenize(" ".join([c.episode.content, " ".join(c.episode.tags), c.episode.sender_name]))
            for c in candidates
        ]
        lexical = _bm25_scores(query_tokens, docs, recipe.bm25_k1, recipe.bm25_b)
    else:
        lexical = [0.0] * len(candidates)
    token_set = set(query_tokens)
    moments = [parse_stored(c.episode.timestamp) for c in candidates]
    relevance = [recipe.vector_weight * vec + recipe.lexical_weight * lex for vec, lex in zip(vector, lexical)]
    context = _neighbour_relevance(moments, relevance, recipe.context_seconds) if recipe.context_weight > 0 \
        else [0.0] * len(candidates)
    scored: list[ScoredEpisode] = []
    for cand, vec, lex, stored, rel, ctx in zip(candidates, vector, lexical, moments, relevance, context):
        ep = cand.episode
        age_days = (now - stored).total_seconds() / 86400 if stored else 0.0
        tf = (1 - recipe.recency_weight) + recipe.recency_weight * time_weight(age_days, recipe.half_life_days)
        importance = 1 + recipe.importance_weight * (ep.importance - 2)
        bonus = _exact_bonus(recipe, query, token_set, ep)
        if preferred_sender and ep.sender_id == preferred_sender:
            bonus += recipe.speaker_bonus
        score = ((rel + recipe.context_weight * ctx) * importance + bonus) * tf
        scored.append(ScoredEpisode(ep, score, vec, lex, tf, bonus, ctx))
    # Newest first among equal scores, then by score (sort is stable).
    scored.sort(key=lambda s: s.episode.timestamp, reverse=True)
    scored.sort(key=lambda s: -s.score)
    return scored[: recipe.top_k]
