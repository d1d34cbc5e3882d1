"""A per-space, in-process lexical index (E6, E7): BM25 over every record of a memory space.

Why: the vector window (the nearest `candidate_window` records) misses memories that share the
question's rare words but not its overall meaning, and the host's own "full text" search on
LangBot's Chroma is a substring match of the whole message (useless for a natural-language
question). The plugin is the only writer of its memory KB, so it can keep its own word index
of each space and find lexical candidates anywhere in the space with **no host call per turn**.

- Keyed by `(kb_id, user_key)`; built lazily the first time recall needs it, by paging through
  every record of the space (`VectorIndex.page`). A space of at most `FIRST_PAGE` records is
  indexed inside that recall; a bigger one in a background task, so no turn ever waits for a
  build (at 100,000 records a build pages for minutes on stores that page by offset), and
  recalls until then score words inside the vector window only. There is no `MAX_ENUMERATED` cut here: the index
  is per-process memory (roughly the records' own size plus ~100 bytes per distinct word per
  record), and a partial index would silently recall less. Each page is re-checked for the space,
  as every read is (`EpisodeStore._own`).
- Kept current by the store's own writes (`EpisodeStore.upsert_batch`, `delete`): a write that
  succeeded is applied; a write that failed or whose outcome is unknown drops the space's index
  (rebuilt at the next recall); removing a KB drops all of its indexes. A write during a build
  makes that build stale: it is not kept (paging offsets may have shifted under it) and is tried
  again once, then the recall goes on without lexical candidates.
- Holds every status; callers filter (`accept`), so archived or superseded records are found
  only when the recall's filters ask for them.
- Tokens are `ranking.tokenize` (stopwords dropped, CJK bigrams) over content, tags and the
  speaker's name, the same text `ranking.rank` scores. Each record's normalized content
  (`sameness.fact_key`) is kept too, so a write finds a record stating the same fact without
  reading the space (`duplicates.py`).
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import math
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import partial

from .model import Episode
from .ranking import tokenize
from .sameness import fact_key

log = logging.getLogger("LongTermMemory")

SpaceKey = tuple[str, str]  # (kb_id, user_key)
# One page of a space: (kb_id, user_key, limit, offset) -> (records, more pages follow).
PageLoader = Callable[[str, str, int, int], Awaitable[tuple[list[Episode], bool]]]
FIRST_PAGE = 200  # a space that fits in one page is indexed inside the recall that needs it ...
BUILD_PAGE = 1000  # ... a bigger one in the background, in pages this big (stores page by offset, so
# fewer, larger pages cost far less at 100,000 records); recall goes on without it until it is ready
# A query word found in more records than this only scores candidates, it does not pick them: the
# work of one recall stays bounded in a space of any size (LoCoMo spaces stay under it: no effect).
SELECT_POSTINGS = 1000


def document_tokens(episode: Episode) -> list[str]:
    return tokenize(" ".join([episode.content, " ".join(episode.tags), episode.sender_name]))


@dataclass(frozen=True)
class LexicalHit:
    episode: Episode
    score: float  # raw Okapi BM25 over the whole space


class SpaceIndex:
    """Okapi BM25 over one space: postings term -> {episode id: term frequency}."""

    def __init__(self, user_key: str, k1: float = 1.2, b: float = 0.75) -> None:
        self.user_key = user_key
        self.k1 = k1
        self.b = b
        self._episodes: dict[str, Episode] = {}
        self._lengths: dict[str, int] = {}
        self._postings: dict[str, dict[str, int]] = {}
        self._total_length = 0
        self._speakers: Counter[str] = Counter()  # sender name -> records (question cues, ranking.py)
        self._facts: dict[str, set[str]] = {}  # fact key -> records (write-time de-duplication, duplicates.py)

    def __len__(self) -> int:
        return len(self._episodes)

    def __contains__(self, episode_id: object) -> bool:
        return episode_id in self._episodes

    def episode(self, episode_id: str) -> Episode | None:
        return self._episodes.get(episode_id)

    def with_fact_key(self, key: str) -> list[Episode]:
        """Every record (of any status) whose content has this `sameness.fact_key`."""
        return [self._episodes[i] for i in self._facts.get(key, ()) if i in self._episodes]

    def speaker_names(self) -> list[str]:
        """The sender names of the space's records (a question naming one gives a cue)."""
        return [name for name in self._speakers if name]

    def add(self, episode: Episode) -> None:
        if episode.user_key != self.user_key:  # never hold another space's record
            log.warning("[LongTermMemory] lexical index: record of another space ignored")
            return
        self.remove(episode.episode_id)
        tokens = document_tokens(episode)
        self._episodes[episode.episode_id] = episode
        self._lengths[episode.episode_id] = len(tokens)
        self._total_length += len(tokens)
        self._speakers[episode.sender_name] += 1
        self._facts.setdefault(fact_key(episode.content), set()).add(episode.episode_id)
        for term, tf in Counter(tokens).items():
            self._postings.setdefault(term, {})[episode.episode_id] = tf

    def remove(self, episode_id: str) -> None:
        old = self._episodes.pop(episode_id, None)
        if old is None:
            return
        self._total_length -= self._lengths.pop(episode_id, 0)
        self._speakers[old.sender_name] -= 1
        if self._speakers[old.sender_name] <= 0:
            del self._speakers[old.sender_name]
        same = self._facts.get(fact_key(old.content))
        if same is not None:
            same.discard(episode_id)
            if not same:
                del self._facts[fact_key(old.content)]
        for term in set(document_tokens(old)):
            posting = self._postings.get(term)
            if posting is not None:
                posting.pop(episode_id, None)
                if not posting:
                    del self._postings[term]

    def _terms(self, query_tokens: Iterable[str]) -> list[tuple[dict[str, int], float]]:
        """(posting, idf x query count) of each query word the space has."""
        n_docs = len(self._episodes)
        out = []
        for term, q_count in Counter(query_tokens).items():
            posting = self._postings.get(term)
            if posting:
                df = len(posting)
                out.append((posting, math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) * q_count))
        return out

    def _score(self, terms: list[tuple[dict[str, int], float]], doc_ids: Iterable[str], avg_len: float,
               out: dict[str, float]) -> None:
        k1, b, lengths = self.k1, self.b, self._lengths
        for doc_id in doc_ids:
            score = 0.0
            norm = k1 * (1 - b + b * lengths[doc_id] / avg_len)
            for posting, idf in terms:
                tf = posting.get(doc_id)
                if tf:
                    score += idf * tf * (k1 + 1) / (tf + norm)
            out[doc_id] = score

    def scores(self, query_tokens: Iterable[str]) -> dict[str, float]:
        """Raw BM25 of every record sharing at least one query word (others score 0)."""
        if not self._episodes:
            return {}
        terms = self._terms(query_tokens)
        matched: set[str] = set()
        for posting, _ in terms:
            matched.update(posting)
        out: dict[str, float] = {}
        self._score(terms, matched, self._total_length / len(self._episodes) or 1.0, out)
        return out

    def search(self, query_tokens: Iterable[str], limit: int, accept: Callable[[Episode], bool],
               also: Iterable[str] = ()) -> tuple[list[LexicalHit], dict[str, float]]:
        """The best `limit` records `accept` takes, and the exact BM25 of those and of `also` (the
        vector candidates). Cost per call is bounded whatever the space holds: records are *picked*
        by the query's selective words only (those in at most SELECT_POSTINGS records; a query of
        common words only picks none), then every picked record and every `also` record is scored
        exactly with all query words. A record matching only common words is not picked (such
        words cannot single out a few records among thousands), but is scored exactly when the
        vector search found it."""
        if not self._episodes:
            return [], {}
        terms = self._terms(query_tokens)
        avg_len = self._total_length / len(self._episodes) or 1.0
        selective = [t for t in terms if len(t[0]) <= SELECT_POSTINGS]
        picked: dict[str, float] = {}
        for posting, _ in selective:
            for doc_id in posting:
                picked[doc_id] = 0.0
        self._score(selective, list(picked), avg_len, picked)  # selection score: selective words only
        hits = self.top(picked, limit, accept)
        exact: dict[str, float] = {}
        self._score(terms, {h.episode.episode_id for h in hits} | {d for d in also if d in self._episodes},
                    avg_len, exact)
        return [LexicalHit(h.episode, exact[h.episode.episode_id]) for h in hits], exact

    def top(self, scores: dict[str, float], limit: int, accept: Callable[[Episode], bool]) -> list[LexicalHit]:
        """The `limit` best-scoring records that `accept` takes (statuses, filters)."""
        hits: list[LexicalHit] = []
        if limit <= 0 or not scores:
            return hits
        # Most recalls find enough accepted records among the first few; sort everything only if not.
        first = heapq.nlargest(4 * limit, scores, key=scores.__getitem__)
        order = first if len(first) == len(scores) else None
        for doc_id in first:
            if self._take(doc_id, scores, accept, hits) >= limit:
                return hits
        if order is None:
            seen = set(first)
            for doc_id in sorted(scores, key=scores.__getitem__, reverse=True):
                if doc_id not in seen and self._take(doc_id, scores, accept, hits) >= limit:
                    break
        return hits

    def _take(self, doc_id: str, scores: dict[str, float], accept: Callable[[Episode], bool],
              hits: list[LexicalHit]) -> int:
        episode = self._episodes[doc_id]
        if accept(episode):
            hits.append(LexicalHit(episode, scores[doc_id]))
        return len(hits)


