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

Who may, in a shared space (the admin rule of `memory.py`): `run` and `discard` change memory and
need a bot admin; `drafts` only reads. `preview` by itself reads, but with a consolidation model it
asks the model and stores a draft (a write, audited), so a caller the rule does not let change this
space gets the read-only part (the archival list) and a line saying the draft needs a bot admin.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.commands.args import UsageError, unexpected
from components.commands.registry import Call, NeedsAdmin, Subcommands
from components.commands.text import counted, short_time
from components.common.chat_text import MAX_REPLY_CHARS, Own, clip, inert, lines, quote, render
from components.common.i18n import Catalogue, said, term
from ltm import ConsolidationPreview, ConsolidationRun, Draft

ACTIONS = ("preview", "run", "drafts", "discard")


SUBCOMMANDS = Subcommands()


@SUBCOMMANDS("consolidate",
             ("!memory consolidate preview [--tag T] — archival candidates; with a consolidation model also a summary "
              "draft to review (in a shared chat only a bot admin's preview drafts)\n"
              "!memory consolidate run [proposal_id] — archive old superseded records, or apply a reviewed draft\n"
              "!memory consolidate drafts | discard <proposal_id> — pending summary drafts\n"
              "In a shared chat, run and discard need a bot admin.",
              "!memory consolidate preview [--tag T] — 可归档的记录；设置了整合模型时还会生成一份待审阅的摘要草稿"
              "（共享的聊天中只有机器人管理员的预览会生成草稿）\n"
              "!memory consolidate run [proposal_id] — 归档较早的已取代记录，或应用一份审阅过的草稿\n"
              "!memory consolidate drafts | discard <proposal_id> — 待审阅的摘要草稿\n"
              "在共享的聊天中，run 和 discard 需要机器人管理员。"))
async def consolidate(call: Call) -> Own:
    args = call.args(options=frozenset({"tag"}), max_positional=2)
    if not args.positional:
        raise UsageError("consolidate", SAY("consolidate.say_action", actions=Own(", ".join(ACTIONS))))
    action, rest = args.positional[0].lower(), args.positional[1:]
    if action not in ACTIONS:
        raise UsageError("consolidate", SAY("consolidate.unknown_action", action=inert(args.positional[0], 30)))
    if args.option("tag") and action != "preview":
        raise UsageError("consolidate", SAY("consolidate.tag_preview"))
    if action in ("preview", "drafts") and rest:
        raise unexpected("consolidate", rest[0])
    if action == "discard" and not rest:
        raise UsageError("consolidate", SAY("consolidate.id_required"))
    if action == "preview":
        drafting = call.may_change()
        preview = await call.memory.consolidation_preview(call.scope, tag=args.option("tag") or None,
                                                          drafting=drafting)
        return consolidation_preview(preview, draft_withheld=not drafting and preview.model_configured)
    if action == "drafts":
        return consolidation_drafts(await call.memory.consolidation_drafts(call.scope))
    if not call.may_change():
        raise NeedsAdmin(f"consolidate {action}")
    if action == "run":
        return consolidation_run(await call.memory.consolidation_run(call.scope, rest[0] if rest else None))
    return draft_discarded(await call.memory.discard_draft(call.scope, rest[0]))



