"""`!memory move-bot`: a deleted bot's memory copied into the same chats of the bot that replaced it.

LangBot gives a re-created bot a new uuid, and memory spaces are keyed by the bot's uuid, so the new bot
starts empty (issue 41, point 5). Only a bot admin moves it, from a chat of the new bot, and never by
itself: without `--confirm` it is a dry run that says what would be copied (`ltm/platform_events/move.py`).
"""

from __future__ import annotations

from components.commands.registry import Call, Subcommands
from components.commands.text import EPISODES, Noun, counted
from components.common.chat_text import Own, clip, lines
from components.common.i18n import Catalogue
from ltm import BotMove

SUBCOMMANDS = Subcommands()
PROFILES: Noun = ("profile", "profiles", "个画像")

SAY = Catalogue({
    "bots.admins_only": ("!memory move-bot: only bot admins move memory between bots.",
                         "!memory move-bot：只有机器人管理员可以在机器人之间迁移记忆。"),
    "bots.planned": ("Dry run, nothing written: the memory of bot {old} would be copied into bot {new}:",
                     "试运行，未写入：机器人 {old} 的记忆将复制到机器人 {new}："),
    "bots.done": ("Memory of bot {old} copied into bot {new}:", "机器人 {old} 的记忆已复制到机器人 {new}："),
    "bots.chat": ("{old} -> {new}: {episodes}, {profiles}", "{old} -> {new}：{episodes}，{profiles}"),
    "bots.already": ("{count} there already", "已有 {count} 条"),
    "bots.still_listed": ("LangBot still lists bot {old}: it was not deleted. Move only the memory of a bot you "
                          "deleted and created again.",
                          "LangBot 仍列出机器人 {old}：它没有被删除。只迁移已删除并重新创建的机器人的记忆。"),
    "bots.confirm": ("Copy it: !memory move-bot {old} --confirm", "确认复制：!memory move-bot {old} --confirm"),
    "bots.left": ("Not moved: review candidates and the conversation record. The old bot's memory stays as it was; "
                  "forget it in the Memory Console once the copy is checked.",
                  "不迁移：待审阅的候选与对话记录。旧机器人的记忆保持原样；核对副本后可在记忆控制台中删除。"),
})


@SUBCOMMANDS("move-bot", ("!memory move-bot <old bot uuid> [--confirm] — copy a deleted bot's memory into this "
                          "bot's same chats (bot admins; a dry run without --confirm)",
                          "!memory move-bot <old bot uuid> [--confirm] — 把已删除机器人的记忆复制到本机器人的"
                          "相同聊天（机器人管理员；不加 --confirm 为试运行）"))
async def move_bot(call: Call) -> Own:
    args = call.args(switches=frozenset({"confirm"}), max_positional=1)
    if not call.is_admin:
        return SAY("bots.admins_only")
    old = args.positional[0] if args.positional else ""
    return moved_text(await call.memory.move_bot(old, call.scope, dry_run="confirm" not in args.switches))


def moved_text(move: BotMove) -> Own:
    old, new = clip(move.old_bot, 80), clip(move.new_bot, 80)
    out = [SAY("bots.planned" if move.dry_run else "bots.done", old=old, new=new)]
    for chat in move.chats:
        episodes = counted(chat.episodes, EPISODES)
        if chat.already:
            episodes = Own(f"{episodes} ({SAY('bots.already', count=chat.already)})")
        out.append(Own("  " + SAY("bots.chat", old=clip(chat.old_chat, 120), new=clip(chat.new_chat, 120),
                                  episodes=episodes, profiles=counted(chat.profiles, PROFILES))))
    if move.old_bot_listed:
        out.append(SAY("bots.still_listed", old=old))
    if move.dry_run:
        out.append(SAY("bots.confirm", old=old))
    out.append(SAY("bots.left"))
    return lines(out)
