"""`!memory` subcommands that review memory candidates (Q2): list, accept, reject.

Candidates are proposed from users' own messages when the memory KB has
`candidate_extraction_enabled` (see `components/event_listener/candidate_listener.py`);
they change nothing until accepted. `candidate` is mutating: accepting writes memory and
rejecting changes the review queue, so in a shared space it follows the same admin rule
as `forget` or `archive`. A candidate id of another chat answers "not found".
"""

from __future__ import annotations

from collections.abc import Sequence

from components.commands.args import UsageError, page_of, status_or_all
from components.commands.registry import Call, Subcommands
from components.commands.text import counted, page_title, short_time, speaker_label
from components.common.chat_text import Own, clip, inert, lines, quote
from components.common.i18n import Catalogue, term
from ltm import MAX_CANDIDATES, Candidate, CandidateKind, CandidatePage, CandidateStatus

PAGE_SIZE = 10
ACTIONS = ("accept", "reject")


SUBCOMMANDS = Subcommands()


@SUBCOMMANDS("candidates", ("!memory candidates [page] [--status pending|accepted|rejected | --all-statuses] — memory "
                           "candidates waiting for review (or of those statuses)",
                           "!memory candidates [page] [--status pending|accepted|rejected | --all-statuses] — 等待审阅"
                           "的候选记忆（或这些状态的候选）"))
async def candidates(call: Call) -> Own:
    args = call.args(switches=frozenset({"all-statuses"}), options=frozenset({"status"}), max_positional=1)
    all_statuses = "all-statuses" in args.switches
    statuses = candidate_statuses(call.topic, args.options.get("status", []))
    if statuses and all_statuses:
        raise status_or_all(call.topic)
    result = await call.memory.candidate_page(call.scope, all_statuses=all_statuses, statuses=statuses,
                                              page=page_of(call.topic, args), page_size=PAGE_SIZE)
    found = await call.memory.memory_kb()
    enabled = found is not None and found[1].candidate_extraction_enabled
    return candidate_page(result, all_statuses=all_statuses or set(statuses) == set(CandidateStatus),
                          statuses=statuses, enabled=enabled, page_size=PAGE_SIZE)


def candidate_statuses(topic: str, values: list[str]) -> tuple[CandidateStatus, ...]:
    """`--status` values (repeated, or comma-separated), as the official plugin's `candidates --status` took one."""
    chosen: list[CandidateStatus] = []
    for value in values:
        for word in (w.strip().lower() for w in value.split(",")):
            try:
                chosen.append(CandidateStatus(word))
            except ValueError:
                raise UsageError(topic, SAY("candidates.unknown_status", status=inert(word, 20))) from None
    return tuple(dict.fromkeys(chosen))


@SUBCOMMANDS("candidate", ("!memory candidate accept <id> / !memory candidate reject <id> — apply or dismiss one "
                          "candidate",
                          "!memory candidate accept <id> / !memory candidate reject <id> — 接受或拒绝一条候选"),
             mutating=True)
async def candidate(call: Call) -> Own:
    args = call.args(max_positional=2)
    action = args.positional[0].lower() if args.positional else ""
    if action not in ACTIONS:
        raise UsageError(call.topic, SAY("candidates.say_action"))
    if len(args.positional) < 2:
        raise UsageError(call.topic, SAY("candidates.id_required"))
    candidate_id = args.positional[1]
    if action == "accept":
        return candidate_accepted(await call.memory.accept_candidate(call.scope, candidate_id))
    return candidate_rejected(await call.memory.reject_candidate(call.scope, candidate_id))



