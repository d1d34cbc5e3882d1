"""Which remembered texts a new one repeats: write-time de-duplication and the candidate check.

The rules are in `sameness.py` (same fact: one normalized key; near duplicate: words added or
left out, never replaced, and close embeddings). This module finds what to compare with,
cheaply, and applies the rules:

- **What a new text is compared with**: active episodes of the same speaker in the same space (a
  record of another speaker is never a duplicate: their "my" is not yours), found without
  reading the space. The per-space word index (`lexical.py`, which the store keeps current on
  every write) gives the records with the same normalized key and the best word matches of the
  speaker (NEAR_WINDOW). When that index is not ready (a big space is indexed in the background
  at its first use), one vector search of the speaker with the text's own embedding
  (DUPLICATE_WINDOW nearest) stands in for it; a batch (an import) waits for the index instead,
  so it makes no search per record. Candidates are also compared with profile values
  (`against_texts`).
- **Only a record still shown holds a fact**: an active record whose `valid_until` has passed is
  left out of every prompt, so it is not a copy of a restatement: the finder names it `outdated`
  instead, and `remember` stores the restatement as the fact's current record, superseding it.
  A record that starts later (`valid_from` ahead) is shown with its start, so it still holds
  the fact. A probe that states its own validity (`Probe.validity`, a `remember` with
  `valid_from`/`valid_until`) is held only by a record with the same bounds; a current record
  with other bounds is `outdated` too (the restatement corrects its dates). A probe that states
  none (a candidate, an import, a `remember` without dates) takes any current record's bounds.
- **What it costs**: no host call for an exact duplicate when the index is ready; one embedding
  call, only when some pair passes the word side of the near rule, for the stored texts of those
  pairs (their vectors are not kept in the plugin, and a backend's distances are not comparable
  across backends, so cosine similarity is computed here).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..errors import HostFailure
from ..spaces import L2Space
from ..timefields import utc_now
from .model import Episode, Validity
from .sameness import cosine, fact_key, near_duplicate, words_could_be_near
from .space_index import SpaceIndex
from .store import EpisodeStore
from .terms import tokenize

log = logging.getLogger("LongTermMemory")

NEAR_WINDOW = 5  # best word matches of the speaker compared with a new text
DUPLICATE_WINDOW = 10  # nearest records of the speaker when the word index is not ready


@dataclass(frozen=True)
class Match:
    """A remembered text a new one repeats: an episode, or a value kept elsewhere (a profile value)."""

    text: str
    episode: Episode | None = None
    where: str = ""  # for a value that is not an episode: what holds it ("speaker profile traits", ...)


@dataclass(frozen=True)
class Probe:
    """A new text, the speaker it would be stored for, and its embedding when the caller has it."""

    text: str
    sender_id: str
    vector: Sequence[float] | None = None
    known: tuple[Match, ...] = ()  # for `against_texts`: the values this text is compared with
    # The (valid_from, valid_until) the new text states; None when it states neither (see the docstring).
    validity: tuple[str | None, str | None] | None = None

    def held_by(self, episode: Episode) -> bool:
        """`episode`'s bounds say what this text says of time (a text that says nothing agrees with any)."""
        return self.validity is None or self.validity == (episode.fact.valid_from, episode.fact.valid_until)


@dataclass(frozen=True)
class Finding:
    same: Match | None = None  # states the same fact: the new text is not stored again
    similar: tuple[Match, ...] = field(default_factory=tuple)  # near duplicates: stored, and named
    # Active records of the same fact that no longer hold it (expired, or other bounds): `remember`
    # supersedes them with the new record. Oldest first.
    outdated: tuple[Episode, ...] = ()

    @property
    def repeats(self) -> bool:
        return self.same is not None or bool(self.similar)


