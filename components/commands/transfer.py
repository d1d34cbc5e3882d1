"""`!memory` export, import and audit.

Long output: one reply is one chat message, and chat platforms cut long messages
(about 4,000 characters). JSON replies are sent whole when they fit and otherwise
replaced by a summary plus where to get the full document; JSON is never cut or
split (a fragment cannot be imported).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from components.commands import conversation
from components.commands.args import UsageError, as_usage, page_of, parse_args, split_head, statuses_of, unexpected
from components.commands.registry import Call, Subcommands
from components.commands.text import (
    EPISODES,
    SPEAKER_PROFILES,
    counted,
    json_or_summary,
    page_title,
    short_time,
    status_label,
    statuses_label,
)
from components.commands.views import LIST_FLAGS
from components.common.chat_text import Own, clip, inert, lines
from components.common.i18n import Catalogue, said, term
from ltm import (
    LISTED_STATUSES,
    AuditPage,
    EpisodeStatus,
    ImportResult,
    MemoryScope,
    ProfileImport,
    load_json,
    nothing_stored,
    parse_batch,
    said_from,
)

PAGE_SIZE = 10


SUBCOMMANDS = Subcommands()


@SUBCOMMANDS("export", ("!memory export [l1] — L1 profiles as JSON\n"
                       "!memory export l2 [--status S] — L2 episodes as JSON: every status, or only S\n"
                       "!memory export conversation — this chat's recorded turns and summary as JSON",
                       "!memory export [l1] — 以 JSON 导出 L1 画像\n"
                       "!memory export l2 [--status S] — 以 JSON 导出 L2 情景记忆：所有状态，或只导出 S\n"
                       "!memory export conversation — 以 JSON 导出本聊天的对话记录与摘要"))
async def export(call: Call) -> Own:
    head, rest = split_head(call.rest)
    if head.lower() in ("", "l1", "conversation"):
        if rest.strip():
            raise unexpected("export", rest.strip())
        if head.lower() == "conversation":
            return conversation.export_text(call.scope, await call.memory.export_conversation(call.scope))
        return profile_export(await call.memory.export_profiles(call.scope))
    if head.lower() != "l2":
        raise UsageError("export", SAY("transfer.unknown_export", what=inert(head, 20)))
    args = parse_args("export", rest, switches=LIST_FLAGS, options=frozenset({"status"}), max_positional=0)
    # A backup keeps history: every status, as the console's Export tab does, unless --status narrows it.
    statuses = statuses_of(call.topic, args, default=LISTED_STATUSES)
    return episode_export(call.scope, statuses, await call.memory.export_episodes(call.scope, statuses))


@SUBCOMMANDS("import", ('!memory import l2 <json> — a list of episodes or {"episodes": [...]}\n'
                       "!memory import l1 <json> — what !memory export gives (or the official plugin's L1 "
                       "export): the profiles it carries replace this chat's\n"
                       "!memory import conversation <json> — what !memory export conversation gives, into this "
                       "chat's empty conversation record",
                       '!memory import l2 <json> — 情景记忆的列表或 {"episodes": [...]}\n'
                       "!memory import l1 <json> — !memory export 给出的内容（或官方插件的 L1 导出）："
                       "其中的画像替换本聊天的同名画像\n"
                       "!memory import conversation <json> — !memory export conversation 给出的内容，"
                       "导入本聊天空的对话记录"),
             mutating=True)
async def import_(call: Call) -> Own:
    head, raw_json = split_head(call.rest)
    layer = head.lower()
    if layer not in ("l1", "l2", "conversation"):
        raise UsageError("import", SAY("transfer.say_layer"))
    if not raw_json.strip():
        raise UsageError("import", SAY("transfer.paste_json", layer=Own(layer)))
    payload = as_usage("import", lambda: load_json(raw_json))
    if layer == "l1":  # validated whole before any write
        return profiles_imported(call.scope, await call.memory.import_profiles(call.scope, payload))
    if layer == "conversation":  # validated whole before any write
        return conversation.imported_text(call.scope, await call.memory.import_conversation(call.scope, payload))
    # Validated before anything is written; a record this plugin cannot store is skipped and named.
    batch = as_usage("import", lambda: parse_batch(payload, source="import"))
    if not batch.records:  # nothing would change: a refusal, like any other
        raise UsageError("import", inert(nothing_stored(batch.skipped).message))
    result = await call.memory.import_episodes(call.scope, batch.records, skipped=batch.skipped,
                                               keep_speakers=call.is_admin)
    # Speakers are replaced only where the JSON named someone other than the importer.
    replaced = not call.is_admin and any((r.sender_id or r.sender_name) and r.sender_id != call.scope.sender_id
                                         for r in batch.records)
    return imported(call.scope, result, _foreign_space_keys(payload, call.scope.space_key), speakers_kept=not replaced,
                    records_at="/episodes" if isinstance(payload, dict) else "")


@SUBCOMMANDS("audit", ("!memory audit [page]\n!memory audit export",
                      "!memory audit [page] — 审计日志\n!memory audit export — 以 JSON 导出审计日志"))
async def audit(call: Call) -> Own:
    head, rest = split_head(call.rest)
    if head.lower() == "export":
        if rest.strip():
            raise unexpected("audit", rest.strip())
        entries = await call.memory.audit_export(call.scope)
        return audit_export(call.scope, entries, Counter(str(e.get("operation")) for e in entries))
    page = page_of("audit", call.args(max_positional=1))
    return audit_page(await call.memory.audit_page(call.scope, page, PAGE_SIZE))


def _foreign_space_keys(payload: Any, space_key: str) -> set[str]:
    """user_keys named in an import that are not this chat's (they are ignored, and the reply says so)."""
    found: set[str] = set()
    items = payload.get("episodes") if isinstance(payload, dict) else payload
    if isinstance(payload, dict) and isinstance(payload.get("user_key"), str):
        found.add(payload["user_key"])
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("user_key"), str):
            found.add(item["user_key"])
    return {key for key in found if key and key != space_key}