SAY = Catalogue({
    "candidates.say_action": ("say accept or reject", "请写 accept 或 reject"),
    "candidates.unknown_status": ("unknown candidate status “{status}”; use pending, accepted or rejected",
                                  "未知的候选状态“{status}”；请使用 pending、accepted 或 rejected"),
    "candidates.id_required": ("a candidate id is required", "需要候选的 id"),
    "candidates.what_profile": ("{target} {field}", "{target}画像的{field}"),
    "candidates.what_ignore": ("ignore (looked like a credential; nothing kept)", "已忽略（疑似凭据；未保留任何内容）"),
    "candidates.what_episode": ("episode", "情景记忆"),
    "candidates.from": ("from {speaker}", "来自 {speaker}"),
    "candidates.said": ("said: {text}", "原话：{text}"),
    "candidates.applied": ("applied as {type} {id}", "已写入为{type} {id}"),
    "candidates.already_remembered": (" (already remembered)", "（已记住）"),
    "candidates.accepted_existing": ("Accepted candidate {id}: already remembered as episode {episode}; nothing new "
                                     "was stored.", "已接受候选 {id}：已记住，即情景记忆 {episode}；没有新增记录。"),
    "candidates.all": ("all statuses", "全部状态"),
    "candidates.pending": ("pending", "待审"),
    "candidates.refused": ("Note: {count} not queued because this chat's queue was full of pending candidates "
                           "({limit}); the last at {time}. Accept or reject some.",
                           "注意：{count}没有加入队列，因为本聊天的队列已满是待审候选（{limit} 条）；"
                           "最近一次在 {time}。请接受或拒绝一些。"),
    "candidates.off": ("Note: candidate extraction is off for this memory knowledge base (setting "
                       "candidate_extraction_enabled); no new candidates are proposed.",
                       "注意：此记忆知识库未开启候选提取（设置 candidate_extraction_enabled），不会再提出新的候选。"),
    "candidates.none": ("No {label} memory candidates in this chat.", "本聊天没有{label}的候选记忆。"),
    "candidates.none_at_all": ("No memory candidates in this chat, of any status.", "本聊天没有任何状态的候选记忆。"),
    "candidates.none_counts": ("No {label} memory candidates in this chat. ({counts})",
                               "本聊天没有{label}的候选记忆。（{counts}）"),
    "candidates.decided_hint": ("Decided ones: !memory candidates --all-statuses",
                                "已处理的候选：!memory candidates --all-statuses"),
    "candidates.title": ("Memory candidates ({label})", "候选记忆（{label}）"),
    "candidates.newest_first": ("{title} · newest first", "{title} · 最新的在前"),
    "candidates.act_hint": ("Accept: !memory candidate accept <id> · Reject: !memory candidate reject <id>",
                            "接受：!memory candidate accept <id> · 拒绝：!memory candidate reject <id>"),
    "candidates.reject_hint": ("Dismiss a credential candidate: !memory candidate reject <id> (it cannot be accepted)",
                               "忽略疑似凭据的候选：!memory candidate reject <id>（它不能被接受）"),
    "candidates.next": ("Next: !memory candidates {page}{flag}", "下一页：!memory candidates {page}{flag}"),
    "candidates.accepted_episode": ("Accepted candidate {id}: stored episode {episode} (claim type {claim}, source "
                                    "ref {ref}).",
                                    "已接受候选 {id}：保存为情景记忆 {episode}（声明类型 {claim}，出处 {ref}）。"),
    "candidates.details": ("Details: !memory show {id}", "详情：!memory show {id}"),
    "candidates.accepted_profile": ("Accepted candidate {id}: {field} added to {whose}.",
                                    "已接受候选 {id}：{field}已加入 {whose}。"),
    "candidates.session_profile": ("the session profile", "会话画像"),
    "candidates.speaker_profile": ("the speaker profile of {speaker}", "{speaker} 的发言者画像"),
    "candidates.check": ("Check: !memory profile", "查看：!memory profile"),
    "candidates.rejected": ("Rejected candidate {id}; nothing was stored. It stays listed under "
                            "!memory candidates --all-statuses.",
                            "已拒绝候选 {id}；没有保存任何内容。它仍列在 !memory candidates --all-statuses 中。"),
})
NEW_CANDIDATES = ("new candidate", "new candidates", "条新候选")
APPLIED_AS = {"episode": "candidate.applied.episode", "speaker_profile": "candidate.applied.speaker_profile",
              "session_profile": "candidate.applied.session_profile"}


def candidate_what(candidate: Candidate) -> Own:
    if candidate.kind is CandidateKind.PROFILE:
        field = candidate.field.value if candidate.field else "traits"
        return SAY("candidates.what_profile", target=term(f"profile.target.{candidate.target or 'speaker'}"),
                   field=term(f"profile.field.{field}"))
    if candidate.kind is CandidateKind.IGNORE:
        return SAY("candidates.what_ignore")
    return SAY("candidates.what_episode")


