"""The archival path (K1, K2): superseded records old enough to archive, with risk notes.

Only records whose status is already `superseded` are ever candidates. Their age is
counted from when they were superseded (falling back to the last status change, then
to when they were stored), so a record corrected yesterday is not archived today
however old it is. Archiving keeps the record (restore brings it back); active
records are never candidates, whatever their age or importance.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from ..episodes.model import Episode, EpisodeStatus
from ..kb_settings import KBSettings
from ..timefields import parse_stored
from ..wording import Phrase, Said
from .model import Archivable


def superseded_since(episode: Episode) -> datetime | None:
    return (parse_stored(episode.superseded_at) or parse_stored(episode.status_changed_at)
            or parse_stored(episode.timestamp))


_RISK = {key: Phrase(f"risk.{key}", english) for key, english in {
    "unlinked": "superseded without a link to its correction (imported or older data): check it by hand",
    "correction_gone": "superseded by {episode_id}, which is no longer stored: no version of this fact stays active",
    "correction_archived": "superseded by an episode that is itself archived ({episode_id}): no version of this "
                           "fact stays active",
    "correction_superseded": "superseded by an episode that is itself superseded ({episode_id}): check the latest "
                             "version",
    "original_of_correction": "would leave a correction without its original: {episode_id} stays active, this "
                              "original moves from superseded to archived",
    "not_named": "its correction {episode_id} does not name it as corrected",
}.items()}


def risk_notes(episode: Episode, by_id: dict[str, Episode]) -> tuple[Said, ...]:
    """What archiving this superseded record means for the fact it held."""
    if not episode.superseded_by:
        return (_RISK["unlinked"](),)
    fix_id = episode.superseded_by
    fix = by_id.get(fix_id)
    if fix is None:
        return (_RISK["correction_gone"](episode_id=fix_id),)
    if fix.status is EpisodeStatus.ARCHIVED:
        return (_RISK["correction_archived"](episode_id=fix_id),)
    if fix.status is EpisodeStatus.SUPERSEDED:
        return (_RISK["correction_superseded"](episode_id=fix_id),)
    if episode.episode_id in fix.supersedes:
        return (_RISK["original_of_correction"](episode_id=fix_id),)
    return (_RISK["not_named"](episode_id=fix_id),)


def archivable_records(episodes: Sequence[Episode], settings: KBSettings, now: datetime
                        ) -> tuple[list[Archivable], int]:
    """At most `consolidation_max_candidates` superseded records, superseded at least
    `consolidation_min_age_days` ago, oldest first; and how many qualified before the cap."""
    cutoff = now - timedelta(days=settings.consolidation_min_age_days)
    by_id = {e.episode_id: e for e in episodes}
    eligible: list[tuple[datetime, Episode]] = []
    for episode in episodes:
        if episode.status is not EpisodeStatus.SUPERSEDED:
            continue
        since = superseded_since(episode)
        if since is not None and since <= cutoff:
            eligible.append((since, episode))
    eligible.sort(key=lambda pair: (pair[0], pair[1].episode_id))
    chosen = eligible[: settings.consolidation_max_candidates]
    return [Archivable(e, risk_notes(e, by_id)) for _, e in chosen], len(eligible)