SAY = Catalogue({
    "transfer.unknown_export": ("unknown export “{what}”", "未知的导出“{what}”"),
    "transfer.say_layer": ("say “import l1”, “import l2” or “import conversation” and paste the JSON",
                           "请写“import l1”、“import l2”或“import conversation”并粘贴 JSON"),
    "transfer.paste_json": ("paste the JSON after “import {layer}”", "请在“import {layer}”后面粘贴 JSON"),
    "transfer.session_profile": ("the session profile", "会话画像"),
    "transfer.speaker_profiles": ("{count} ({names})", "{count}（{names}）"),
    "transfer.and": (" and ", "和"),
    "transfer.l1_nothing": ("Nothing imported: every profile in the JSON is empty (an import never clears a "
                            "profile).", "没有导入任何内容：JSON 中的画像都是空的（导入从不清空画像）。"),
    "transfer.l1_imported": ("Imported {what} into {key}; each replaced the profile of the same name.",
                             "已导入{what}到 {key}；每个都替换了同名的画像。"),
    "transfer.l1_skipped": ("{count} in the JSON left alone.", "JSON 中的 {count}未作处理。"),
    "transfer.l1_no_change": ("Nothing changed: every profile in the JSON ({count}) is stored exactly so already.",
                              "没有任何变化：JSON 中的每个画像（{count}）都已按原样保存。"),
    "transfer.l1_none_stored": ("Nothing imported: no profile in the JSON could be stored.",
                                "没有导入任何内容：JSON 中没有可以保存的画像。"),
    "transfer.l1_unchanged": ("{count} stored exactly so already, left alone.", "{count}已按原样保存，未作处理。"),
    "transfer.l1_not_stored": ("Skipped {count} this plugin cannot store (the rest was imported):",
                               "跳过了本插件无法保存的 {count}（其余已导入）："),
    "transfer.l1_not_stored_item": ("  {where}: {reason}", "  {where}：{reason}"),
    "transfer.l1_not_stored_more": ("  … and {count} more", "  ……另有 {count} 项"),
    "transfer.l1_foreign": ("Note: the JSON came from {key}; imports always go into this chat.",
                            "注意：这份 JSON 来自 {key}；导入总是进入本聊天。"),
    "transfer.none": ("none", "无"),
    "transfer.by": ("by {who}", "操作者 {who}"),
    "transfer.l1_header": ("L1 export of {key}: session profile + {speakers}",
                           "{key} 的 L1 导出：会话画像 + {speakers}"),
    "transfer.speaker_count": ("Speaker profiles: {count}", "发言者画像：{count} 个"),
    "transfer.l1_hint": ("Use the Memory Console Export tab for the full JSON; !memory profile shows the current ones.",
                         "完整的 JSON 请用记忆控制台的导出标签页；!memory profile 显示当前的画像。"),
    "transfer.l2_header": ("L2 export of {key} ({statuses}): {count}", "{key} 的 L2 导出（{statuses}）：{count}"),
    "transfer.l2_incomplete": ("{header} (INCOMPLETE: the space holds more records than one export reads)",
                               "{header}（不完整：此空间的记录超过一次导出能读取的数量）"),
    "transfer.l2_no_deleted": ("{header}; deleted episodes are not kept here, so none are in it",
                               "{header}；这里不保留已删除的情景记忆，所以其中没有"),
    "transfer.by_status": ("By status: {tally}", "按状态：{tally}"),
    "transfer.l2_hint": ("Use the Memory Console Export tab for the full JSON, or narrow with --status "
                         "(e.g. !memory export l2 --status archived).",
                         "完整的 JSON 请用记忆控制台的导出标签页，或用 --status 缩小范围（例如 !memory export l2 "
                         "--status archived）。"),
    "transfer.imported": ("Imported {count} into {key} ({tally}); new IDs, original IDs kept as original_id.",
                          "已导入 {count}到 {key}（{tally}）；使用新的 ID，原来的 ID 保存在 original_id 中。"),
    "transfer.foreign_keys": ("Note: user_key {keys} in the JSON was ignored; imports always go into this chat's "
                              "memory.", "注意：JSON 中的 user_key {keys} 被忽略；导入总是进入本聊天的记忆。"),
    "transfer.senders_replaced": ("Speakers in the JSON were not kept: the records are attributed to you (only a bot "
                                  "admin imports records on behalf of other speakers).",
                                  "JSON 中的发言者没有保留：这些记录记在你的名下（只有机器人管理员"
                                  "可以代其他发言者导入）。"),
    "transfer.imported_from": ("{original} -> {id}", "{original} -> {id}"),
    "transfer.imported_new": ("new: {id}", "新：{id}"),
    "transfer.more": ("… and {count} more (!memory list)", "……另有 {count} 条（!memory list）"),
    "transfer.skipped": ("Not imported, this plugin cannot store them: {count} (place in the JSON: reason):",
                         "未导入，本插件无法保存：{count}（在 JSON 中的位置：原因）："),
    "transfer.skipped_one": ("{where}: {reason}", "{where}：{reason}"),
    "transfer.duplicates": ("Already remembered, not imported: {count} (record -> the episode that holds the fact):",
                            "已记住、未导入：{count}（记录 -> 已保存该事实的情景记忆）："),
    "transfer.duplicate": ("{record} -> {id}", "{record} -> {id}"),
    "transfer.duplicate_in_batch": ("{record} -> {id} (an earlier record of this import)",
                                    "{record} -> {id}（本次导入中更早的一条记录）"),
    "transfer.more_duplicates": ("… and {count} more (!memory audit)", "……另有 {count} 条（!memory audit）"),
    "transfer.similar": ("Similar to stored episodes, imported anyway: {count} (archive or forget the outdated one):",
                         "与已保存的情景记忆相似，仍已导入：{count}（请归档或忘记过时的那条）："),
    "transfer.no_audit": ("No audit entries for this chat yet.", "本聊天还没有审计记录。"),
    "transfer.audit_title": ("Audit log", "审计日志"),
    "transfer.newest_first": ("{title} · newest first", "{title} · 最新的在前"),
    "transfer.next": ("Next: !memory audit {page}", "下一页：!memory audit {page}"),
    "transfer.audit_header": ("Audit export of {key}: {count} entries (oldest first)",
                              "{key} 的审计导出：{count} 条（最早的在前）"),
    "transfer.by_operation": ("By operation: {tally}", "按操作：{tally}"),
    "transfer.span": ("From {first} to {last}", "从 {first} 到 {last}"),
    "transfer.audit_hint": ("Browse with !memory audit [page], or use the Memory Console Audit tab to export it.",
                            "用 !memory audit [page] 浏览，或在记忆控制台的审计标签页中导出。"),
})
RECORDS = ("record", "records", "条记录")
EMPTY_PROFILES = ("empty profile", "empty profiles", "个空画像")
PROFILES = ("profile", "profiles", "个画像")
ITEMS = ("item", "items", "项")
MAX_SKIPPED_SHOWN = 10
ENTRIES = ("entries", "entries", "条")


