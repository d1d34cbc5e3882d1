"""Chat-text rendering for `!memory` (the command table C in docs/REQUIREMENTS.md).

Chat clients show plain text in narrow bubbles, so every helper here produces
short lines, shows full episode IDs (operators copy them into `show`, `forget`,
`archive`, `restore`), and numbers pages as "page 2/7". Nothing in this module
talks to the memory service; it only formats what the command already fetched.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from components.common.render import profile_text
from ltm import (
    MAX_CANDIDATES,
    AuditPage,
    Candidate,
    CandidateKind,
    CandidatePage,
    CandidateStatus,
    ConsolidationPreview,
    ConsolidationRun,
    Draft,
    Episode,
    EpisodePage,
    EpisodeStatus,
    Fence,
    HealthReport,
    Level,
    MemoryScope,
    Profile,
    Profiles,
    RestoreResult,
)

# One chat message. Platforms cut around 4,000 characters (Telegram 4,096; QQ and
# WeChat are similar), and the command's "*" fallback delivers only ONE reply.
MAX_REPLY_CHARS = 3500
SNIPPET_CHARS = 100
_LEVEL_LABEL = {Level.GREEN: "GREEN", Level.AMBER: "AMBER", Level.RED: "RED"}


def clip(text: str, limit: int = SNIPPET_CHARS) -> str:
    """One line: whitespace collapsed, cut with an ellipsis."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def short_time(value: str | None) -> str:
    """`2026-05-01T09:00:12.5Z` -> `2026-05-01 09:00Z`; unknown -> `-`."""
    if not value:
        return "-"
    text = str(value)
    if len(text) >= 16 and text[10] == "T":
        zone = "Z" if text.endswith("Z") else ""
        return f"{text[:10]} {text[11:16]}{zone}"
    return text


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def page_title(title: str, page: int, pages: int, total: int, unit: str = "total") -> str:
    return f"{title} · page {page}/{pages} · {total} {unit}"


def statuses_label(statuses: Sequence[EpisodeStatus]) -> str:
    return "+".join(s.value for s in statuses)


def speaker_label(sender_id: str, sender_name: str) -> str:
    if sender_name and sender_id:
        return f"{sender_name} ({sender_id})"
    return sender_name or sender_id or "unknown speaker"


def episode_lines(number: int, episode: Episode) -> list[str]:
    """Two lines per episode: ID and metadata, then the content snippet."""
    meta = [episode.episode_id, short_time(episode.timestamp)]
    if episode.sender_name or episode.sender_id:
        meta.append(episode.sender_name or episode.sender_id)
    meta.append(f"imp {episode.importance}")
    if episode.status is not EpisodeStatus.ACTIVE:
        meta.append(f"[{episode.status.value}]")
    if episode.tags:
        meta.append(" ".join(f"#{t}" for t in episode.tags[:4]))
    return [f"{number}) " + " · ".join(meta), f"   {clip(episode.content)}"]


def episode_list(episodes: Sequence[Episode], first_number: int = 1) -> list[str]:
    lines: list[str] = []
    for offset, episode in enumerate(episodes):
        lines.extend(episode_lines(first_number + offset, episode))
        if episode.superseded_by:
            verb = "superseded" if episode.status is EpisodeStatus.SUPERSEDED else "restored; was superseded"
            lines.append(f"   {verb} by {episode.superseded_by} ({short_time(episode.superseded_at)})")
    return lines


def episode_detail(episode: Episode) -> str:
    """Everything `show` promises: status, sender, source, tags, importance, supersede and provenance."""
    fact = episode.fact
    lines = [f"Episode {episode.episode_id}", f"Status: {episode.status.value}"]
    if episode.status_changed_at:
        lines[-1] += f" (since {episode.status_changed_at})"
    lines += [
        f"Content: {episode.content}",
        f"Stored: {episode.timestamp or '-'}",
        f"Sender: {speaker_label(episode.sender_id, episode.sender_name)}",
        f"Source: {episode.source or '-'} · importance {episode.importance} · claim {fact.claim_type.value}",
        "Tags: " + (", ".join(episode.tags) if episode.tags else "-"),
    ]
    provenance = [
        ("Event at", fact.event_at), ("Valid from", fact.valid_from), ("Valid until", fact.valid_until),
        ("Source ref", fact.source_ref),
    ]
    known = [(label, value) for label, value in provenance if value]
    lines += [f"{label}: {value}" for label, value in known] or ["Fact time / provenance: unknown"]
    if episode.supersedes:
        lines.append("Supersedes: " + ", ".join(episode.supersedes))
    if episode.superseded_by:
        label = "Superseded by" if episode.status is EpisodeStatus.SUPERSEDED else "Was superseded by"
        lines.append(f"{label}: {episode.superseded_by} at {episode.superseded_at or '-'}")
    if episode.original_id:
        lines.append(f"Imported from id: {episode.original_id}")
    if episode.document_id:
        lines.append(f"Document: {episode.document_id}")
    if episode.derived_from:
        lines.append("Derived from: " + ", ".join(episode.derived_from))
    return "\n".join(lines)


