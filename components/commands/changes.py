"""`!memory` subcommands that change memory: forget, archive, restore, bulk delete.

Bulk delete needs at least one filter; all given filters must match (AND). Without
`--status` every status matches (active, superseded, archived). `--speaker` is a
sender id. It enumerates the space under its write lock, deletes only the
matches, reports the count and audits each record. `--dry-run` lists the matches
without deleting anything.
"""

from __future__ import annotations

from components.commands import render
from components.commands.args import UsageError, as_usage
from components.commands.registry import Call, subcommand
from components.commands.views import single_id
from ltm import DeleteCriteria, params, parse_status

DELETE_FILTERS = ("speaker", "tag", "before", "status")


@subcommand("forget", "!memory forget <id> — delete one episode", mutating=True)
async def forget(call: Call) -> str:
    return render.forgotten(await call.memory.forget(call.scope, single_id(call)))


@subcommand("archive", "!memory archive <id> — hide an active episode", mutating=True)
async def archive(call: Call) -> str:
    return render.archived(await call.memory.archive(call.scope, single_id(call)))


@subcommand("restore", "!memory restore <id> — reactivate an archived or superseded episode", mutating=True)
async def restore(call: Call) -> str:
    return render.restored(await call.memory.restore(call.scope, single_id(call)))


@subcommand("delete", "!memory delete [--speaker SENDER_ID] [--tag T] [--before TIME] [--status S] [--dry-run]\n"
            "(at least one filter; all given filters must match; TIME needs a timezone, e.g. 2026-05-01T00:00:00Z)",
            mutating=True)
async def delete(call: Call) -> str:
    args = call.args(switches=frozenset({"dry-run"}), options=frozenset(DELETE_FILTERS), max_positional=0)
    if not any(args.option(k) for k in DELETE_FILTERS):
        raise UsageError("delete", "give at least one filter")
    status_text = args.option("status")
    criteria = as_usage("delete", lambda: DeleteCriteria(
        speaker=args.option("speaker").strip(),
        tag=args.option("tag").strip(),
        before=params.aware_time(args.option("before"), "--before"),
        status=parse_status(status_text) if status_text else None,
    ))
    described = " ".join(f"--{k} {args.option(k)}" for k in DELETE_FILTERS if args.option(k))
    if not criteria.status:
        described += " (any status)"
    if "dry-run" in args.switches:
        matches = [e for e in await call.memory.all_episodes(call.scope) if criteria.matches(e)]
        return render.dry_run(described, matches)
    return render.bulk_deleted(described, await call.memory.bulk_delete(call.scope, criteria))
