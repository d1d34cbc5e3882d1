"""Read-only `!memory` subcommands: overview, help, profile, search, list, show, health (`profile set|remove|clear`
are handed to `profile_edits.py`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from components.commands import profile_edits
from components.commands.args import STATUS_SWITCHES, UsageError, as_usage, page_of, split_head, statuses_of
from components.commands.headings import chat_line, health_text
from components.commands.profile_view import profile_lines
from components.commands.registry import Call, Subcommands
from components.commands.text import (
    SPEAKER_PROFILES,
    counted,
    message_lines,
    page_title,
    short_time,
    speaker_label,
    status_label,
    statuses_label,
)
from components.common.chat_text import Own, clip, inert, lines, quote
from components.common.i18n import Catalogue, term
from components.common.memory_views import validity_label
from ltm import (
    REVIEW_SEARCH,
    Episode,
    EpisodePage,
    EpisodeStatus,
    Fence,
    LTMError,
    MemoryScope,
    Profile,
    Profiles,
    RecallFilters,
)
from ltm.langbot import pipeline_kb_ids

PAGE_SIZE = 10
LIST_FLAGS = STATUS_SWITCHES


SUBCOMMANDS = Subcommands()


@SUBCOMMANDS("overview", ("!memory — overview of this chat's memory", "!memory — 本聊天记忆的概览"), aliases=("",))
async def overview(call: Call) -> Own:
    call.args(max_positional=0)
    memory, scope = call.memory, call.scope
    counts = Own("")
    if scope.kb_id:
        try:
            counts = status_counts(await memory.all_episodes(scope))
        except LTMError as exc:
            counts = SAY("views.counts_unavailable", reason=exc.message)
    profiles = await memory.profiles(scope)
    speakers = await memory.speaker_profiles(scope)
    return overview_text(scope, counts, profiles.session, len(speakers), await memory.audit_count(scope),
                         await memory.fences_of(scope), chat_line(await memory.chat_label(scope), scope))


@SUBCOMMANDS("help", ("!memory help [group|subcommand] — the groups; the usage of one group or subcommand",
                     "!memory help [group|subcommand] — 所有分组；某个分组或子命令的用法"))
async def help_(call: Call) -> Own:
    args = call.args(max_positional=1)
    return call.registry.help_on(args.positional[0]) if args.positional else call.registry.help_text()


@SUBCOMMANDS("profile", ("!memory profile — session and current speaker profile\n"
                        "!memory profile set <field> <value> [--speaker ID | --me] — name, traits, preferences, notes\n"
                        "!memory profile remove <field> [value] [--speaker ID | --me] · !memory profile clear "
                        "[--speaker ID | --me]",
                        "!memory profile — 会话画像与当前发言者的画像\n"
                        "!memory profile set <field> <value> [--speaker ID | --me] — 名称、特征、偏好、备注\n"
                        "!memory profile remove <field> [value] [--speaker ID | --me] · !memory profile clear "
                        "[--speaker ID | --me]"))
async def profile(call: Call) -> Own:
    head, rest = split_head(call.rest)
    if head.lower() in profile_edits.ACTIONS:
        return await profile_edits.edit(call, head.lower(), rest)
    call.args(max_positional=0)
    return profiles_text(call.scope, await call.memory.profiles(call.scope))


@SUBCOMMANDS("search", ("!memory search <query> [--top-k N] [--include-superseded] [--include-archived] "
                        "[--include-deleted] [--all-statuses | --status S]",
                        "!memory search <query> [--top-k N] [--include-superseded] [--include-archived] "
                        "[--include-deleted] [--all-statuses | --status S] — 搜索情景记忆"))
async def search(call: Call) -> Own:
    args = call.args(switches=LIST_FLAGS, options=frozenset({"status", "top-k"}))
    query = " ".join(args.positional).strip()
    if not query:
        raise UsageError("search", SAY("views.query_required"))
    statuses = statuses_of(call.topic, args)
    recipe = as_usage(call.topic, lambda: REVIEW_SEARCH.with_top_k(args.option("top-k") or None))
    hits = await call.memory.recall(call.scope, query, recipe=recipe,
                                    filters=RecallFilters(statuses=statuses))
    return search_results(query, statuses, [hit.episode for hit in hits])


async def _page(call: Call, statuses: tuple[EpisodeStatus, ...], page: int) -> Own:
    result = await call.memory.list_episodes(call.scope, statuses, page=page, page_size=PAGE_SIZE)
    return episode_page(call.topic, statuses, result, PAGE_SIZE)


@SUBCOMMANDS("list", ("!memory list [page] [--include-superseded] [--include-archived] [--include-deleted] "
                      "[--all-statuses | --status S]",
                      "!memory list [page] [--include-superseded] [--include-archived] [--include-deleted] "
                      "[--all-statuses | --status S] — 列出情景记忆"))
async def list_(call: Call) -> Own:
    args = call.args(switches=LIST_FLAGS, options=frozenset({"status"}), max_positional=1)
    return await _page(call, statuses_of(call.topic, args), page_of(call.topic, args))


@SUBCOMMANDS("superseded", ("!memory superseded [page]", "!memory superseded [page] — 已取代的情景记忆"))
async def superseded(call: Call) -> Own:
    return await _page(call, (EpisodeStatus.SUPERSEDED,), page_of(call.topic, call.args(max_positional=1)))


@SUBCOMMANDS("archived", ("!memory archived [page]", "!memory archived [page] — 已归档的情景记忆"))
async def archived(call: Call) -> Own:
    return await _page(call, (EpisodeStatus.ARCHIVED,), page_of(call.topic, call.args(max_positional=1)))


def single_id(call: Call) -> str:
    args = call.args(max_positional=1)
    if not args.positional:
        raise UsageError(call.topic, SAY("views.id_required"))
    return args.positional[0]


@SUBCOMMANDS("show", ("!memory show <id>", "!memory show <id> — 一条情景记忆的全部信息"))
async def show(call: Call) -> Own:
    return episode_detail(await call.memory.get_episode(call.scope, single_id(call)))


@SUBCOMMANDS("health", ("!memory health", "!memory health — 健康检查"))
async def health(call: Call) -> Own:
    call.args(max_positional=0)
    report = await call.memory.health(call.scope, await pipeline_kb_ids(call.ctx))
    return health_text(report, chat_line(await call.memory.chat_label(call.scope), call.scope))


LINK_STATE = {EpisodeStatus.SUPERSEDED: "", EpisodeStatus.ARCHIVED: "archived_"}  # an active one was restored
SAY = Catalogue({
    "views.expired": ("expired", "已过期"),
    "views.not_yet_valid": ("not yet valid", "尚未生效"),
    "views.counts_unavailable": ("unavailable ({reason})", "无法读取（{reason}）"),
    "views.query_required": ("a search query is required", "需要搜索内容"),
    "views.id_required": ("an episode id is required", "需要情景记忆的 id"),
    "views.importance": ("imp {n}", "重要度 {n}"),
    "views.superseded_by": ("superseded by {id} ({time})", "已被 {id} 取代（{time}）"),
    "views.restored_superseded_by": ("restored; was superseded by {id} ({time})", "已恢复；曾被 {id} 取代（{time}）"),
    "views.archived_superseded_by": ("archived; was superseded by {id} ({time})", "已归档；曾被 {id} 取代（{time}）"),
    "views.episode": ("Episode {id}", "情景记忆 {id}"),
    "views.status": ("Status: {status}", "状态：{status}"),
    "views.status_since": ("Status: {status} (since {time})", "状态：{status}（自 {time} 起）"),
    "views.content": ("Content: {content}", "内容：{content}"),
    "views.stored": ("Stored: {time}", "保存时间：{time}"),
    "views.sender": ("Sender: {sender}", "发送者：{sender}"),
    "views.source": ("Source: {source} · importance {importance} · claim type {claim}",
                     "来源：{source} · 重要度 {importance} · 声明类型 {claim}"),
    "views.tags": ("Tags: {tags}", "标签：{tags}"),
    "views.event_at": ("Event at: {time}", "事件时间：{time}"),
    "views.valid_from": ("Valid from: {time}", "有效期起：{time}"),
    "views.valid_until": ("Valid until: {time}", "有效期止：{time}"),
    "views.source_ref": ("Source ref: {ref}", "出处：{ref}"),
    "views.provenance_unknown": ("Fact time / provenance: unknown", "事实时间 / 出处：未知"),
    "views.supersedes": ("Supersedes: {ids}", "取代了：{ids}"),
    "views.superseded_by_at": ("Superseded by: {id} at {time}", "被取代为：{id}，时间 {time}"),
    "views.was_superseded_by_at": ("Was superseded by: {id} at {time}", "曾被取代为：{id}，时间 {time}"),
    "views.original_id": ("Imported from id: {id}", "导入前的 id：{id}"),
    "views.document": ("Document: {id}", "文档：{id}"),
    "views.derived_from": ("Derived from: {ids}", "派生自：{ids}"),
    "views.profile_missing": ("{title}: {missing}", "{title}：{missing}"),
    "views.profile_empty": ("{title}: (empty)", "{title}：（空）"),
    "views.profile_title": ("{title}:", "{title}："),
    "views.profile_updated": ("updated {time}", "更新于 {time}"),
    "views.writes_open": ("Writes: open (no fence)", "写入：正常（没有栅栏）"),
    "views.writes_paused": ("Writes: {fences} (clear in Memory Console > Diagnostics)",
                            "写入：{fences}（在记忆控制台 > 诊断中清除）"),
    "views.fence": ("{layer} paused since {time} after {operation}", "{layer} 自 {time} 起暂停（{operation} 之后）"),
    "views.overview_title": ("LongTermMemory · this chat", "LongTermMemory · 本聊天"),
    "views.session_key": ("Session key (L1): {key}", "会话键（L1）：{key}"),
    "views.memory_space": ("Memory space (L2 user_key): {key} ({isolation} isolation)",
                           "记忆空间（L2 user_key）：{key}（隔离方式：{isolation}）"),
    "views.speaker": ("Speaker: {speaker}", "发言者：{speaker}"),
    "views.kb": ("Knowledge base: {id}", "知识库：{id}"),
    "views.episode_counts": ("Episodes: {counts}", "情景记忆：{counts}"),
    "views.no_kb": ("Knowledge base: none configured (create a Long-Term Memory knowledge base for episodes)",
                    "知识库：未配置（请创建一个长期记忆知识库来保存情景记忆）"),
    "views.profiles_line": ("Profiles: session {state} · {speakers}", "画像：会话画像{state} · {speakers}"),
    "views.profile_set": ("set", "已设置"),
    "views.profile_unset": ("empty", "为空"),
    "views.audit_entries": ("Audit entries: {count}", "审计记录：{count} 条"),
    "views.help_hint": ("Type “!memory help” for commands.", "输入“!memory help”查看命令。"),
    "views.session_profile": ("Session profile ({key})", "会话画像（{key}）"),
    "views.speaker_profile": ("Speaker profile of {speaker}", "{speaker} 的发言者画像"),
    "views.no_speaker": ("no speaker is known for this message", "这条消息没有已知的发言者"),
    "views.search_title": ("Search {query} ({statuses})", "搜索 {query}（{statuses}）"),
    "views.search_none": ("{title}: no matching episodes.", "{title}：没有匹配的情景记忆。"),
    "views.search_found": ("{title}: {count}, best first", "{title}：{count}，最相关的在前"),
    "views.none_listed": ("No {statuses} episodes in this chat's memory.", "本聊天的记忆中没有{statuses}的情景记忆。"),
    "views.list_title": ("Episodes ({statuses})", "情景记忆（{statuses}）"),
    "views.newest_first": ("{title} · newest first", "{title} · 最新的在前"),
    "views.next_page": ("Next: !memory {topic} {page}{flags}", "下一页：!memory {topic} {page}{flags}"),
    "views.deleted_not_kept": ("Note: deleted episodes are not kept here: forget and delete remove the record "
                               "itself, so none can be listed; the audit log names each deleted id (!memory audit).",
                               "注意：这里不保留已删除的情景记忆：forget 和 delete 会删除记录本身，所以无法列出；"
                               "审计日志记下了每条被删除的 id（!memory audit）。"),
    "views.listing_truncated": ("Note: the listing stopped at the enumeration limit; older records are not counted.",
                                "注意：列出已达枚举上限，更早的记录没有计入。"),
})
RESULTS = ("result", "results", "条结果")
def episode_lines(number: int, episode: Episode) -> list[Own]:
    """Two lines per episode: number, id and metadata, then the content in quotation marks."""
    meta: list[str] = [episode.episode_id, short_time(episode.timestamp)]
    if episode.sender_name or episode.sender_id:
        meta.append(clip(episode.sender_name or episode.sender_id, 60))
    meta.append(SAY("views.importance", n=episode.importance))
    if episode.status is not EpisodeStatus.ACTIVE:
        meta.append(f"[{status_label(episode.status)}]")
    validity = _validity(episode)
    if validity:
        meta.append(f"[{validity}]")
    if episode.tags:
        meta.append(" ".join(f"#{clip(t, 40)}" for t in episode.tags[:4]))
    return [Own(f"[{number}] " + " · ".join(meta)), Own(f"    {quote(episode.content)}")]


def episode_list(episodes: Sequence[Episode], first_number: int = 1) -> list[Own]:
    out: list[Own] = []
    for offset, episode in enumerate(episodes):
        out.extend(episode_lines(first_number + offset, episode))
        if episode.superseded_by:
            key = f"views.{LINK_STATE.get(episode.status, 'restored_')}superseded_by"
            out.append(Own("    " + SAY(key, id=episode.superseded_by, time=short_time(episode.superseded_at))))
    return out


def episode_detail(episode: Episode) -> Own:
    """Everything `show` promises: status, sender, source, tags, importance, supersede and provenance."""
    fact = episode.fact
    status = status_label(episode.status)
    validity = _validity(episode)
    out = [SAY("views.episode", id=episode.episode_id),
           Own((SAY("views.status_since", status=status, time=episode.status_changed_at) if episode.status_changed_at
                else SAY("views.status", status=status)) + (f" · {validity}" if validity else "")),
           SAY("views.content", content=quote(episode.content, None)),
           SAY("views.stored", time=episode.timestamp or "-"),
           SAY("views.sender", sender=speaker_label(episode.sender_id, episode.sender_name)),
           *message_lines(episode.message),
           SAY("views.source", source=episode.source or "-", importance=episode.importance,
               claim=term(f"claim.{fact.claim_type.value}")),
           SAY("views.tags", tags=", ".join(episode.tags) if episode.tags else "-")]
    provenance = [("views.event_at", fact.event_at), ("views.valid_from", fact.valid_from),
                  ("views.valid_until", fact.valid_until)]
    known = [SAY(key, time=value) for key, value in provenance if value]
    if fact.source_ref:
        known.append(SAY("views.source_ref", ref=fact.source_ref))
    out += known or [SAY("views.provenance_unknown")]
    if episode.supersedes:
        out.append(SAY("views.supersedes", ids=", ".join(episode.supersedes)))
    if episode.superseded_by:
        key = "views.superseded_by_at" if episode.status is EpisodeStatus.SUPERSEDED else "views.was_superseded_by_at"
        out.append(SAY(key, id=episode.superseded_by, time=episode.superseded_at or "-"))
    if episode.original_id:
        out.append(SAY("views.original_id", id=episode.original_id))
    if episode.document_id:
        out.append(SAY("views.document", id=episode.document_id))
    if episode.derived_from:
        out.append(SAY("views.derived_from", ids=", ".join(episode.derived_from)))
    return lines(out)


def profile_block(title: Own, profile: Profile | None, missing: Own) -> list[Own]:
    if profile is None:
        return [SAY("views.profile_missing", title=title, missing=missing)]
    if profile.is_empty:
        return [SAY("views.profile_empty", title=title)]
    out = [SAY("views.profile_title", title=title)] + [Own(f"  {line}") for line in profile_lines(profile)]
    if profile.updated_at:
        out.append(Own("  " + SAY("views.profile_updated", time=short_time(profile.updated_at))))
    return out


def status_counts(episodes: Iterable[Episode]) -> Own:
    counts = Counter(e.status for e in episodes)
    shown = [EpisodeStatus.ACTIVE, EpisodeStatus.SUPERSEDED, EpisodeStatus.ARCHIVED]
    parts = [f"{counts.get(s, 0)} {status_label(s)}" for s in shown]
    if counts.get(EpisodeStatus.DELETED):
        parts.append(f"{counts[EpisodeStatus.DELETED]} {status_label(EpisodeStatus.DELETED)}")
    return Own(" · ".join(parts))


def fence_line(fences: dict[str, Fence | None]) -> Own:
    active = [(layer, f) for layer, f in fences.items() if f is not None]
    if not active:
        return SAY("views.writes_open")
    parts = [SAY("views.fence", layer=inert(layer.upper()), time=short_time(f.since), operation=f.operation)
             for layer, f in active]
    return SAY("views.writes_paused", fences=Own("; ".join(parts)))


def overview_text(scope: MemoryScope, counts: Own, session: Profile, speaker_profiles: int, audit_entries: int,
                  fences: dict[str, Fence | None], chat: Own | None = None) -> Own:
    out = [
        SAY("views.overview_title"), chat,
        SAY("views.session_key", key=scope.chat_key),
        SAY("views.memory_space", key=scope.space_key, isolation=term(f"isolation.{scope.isolation.value}")),
        SAY("views.speaker", speaker=speaker_label(scope.sender_id, scope.sender_name)),
    ]
    if scope.kb_id:
        out += [SAY("views.kb", id=scope.kb_id), SAY("views.episode_counts", counts=counts)]
    else:
        out.append(SAY("views.no_kb"))
    out.append(SAY("views.profiles_line", state=SAY("views.profile_unset" if session.is_empty else "views.profile_set"),
                   speakers=counted(speaker_profiles, SPEAKER_PROFILES)))
    out += [SAY("views.audit_entries", count=audit_entries), fence_line(fences), SAY("views.help_hint")]
    return lines(out)


def profiles_text(scope: MemoryScope, found: Profiles) -> Own:
    speaker = speaker_label(scope.sender_id, scope.sender_name)
    return lines(profile_block(SAY("views.session_profile", key=scope.chat_key), found.session, Own("")),
                 profile_block(SAY("views.speaker_profile", speaker=speaker), found.speaker, SAY("views.no_speaker")))


def deleted_note(statuses: Sequence[EpisodeStatus]) -> Own | None:
    """Asked for `deleted` episodes: say that none are kept, so an empty answer is not mistaken for "none
    were deleted". `forget` and `delete` remove the record itself (no tombstone is written); only the
    audit log keeps the deleted id."""
    return SAY("views.deleted_not_kept") if EpisodeStatus.DELETED in statuses else None


def search_results(query: str, statuses: Sequence[EpisodeStatus], episodes: Sequence[Episode]) -> Own:
    title = SAY("views.search_title", query=quote(query, 40), statuses=statuses_label(statuses))
    if not episodes:
        return lines(SAY("views.search_none", title=title), deleted_note(statuses))
    return lines(SAY("views.search_found", title=title, count=counted(len(episodes), RESULTS)),
                 episode_list(episodes), deleted_note(statuses))


def episode_page(topic: str, statuses: Sequence[EpisodeStatus], result: EpisodePage, page_size: int) -> Own:
    label = statuses_label(statuses)
    if not result.total:
        return lines(SAY("views.none_listed", statuses=label), deleted_note(statuses))
    title = page_title(SAY("views.list_title", statuses=label), result.page, result.pages, result.total)
    out = [SAY("views.newest_first", title=title),
           *episode_list(result.episodes, first_number=(result.page - 1) * page_size + 1)]
    if result.page < result.pages:
        # The next page of the same listing: `list` names its statuses again (superseded/archived imply theirs).
        flags = f" --status {','.join(s.value for s in statuses)}" if topic == "list" and \
            tuple(statuses) != (EpisodeStatus.ACTIVE,) else ""
        out.append(SAY("views.next_page", topic=Own(topic), page=result.page + 1, flags=Own(flags)))
    if result.truncated:
        out.append(SAY("views.listing_truncated"))
    return lines(out, deleted_note(statuses))


def _validity(episode: Episode) -> str:
    """"expired" / "not yet valid" (the reader's language) for a fact that does not hold now; "" otherwise."""
    label = validity_label(episode)
    return SAY("views.expired" if label == "expired" else "views.not_yet_valid") if label else ""
