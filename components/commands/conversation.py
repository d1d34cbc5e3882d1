"""`!memory conversation`: this chat's conversation record (V4), its summary and last turns, and clearing it.

Showing it needs no admin: it is what the chat said, shown in the chat. `clear` changes what a shared
chat's model is given, so it follows the admin rule of every change (a bot admin in a shared chat,
unless `command_admin_only_in_groups` is off). The export and import of the record are `!memory export
conversation` and `!memory import conversation` (`transfer.py`).
"""

from __future__ import annotations

from typing import Any

from components.commands.args import UsageError
from components.commands.registry import Call, NeedsAdmin, Subcommands
from components.commands.text import Noun, counted, json_or_summary, short_time
from components.common.chat_text import Own, clip, inert, lines, quote
from components.common.i18n import Catalogue, term
from ltm import ConversationRecord, MemoryScope

SUBCOMMANDS = Subcommands()
TURNS_SHOWN = 5
SUMMARY_SHOWN = 1_200  # characters of the summary in one chat message (the console shows it whole)
SIDE_SHOWN = 120
TURNS: Noun = ("turn", "turns", "轮对话")

SAY = Catalogue({
    "conversation.off": ("The conversation record is off in this installation (setting conversation_enabled): "
                         "nothing is recorded.", "本安装未开启对话记录（设置 conversation_enabled）：不记录任何内容。"),
    "conversation.empty": ("Nothing recorded in this chat yet.", "本聊天还没有记录任何内容。"),
    "conversation.title": ("Conversation record of {key}: {turns} kept, a summary of {folded} earlier",
                           "{key} 的对话记录：保留 {turns}，摘要涵盖更早的 {folded}"),
    "conversation.summary": ("Summary ({source}, {time}): {text}", "摘要（{source}，{time}）：{text}"),
    "conversation.no_summary": ("Summary: none yet (the oldest turns are folded into it when the record fills up).",
                                "摘要：暂无（记录满时，最早的几轮对话会并入摘要）。"),
    "conversation.summary_cut": ("(the whole summary: Memory Console, Conversation tab)",
                                 "（完整摘要：记忆控制台的对话标签页）"),
    "conversation.last": ("Last {count}:", "最近 {count}："),
    "conversation.turn": ("#{seq} {time} {who}: {said} → {reply}", "#{seq} {time} {who}：{said} → {reply}"),
    "conversation.clear_hint": ("Clear: !memory conversation clear (shared chats: bot admins)",
                                "清空：!memory conversation clear（共享的聊天：机器人管理员）"),
    "conversation.cleared": ("Cleared the conversation record of {key}: {turns} and the summary of {folded} earlier; "
                             "the clearing is in the audit log.",
                             "已清空 {key} 的对话记录：{turns}及涵盖更早 {folded}的摘要；此操作记在审计日志中。"),
    "conversation.nothing_to_clear": ("The conversation record of {key} is empty already; nothing changed.",
                                      "{key} 的对话记录已经是空的；没有改动。"),
    "conversation.unknown_action": ("unknown action “{action}”: say nothing, or clear",
                                    "未知的操作“{action}”：不加参数，或写 clear"),
    "conversation.export_header": ("Conversation export of {key}: {turns}, a summary of {chars} characters",
                                   "{key} 的对话导出：{turns}，摘要 {chars} 个字符"),
    "conversation.export_hint": ("Use the Memory Console Export tab for the full JSON.",
                                 "完整的 JSON 请用记忆控制台的导出标签页。"),
    "conversation.imported": ("Imported into {key}: {turns} kept and a summary of {folded} earlier ({chars} "
                              "characters); the import is in the audit log.",
                              "已导入到 {key}：保留 {turns}，摘要涵盖更早的 {folded}（{chars} 个字符）；此次导入记在"
                              "审计日志中。"),
})


@SUBCOMMANDS("conversation", ("!memory conversation — this chat's recorded turns: the summary and the last turns\n"
                              "!memory conversation clear — remove them (shared chats: bot admins)",
                              "!memory conversation — 本聊天的对话记录：摘要和最近几轮对话\n"
                              "!memory conversation clear — 清空它们（共享的聊天：机器人管理员）"))
async def conversation(call: Call) -> Own:
    args = call.args(max_positional=1)
    action = args.positional[0].lower() if args.positional else ""
    if action not in ("", "clear"):
        raise UsageError("conversation", SAY("conversation.unknown_action", action=inert(args.positional[0], 30)))
    if action == "clear":
        if not call.may_change():
            raise NeedsAdmin("conversation clear")
        before = await call.memory.conversation(call.scope)
        if before.empty:
            return SAY("conversation.nothing_to_clear", key=call.scope.chat_key)
        await call.memory.clear_conversation(call.scope)
        return SAY("conversation.cleared", key=call.scope.chat_key, turns=counted(len(before.turns), TURNS),
                   folded=counted(before.summary.folded, TURNS))
    found = await call.memory.memory_kb()
    return record_text(call.scope, await call.memory.conversation(call.scope),
                       enabled=found is not None and found[1].conversation_enabled)


def record_text(scope: MemoryScope, record: ConversationRecord, *, enabled: bool) -> Own:
    head = None if enabled else SAY("conversation.off")
    if record.empty:
        return lines(head, SAY("conversation.empty") if enabled else None)
    summary = record.summary
    out = [head, SAY("conversation.title", key=scope.chat_key, turns=counted(len(record.turns), TURNS),
                     folded=counted(summary.folded, TURNS))]
    if summary.empty:
        out.append(SAY("conversation.no_summary"))
    else:
        out.append(SAY("conversation.summary", source=term(f"summary_source.{summary.source.value}"),
                       time=short_time(summary.updated_at), text=quote(summary.text, SUMMARY_SHOWN)))
        if len(summary.text) > SUMMARY_SHOWN:
            out.append(SAY("conversation.summary_cut"))
    shown = record.turns[-TURNS_SHOWN:]
    if shown:
        out.append(SAY("conversation.last", count=counted(len(shown), TURNS)))
        out += [SAY("conversation.turn", seq=t.seq, time=short_time(t.at),
                    who=clip(t.sender_name or t.sender_id or "?", 40), said=quote(t.user_text, SIDE_SHOWN),
                    reply=quote(t.reply_text, SIDE_SHOWN)) for t in shown]
    out.append(SAY("conversation.clear_hint"))
    return lines(out)


def export_text(scope: MemoryScope, payload: dict[str, Any]) -> Own:
    """`!memory export conversation`: the JSON when it fits one message, else what it holds and where."""
    header = SAY("conversation.export_header", key=scope.chat_key, turns=counted(len(payload["turns"]), TURNS),
                 chars=len(payload["summary"]["text"]))
    return json_or_summary(header, payload, [], SAY("conversation.export_hint"))


def imported_text(scope: MemoryScope, record: ConversationRecord) -> Own:
    return SAY("conversation.imported", key=scope.chat_key, turns=counted(len(record.turns), TURNS),
               folded=counted(record.summary.folded, TURNS), chars=len(record.summary.text))