def candidate_lines(number: int, candidate: Candidate) -> list[Own]:
    """Two or three lines: id and metadata, the proposed content, and the user's words when they differ."""
    meta = [candidate.candidate_id, short_time(candidate.created_at), candidate_what(candidate),
            SAY("candidates.from", speaker=speaker_label(candidate.speaker.sender_id, candidate.speaker.sender_name)),
            Own(f"{term(f'origin.{candidate.origin.value}')} {clip(candidate.rule, 40)}")]
    if candidate.status is not CandidateStatus.PENDING:
        meta.append(Own(f"[{term(f'candidate.status.{candidate.status.value}')}]"))
    out = [Own(f"[{number}] " + " · ".join(meta)), Own(f"    {quote(candidate.content)}")]
    if candidate.evidence and candidate.evidence.strip() != candidate.content:
        out.append(Own("    " + SAY("candidates.said", text=quote(candidate.evidence, 80))))
    if candidate.applied_type:
        kind = APPLIED_AS.get(candidate.applied_type)
        out.append(Own("    " + SAY("candidates.applied", type=term(kind) if kind else candidate.applied_type,
                                    id=candidate.applied_id or "")
                       + (SAY("candidates.already_remembered") if candidate.applied_existing else "")))
    return out


def candidate_page(result: CandidatePage, *, all_statuses: bool, enabled: bool, page_size: int,
                   statuses: Sequence[CandidateStatus] = ()) -> Own:
    if all_statuses:
        label, flag = SAY("candidates.all"), " --all-statuses"
    elif statuses:
        label = Own("+".join(term(f"candidate.status.{s.value}") for s in statuses))
        flag = " --status " + ",".join(s.value for s in statuses)
    else:
        label, flag = SAY("candidates.pending"), ""
    notes: list[Own] = []
    if result.refused:
        notes.append(SAY("candidates.refused", count=counted(result.refused, NEW_CANDIDATES), limit=MAX_CANDIDATES,
                         time=short_time(result.last_refused_at)))
    if not enabled:
        notes.append(SAY("candidates.off"))
    if not result.total:
        counts = ", ".join(f"{n} {term(f'candidate.status.{status}')}" for status, n in result.counts.items() if n)
        if all_statuses:  # "No all statuses memory candidates" read as nonsense
            first = SAY("candidates.none_at_all")
        else:
            first = SAY("candidates.none_counts", label=label, counts=Own(counts)) if counts \
                else SAY("candidates.none", label=label)
        hint = SAY("candidates.decided_hint") if not all_statuses and not statuses and counts else None
        return lines(first, hint, notes)
    title = page_title(SAY("candidates.title", label=label), result.page, result.pages, result.total)
    out = [SAY("candidates.newest_first", title=title)]
    for offset, candidate in enumerate(result.candidates):
        out.extend(candidate_lines((result.page - 1) * page_size + offset + 1, candidate))
    pending = [c for c in result.candidates if c.status is CandidateStatus.PENDING]
    # A credential ("ignore") candidate can only be dismissed: the accept hint is for the others.
    if any(c.kind is not CandidateKind.IGNORE for c in pending):
        out.append(SAY("candidates.act_hint"))
    if any(c.kind is CandidateKind.IGNORE for c in pending):
        out.append(SAY("candidates.reject_hint"))
    if result.page < result.pages:
        out.append(SAY("candidates.next", page=result.page + 1, flag=Own(flag)))
    return lines(out, notes)


def candidate_accepted(candidate: Candidate) -> Own:
    if candidate.applied_type == "episode" and candidate.applied_existing:
        return lines(SAY("candidates.accepted_existing", id=candidate.candidate_id, episode=candidate.applied_id or ""),
                     Own(f"    {quote(candidate.content)}"),
                     SAY("candidates.details", id=candidate.applied_id or ""))
    if candidate.applied_type == "episode":
        return lines(SAY("candidates.accepted_episode", id=candidate.candidate_id, episode=candidate.applied_id or "",
                         claim=term(f"claim.{candidate.claim_type}"), ref=candidate.source_ref),
                     Own(f"    {quote(candidate.content)}"),
                     SAY("candidates.details", id=candidate.applied_id or ""))
    whose = SAY("candidates.session_profile") if candidate.target == "session" else SAY(
        "candidates.speaker_profile", speaker=speaker_label(candidate.speaker.sender_id, candidate.speaker.sender_name))
    field = term(f"profile.field.{candidate.field.value if candidate.field else 'traits'}")
    return lines(SAY("candidates.accepted_profile", id=candidate.candidate_id, field=field, whose=whose),
                 Own(f"    {quote(candidate.content)}"), SAY("candidates.check"))


def candidate_rejected(candidate: Candidate) -> Own:
    return SAY("candidates.rejected", id=candidate.candidate_id)
