"""One memory space as the plugin holds it in process memory: what recall ranks and what listings
order by, for every record of the space (E6, E7, and the management listing).

Why it exists and how it is kept current: `lexical.py`. This module is the data structure, kept
compact because it holds whole spaces (100,000 records in a few tens of MiB):

- per record only what ranking, recall filters and listings read: id, content, timestamp, status,
  importance, the speaker (sender id and name, interned), and, where present, tags and the fact
  times (`event_at`, `valid_from`, `valid_until`). Everything else stays in the store; callers
  fetch the few records they hand on (`EpisodeStore.get_many`). `episode()` gives a *partial*
  `Episode` built from these facts: good for ranking and filtering, never for display;
- BM25 postings per word: the records that have it, as one sorted `array` of
  `record number << 8 | term frequency` (a plain int when one record has the word), so a word in
  50,000 records costs 200 KB rather than a dict of 50,000 entries;
- the listing order (newest first), sorted again after a change, when it is next asked for; the
  order records were written in, for recall's adjacent records (`time_order.py`).

A record of another space is never held (`add` refuses it).
"""

from __future__ import annotations

import logging
import math
from array import array
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .best_first import BestFirst
from .model import Episode, EpisodeStatus, FactTime, newest_rows, partial_episode
from .postings import MAX_RECORDS, TF_BITS, TF_MAX, Posting, entries, term_frequency
from .sameness import fact_key
from .terms import tokenize
from .time_order import TimeOrder

log = logging.getLogger("LongTermMemory")

# A query word found in more records than this only scores candidates, it does not pick them: the
# work of one recall stays bounded in a space of any size (LoCoMo spaces stay under it: no effect).
SELECT_POSTINGS = 1000
# Partial records built for recall are kept (up to this many per space, about 1 KB each): a recall reads
# 150-170 of them, and building each again was a third of a turn's CPU at 1,000 records.
PARTIALS_KEPT = 1024
_STATUSES = tuple(EpisodeStatus)
_CODE = {status: code for code, status in enumerate(_STATUSES)}
Accept = Callable[[Episode], bool]


def _tokens(content: str, tags: Sequence[str], sender_name: str) -> list[str]:
    return tokenize(" ".join([content, " ".join(tags), sender_name]))


@dataclass(frozen=True)
class LexicalHit:
    episode: Episode  # partial (see the module docstring)
    score: float  # raw Okapi BM25 over the whole space


_NO_FACT = FactTime()


@dataclass(frozen=True)
class _Rare:
    """Fields most records leave empty: kept only for the records that have one."""
    tags: tuple[str, ...] = ()
    fact: FactTime = _NO_FACT  # event_at, valid_from, valid_until only


_NONE = _Rare()