SAY = Catalogue({
    "consolidate.say_action": ("say what to do: {actions}", "请说明要做什么：{actions}"),
    "consolidate.unknown_action": ("unknown action “{action}”", "未知的操作“{action}”"),
    "consolidate.tag_preview": ("--tag belongs to preview", "--tag 只用于 preview"),
    "consolidate.id_required": ("a proposal id is required", "需要提案 id"),
    "consolidate.review_hint": ("The checks prove citations, coverage and size, not truth: compare every statement "
                                "with its sources before running it.",
                                "校验只能证明引用、覆盖和长度，不能证明内容正确：运行前请逐条对照其来源。"),
    "consolidate.draft_title": ("Summary draft {id} over {count} (pending review)",
                                "摘要草稿 {id}，基于 {count}（待审阅）"),
    "consolidate.apply": ("Apply: !memory consolidate run {id}", "应用：!memory consolidate run {id}"),
    "consolidate.discard": ("Discard: !memory consolidate discard {id}", "丢弃：!memory consolidate discard {id}"),
    "consolidate.proposed": ("Proposed summary:", "建议的摘要："),
    "consolidate.statement": ("S{n}. {text} [sources {cited}]", "S{n}. {text} [来源 {cited}]"),
    "consolidate.validity": ("Valid from {start} until {end} (shared by every source)",
                             "有效期 {start} 至 {end}（所有来源共同的区间）"),
    "consolidate.sources": ("Sources (they stay active):", "来源（保持有效）："),
    "consolidate.profile_update": ("Profile update proposed: session {field} + {value} [sources {cited}]",
                                   "建议修改画像：会话画像的{field} + {value} [来源 {cited}]"),
    "consolidate.archival_none": ("Archival: no superseded record was superseded more than {days} ago; nothing to "
                                  "archive.", "归档：没有在 {days}以前被取代的记录；没有可归档的内容。"),
    "consolidate.archival_of": (" (the oldest {shown} of {total})", "（{total} 条中最早的 {shown} 条）"),
    "consolidate.archival": ("Archival: {count} superseded over {days} ago{shown} would be archived (kept, hidden, "
                             "restorable):",
                             "归档：{count}在 {days}以前被取代{shown}，可以归档（保留、隐藏、可恢复）："),
    "consolidate.superseded_at": ("superseded {time}", "取代于 {time}"),
    "consolidate.risk": ("risk: {note}", "风险：{note}"),
    "consolidate.more": ("… and {count} more", "……另有 {count} 条"),
    "consolidate.archive_them": ("Archive them: !memory consolidate run", "归档它们：!memory consolidate run"),
    "consolidate.run_refused": ("Run is refused here: consolidation_enabled is off on this memory knowledge base.",
                                "这里不能运行：此记忆知识库未开启 consolidation_enabled。"),
    "consolidate.preview_head": ("Consolidation preview · no episode was changed; active records are never archived "
                                 "or folded away.",
                                 "整合预览 · 没有修改任何情景记忆；有效的记录绝不会被归档或合并掉。"),
    "consolidate.listing_truncated": ("Note: the space holds more records than one listing reads; older ones were "
                                      "not considered.",
                                      "注意：此空间的记录超过一次列出的数量；更早的记录没有被考虑。"),
    "consolidate.full_sources": ("Full source texts: Memory Console > Review.", "完整的来源文本：记忆控制台 > 审阅。"),
    "consolidate.no_draft": ("No summary draft: {note}.", "没有生成摘要草稿：{note}。"),
    "consolidate.draft_rejected": ("Summary draft rejected: {note}.", "摘要草稿被拒绝：{note}。"),
    "consolidate.summary_active": ("Summary {id} is active (proposal {proposal}); its {count} stay active.",
                                   "摘要 {id} 已生效（提案 {proposal}）；它的 {count}保持有效。"),
    "consolidate.content": ("Content: {content}", "内容：{content}"),
    "consolidate.derived_from": ("Derived from: {ids}", "派生自：{ids}"),
    "consolidate.claim": ("Claim type: {claim}", "声明类型：{claim}"),
    "consolidate.profile": ("Profile: {note}", "画像：{note}"),
    "consolidate.undo_summary": ("Undo: !memory forget {id}", "撤销：!memory forget {id}"),
    "consolidate.nothing_old": ("Nothing to archive: no superseded record is old enough (see !memory consolidate "
                                "preview).",
                                "没有可归档的内容：没有足够久的已取代记录（见 !memory consolidate preview）。"),
    "consolidate.archived": ("Archived {count}; each is in the audit log. Active records were not touched.",
                             "已归档 {count}；每一条都记在审计日志中。有效的记录没有被改动。"),
    "consolidate.undo_one": ("Undo one: !memory restore <id>", "撤销其中一条：!memory restore <id>"),
    "consolidate.no_drafts": ("No pending summary drafts in this chat. Make one with !memory consolidate preview.",
                              "本聊天没有待审阅的摘要草稿。用 !memory consolidate preview 生成一份。"),
    "consolidate.drafts_title": ("Pending summary drafts: {count} (oldest first)",
                                 "待审阅的摘要草稿：{count} 份（最早的在前）"),
    "consolidate.drafts_hint": ("Review one in the Memory Console (Review tab), or apply it: !memory consolidate run "
                                "<proposal_id>",
                                "在记忆控制台（审阅标签页）中审阅，或直接应用：!memory consolidate run "
                                "<proposal_id>"),
    "consolidate.draft_needs_admin": ("Summary draft: not made. With a consolidation model a preview asks the model "
                                      "and stores a draft for review, which changes this shared chat's memory: that "
                                      "needs a bot admin.",
                                      "摘要草稿：未生成。设置了整合模型时，预览会询问模型并保存一份待审阅的草稿，这会修改"
                                      "本共享聊天的记忆：需要机器人管理员。"),
    "consolidate.discarded": ("Discarded summary draft {id}; no episode was changed.",
                              "已丢弃摘要草稿 {id}；没有修改任何情景记忆。"),
})
SOURCES = ("source", "sources", "条来源")
DAYS = ("day", "days", "天")
SUPERSEDED_RECORDS = ("superseded record", "superseded records", "条已取代的记录")
ARCHIVAL_PREVIEW = 10