def profile_block(title: str, profile: Profile | None, missing: str) -> list[str]:
    if profile is None:
        return [f"{title}: {missing}"]
    if profile.is_empty:
        return [f"{title}: (empty)"]
    lines = [f"{title}:"] + [f"  {line}" for line in profile_text(profile).splitlines()]
    if profile.updated_at:
        lines.append(f"  updated {short_time(profile.updated_at)}")
    return lines


def status_counts(episodes: Iterable[Episode]) -> str:
    counts = Counter(e.status for e in episodes)
    shown = [EpisodeStatus.ACTIVE, EpisodeStatus.SUPERSEDED, EpisodeStatus.ARCHIVED]
    parts = [f"{counts.get(s, 0)} {s.value}" for s in shown]
    if counts.get(EpisodeStatus.DELETED):
        parts.append(f"{counts[EpisodeStatus.DELETED]} deleted")
    return " · ".join(parts)


def status_tally(statuses: Iterable[str]) -> str:
    """`14 active, 1 archived`: only statuses present, in lifecycle order."""
    counts = Counter(statuses)
    order = [s.value for s in EpisodeStatus] + sorted(set(counts) - {s.value for s in EpisodeStatus})
    return ", ".join(f"{counts[s]} {s}" for s in order if counts.get(s)) or "none"


def fence_line(fences: dict[str, Fence | None]) -> str:
    active = [(layer, f) for layer, f in fences.items() if f is not None]
    if not active:
        return "Writes: open (no fence)"
    parts = [f"{layer.upper()} paused since {short_time(f.since)} after {f.operation}" for layer, f in active]
    return "Writes: " + "; ".join(parts) + " (clear in Memory Console > Diagnostics)"


def health_text(report: HealthReport) -> str:
    lines = [f"Memory health: {_LEVEL_LABEL[report.level]}"]
    lines += [f"{_LEVEL_LABEL[item.level]} {item.key}: {item.message}" for item in report.items]
    return "\n".join(lines)


def audit_line(entry: dict[str, Any]) -> str:
    who = entry.get("sender_name") or entry.get("sender_id") or ""
    parts = [short_time(entry.get("time")), str(entry.get("operation") or "?")]
    target = " ".join(str(p) for p in (entry.get("target_type"), entry.get("target_id")) if p)
    if target:
        parts.append(target)
    if who:
        parts.append(f"by {who}")
    line = " · ".join(parts)
    summary = clip(str(entry.get("summary") or ""), 80)
    return f"{line}\n   {summary}" if summary else line