def status_tally(statuses: Iterable[str]) -> Own:
    """`14 active, 1 archived`: only statuses present, in lifecycle order."""
    counts = Counter(statuses)
    order = [s.value for s in EpisodeStatus] + sorted(set(counts) - {s.value for s in EpisodeStatus})
    return Own(", ".join(f"{counts[s]} {status_label(s)}" for s in order if counts.get(s))) or SAY("transfer.none")


def operation_label(operation: str) -> Own:
    """An audit operation by its readable name (the vocabulary's `op.<operation>`), else its code."""
    return term(f"op.{operation}", operation) if operation else Own("?")


def audit_summary(entry: dict[str, Any]) -> Own:
    """The summary in the reply's language from its code; entries written before codes show their English."""
    coded = said_from({"code": entry.get("summary_code"), "params": entry.get("summary_params")})
    return said(coded) if coded else inert(entry.get("summary") or "", 80)


def audit_line(entry: dict[str, Any]) -> Own:
    who = entry.get("sender_name") or entry.get("sender_id") or ""
    parts = [short_time(entry.get("time")), operation_label(str(entry.get("operation") or ""))]
    kind, target_id = str(entry.get("target_type") or ""), str(entry.get("target_id") or "")
    target = " ".join(p for p in (term(f"target.{kind}", kind) if kind else "", clip(target_id, 80)) if p)
    if target:
        parts.append(Own(target))
    if who:
        parts.append(SAY("transfer.by", who=clip(who, 60)))
    line = Own(" · ".join(parts))
    summary = audit_summary(entry)
    return lines(line, Own(f"    {summary}")) if summary else line


