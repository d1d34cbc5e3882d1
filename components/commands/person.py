"""`!memory me` and `!memory forget-me`: a speaker asks what is kept about them, and has it erased.

`me` shows what this chat keeps about the current sender (their episodes, speaker profile and
candidates) and how much the other chats of the installation keep (counts only). `forget-me`
erases this chat's part (its L1 scope and its episode space: in bot isolation that space is
every chat of the bot's, and only the sender's own records go). It counts first; `--confirm`
erases. `--everywhere` covers every chat of the installation, and only when the operator allows
it with the plugin setting `self_service_erasure_everywhere` (off by default); otherwise a bot
admin does it in the Memory Console's People tab. No admin is needed: it only ever touches the
sender's own records.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.commands.args import UsageError
from components.commands.profile_view import profile_lines
from components.commands.registry import Call, Subcommands
from components.commands.text import Noun, counted, short_time
from components.commands.views import status_counts
from components.common.chat_text import Own, clip, lines, quote
from components.common.i18n import Catalogue
from ltm import Outcome, PersonErasure, PersonRecords

SUBCOMMANDS = Subcommands()
EVERYWHERE_SETTING = "self_service_erasure_everywhere"
SHOWN = 5

SAY = Catalogue({
    "person.no_sender": ("this message has no known sender, so there is no one to look up",
                         "这条消息没有已知的发送者，所以无法查找"),
    "person.everywhere_off": ("!memory forget-me --everywhere: erasing your memories in other chats yourself is off "
                              "in this installation (plugin setting {setting}). “!memory forget-me” erases this "
                              "chat's; a bot admin can erase the rest in the Memory Console (People tab).",
                              "!memory forget-me --everywhere：本安装不允许你自己删除其他聊天中的记忆（插件设置 "
                              "{setting}）。“!memory forget-me”删除本聊天的记忆；其余的可由机器人管理员在记忆控制台"
                              "（人员标签页）中删除。"),
    "person.nothing": ("nothing", "无"),
    "person.list_separator": (", ", "、"),
    "person.me_title": ("What this chat keeps about you ({name}, {id}):", "本聊天保存的关于你的内容（{name}，{id}）："),
    "person.episodes": ("Episodes you said: {count}", "你说过的情景记忆：{count} 条"),
    "person.episodes_by_status": ("Episodes you said: {count} ({statuses})",
                                  "你说过的情景记忆：{count} 条（{statuses}）"),
    "person.episode": ("{id} · {time} · {content}", "{id} · {time} · {content}"),
    "person.more": ("… and {count} more", "……另有 {count} 条"),
    "person.profile": ("Your speaker profile: {profile}", "你的发言者画像：{profile}"),
    "person.no_profile": ("Your speaker profile: none", "你的发言者画像：无"),
    "person.candidates": ("Candidates from your messages: {count}", "来自你的消息的候选：{count} 条"),
    "person.conversation": ("Your turns in this chat's conversation record: {count}{summary}",
                            "本聊天对话记录中你的发言：{count} 轮{summary}"),
    "person.conversation_summary": ("; its summary may hold your words", "；其摘要可能含有你的话语"),
    "person.elsewhere": ("Elsewhere in this installation: {counts} in {spaces}.",
                         "本安装的其他地方：{spaces}中共有 {counts}。"),
    "person.elsewhere_none": ("Elsewhere in this installation: nothing.", "本安装的其他地方：无。"),
    "person.erase_hint": ("Erase what this chat keeps: !memory forget-me", "删除本聊天保存的内容：!memory forget-me"),
    "person.erase_everywhere_hint": ("{hint} · everywhere: !memory forget-me --everywhere",
                                     "{hint} · 所有聊天：!memory forget-me --everywhere"),
    "person.erase_admin_hint": ("{hint} · the rest: ask a bot admin (Memory Console, People tab)",
                                "{hint} · 其余的：请机器人管理员处理（记忆控制台，人员标签页）"),
    "person.where_everywhere": ("every chat of this installation", "本安装的所有聊天"),
    "person.where_here": ("this chat", "本聊天"),
    "person.nothing_kept": ("Nothing is kept about you in {where}.", "{where}没有保存关于你的任何内容。"),
    "person.would_erase": ("This would erase from {where}: {counts}. Nothing is erased yet.",
                           "这将从{where}删除：{counts}。目前还没有删除任何内容。"),
    "person.confirm_hint": ("To erase it: !memory forget-me {flags}--confirm",
                            "确认删除：!memory forget-me {flags}--confirm"),
    "person.erased": ("Erased from {where}: {counts}. Each change is in the audit log of its chat.",
                      "已从{where}删除：{counts}。每项修改都记在所在聊天的审计日志中。"),
    "person.fenced": ("Writes are paused by a fence in {spaces}: nothing is erased there until an admin clears the "
                      "fence.", "{spaces} 的写入已被栅栏暂停：在管理员清除栅栏之前，那里不会删除任何内容。"),
    "person.failed": ("Not erased because of an error: {spaces}; try again later.",
                      "因出错而没有删除：{spaces}；请稍后再试。"),
})


def _speaker_id(call: Call) -> str:
    if not call.scope.sender_id:
        raise UsageError(call.topic, SAY("person.no_sender"))
    return call.scope.sender_id


@SUBCOMMANDS("me", ("!memory me — what this chat keeps about you, and how much other chats keep",
                    "!memory me — 本聊天保存的关于你的内容，以及其他聊天保存了多少"))
async def me(call: Call) -> Own:
    call.args(max_positional=0)
    speaker = _speaker_id(call)
    here, elsewhere = (await call.memory.find_person(speaker)).split(call.scope)
    return me_text(call, here, elsewhere)


@SUBCOMMANDS("forget-me", ("!memory forget-me [--everywhere] [--confirm] — erase what is kept about you "
                           "(this chat; counted first, erased with --confirm)",
                           "!memory forget-me [--everywhere] [--confirm] — 删除保存的关于你的内容"
                           "（本聊天；先计数，加 --confirm 才删除）"))
async def forget_me(call: Call) -> Own:
    args = call.args(switches=frozenset({"everywhere", "confirm"}), max_positional=0)
    speaker = _speaker_id(call)
    everywhere = "everywhere" in args.switches
    if everywhere and not allowed_everywhere(call.config):
        return SAY("person.everywhere_off", setting=Own(EVERYWHERE_SETTING))
    result = await call.memory.erase_person(speaker, dry_run="confirm" not in args.switches,
                                            chat=None if everywhere else call.scope, actor=call.scope.identity)
    return erased_text(result, everywhere)


def allowed_everywhere(config: Mapping[str, object]) -> bool:
    value = config.get(EVERYWHERE_SETTING, False)
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "on"))


# --------------------------------------------------------------------------- reply text
COUNT_NAMES: tuple[tuple[str, Noun], ...] = (
    ("episodes", ("episode", "episodes", "条情景记忆")),
    ("summaries", ("summary built from them", "summaries built from them", "条由其生成的摘要")),
    ("speaker_profiles", ("speaker profile", "speaker profiles", "个发言者画像")),
    ("candidates", ("candidate", "candidates", "条候选")),
    ("snapshots", ("injection snapshot", "injection snapshots", "份注入快照")),
    ("conversation_turns", ("conversation turn", "conversation turns", "轮对话记录")),
    ("conversation_summaries", ("conversation summary that may hold their words",
                                "conversation summaries that may hold their words", "份可能含有其话语的对话摘要")),
)
MEMORY_SPACES: Noun = ("other memory space", "other memory spaces", "个其他记忆空间")


def counts_text(counts: Mapping[str, int]) -> Own:
    parts = [counted(counts[key], noun) for key, noun in COUNT_NAMES if counts.get(key)]
    return Own(SAY("person.list_separator").join(parts)) if parts else SAY("person.nothing")


def me_text(call: Call, here: PersonRecords, elsewhere: PersonRecords) -> Own:
    scope = call.scope
    out = [SAY("person.me_title", name=clip(scope.sender_name or scope.sender_id, 60), id=clip(scope.sender_id, 80))]
    episodes = sorted((e for s in here.spaces for e in s.episodes), key=lambda e: e.timestamp, reverse=True)
    out.append(SAY("person.episodes_by_status", count=len(episodes), statuses=status_counts(episodes)) if episodes
               else SAY("person.episodes", count=0))
    out += [Own("  " + SAY("person.episode", id=e.episode_id, time=short_time(e.timestamp),
                           content=quote(e.content, 60))) for e in episodes[:SHOWN]]
    if len(episodes) > SHOWN:
        out.append(Own("  " + SAY("person.more", count=len(episodes) - SHOWN)))
    profile = next((s.speaker_profile for s in here.spaces if s.speaker_profile is not None), None)
    shown = profile_lines(profile) if profile is not None else []
    out.append(SAY("person.profile", profile=Own("; ".join(shown))) if shown else SAY("person.no_profile"))
    out.append(SAY("person.candidates", count=sum(len(s.candidates) for s in here.spaces)))
    in_summary = any(s.conversation_summary for s in here.spaces)
    turns = sum(len(s.conversation_turns) for s in here.spaces)
    if turns or in_summary:  # only where a conversation record holds them (it is off by default)
        out.append(SAY("person.conversation", count=turns,
                       summary=SAY("person.conversation_summary") if in_summary else Own("")))
    if elsewhere.spaces:
        out.append(SAY("person.elsewhere", counts=counts_text(elsewhere.counts()),
                       spaces=counted(len(elsewhere.spaces), MEMORY_SPACES)))
    else:
        out.append(SAY("person.elsewhere_none"))
    hint = SAY("person.erase_hint")
    if elsewhere.spaces:
        hint = SAY("person.erase_everywhere_hint" if allowed_everywhere(call.config) else "person.erase_admin_hint",
                   hint=hint)
    out.append(hint)
    return lines(out)


def erased_text(result: PersonErasure, everywhere: bool) -> Own:
    where = SAY("person.where_everywhere" if everywhere else "person.where_here")
    counts = counts_text(result.counts())
    fenced = result.of(Outcome.FENCED)
    failed = result.of(Outcome.FAILED)
    if not result.spaces:
        return SAY("person.nothing_kept", where=where)
    if result.dry_run:
        out = [SAY("person.would_erase", where=where, counts=counts),
               SAY("person.confirm_hint", flags=Own("--everywhere " if everywhere else ""))]
    else:
        out = [SAY("person.erased", where=where, counts=counts)]
    if fenced:
        out.append(SAY("person.fenced", spaces=clip(", ".join(s.key for s in fenced), 200)))
    if failed:
        out.append(SAY("person.failed", spaces=clip(", ".join(s.key for s in failed), 200)))
    return lines(out)