def compact_json(value: Any) -> str:
    """Compact (no indentation) so more fits in one chat message; still valid JSON to paste back."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def json_or_summary(header: str, payload: Any, summary: list[str], hint: str) -> str:
    """The whole JSON when it fits one message, otherwise a summary and where to get it.

    JSON is never cut: half a document cannot be imported and silently drops data.
    """
    body = compact_json(payload)
    if len(header) + 1 + len(body) <= MAX_REPLY_CHARS:
        return f"{header}\n{body}"
    return "\n".join([f"{header}: too long for chat ({len(body)} characters of JSON)", *summary, hint])


def fit_reply(text: str) -> str:
    """Last guard for non-JSON replies: cut at a line boundary, and say so."""
    if len(text) <= MAX_REPLY_CHARS:
        return text
    kept: list[str] = []
    used = 0
    for line in text.splitlines():
        if used + len(line) + 1 > MAX_REPLY_CHARS - 40:
            if not kept:  # one huge line: keep its start rather than nothing
                kept.append(clip(line, MAX_REPLY_CHARS - 40))
            break
        kept.append(line)
        used += len(line) + 1
    kept.append("… (output shortened for chat)")
    return "\n".join(kept)


# --------------------------------------------------------------------------- whole replies


def overview(scope: MemoryScope, counts: str, session: Profile, speaker_profiles: int, audit_entries: int,
             fences: dict[str, Fence | None]) -> str:
    lines = [
        "LongTermMemory · this chat",
        f"Session key (L1): {scope.scope_key}",
        f"Memory space (L2 user_key): {scope.user_key} ({scope.isolation.value} isolation)",
        "Speaker: " + speaker_label(scope.sender_id, scope.sender_name),
    ]
    if scope.kb_id:
        lines.append(f"Knowledge base: {scope.kb_id}")
        lines.append(f"Episodes: {counts}")
    else:
        lines.append("Knowledge base: none configured (create a Long-Term Memory knowledge base for episodes)")
    lines.append(f"Profiles: session {'set' if not session.is_empty else 'empty'} · "
                 f"{plural(speaker_profiles, 'speaker profile')}")
    lines.append(f"Audit entries: {audit_entries}")
    lines.append(fence_line(fences))
    lines.append('Type "!memory help" for commands.')
    return "\n".join(lines)


def profiles(scope: MemoryScope, found: Profiles) -> str:
    speaker = speaker_label(scope.sender_id, scope.sender_name)
    lines = profile_block(f"Session profile ({scope.scope_key})", found.session, "")
    lines += profile_block(f"Speaker profile of {speaker}", found.speaker, "no speaker is known for this message")
    return "\n".join(lines)


def search_results(query: str, statuses: Sequence[EpisodeStatus], episodes: Sequence[Episode]) -> str:
    title = f"Search {clip(query, 40)!r} ({statuses_label(statuses)})"
    if not episodes:
        return f"{title}: no matching episodes."
    return "\n".join([f"{title}: {plural(len(episodes), 'result')}, best first", *episode_list(episodes)])


def episode_page(topic: str, statuses: Sequence[EpisodeStatus], result: EpisodePage, page_size: int) -> str:
    label = statuses_label(statuses)
    if not result.total:
        return f"No {label} episodes in this chat's memory."
    lines = [page_title(f"Episodes ({label})", result.page, result.pages, result.total) + " · newest first"]
    lines += episode_list(result.episodes, first_number=(result.page - 1) * page_size + 1)
    if result.page < result.pages:
        lines.append(f"Next: !memory {topic} {result.page + 1}")
    if result.truncated:
        lines.append("Note: the listing stopped at the enumeration limit; older records are not counted.")
    return "\n".join(lines)


def forgotten(episode: Episode) -> str:
    return f"Deleted episode {episode.episode_id} ({episode.status.value}): {clip(episode.content, 80)}"


def archived(episode: Episode) -> str:
    return (f"Archived episode {episode.episode_id}: hidden from recall, kept for history.\n"
            f"Undo: !memory restore {episode.episode_id}")


def restored(result: RestoreResult) -> str:
    episode = result.episode
    lines = [f"Restored episode {episode.episode_id} (was {result.previous_status.value}); it is active again."]
    if result.active_correction is not None:
        fix = result.active_correction
        lines.append(f"Note: the correction that superseded it, {fix.episode_id}, is still active, so both "
                     f"versions are now recalled: {clip(fix.content, 80)}")
        lines.append(f"To keep only one: !memory archive {fix.episode_id} (or !memory archive {episode.episode_id})")
    elif episode.superseded_by:
        lines.append(f"It was superseded by {episode.superseded_by}, which is no longer active.")
    return "\n".join(lines)


DRY_RUN_PREVIEW = 10


def dry_run(described: str, matches: Sequence[Episode]) -> str:
    lines = [f"Dry run: {plural(len(matches), 'episode')} matching {described}; nothing deleted."]
    lines += [f"{e.episode_id} [{e.status.value}] {clip(e.content, 60)}" for e in matches[:DRY_RUN_PREVIEW]]
    if len(matches) > DRY_RUN_PREVIEW:
        lines.append(f"... and {len(matches) - DRY_RUN_PREVIEW} more")
    return "\n".join(lines)


def bulk_deleted(described: str, deleted: Sequence[Episode]) -> str:
    if not deleted:
        return f"No episodes match {described}; nothing deleted."
    return f"Deleted {plural(len(deleted), 'episode')} matching {described}; each is in the audit log."


def profile_export(payload: dict[str, Any]) -> str:
    speakers = payload.get("speaker_profiles") or {}
    header = (f"L1 export of {payload.get('scope_key')}: session profile + "
              f"{plural(len(speakers), 'speaker profile')}")
    summary = [f"Speaker profiles: {len(speakers)}"]
    hint = "Use the Memory Console Export tab for the full JSON; !memory profile shows the current ones."
    return json_or_summary(header, payload, summary, hint)


def episode_export(scope: MemoryScope, statuses: Sequence[EpisodeStatus], payload: dict[str, Any]) -> str:
    episodes = payload["episodes"]
    header = (f"L2 export of {scope.user_key} ({statuses_label(statuses)}): "
              f"{plural(len(episodes), 'episode')}")
    summary = ["By status: " + status_tally(e["status"] for e in episodes)]
    if payload.get("truncated"):
        header += " (INCOMPLETE: the space holds more records than one export reads)"
    hint = ("Use the Memory Console Export tab for the full JSON, or narrow with --status "
            "(e.g. !memory export l2 --status archived).")
    return json_or_summary(header, payload, summary, hint)


IMPORT_PREVIEW = 5


def imported(scope: MemoryScope, episodes: Sequence[Episode], foreign_keys: set[str], *, senders_kept: bool) -> str:
    lines = [
        f"Imported {plural(len(episodes), 'episode')} into {scope.user_key} "
        f"({status_tally(e.status.value for e in episodes)}); new IDs, original IDs kept as original_id.",
    ]
    if foreign_keys:
        lines.append(f"Note: user_key {', '.join(sorted(foreign_keys))[:80]} in the JSON was ignored; "
                     "imports always go into this chat's memory.")
    if not senders_kept:
        lines.append("Speakers in the JSON were not kept: the records are attributed to you (only a bot admin "
                     "imports records on behalf of other speakers).")
    for episode in episodes[:IMPORT_PREVIEW]:
        origin = f"{episode.original_id} -> " if episode.original_id else "new: "
        lines.append(origin + episode.episode_id)
    if len(episodes) > IMPORT_PREVIEW:
        lines.append(f"... and {len(episodes) - IMPORT_PREVIEW} more (!memory list)")
    return "\n".join(lines)


def audit_page(result: AuditPage) -> str:
    if not result.total:
        return "No audit entries for this chat yet."
    lines = [page_title("Audit log", result.page, result.pages, result.total, "entries") + " · newest first"]
    lines += [audit_line(entry) for entry in result.entries]
    if result.page < result.pages:
        lines.append(f"Next: !memory audit {result.page + 1}")
    return "\n".join(lines)


def audit_export(scope: MemoryScope, entries: list[dict[str, Any]], operations: Counter[str]) -> str:
    header = f"Audit export of {scope.scope_key}: {len(entries)} entries (oldest first)"
    summary = ["By operation: " + ", ".join(f"{n} {op}" for op, n in sorted(operations.items()))]
    if entries:
        summary.append(f"From {entries[0].get('time')} to {entries[-1].get('time')}")
    hint = "Browse with !memory audit [page], or use the Memory Console Audit tab to export it."
    return json_or_summary(header, {"scope_key": scope.scope_key, "entries": entries}, summary, hint)


# --------------------------------------------------------------------------- candidate review (Q)
def candidate_what(candidate: Candidate) -> str:
    if candidate.kind is CandidateKind.PROFILE:
        return f"{candidate.target} {candidate.field.value if candidate.field else 'profile'}"
    if candidate.kind is CandidateKind.IGNORE:
        return "ignore (looked like a credential; nothing kept)"
    return "episode"


def candidate_lines(number: int, candidate: Candidate) -> list[str]:
    """Two or three lines: id and metadata, the proposed content, and the user's words when they differ."""
    meta = [candidate.candidate_id, short_time(candidate.created_at), candidate_what(candidate),
            "from " + speaker_label(candidate.speaker.sender_id, candidate.speaker.sender_name),
            f"{candidate.origin.value} {candidate.rule}"]
    if candidate.status is not CandidateStatus.PENDING:
        meta.append(f"[{candidate.status.value}]")
    lines = [f"{number}) " + " · ".join(meta), f"   {clip(candidate.content)}"]
    if candidate.evidence and candidate.evidence.strip() != candidate.content:
        lines.append(f"   said: {clip(candidate.evidence, 80)!r}")
    if candidate.applied_type:
        lines.append(f"   applied as {candidate.applied_type} {candidate.applied_id}")
    return lines