def _validity(start: str | None, end: str | None) -> Own | None:
    """Only a validity that is set: "Valid from - until -" said nothing."""
    if not (start or end):
        return None
    return SAY("consolidate.validity", start=start or "-", end=end or "-")


def _draft_lines(draft: Draft, *, full: bool) -> list[Own | None]:
    number = {s.episode_id: n for n, s in enumerate(draft.sources, start=1)}
    out: list[Own | None] = [
        SAY("consolidate.draft_title", id=draft.proposal_id, count=counted(len(draft.sources), SOURCES)),
        SAY("consolidate.apply", id=draft.proposal_id), SAY("consolidate.discard", id=draft.proposal_id),
        SAY("consolidate.proposed")]
    for n, statement in enumerate(draft.statements, start=1):
        cited = ", ".join(str(number.get(i, clip(i, 40))) for i in statement.sources)
        out.append(Own("  " + SAY("consolidate.statement", n=n, text=quote(statement.text, None), cited=Own(cited))))
    out.append(_validity(draft.valid_from, draft.valid_until))
    out.append(SAY("consolidate.sources"))
    for n, source in enumerate(draft.sources, start=1):
        meta = [source.episode_id, short_time(source.timestamp)]
        if source.sender_name or source.sender_id:
            meta.append(clip(source.sender_name or source.sender_id, 60))
        out.append(Own(f"  [{n}] " + " · ".join(meta)))
        out.append(Own(f"      {quote(source.content, None if full else 160)}"))
    for update in draft.profile_updates:
        cited = ", ".join(str(number.get(i, clip(i, 40))) for i in update.sources)
        out.append(SAY("consolidate.profile_update", field=term(f"profile.field.{update.field}"),
                       value=quote(update.value, 200), cited=Own(cited)))
    out.append(SAY("consolidate.review_hint"))
    return out