class DuplicateFinder:
    def __init__(self, store: EpisodeStore) -> None:
        self._store = store

    async def against_space(self, space: L2Space, model_uuid: str, probes: Sequence[Probe], *,
                            batch: bool = False) -> list[Finding]:
        """Each probe against the active episodes of its speaker in the space that still hold a fact now.
        `batch`: many probes at once (an import), so a word index still being built is waited for rather
        than searched around."""
        if not probes:
            return []
        moment = utc_now()
        index = await self._index(space, wait=batch)
        vectors = await self._vectors(model_uuid, probes, needed=index is None)
        pools: list[list[Match]] = []
        outdated: list[tuple[Episode, ...]] = []
        for probe, vector in zip(probes, vectors):
            if index is not None:
                found = self._from_index(index, probe)
            else:
                assert vector is not None  # embedded above when there is no index
                hits = await self._store.search(space, vector, top_k=DUPLICATE_WINDOW,
                                                sender_id=probe.sender_id)
                found = [h.episode for h in hits if h.episode is not None]
            own = _oldest_first([e for e in found if e.is_active and e.sender_id == probe.sender_id])
            key = fact_key(probe.text)
            stale = [e for e in own if key and fact_key(e.content) == key
                     and (e.validity_at(moment) is Validity.EXPIRED or not probe.held_by(e))]
            outdated.append(tuple(stale))
            gone = {e.episode_id for e in stale}
            pools.append([Match(e.content, episode=e) for e in own
                          if e.episode_id not in gone and e.validity_at(moment) is not Validity.EXPIRED])
        findings = await self._judge(model_uuid, probes, vectors, pools)
        return [replace(f, outdated=old) for f, old in zip(findings, outdated)]

    async def against_texts(self, model_uuid: str, probes: Sequence[Probe]) -> list[Finding]:
        """Each probe against its own `known` values (profile values for a candidate)."""
        vectors: list[Sequence[float] | None] = [p.vector for p in probes]
        return await self._judge(model_uuid, probes, vectors, [list(p.known) for p in probes])

    async def _index(self, space: L2Space, *, wait: bool) -> SpaceIndex | None:
        try:
            # One write never waits for a read of the space under way (the vector search stands in).
            index = await (self._store.word_index(space) if wait
                           else self._store.word_index_unless_busy(space))
            if index is None and wait:
                await self._store.word_indexes_built()
                index = await self._store.word_index(space)
        except HostFailure as exc:  # the space could not be read now: the vector search stands in
            log.info("[LongTermMemory] word index not ready for de-duplication (%s); vector search", exc.code)
            return None
        return index

    @staticmethod
    def _from_index(index: SpaceIndex, probe: Probe) -> list[Episode]:
        same = index.with_fact_key(fact_key(probe.text))
        hits, _ = index.search(tokenize(probe.text), NEAR_WINDOW,
                               lambda e: e.is_active and e.sender_id == probe.sender_id)
        return [*same, *(h.episode for h in hits)]

    async def _vectors(self, model_uuid: str, probes: Sequence[Probe], *, needed: bool
                       ) -> list[Sequence[float] | None]:
        vectors: list[Sequence[float] | None] = [p.vector for p in probes]
        missing = [i for i, v in enumerate(vectors) if v is None]
        if needed and missing:
            got = await self._store.embed(model_uuid, [probes[i].text for i in missing])
            for i, vector in zip(missing, got):
                vectors[i] = vector
        return vectors

    async def _judge(self, model_uuid: str, probes: Sequence[Probe], vectors: list[Sequence[float] | None],
                     pools: list[list[Match]]) -> list[Finding]:
        """Exact matches by key; near ones by words first, then by cosine (one embedding call for every
        text a near pair still needs)."""
        findings: list[Finding] = []
        pairs: list[tuple[int, Match]] = []
        for i, (probe, pool) in enumerate(zip(probes, pools)):
            key = fact_key(probe.text)
            same = next((m for m in pool if key and fact_key(m.text) == key), None)
            findings.append(Finding(same=same))
            if same is None:
                seen: set[str] = set()
                for match in pool:
                    if match.text not in seen and words_could_be_near(probe.text, match.text):
                        seen.add(match.text)
                        pairs.append((i, match))
        if not pairs:
            return findings
        wanted = [probes[i].text for i in sorted({i for i, _ in pairs}) if vectors[i] is None]
        texts = list(dict.fromkeys([*wanted, *(m.text for _, m in pairs)]))
        embedded = dict(zip(texts, await self._store.embed(model_uuid, texts)))
        similar: dict[int, list[Match]] = {}
        for i, match in pairs:
            own = vectors[i] if vectors[i] is not None else embedded[probes[i].text]
            assert own is not None
            if near_duplicate(probes[i].text, match.text, own, embedded[match.text]):
                similar.setdefault(i, []).append(match)
        return [Finding(f.same, tuple(similar.get(i, ()))) for i, f in enumerate(findings)]


def _oldest_first(episodes: Sequence[Episode]) -> list[Episode]:
    """One entry per record, the oldest first: when a space already holds copies, the first one is named."""
    unique = {e.episode_id: e for e in episodes}
    return sorted(unique.values(), key=lambda e: e.timestamp)


__all__ = ["DUPLICATE_WINDOW", "NEAR_WINDOW", "DuplicateFinder", "Finding", "Match", "Probe", "cosine"]