def candidate_page(result: CandidatePage, *, all_statuses: bool, enabled: bool, page_size: int) -> str:
    label = "all statuses" if all_statuses else "pending"
    notes: list[str] = []
    if result.refused:
        notes.append(f"Note: {plural(result.refused, 'new candidate')} not queued because this chat's queue was "
                     f"full of pending candidates ({MAX_CANDIDATES}); the last at {short_time(result.last_refused_at)}."
                     " Accept or reject some.")
    if not enabled:
        notes.append("Note: candidate extraction is off for this memory knowledge base (setting "
                     "candidate_extraction_enabled); no new candidates are proposed.")
    if not result.total:
        counts = ", ".join(f"{n} {status}" for status, n in result.counts.items() if n)
        lines = [f"No {label} memory candidates in this chat." + (f" ({counts})" if counts else "")]
        if not all_statuses and counts:
            lines.append("Decided ones: !memory candidates --all-statuses")
        return "\n".join(lines + notes)
    lines = [page_title(f"Memory candidates ({label})", result.page, result.pages, result.total) + " · newest first"]
    for offset, candidate in enumerate(result.candidates):
        lines.extend(candidate_lines((result.page - 1) * page_size + offset + 1, candidate))
    if any(c.status is CandidateStatus.PENDING for c in result.candidates):
        lines.append("Accept: !memory candidate accept <id> · Reject: !memory candidate reject <id>")
    if result.page < result.pages:
        lines.append(f"Next: !memory candidates {result.page + 1}" + (" --all-statuses" if all_statuses else ""))
    return "\n".join(lines + notes)


