"""`!memory` subcommands that change memory: forget, archive, restore, bulk delete.

Bulk delete needs at least one filter; all given filters must match (AND). Without
`--status` every status matches (active, superseded, archived). `--speaker` is a
sender id; given alone, it also removes that speaker's turns from the chat's conversation
record (V4). It enumerates the space under its write lock, deletes only the
matches, reports the count and audits each record. `--dry-run` lists the matches
without deleting anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.commands.args import UsageError, as_usage
from components.commands.registry import Call, Subcommands
from components.commands.text import EPISODES, counted, status_label
from components.commands.views import single_id
from components.common.chat_text import Own, inert, lines, quote
from components.common.i18n import Catalogue
from ltm import DeleteCriteria, Episode, RestoreResult, params, parse_status

DELETE_FILTERS = ("speaker", "tag", "before", "status")


SUBCOMMANDS = Subcommands()


@SUBCOMMANDS("forget", ("!memory forget <id> — delete one episode", "!memory forget <id> — 删除一条情景记忆"),
             mutating=True)
async def forget(call: Call) -> Own:
    episode_id = single_id(call)  # arguments first: memory stays closed to a caller the admin rule refuses
    return forgotten(await call.memory.forget(call.scope, episode_id))


@SUBCOMMANDS("archive", ("!memory archive <id> — hide an active episode",
                        "!memory archive <id> — 隐藏一条有效的情景记忆（保留，可恢复）"), mutating=True)
async def archive(call: Call) -> Own:
    episode_id = single_id(call)  # arguments first: memory stays closed to a caller the admin rule refuses
    return archived(await call.memory.archive(call.scope, episode_id))


@SUBCOMMANDS("restore", ("!memory restore <id> — reactivate an archived or superseded episode",
                        "!memory restore <id> — 让已归档或已取代的情景记忆重新生效"), mutating=True)
async def restore(call: Call) -> Own:
    episode_id = single_id(call)  # arguments first: memory stays closed to a caller the admin rule refuses
    return restored(await call.memory.restore(call.scope, episode_id))


@SUBCOMMANDS("delete", ("!memory delete [--speaker SENDER_ID] [--tag T] [--before TIME] [--status S] [--dry-run]\n"
                       "(at least one filter; all given filters must match; TIME needs a timezone, e.g. "
                       "2026-05-01T00:00:00Z)",
                       "!memory delete [--speaker SENDER_ID] [--tag T] [--before TIME] [--status S] [--dry-run]\n"
                       "（至少一个筛选条件；所有条件都须满足；TIME 须带时区，例如 2026-05-01T00:00:00Z）"),
             mutating=True)
async def delete(call: Call) -> Own:
    args = call.args(switches=frozenset({"dry-run"}), options=frozenset(DELETE_FILTERS), max_positional=0)
    if not any(args.option(k) for k in DELETE_FILTERS):
        raise UsageError("delete", SAY("changes.filter_required"))
    status_text = args.option("status")
    criteria = as_usage("delete", lambda: DeleteCriteria(
        speaker=args.option("speaker").strip(),
        tag=args.option("tag").strip(),
        before=params.aware_time(args.option("before"), "--before"),
        status=parse_status(status_text) if status_text else None,
    ))
    described = inert(" ".join(f"--{k} {args.option(k)}" for k in DELETE_FILTERS if args.option(k)))
    if not criteria.status:
        described = SAY("changes.any_status", filters=described)
    # A speaker's conversation turns go too when the speaker is the only filter: a turn has no tag, and
    # "before" or a status says which episodes, not which of their words.
    speaker_only = bool(criteria.speaker) and not any(args.option(k) for k in DELETE_FILTERS if k != "speaker")
    if "dry-run" in args.switches:
        matches = [e for e in await call.memory.all_episodes(call.scope) if criteria.matches(e)]
        turns = len((await call.memory.conversation(call.scope)).turns_of(criteria.speaker)) if speaker_only else 0
        return lines(dry_run(described, matches), SAY("changes.turns_would_go", count=turns) if turns else None)
    deleted = await call.memory.bulk_delete(call.scope, criteria)
    turns = await call.memory.erase_conversation_speaker(call.scope, criteria.speaker) if speaker_only else 0
    return lines(bulk_deleted(described, deleted), SAY("changes.turns_gone", count=turns) if turns else None)



SAY = Catalogue({
    "changes.filter_required": ("give at least one filter", "请至少给出一个筛选条件"),
    "changes.any_status": ("{filters} (any status)", "{filters}（任何状态）"),
    "changes.forgotten": ("Deleted episode {id} ({status}): {content}", "已删除情景记忆 {id}（{status}）：{content}"),
    "changes.archived": ("Archived episode {id}: hidden from recall, kept for history.",
                         "已归档情景记忆 {id}：不再被召回，保留作为历史。"),
    "changes.undo_archive": ("Undo: !memory restore {id}", "撤销：!memory restore {id}"),
    "changes.restored": ("Restored episode {id} (was {status}); it is active again.",
                         "已恢复情景记忆 {id}（原为{status}）；它重新生效。"),
    "changes.both_active": ("Note: the correction that superseded it, {id}, is still active, so both versions are "
                            "now recalled: {content}",
                            "注意：取代它的更正 {id} 仍然有效，所以两个版本现在都会被召回：{content}"),
    "changes.keep_one": ("To keep only one: !memory archive {fix} (or !memory archive {id})",
                         "只保留一个：!memory archive {fix}（或 !memory archive {id}）"),
    "changes.correction_inactive": ("It was superseded by {id}, which is no longer active.",
                                    "它曾被 {id} 取代，而 {id} 已不再有效。"),
    "changes.dry_run": ("Dry run: {count} matching {filters}; nothing deleted.",
                        "试运行：符合 {filters} 的有 {count}；没有删除任何内容。"),
    "changes.more": ("… and {count} more", "……另有 {count} 条"),
    "changes.none_match": ("No episodes match {filters}; nothing deleted.",
                           "没有情景记忆符合 {filters}；没有删除任何内容。"),
    "changes.turns_would_go": ("… and {count} of their turns in this chat's conversation record.",
                               "……以及本聊天对话记录中其 {count} 轮对话。"),
    "changes.turns_gone": ("Also removed {count} of their turns from this chat's conversation record (its summary "
                           "no longer holds their words).",
                           "还从本聊天的对话记录中删除了其 {count} 轮对话（摘要中不再含有其话语）。"),
    "changes.bulk_deleted": ("Deleted {count} matching {filters}; each is in the audit log.",
                             "已删除符合 {filters} 的 {count}；每一条都记在审计日志中。"),
})


def forgotten(episode: Episode) -> Own:
    return SAY("changes.forgotten", id=episode.episode_id, status=status_label(episode.status),
               content=quote(episode.content, 80))


def archived(episode: Episode) -> Own:
    return lines(SAY("changes.archived", id=episode.episode_id), SAY("changes.undo_archive", id=episode.episode_id))


def restored(result: RestoreResult) -> Own:
    episode = result.episode
    out = [SAY("changes.restored", id=episode.episode_id, status=status_label(result.previous_status))]
    if result.active_correction is not None:
        fix = result.active_correction
        out.append(SAY("changes.both_active", id=fix.episode_id, content=quote(fix.content, 80)))
        out.append(SAY("changes.keep_one", fix=fix.episode_id, id=episode.episode_id))
    elif episode.superseded_by:
        out.append(SAY("changes.correction_inactive", id=episode.superseded_by))
    return lines(out)


DRY_RUN_PREVIEW = 10


def dry_run(described: Own, matches: Sequence[Episode]) -> Own:
    out = [SAY("changes.dry_run", count=counted(len(matches), EPISODES), filters=described)]
    out += [Own(f"{e.episode_id} [{status_label(e.status)}] {quote(e.content, 60)}") for e in matches[:DRY_RUN_PREVIEW]]
    if len(matches) > DRY_RUN_PREVIEW:
        out.append(SAY("changes.more", count=len(matches) - DRY_RUN_PREVIEW))
    return lines(out)


def bulk_deleted(described: Own, deleted: Sequence[Episode]) -> Own:
    if not deleted:
        return SAY("changes.none_match", filters=described)
    return SAY("changes.bulk_deleted", count=counted(len(deleted), EPISODES), filters=described)