class SpaceIndex:
    """Okapi BM25 and listing order over one space's records."""

    def __init__(self, space_key: str, k1: float = 1.2, b: float = 0.75) -> None:
        self.space_key = space_key
        self.k1 = k1
        self.b = b
        self._ids: list[str | None] = []  # record number -> episode id (None: a free number)
        self._number: dict[str, int] = {}
        self._free: list[int] = []
        self._content: list[str] = []
        self._timestamp: list[str] = []
        self._status = bytearray()
        self._importance = bytearray()
        self._length = array("I")
        self._speaker = array("I")
        self._speakers: list[tuple[str, str]] = []  # (sender id, sender name), each pair once
        self._speaker_number: dict[tuple[str, str], int] = {}
        self._speaker_records: Counter[int] = Counter()  # speaker number -> records held now
        self._rare: dict[int, _Rare] = {}
        self._postings: dict[str, Posting] = {}
        self._total_length = 0
        self._order: list[int] | None = None  # record numbers, newest first
        self._listed: dict[frozenset[int], list[int]] = {}  # status codes -> their part of _order
        self._facts: dict[str, set[int]] = {}  # sameness.fact_key -> record numbers (duplicates.py)
        self._time = TimeOrder(self._timestamp)  # made when recall first asks for adjacent records
        self._built: dict[int, Episode] = {}  # record number -> its partial record, until the record changes

    # ------------------------------------------------------------------ records
    def __len__(self) -> int:
        return len(self._number)

    def __contains__(self, episode_id: object) -> bool:
        return episode_id in self._number

    def ids(self) -> list[str]:
        return list(self._number)

    def episode(self, episode_id: str) -> Episode | None:
        """The record as far as this index knows it (a partial Episode: see the module docstring)."""
        number = self._number.get(episode_id)
        return None if number is None else self._partial(number)

    def with_fact_key(self, key: str) -> list[Episode]:
        """Every record (any status) whose content has this `sameness.fact_key` (write-time de-duplication)."""
        return [self._partial(n) for n in sorted(self._facts.get(key, ()))]

    def _unkey(self, number: int) -> None:
        key = fact_key(self._content[number])
        held = self._facts.get(key)
        if held is not None:
            held.discard(number)
            if not held:
                del self._facts[key]

    def speaker_names(self) -> list[str]:
        """The sender names of the space's records (a question naming one gives a cue, question_cues.py)."""
        names = (self._speakers[n][1] for n, count in self._speaker_records.items() if count > 0)
        return list(dict.fromkeys(name for name in names if name))

    def adjacent(self, episode_id: str, reach: int) -> list[Episode]:
        """The records written just before and after this one, up to `reach` on each side, nearest first."""
        if not self._time.built:
            self._time.build(list(self._number.values()))
        number = self._number.get(episode_id)
        return [] if number is None else [self._partial(n) for n in self._time.around(number, reach)]

    def status(self, episode_id: str) -> EpisodeStatus | None:
        number = self._number.get(episode_id)
        return None if number is None else _STATUSES[self._status[number]]

    def agrees_with(self, page: Sequence[Episode]) -> bool:
        """Every record of a page the store listed is in this index, with the same status."""
        return all(self.status(e.episode_id) is e.status for e in newest_rows(page))

    def _partial(self, number: int) -> Episode:
        built = self._built.get(number)
        if built is not None:
            return built
        sender_id, sender_name = self._speakers[self._speaker[number]]
        rare = self._rare.get(number, _NONE)
        built = partial_episode(episode_id=self._ids[number] or "", space_key=self.space_key,
                                content=self._content[number], timestamp=self._timestamp[number],
                                importance=self._importance[number], tags=rare.tags,
                                status=_STATUSES[self._status[number]], sender_id=sender_id, sender_name=sender_name,
                                fact=rare.fact)
        if len(self._built) >= PARTIALS_KEPT:
            self._built.clear()
        self._built[number] = built
        return built

    def add(self, episode: Episode) -> None:
        if episode.space_key != self.space_key:  # never hold another space's record
            log.warning("[LongTermMemory] space index: record of another space ignored")
            return
        number = self._number.get(episode.episode_id)
        if number is not None:
            self._speaker_records[self._speaker[number]] -= 1  # `_set_facts` counts the record's speaker again
            self._time.remove(number)  # `_set_facts` places it again, by its new time
        if number is not None and self._same_words(number, episode):
            self._set_facts(number, episode)  # a status change: the words, and so the postings, stay
            self._changed()
            return
        if number is not None:
            self._unpost(number)
            self._unkey(number)
        else:
            number = self._allocate(episode.episode_id)
        self._set_facts(number, episode)
        self._content[number] = episode.content
        self._facts.setdefault(fact_key(episode.content), set()).add(number)
        self._post(number, _tokens(episode.content, episode.tags, episode.sender_name))
        self._changed()

    def remove(self, episode_id: str) -> None:
        number = self._number.pop(episode_id, None)
        if number is None:
            return
        self._unpost(number)
        self._unkey(number)
        self._time.remove(number)
        self._built.pop(number, None)
        self._speaker_records[self._speaker[number]] -= 1
        self._ids[number] = None
        self._content[number] = self._timestamp[number] = ""
        self._rare.pop(number, None)
        self._free.append(number)
        self._changed()

    def _allocate(self, episode_id: str) -> int:
        if self._free:
            number = self._free.pop()
            self._ids[number] = episode_id
        else:
            number = len(self._ids)
            if number >= MAX_RECORDS:
                raise OverflowError(f"a space index holds at most {MAX_RECORDS:,} records")
            self._ids.append(episode_id)
            self._content.append("")
            self._timestamp.append("")
            self._status.append(0)
            self._importance.append(0)
            self._length.append(0)
            self._speaker.append(0)
        self._number[episode_id] = number
        return number

    def _set_facts(self, number: int, episode: Episode) -> None:
        self._built.pop(number, None)  # every change of a record passes here, or through `remove`
        self._timestamp[number] = episode.timestamp
        self._time.add(number)
        self._status[number] = _CODE[episode.status]
        self._importance[number] = max(0, min(255, episode.importance))
        pair = (episode.sender_id, episode.sender_name)
        speaker = self._speaker_number.get(pair)
        if speaker is None:
            speaker = self._speaker_number[pair] = len(self._speakers)
            self._speakers.append(pair)
        self._speaker[number] = speaker
        self._speaker_records[speaker] += 1
        fact = episode.fact
        if episode.tags or fact.event_at or fact.valid_from or fact.valid_until:
            self._rare[number] = _Rare(episode.tags, FactTime(fact.event_at, fact.valid_from, fact.valid_until))
        else:
            self._rare.pop(number, None)

    def _same_words(self, number: int, episode: Episode) -> bool:
        return (self._content[number] == episode.content
                and self._rare.get(number, _NONE).tags == episode.tags
                and self._speakers[self._speaker[number]][1] == episode.sender_name)

    def _changed(self) -> None:
        self._order = None
        self._listed.clear()

    # ------------------------------------------------------------------ postings
    def _post(self, number: int, tokens: list[str]) -> None:
        self._length[number] = len(tokens)
        self._total_length += len(tokens)
        postings, shifted = self._postings, number << TF_BITS
        for term, tf in Counter(tokens).items():
            packed = shifted | (tf if tf < TF_MAX else TF_MAX)
            posting = postings.get(term)
            if posting is None:
                postings[term] = packed
            elif isinstance(posting, int):
                postings[term] = array("I", sorted((posting, packed)))
            elif packed > posting[-1]:
                posting.append(packed)  # new records take the next number: the usual case
            else:
                insort(posting, packed)

    def _unpost(self, number: int) -> None:
        rare = self._rare.get(number, _NONE)
        tokens = _tokens(self._content[number], rare.tags, self._speakers[self._speaker[number]][1])
        self._total_length -= self._length[number]
        self._length[number] = 0
        for term, tf in Counter(tokens).items():
            packed = number << TF_BITS | min(tf, TF_MAX)
            posting = self._postings.get(term)
            if posting is None:
                continue
            if isinstance(posting, int):
                if posting == packed:
                    del self._postings[term]
                continue
            at = bisect_left(posting, packed)
            if at < len(posting) and posting[at] == packed:
                del posting[at]
            if len(posting) == 1:
                self._postings[term] = posting[0]

    _entries = staticmethod(entries)
    _tf = staticmethod(term_frequency)

    # ------------------------------------------------------------------ BM25
    def frequency(self, term: str) -> int:  # how many records have this word
        posting = self._postings.get(term)
        return 0 if posting is None else 1 if isinstance(posting, int) else len(posting)

    def idf(self, term: str) -> float:
        frequency = self.frequency(term)
        return math.log(1 + (len(self._number) - frequency + 0.5) / (frequency + 0.5))

    def _terms(self, query_tokens: Iterable[str]) -> list[tuple[Posting, float]]:
        """(posting, idf x weight) of each query word the space has (repeats, or a mapping's weights: feedback.py)."""
        weights = query_tokens if isinstance(query_tokens, Mapping) else Counter(query_tokens)
        return [(self._postings[t], self.idf(t) * w) for t, w in weights.items() if t in self._postings]

    def _accumulate(self, terms: list[tuple[Posting, float]], avg_len: float) -> dict[int, float]:
        """BM25 of every record having one of these words, word by word (inline: it walks whole postings)."""
        out: dict[int, float] = {}
        get, lengths = out.get, self._length
        base, scale = self.k1 * (1 - self.b), self.k1 * self.b / avg_len
        for posting, idf in terms:
            weight = idf * (self.k1 + 1)
            for packed in self._entries(posting):
                number, tf = packed >> TF_BITS, packed & TF_MAX
                out[number] = get(number, 0.0) + weight * tf / (tf + base + scale * lengths[number])
        return out

    def _exact(self, terms: list[tuple[Posting, float]], numbers: Iterable[int], avg_len: float) -> dict[int, float]:
        """BM25 of a few records (looked up, not walked): idf x tf x (k1 + 1) / (tf + k1 (1 - b + b len / avg))."""
        out: dict[int, float] = {}
        k1, b, lengths, tf_of = self.k1, self.b, self._length, self._tf
        for number in numbers:
            score = 0.0
            for posting, idf in terms:
                tf = tf_of(posting, number)
                if tf:
                    norm = k1 * (1 - b + b * lengths[number] / avg_len)
                    score += idf * tf * (k1 + 1) / (tf + norm)
            out[number] = score
        return out

    def _avg_len(self) -> float:
        return self._total_length / len(self._number) if self._number else 1.0

    def scores(self, query_tokens: Iterable[str]) -> dict[str, float]:
        """Raw BM25 of every record sharing at least one query word (others score 0)."""
        if not self._number:
            return {}
        return self._by_id(self._accumulate(self._terms(query_tokens), self._avg_len() or 1.0))

    def scores_of(self, query_tokens: Iterable[str], episode_ids: Iterable[str]) -> dict[str, float]:
        """Raw BM25 of these records (looked up, not walked)."""
        numbers = {n for d in episode_ids if (n := self._number.get(d)) is not None}
        return self._by_id(self._exact(self._terms(query_tokens), numbers, self._avg_len() or 1.0))

    def _by_id(self, scores: dict[int, float]) -> dict[str, float]:
        return {self._ids[n] or "": s for n, s in scores.items()}

    def search(self, query_tokens: Iterable[str], limit: int, accept: Accept, also: Iterable[str] = (),
               speaker: tuple[int, Accept] | None = None) -> tuple[list[LexicalHit], dict[str, float]]:
        """The best `limit` records `accept` takes (with `speaker`, also the best of *its* limit that its own
        test takes: the speaker's own word matches), and the exact BM25 of those and of `also` (the vector
        hits). Bounded whatever the space holds: records are *picked* by the query's selective words only
        (in at most SELECT_POSTINGS records: common words cannot single out a few records among
        thousands), then every picked and every `also` record is scored exactly with all query words."""
        if not self._number:
            return [], {}
        terms = self._terms(query_tokens)
        avg_len = self._avg_len() or 1.0
        selective = [t for t in terms if (1 if isinstance(t[0], int) else len(t[0])) <= SELECT_POSTINGS]
        picked = self._accumulate(selective, avg_len)  # selection score: selective words only
        seen: dict[int, Episode] = {}  # partial records built for `accept`, reused for the hits
        # Most recalls find enough accepted records among the first few; the rest is sorted only if not.
        order = BestFirst(picked, 4 * max(limit, speaker[0] if speaker is not None else 0))
        chosen = self._top(order, limit, accept, seen)
        if speaker is not None:
            already = set(chosen)  # built once: the comprehension below would rebuild it per record
            chosen += [n for n in self._top(order, speaker[0], speaker[1], seen) if n not in already]
        wanted = set(chosen)
        wanted.update(n for d in also if (n := self._number.get(d)) is not None)
        exact = self._exact(terms, wanted, avg_len)
        return [LexicalHit(seen[n], exact[n]) for n in chosen], self._by_id(exact)

    def _top(self, order: BestFirst, limit: int, accept: Accept, seen: dict[int, Episode]) -> list[int]:
        """The `limit` best records `accept` takes (statuses, filters); `seen` keeps the partial records built."""
        taken: list[int] = []
        if limit <= 0:
            return taken
        for number in order:
            episode = seen.get(number)
            if episode is None:
                episode = seen[number] = self._partial(number)
            if accept(episode):
                taken.append(number)
                if len(taken) >= limit:
                    break
        return taken

    # ------------------------------------------------------------------ listing
    def listing(self, statuses: Iterable[EpisodeStatus], start: int, count: int) -> tuple[list[str], int]:
        """Ids of one page of the records with these statuses, newest first (timestamp, id), and their count."""
        codes = frozenset(_CODE[s] for s in statuses)
        listed = self._listed.get(codes)
        if listed is None:
            if self._order is None:
                timestamps, ids = self._timestamp, self._ids
                self._order = sorted(self._number.values(), key=lambda n: (timestamps[n], ids[n] or ""),
                                     reverse=True)
            status = self._status
            listed = self._listed[codes] = [n for n in self._order if status[n] in codes]
        return [self._ids[n] or "" for n in listed[start : start + count]], len(listed)
