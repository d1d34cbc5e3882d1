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

from components.commands import render
from components.commands.args import UsageError
from components.commands.registry import Call, subcommand

ACTIONS = ("preview", "run", "drafts", "discard")


@subcommand("consolidate",
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
        return render.consolidation_preview(
            await call.memory.consolidation_preview(call.scope, tag=args.option("tag") or None))
    if action == "run":
        return render.consolidation_run(await call.memory.consolidation_run(call.scope, rest[0] if rest else None))
    if action == "drafts":
        if rest:
            raise UsageError("consolidate", f"unexpected argument {rest[0][:40]!r}")
        return render.consolidation_drafts(await call.memory.consolidation_drafts(call.scope))
    if not rest:
        raise UsageError("consolidate", "a proposal id is required")
    return render.draft_discarded(await call.memory.discard_draft(call.scope, rest[0]))