def profile_export(payload: dict[str, Any]) -> Own:
    speakers = payload.get("speaker_profiles") or {}
    header = SAY("transfer.l1_header", key=str(payload.get("scope_key")),
                 speakers=counted(len(speakers), SPEAKER_PROFILES))
    return json_or_summary(header, payload, [SAY("transfer.speaker_count", count=len(speakers))],
                           SAY("transfer.l1_hint"))


def episode_export(scope: MemoryScope, statuses: Sequence[EpisodeStatus], payload: dict[str, Any]) -> Own:
    episodes = payload["episodes"]
    header = SAY("transfer.l2_header", key=scope.space_key, statuses=statuses_label(statuses),
                 count=counted(len(episodes), EPISODES))
    if payload.get("truncated"):
        header = SAY("transfer.l2_incomplete", header=header)
    if EpisodeStatus.DELETED in statuses:  # asked for by --include-deleted / --all-statuses (see views.deleted_note)
        header = SAY("transfer.l2_no_deleted", header=header)
    summary = [SAY("transfer.by_status", tally=status_tally(e["status"] for e in episodes))]
    return json_or_summary(header, payload, summary, SAY("transfer.l2_hint"))


IMPORT_PREVIEW = 5


def imported(scope: MemoryScope, result: ImportResult, foreign_keys: set[str], *, speakers_kept: bool,
             records_at: str = "") -> Own:
    """`records_at`: the JSON Pointer of the records' array in the document ("" for a bare list): every
    record the reply names is named by its pointer, as `import l1` names a profile's items."""
    episodes = result.episodes
    out = [SAY("transfer.imported", count=counted(len(episodes), EPISODES), key=scope.space_key,
               tally=status_tally(e.status.value for e in episodes))]
    if foreign_keys:
        out.append(SAY("transfer.foreign_keys", keys=clip(", ".join(sorted(foreign_keys)), 80)))
    if not speakers_kept:
        out.append(SAY("transfer.senders_replaced"))
    for episode in episodes[:IMPORT_PREVIEW]:
        out.append(SAY("transfer.imported_from", original=clip(episode.original_id, 80), id=episode.episode_id)
                   if episode.original_id else SAY("transfer.imported_new", id=episode.episode_id))
    if len(episodes) > IMPORT_PREVIEW:
        out.append(SAY("transfer.more", count=len(episodes) - IMPORT_PREVIEW))
    return lines(out + _not_imported(result, records_at))