class LexicalIndexes:
    """Every space's index in this process, and the bookkeeping that keeps them current."""

    def __init__(self, loader: PageLoader) -> None:
        self._page = loader
        self._ready: dict[SpaceKey, SpaceIndex] = {}
        self._locks: dict[SpaceKey, asyncio.Lock] = {}
        self._writes: dict[SpaceKey, int] = {}  # bumped by every write or drop, to spot stale builds
        self._building: dict[SpaceKey, asyncio.Task[None]] = {}
        self.builds = 0  # how many times a space was read in full (tests and benchmarks look)

    # ------------------------------------------------------------------ reads
    async def space(self, kb_id: str, user_key: str) -> SpaceIndex | None:
        """The space's index; None while a big space is indexed in the background, or when a small one
        could not be read consistently now."""
        key = (kb_id, user_key)
        ready = self._ready.get(key)
        if ready is not None or key in self._building:
            return ready
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            for _ in range(2):
                ready = self._ready.get(key)
                if ready is not None or key in self._building:
                    return ready
                before = self._writes.get(key, 0)
                first, more = await self._page(kb_id, user_key, FIRST_PAGE, 0)
                if more:
                    task = asyncio.get_running_loop().create_task(self._build_in_background(key))
                    self._building[key] = task
                    task.add_done_callback(partial(self._built, key))
                    return None
                self.builds += 1
                if self._writes.get(key, 0) != before:
                    log.info("[LongTermMemory] lexical index of a space changed while it was built; again")
                    continue
                return self._keep(key, first)
        return None

    async def space_unless_busy(self, kb_id: str, user_key: str) -> SpaceIndex | None:
        """As `space`, but None instead of waiting for a read of the space already under way: a write
        (its duplicate check) never queues behind an index build."""
        key = (kb_id, user_key)
        lock = self._locks.get(key)
        if key not in self._ready and (key in self._building or (lock is not None and lock.locked())):
            return None
        return await self.space(kb_id, user_key)

    def _built(self, key: SpaceKey, _task: asyncio.Task[None]) -> None:
        self._building.pop(key, None)

    async def settled(self) -> None:
        """Wait for the background builds running now (tests, benchmarks and shutdown)."""
        while self._building:
            await asyncio.gather(*list(self._building.values()), return_exceptions=True)

    async def _build_in_background(self, key: SpaceKey) -> None:
        kb_id, user_key = key
        try:
            for _ in range(2):
                before = self._writes.get(key, 0)
                episodes: list[Episode] = []
                offset, more = 0, True
                while more:
                    page, more = await self._page(kb_id, user_key, BUILD_PAGE, offset)
                    episodes.extend(page)
                    offset += BUILD_PAGE
                    if self._writes.get(key, 0) != before:
                        break  # stale already: start again
                self.builds += 1
                if self._writes.get(key, 0) == before:
                    self._keep(key, episodes)
                    return
                log.info("[LongTermMemory] lexical index of a space changed while it was built; again")
        except Exception as exc:  # noqa: BLE001 - a background build must never surface; the next recall retries
            log.info("[LongTermMemory] lexical index of kb=%s not built (%s); vector window only", kb_id,
                     type(exc).__name__)

    def _keep(self, key: SpaceKey, episodes: Iterable[Episode]) -> SpaceIndex:
        index = SpaceIndex(key[1])
        for episode in _newest_rows(episodes):
            index.add(episode)
        self._ready[key] = index
        log.info("[LongTermMemory] lexical index built kb=%s records=%d", key[0], len(index))
        return index

    def loaded(self, kb_id: str, user_key: str) -> SpaceIndex | None:
        return self._ready.get((kb_id, user_key))

    # ------------------------------------------------------------------ writes (the store calls these)
    def upserted(self, kb_id: str, episodes: Iterable[Episode]) -> None:
        for episode in episodes:
            key = (kb_id, episode.user_key)
            self._writes[key] = self._writes.get(key, 0) + 1
            index = self._ready.get(key)
            if index is not None:
                index.add(episode)

    def deleted(self, kb_id: str, user_key: str, episode_ids: Iterable[str]) -> None:
        key = (kb_id, user_key)
        self._writes[key] = self._writes.get(key, 0) + 1
        index = self._ready.get(key)
        if index is not None:
            for episode_id in episode_ids:
                index.remove(episode_id)

    def drop_space(self, kb_id: str, user_key: str) -> None:
        """In doubt (a failed or unknown write): forget the index; the next recall rebuilds it."""
        key = (kb_id, user_key)
        self._writes[key] = self._writes.get(key, 0) + 1
        self._ready.pop(key, None)

    def drop_kb(self, kb_id: str) -> None:
        for key in [k for k in (*self._ready, *self._writes) if k[0] == kb_id]:
            self._writes[key] = self._writes.get(key, 0) + 1
            self._ready.pop(key, None)


def _newest_rows(episodes: Iterable[Episode]) -> list[Episode]:
    """One episode per id, the most recently changed (an insert-only store can hold two rows of a
    record for a while, on different listing pages)."""
    chosen: dict[str, Episode] = {}
    for episode in episodes:
        kept = chosen.get(episode.episode_id)
        if kept is None or _changed_at(episode) > _changed_at(kept):
            chosen[episode.episode_id] = episode
    return list(chosen.values())


def _changed_at(episode: Episode) -> str:
    return episode.status_changed_at or episode.timestamp or ""
