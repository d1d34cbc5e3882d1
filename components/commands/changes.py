"""`!memory` subcommands that change memory: forget, archive, restore, bulk delete.

Bulk delete needs at least one filter; all given filters must match (AND). Without
`--status` every status matches (active, superseded, archived). `--speaker` is a
sender id. It enumerates the space under its write lock, deletes only the
matches, reports the count and audits each record. `--dry-run` lists the matches
without deleting anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.commands.args import UsageError, as_usage
from components.commands.registry import Call, Subcommands
from components.commands.text import clip, plural
from components.commands.views import single_id
from ltm import DeleteCriteria, Episode, RestoreResult, params, parse_status

DELETE_FILTERS = ("speaker", "tag", "before", "status")


SUBCOMMANDS = Subcommands()


@SUBCOMMANDS("forget", "!memory forget <id> — delete one episode", mutating=True)
async def forget(call: Call) -> str:
    return forgotten(await call.memory.forget(call.scope, single_id(call)))


@SUBCOMMANDS("archive", "!memory archive <id> — hide an active episode", mutating=True)
async def archive(call: Call) -> str:
    return archived(await call.memory.archive(call.scope, single_id(call)))


@SUBCOMMANDS("restore", "!memory restore <id> — reactivate an archived or superseded episode", mutating=True)
async def restore(call: Call) -> str:
    return restored(await call.memory.restore(call.scope, single_id(call)))


@SUBCOMMANDS("delete", "!memory delete [--speaker SENDER_ID] [--tag T] [--before TIME] [--status S] [--dry-run]\n"
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
        return dry_run(described, matches)
    return bulk_deleted(described, await call.memory.bulk_delete(call.scope, criteria))


# --------------------------------------------------------------------------- reply text
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