def candidate_accepted(candidate: Candidate) -> str:
    if candidate.applied_type == "episode":
        return (f"Accepted candidate {candidate.candidate_id}: stored episode {candidate.applied_id} "
                f"(claim {candidate.claim_type}, source {candidate.source_ref}).\n   {clip(candidate.content)}\n"
                f"Details: !memory show {candidate.applied_id}")
    whose = ("the session profile" if candidate.target == "session" else "the speaker profile of "
             + speaker_label(candidate.speaker.sender_id, candidate.speaker.sender_name))
    field = candidate.field.value if candidate.field else "profile"
    return (f"Accepted candidate {candidate.candidate_id}: {field} added to {whose}.\n   {clip(candidate.content)}\n"
            "Check: !memory profile")


def candidate_rejected(candidate: Candidate) -> str:
    return (f"Rejected candidate {candidate.candidate_id}; nothing was stored. It stays listed under "
            "!memory candidates --all-statuses.")


# --------------------------------------------------------------------------- consolidation (K)
ARCHIVAL_PREVIEW = 10
REVIEW_HINT = ("The checks prove citations, coverage and size, not truth: compare every statement with its "
               "sources before running it.")


def _draft_lines(draft: Draft, *, full: bool) -> list[str]:
    number = {s.episode_id: n for n, s in enumerate(draft.sources, start=1)}
    lines = [f"Summary draft {draft.proposal_id} over {plural(len(draft.sources), 'source')} (pending review)",
             f"Apply: !memory consolidate run {draft.proposal_id}",
             f"Discard: !memory consolidate discard {draft.proposal_id}",
             "Proposed summary:"]
    for n, statement in enumerate(draft.statements, start=1):
        cited = ", ".join(str(number.get(i, i)) for i in statement.sources)
        lines.append(f"  S{n}. {statement.text} [sources {cited}]")
    if draft.valid_from or draft.valid_until:
        lines.append(f"Valid from {draft.valid_from or '-'} until {draft.valid_until or '-'} (shared by every source)")
    lines.append("Sources (they stay active):")
    for n, source in enumerate(draft.sources, start=1):
        meta = [source.episode_id, short_time(source.timestamp)]
        if source.sender_name or source.sender_id:
            meta.append(source.sender_name or source.sender_id)
        lines.append(f"  [{n}] " + " · ".join(meta))
        lines.append(f"      {source.content if full else clip(source.content, 160)}")
    for update in draft.profile_updates:
        cited = ", ".join(str(number.get(i, i)) for i in update.sources)
        lines.append(f"Profile update proposed: session {update.field} + {update.value!r} [sources {cited}]")
    lines.append(REVIEW_HINT)
    return lines


