"""`!memory consolidate`: conservative archival and reviewed summaries (K1-K6).

    preview [--tag T]        what run would archive (superseded records older than
                             consolidation_min_age_days, with risk notes); with a
                             consolidation model, also one summary draft to review,
                             stored under a one-use proposal id. Changes no episode.
    run                      archive those superseded records (consolidation_enabled)
    run <proposal_id>        apply a reviewed draft: the summary becomes an extra active
                             record next to its sources (consolidation_enabled)
    drafts                   this chat's pending drafts
    discard <proposal_id>    drop a pending draft

The whole command is `mutating`: a preview may call the model and store a draft, so in a
shared space it needs a bot admin like every other change.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.commands.args import UsageError
from components.commands.registry import Call, Subcommands
from components.commands.text import MAX_REPLY_CHARS, clip, plural, short_time
from ltm import ConsolidationPreview, ConsolidationRun, Draft

ACTIONS = ("preview", "run", "drafts", "discard")


SUBCOMMANDS = Subcommands()


@SUBCOMMANDS("consolidate",
            "!memory consolidate preview [--tag T] — archival candidates; with a consolidation model also a summary "
            "draft to review\n"
            "!memory consolidate run [proposal_id] — archive old superseded records, or apply a reviewed draft\n"
            "!memory consolidate drafts | discard <proposal_id> — pending summary drafts",
            mutating=True)
async def consolidate(call: Call) -> str:
    args = call.args(options=frozenset({"tag"}), max_positional=2)
    if not args.positional:
        raise UsageError("consolidate", "say what to do: " + ", ".join(ACTIONS))
    action, rest = args.positional[0].lower(), args.positional[1:]
    if action not in ACTIONS:
        raise UsageError("consolidate", f"unknown action {args.positional[0][:30]!r}")
    if args.option("tag") and action != "preview":
        raise UsageError("consolidate", "--tag belongs to preview")
    if action == "preview":
        if rest:
            raise UsageError("consolidate", f"unexpected argument {rest[0][:40]!r}")
        return consolidation_preview(
            await call.memory.consolidation_preview(call.scope, tag=args.option("tag") or None))
    if action == "run":
        return consolidation_run(await call.memory.consolidation_run(call.scope, rest[0] if rest else None))
    if action == "drafts":
        if rest:
            raise UsageError("consolidate", f"unexpected argument {rest[0][:40]!r}")
        return consolidation_drafts(await call.memory.consolidation_drafts(call.scope))
    if not rest:
        raise UsageError("consolidate", "a proposal id is required")
    return draft_discarded(await call.memory.discard_draft(call.scope, rest[0]))


# --------------------------------------------------------------------------- reply text
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