def _not_imported(result: ImportResult, records_at: str) -> list[Own]:
    """Records the import did not write: ones this plugin cannot store, ones whose fact is stored already,
    and near-identical ones, each by its JSON Pointer (`/episodes/2`)."""

    def at(index: int) -> str:
        return f"{records_at}/{index}"

    out: list[Own] = []
    if result.skipped:
        out.append(SAY("transfer.skipped", count=counted(len(result.skipped), RECORDS)))
        for record in result.skipped[:IMPORT_PREVIEW]:
            out.append(SAY("transfer.skipped_one", where=at(record.position), reason=clip(record.reason, 160)))
        if len(result.skipped) > IMPORT_PREVIEW:
            out.append(SAY("transfer.more_duplicates", count=len(result.skipped) - IMPORT_PREVIEW))
    if result.duplicates:
        out.append(SAY("transfer.duplicates", count=counted(len(result.duplicates), RECORDS)))
        for dup in result.duplicates[:IMPORT_PREVIEW]:
            label = at(dup.position - 1) + (f" ({clip(dup.original_id, 80)})" if dup.original_id else "")
            out.append(SAY("transfer.duplicate_in_batch" if dup.in_batch else "transfer.duplicate",
                           record=label, id=dup.existing_id))
        if len(result.duplicates) > IMPORT_PREVIEW:
            out.append(SAY("transfer.more_duplicates", count=len(result.duplicates) - IMPORT_PREVIEW))
    if result.similar:
        out.append(SAY("transfer.similar", count=counted(len(result.similar), RECORDS)))
        for near in result.similar[:IMPORT_PREVIEW]:
            out.append(Own(f"{at(near.position - 1)} {near.episode_id} ~ {', '.join(near.similar_ids)}"))
    return out


def profiles_imported(scope: MemoryScope, found: ProfileImport) -> Own:
    speakers = ", ".join(found.speakers[:5]) + (", …" if len(found.speakers) > 5 else "")
    parts = ([SAY("transfer.session_profile")] if found.session else []) + (
        [SAY("transfer.speaker_profiles", count=counted(len(found.speakers), SPEAKER_PROFILES),
             names=clip(speakers, 200))] if found.speakers else [])
    if parts:
        out = [SAY("transfer.l1_imported", what=Own(SAY("transfer.and").join(parts)), key=scope.chat_key)]
    elif found.unchanged:
        out = [SAY("transfer.l1_no_change", count=counted(len(found.unchanged), PROFILES))]
    else:
        out = [SAY("transfer.l1_none_stored" if found.skipped else "transfer.l1_nothing")]
    if parts and found.unchanged:
        out.append(SAY("transfer.l1_unchanged", count=counted(len(found.unchanged), PROFILES)))
    if found.skipped_empty:
        out.append(SAY("transfer.l1_skipped", count=counted(found.skipped_empty, EMPTY_PROFILES)))
    if found.skipped:
        out.append(SAY("transfer.l1_not_stored", count=counted(len(found.skipped), ITEMS)))
        out += [SAY("transfer.l1_not_stored_item", where=inert(item.position, 120), reason=inert(item.reason, 160))
                for item in found.skipped[:MAX_SKIPPED_SHOWN]]
        if len(found.skipped) > MAX_SKIPPED_SHOWN:
            out.append(SAY("transfer.l1_not_stored_more", count=len(found.skipped) - MAX_SKIPPED_SHOWN))
    if found.chat_key and found.chat_key != scope.chat_key:
        out.append(SAY("transfer.l1_foreign", key=clip(found.chat_key, 80)))
    return lines(out)


def audit_page(result: AuditPage) -> Own:
    if not result.total:
        return SAY("transfer.no_audit")
    title = page_title(SAY("transfer.audit_title"), result.page, result.pages, result.total, ENTRIES)
    out = [SAY("transfer.newest_first", title=title), *(audit_line(entry) for entry in result.entries)]
    if result.page < result.pages:
        out.append(SAY("transfer.next", page=result.page + 1))
    return lines(out)


def audit_export(scope: MemoryScope, entries: list[dict[str, Any]], operations: Counter[str]) -> Own:
    header = SAY("transfer.audit_header", key=scope.chat_key, count=len(entries))
    summary = [SAY("transfer.by_operation",
                   tally=Own(", ".join(f"{n} {operation_label(op)}" for op, n in sorted(operations.items()))))]
    if entries:
        summary.append(SAY("transfer.span", first=str(entries[0].get("time")), last=str(entries[-1].get("time"))))
    return json_or_summary(header, {"scope_key": scope.chat_key, "entries": entries}, summary,
                           SAY("transfer.audit_hint"))
