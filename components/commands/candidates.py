"""`!memory` subcommands that review memory candidates (Q2): list, accept, reject.

Candidates are proposed from users' own messages when the memory KB has
`candidate_extraction_enabled` (see `components/event_listener/candidate_listener.py`);
they change nothing until accepted. `candidate` is mutating: accepting writes memory and
rejecting changes the review queue, so in a shared space it follows the same admin rule
as `forget` or `archive`. A candidate id of another chat answers "not found".
"""

from __future__ import annotations

from components.commands import changes, render, transfer, views  # noqa: F401 - registered first: help lists these last
from components.commands.args import UsageError, page_of
from components.commands.registry import Call, subcommand

PAGE_SIZE = 10
ACTIONS = ("accept", "reject")


@subcommand("candidates", "!memory candidates [page] [--all-statuses] — memory candidates waiting for review")
async def candidates(call: Call) -> str:
    args = call.args(switches=frozenset({"all-statuses"}), max_positional=1)
    all_statuses = "all-statuses" in args.switches
    result = await call.memory.candidate_page(call.scope, all_statuses=all_statuses, page=page_of(call.topic, args),
                                              page_size=PAGE_SIZE)
    found = await call.memory.memory_kb()
    enabled = found is not None and found[1].candidate_extraction_enabled
    return render.candidate_page(result, all_statuses=all_statuses, enabled=enabled, page_size=PAGE_SIZE)


@subcommand("candidate", "!memory candidate accept <id> / !memory candidate reject <id> — apply or dismiss one "
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
        return render.candidate_accepted(await call.memory.accept_candidate(call.scope, candidate_id))
    return render.candidate_rejected(await call.memory.reject_candidate(call.scope, candidate_id))