def _archival_lines(preview: ConsolidationPreview) -> list[str]:
    days = plural(preview.min_age_days, "day")
    if not preview.archival:
        return [f"Archival: no superseded record was superseded more than {days} ago; nothing to archive."]
    shown = f" (the oldest {len(preview.archival)} of {preview.archival_total})" \
        if preview.archival_total > len(preview.archival) else ""
    lines = [f"Archival: {plural(len(preview.archival), 'superseded record')} superseded over {days} ago{shown} "
             "would be archived (kept, hidden, restorable):"]
    for n, candidate in enumerate(preview.archival[:ARCHIVAL_PREVIEW], start=1):
        episode = candidate.episode
        lines.append(f"{n}) {episode.episode_id} · superseded {short_time(episode.superseded_at)}")
        lines.append(f"   {clip(episode.content)}")
        lines += [f"   risk: {note}" for note in candidate.notes]
    if len(preview.archival) > ARCHIVAL_PREVIEW:
        lines.append(f"... and {len(preview.archival) - ARCHIVAL_PREVIEW} more")
    if preview.enabled:
        lines.append("Archive them: !memory consolidate run")
    else:
        lines.append("Run is refused here: consolidation_enabled is off on this memory knowledge base.")
    return lines


def consolidation_preview(preview: ConsolidationPreview) -> str:
    head = ["Consolidation preview · no episode was changed; active records are never archived or folded away."]
    if preview.listing_truncated:
        head.append("Note: the space holds more records than one listing reads; older ones were not considered.")
    if preview.draft is not None:
        for full in (True, False):
            lines = [*head, *_draft_lines(preview.draft, full=full), *_archival_lines(preview)]
            text = "\n".join(lines)
            if len(text) <= MAX_REPLY_CHARS:
                return text
        return "\n".join([*head, *_draft_lines(preview.draft, full=False),
                          "Full source texts: Memory Console > Review."])
    label = "Summary draft rejected" if preview.rejected else "Summary draft"
    return "\n".join([*head, f"{label}: {preview.draft_note}.", *_archival_lines(preview)])


def consolidation_run(result: ConsolidationRun) -> str:
    if result.summary is not None:
        summary = result.summary
        lines = [f"Summary {summary.episode_id} is active (proposal {result.proposal_id}); its "
                 f"{plural(len(result.sources), 'source')} stay active.",
                 f"Content: {summary.content}",
                 f"Derived from: {', '.join(summary.derived_from)}",
                 f"Valid from {summary.fact.valid_from or '-'} until {summary.fact.valid_until or '-'} · claim "
                 f"{summary.fact.claim_type.value}"]
        if result.profile_note:
            lines.append(f"Profile: {result.profile_note}")
        lines.append(f"Undo: !memory forget {summary.episode_id}")
        return "\n".join(lines)
    if not result.archived:
        return "Nothing to archive: no superseded record is old enough (see !memory consolidate preview)."
    lines = [f"Archived {plural(len(result.archived), 'superseded record')}; each is in the audit log. Active "
             "records were not touched."]
    lines += [f"{e.episode_id} {clip(e.content, 60)}" for e in result.archived[:ARCHIVAL_PREVIEW]]
    if len(result.archived) > ARCHIVAL_PREVIEW:
        lines.append(f"... and {len(result.archived) - ARCHIVAL_PREVIEW} more")
    lines.append("Undo one: !memory restore <id>")
    return "\n".join(lines)


def consolidation_drafts(drafts: Sequence[Draft]) -> str:
    if not drafts:
        return "No pending summary drafts in this chat. Make one with !memory consolidate preview."
    lines = [f"Pending summary drafts: {len(drafts)} (oldest first)"]
    for draft in drafts:
        lines.append(f"{draft.proposal_id} · {short_time(draft.created_at)} · "
                     f"{plural(len(draft.sources), 'source')}")
        lines.append(f"   {clip(draft.summary)}")
    lines.append("Review one in the Memory Console (Review tab), or apply it: !memory consolidate run <proposal_id>")
    return "\n".join(lines)


def draft_discarded(draft: Draft) -> str:
    return f"Discarded summary draft {draft.proposal_id}; no episode was changed."