def _archival_lines(preview: ConsolidationPreview) -> list[Own]:
    days = counted(preview.min_age_days, DAYS)
    if not preview.archival:
        return [SAY("consolidate.archival_none", days=days)]
    shown = SAY("consolidate.archival_of", shown=len(preview.archival), total=preview.archival_total) \
        if preview.archival_total > len(preview.archival) else Own("")
    out = [SAY("consolidate.archival", count=counted(len(preview.archival), SUPERSEDED_RECORDS), days=days,
               shown=shown)]
    for n, candidate in enumerate(preview.archival[:ARCHIVAL_PREVIEW], start=1):
        episode = candidate.episode
        out.append(Own(f"[{n}] {episode.episode_id} · "
                       + SAY("consolidate.superseded_at", time=short_time(episode.superseded_at))))
        out.append(Own(f"    {quote(episode.content)}"))
        out += [Own("    " + SAY("consolidate.risk", note=said(note))) for note in candidate.notes]
    if len(preview.archival) > ARCHIVAL_PREVIEW:
        out.append(SAY("consolidate.more", count=len(preview.archival) - ARCHIVAL_PREVIEW))
    out.append(SAY("consolidate.archive_them" if preview.enabled else "consolidate.run_refused"))
    return out


def consolidation_preview(preview: ConsolidationPreview, *, draft_withheld: bool = False) -> Own:
    head = [SAY("consolidate.preview_head")]
    if preview.listing_truncated:
        head.append(SAY("consolidate.listing_truncated"))
    if preview.draft is not None:
        for full in (True, False):
            text = lines(head, _draft_lines(preview.draft, full=full), _archival_lines(preview))
            if len(render(text, limit=10**9)) <= MAX_REPLY_CHARS:
                return text
        return lines(head, _draft_lines(preview.draft, full=False), SAY("consolidate.full_sources"))
    if draft_withheld:
        return lines(head, SAY("consolidate.draft_needs_admin"), _archival_lines(preview))
    note = said(preview.note) if preview.note else Own("-")
    label = "consolidate.draft_rejected" if preview.rejected else "consolidate.no_draft"
    return lines(head, SAY(label, note=note), _archival_lines(preview))


def consolidation_run(result: ConsolidationRun) -> Own:
    if result.summary is not None:
        summary = result.summary
        return lines(
            SAY("consolidate.summary_active", id=summary.episode_id, proposal=result.proposal_id,
                count=counted(len(result.sources), SOURCES)),
            SAY("consolidate.content", content=quote(summary.content, None)),
            SAY("consolidate.derived_from", ids=", ".join(summary.derived_from)),
            _validity(summary.fact.valid_from, summary.fact.valid_until),
            SAY("consolidate.claim", claim=term(f"claim.{summary.fact.claim_type.value}")),
            SAY("consolidate.profile", note=said(result.profile)) if result.profile else None,
            SAY("consolidate.undo_summary", id=summary.episode_id))
    if not result.archived:
        return SAY("consolidate.nothing_old")
    out = [SAY("consolidate.archived", count=counted(len(result.archived), SUPERSEDED_RECORDS))]
    out += [Own(f"{e.episode_id} {quote(e.content, 60)}") for e in result.archived[:ARCHIVAL_PREVIEW]]
    if len(result.archived) > ARCHIVAL_PREVIEW:
        out.append(SAY("consolidate.more", count=len(result.archived) - ARCHIVAL_PREVIEW))
    out.append(SAY("consolidate.undo_one"))
    return lines(out)


def consolidation_drafts(drafts: Sequence[Draft]) -> Own:
    if not drafts:
        return SAY("consolidate.no_drafts")
    out = [SAY("consolidate.drafts_title", count=len(drafts))]
    for draft in drafts:
        out.append(Own(f"{draft.proposal_id} · {short_time(draft.created_at)} · "
                       f"{counted(len(draft.sources), SOURCES)}"))
        out.append(Own(f"    {quote(draft.summary)}"))
    out.append(SAY("consolidate.drafts_hint"))
    return lines(out)


def draft_discarded(draft: Draft) -> Own:
    return SAY("consolidate.discarded", id=draft.proposal_id)
