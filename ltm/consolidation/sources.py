"""What one consolidation draft is made of: the source records it draws on and the summary record
built from them (K2, K3). Pure functions over episodes; the consolidator does the I/O."""

from __future__ import annotations

from collections.abc import Sequence

from ..episodes.model import MAX_RECORD_CHARS, ClaimType, Episode, EpisodeStatus, FactTime, record_chars
from ..identity import MemoryScope
from ..kb_settings import KBSettings
from ..timefields import now_iso
from .model import MAX_INPUT_CHARS, SUMMARY_SOURCE, SUMMARY_TAG, Draft, DraftSource, common_validity
from .prompt import entry_chars


def select_sources(episodes: Sequence[Episode], lineage: dict[str, list[str]], pending: set[str],
                   settings: KBSettings, tag: str = "") -> list[Episode]:
    """The sources of one draft: active records that are not summaries themselves, not covered by an
    active summary or by a pending draft, oldest first; at most `consolidation_max_candidates`, at
    most MAX_INPUT_CHARS of quoted data, and sharing a validity interval (else run would refuse)."""
    by_id = {e.episode_id: e for e in episodes}
    covered = set(pending)
    for summary_id, sources in lineage.items():
        summary = by_id.get(summary_id)
        if summary is not None and summary.is_active:
            covered.update(sources)
    eligible = sorted((e for e in episodes
                       if e.is_active and not e.derived_from and e.source != SUMMARY_SOURCE
                       and e.episode_id not in covered and (not tag or tag in e.tags)),
                      key=lambda e: (e.timestamp, e.episode_id))
    chosen: list[Episode] = []
    bounds: list[tuple[str | None, str | None]] = []
    chars = 0
    for episode in eligible:
        if len(chosen) >= settings.consolidation_max_candidates:
            break
        size = entry_chars(DraftSource.of(episode))
        bound = (episode.fact.valid_from, episode.fact.valid_until)
        if chars + size > MAX_INPUT_CHARS or common_validity([*bounds, bound]) is None:
            continue
        chosen.append(episode)
        bounds.append(bound)
        chars += size
    return chosen


def summary_episode(scope: MemoryScope, draft: Draft, sources: Sequence[Episode], episode_id: str) -> Episode:
    """The summary record, staged `archived`: lineage, inference, the proposal as its source_ref, and
    the validity every source shares (latest start, earliest end)."""
    speakers = {(e.sender_id, e.sender_name) for e in sources}
    sender_id, sender_name = next(iter(speakers)) if len(speakers) == 1 else ("", "")
    identity = scope.identity
    return Episode(
        episode_id=episode_id,
        space_key=scope.space_key,
        content=draft.summary,
        timestamp=now_iso(),
        importance=max(e.importance for e in sources),
        tags=(SUMMARY_TAG,),
        status=EpisodeStatus.ARCHIVED,
        sender_id=sender_id,
        sender_name=sender_name,
        bot_uuid=identity.bot_uuid if identity else sources[0].bot_uuid,
        session_name=identity.session_name if identity else "",
        source=SUMMARY_SOURCE,
        fact=FactTime(valid_from=draft.valid_from, valid_until=draft.valid_until,
                      source_ref=f"consolidation:{draft.proposal_id}", claim_type=ClaimType.INFERENCE),
        derived_from=tuple(s.episode_id for s in draft.sources),
    )


def over_budget(episode: Episode) -> int:
    """The summary's size when it is over the recall record budget, else 0."""
    size = record_chars(episode.to_record())
    return size if size > MAX_RECORD_CHARS else 0
