"""`!memory` subcommands that review memory candidates (Q2): list, accept, reject.

Candidates are proposed from users' own messages when the memory KB has
`candidate_extraction_enabled` (see `components/event_listener/candidate_listener.py`);
they change nothing until accepted. `candidate` is mutating: accepting writes memory and
rejecting changes the review queue, so in a shared space it follows the same admin rule
as `forget` or `archive`. A candidate id of another chat answers "not found".
"""

from __future__ import annotations

from components.commands.args import UsageError, page_of
from components.commands.registry import Call, Subcommands
from components.commands.text import clip, page_title, plural, short_time, speaker_label
from ltm import MAX_CANDIDATES, Candidate, CandidateKind, CandidatePage, CandidateStatus

PAGE_SIZE = 10
ACTIONS = ("accept", "reject")


SUBCOMMANDS = Subcommands()


@SUBCOMMANDS("candidates", "!memory candidates [page] [--all-statuses] — memory candidates waiting for review")
async def candidates(call: Call) -> str:
    args = call.args(switches=frozenset({"all-statuses"}), max_positional=1)
    all_statuses = "all-statuses" in args.switches
    result = await call.memory.candidate_page(call.scope, all_statuses=all_statuses, page=page_of(call.topic, args),
                                              page_size=PAGE_SIZE)
    found = await call.memory.memory_kb()
    enabled = found is not None and found[1].candidate_extraction_enabled
    return candidate_page(result, all_statuses=all_statuses, enabled=enabled, page_size=PAGE_SIZE)


@SUBCOMMANDS("candidate", "!memory candidate accept <id> / !memory candidate reject <id> — apply or dismiss one "
            "candidate", mutating=True)
async def candidate(call: Call) -> str:
    args = call.args(max_positional=2)
    action = args.positional[0].lower() if args.positional else ""
    if action not in ACTIONS:
        raise UsageError(call.topic, "say accept or reject")
    if len(args.positional) < 2:
        raise UsageError(call.topic, "a candidate id is required")
    candidate_id = args.positional[1]
    if action == "accept":
        return candidate_accepted(await call.memory.accept_candidate(call.scope, candidate_id))
    return candidate_rejected(await call.memory.reject_candidate(call.scope, candidate_id))


# --------------------------------------------------------------------------- reply text
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
        held = " (already remembered)" if candidate.applied_existing else ""
        lines.append(f"   applied as {candidate.applied_type} {candidate.applied_id}{held}")
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
    if candidate.applied_type == "episode" and candidate.applied_existing:
        return (f"Accepted candidate {candidate.candidate_id}: already remembered as episode {candidate.applied_id}; "
                f"nothing new was stored.\n   {clip(candidate.content)}\nDetails: !memory show {candidate.applied_id}")
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
