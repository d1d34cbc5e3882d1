"""Command `!memory` (the command table C in docs/REQUIREMENTS.md): the operator's view of this chat's memory.

Dispatch. The SDK routes `!memory <tok> ...` to a subcommand registered under
`tok`, and everything else to the `"*"` subcommand, which delivers only its FIRST
yielded reply; an unknown token without `"*"` crashes the SDK
(docs/HOST-FACTS.md, commands). So this component registers exactly one `"*"`
subcommand that parses the command text itself, never raises, and yields exactly
one `CommandReturn(text=...)`. The subcommands are declared next to their handlers, one
group per feature module, and listed once here (`REGISTRY`): a module that is not in that
tuple is not wired (`tests/test_surface_tables.py` checks that none is left out).

Who may change memory. A subcommand declared `mutating` changes a memory space
that may be shared: a group's space is shared by its members, and in `bot`
isolation every chat of the bot (private chats included) shares one episode
space. Changing a shared space needs a bot admin (host privilege 2), from
whichever chat it is changed, unless the operator allows everyone with the plugin
setting `command_admin_only_in_groups`. A private chat's own space (session
isolation) is its user's to manage. LangBot decides who is a bot admin: its per-bot list of admin
chats (docs/HOST-FACTS.md, 4.1), and the refusal says how to get onto it. The handler of a refused
caller still runs up to its first `call.memory` (closed to that caller, `registry.Call`), so an
argument error found from the typed text alone is answered as such; it reveals nothing about
memory. Whatever needs memory to answer (does this id exist?) is refused the same way for any id.

Scope. Every subcommand acts on the current chat only: the identity comes from the
live query (current speaker = query variable `sender_id`), falling back to the
host session when there is no live query.

Language, prefix and markup. The reply is built in the language of the plugin setting `reply_language`
(LangBot 4.11.2 sends no language with a query; docs/HOST-FACTS.md), names the command with the prefix
the user typed (`/memory` on a LangBot 4.12 bot, `!memory` or `！memory` before), and is marked up by
`components/common/chat_text.py`, so it reads the same as Markdown and as plain text; on a bot whose
platform shows plain text (QQ, WeChat: `ltm/langbot/platforms.py`) its lines carry no Markdown breaks.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator

from langbot_plugin.api.definition.components.command.command import Command
from langbot_plugin.api.entities.builtin.command.context import CommandReturn, ExecuteContext

from components.commands import (
    bots,
    candidates,
    changes,
    consolidate,
    conversation,
    person,
    settings,
    transfer,
    views,
)
from components.commands.args import UsageError, command_rest, split_head, typed_prefix
from components.commands.registry import HELP_WORDS, Call, NeedsAdmin, Registry
from components.common.chat_text import Own, inert, render
from components.common.credentials import credential_refusal
from components.common.envelope import command_message
from components.common.i18n import Catalogue, language_of, prefixed, speaking
from components.common.settle import settle
from ltm import LTMError, MemoryService
from ltm.langbot import Platforms, identity_from_query, on_live_query

log = logging.getLogger("LongTermMemory")

ADMIN_PRIVILEGE = 2
# Every subcommand group under the word `!memory help <group>` takes, in the order `help` lists them.
REGISTRY = Registry((("view", views.SUBCOMMANDS), ("change", changes.SUBCOMMANDS),
                     ("transfer", (transfer.SUBCOMMANDS, bots.SUBCOMMANDS)),
                     ("candidates", candidates.SUBCOMMANDS), ("consolidate", consolidate.SUBCOMMANDS),
                     ("conversation", conversation.SUBCOMMANDS), ("person", person.SUBCOMMANDS),
                     ("settings", settings.SUBCOMMANDS)))

SAY = Catalogue({
    "memory.admin_only": ("!memory {topic} needs a bot admin: this chat's memory is shared with other people or chats, "
                          "so only bot admins can change it. LangBot counts a chat as admin when the bot's admin list "
                          "names it (WebUI: Bots > this bot > Manage Admins; a listed group makes every member an "
                          "admin). The plugin setting command_admin_only_in_groups, turned off, lets everyone.",
                          "!memory {topic} 需要机器人管理员：本聊天的记忆与其他人或其他聊天共享，只有机器人管理员可以"
                          "修改。LangBot 把机器人管理员列表中的会话视为管理员（WebUI：机器人 > 该机器人 > 配置管理员；"
                          "列出的群聊中每个成员都是管理员）。关闭插件设置 command_admin_only_in_groups 则所有人都"
                          "可以修改。"),
    "memory.refused": ("!memory {topic}: {message}", "!memory {topic}：{message}"),
    "memory.internal": ("Memory is unavailable right now (internal error, see the plugin log).",
                        "记忆暂时不可用（内部错误，详见插件日志）。"),
})


class MemoryCommand(Command):
    def __init__(self) -> None:
        super().__init__()
        self._platforms = Platforms()

        @self.subcommand("*", help="Inspect and manage this chat's long-term memory", usage="!memory help")
        async def dispatch(component: MemoryCommand, ctx: ExecuteContext) -> AsyncGenerator[CommandReturn, None]:
            # Called by the SDK as fn(component, ctx); only the first yield is delivered.
            yield CommandReturn(text=await component.respond(ctx))

    async def respond(self, ctx: ExecuteContext) -> str:
        """The one reply text, marked up for Markdown and plain text alike; never raises (an exception
        here would fail the host's command stage)."""
        try:
            language = language_of(self._config().get("reply_language"))
        except Exception as exc:  # noqa: BLE001 - a broken config read must not cost the reply
            log.warning("[LongTermMemory] reply language unreadable (%s); replying in English", type(exc).__name__)
            language = "en_US"
        try:
            plain = await self._platforms.plain_text(self.plugin, getattr(ctx.session, "bot_uuid", None))
        except Exception as exc:  # noqa: BLE001 - the markup must not cost the reply
            log.warning("[LongTermMemory] the bot's adapter is unknown (%s); replying in Markdown", type(exc).__name__)
            plain = False
        with speaking(language), prefixed(typed_prefix(ctx)), on_live_query(ctx.query_id, ctx.query_uuid):
            return render(await self._reply(ctx), plain=plain)

    async def _reply(self, ctx: ExecuteContext) -> Own:
        topic = ""

        async def answer() -> Own:
            nonlocal topic
            try:
                head, rest = split_head(command_rest(ctx))
                topic = head.lower()
                if topic in HELP_WORDS:
                    return REGISTRY.help_text()
                entry = REGISTRY.find(topic)
                if entry is None:
                    return REGISTRY.unknown(head)
                topic = entry.name
                identity = await identity_from_query(ctx, ctx.session, ctx.query_id)
                memory: MemoryService = self.plugin.memory
                scope = await memory.scope_for(identity)
                config = self._config()
                call = Call(ctx=ctx, service=memory, scope=scope, topic=entry.name, rest=rest,
                            is_admin=ctx.privilege >= ADMIN_PRIVILEGE, registry=REGISTRY,
                            admin_only=bool(config.get("command_admin_only_in_groups", True)), config=config)
                call.gated = entry.mutating and not call.may_change()
                log.info("[LongTermMemory] command memory %s query=%s scope=%s user_key=%s sender=%s",
                         entry.name, ctx.query_id, scope.chat_key, scope.space_key, scope.sender_id or "-")
                return await entry.handler(call)
            except NeedsAdmin as exc:
                return SAY("memory.admin_only", topic=Own(exc.topic))
            except UsageError as exc:
                refusal = credential_refusal(None, command_rest(ctx))
                if refusal is not None and "secrets are never stored" not in str(exc.reason or ""):
                    return refused(refusal)
                return REGISTRY.usage_text(exc.topic, exc.reason)

        def refused(exc: LTMError) -> Own:
            # A message may quote a bad argument cut short (no longer a credential to the detector).
            exc = credential_refusal(exc, command_rest(ctx)) or exc
            return SAY("memory.refused", topic=inert(topic or "overview", 30), message=command_message(exc))

        return await settle(lambda: f"command memory {topic or 'overview'}", answer, refused=refused,
                            failed=lambda: SAY("memory.internal"))

    def _config(self) -> dict:
        config = self.plugin.get_config() or {}
        return config if isinstance(config, dict) else {}


__all__ = ["MemoryCommand"]
