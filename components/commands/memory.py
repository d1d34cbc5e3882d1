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
isolation) is its user's to manage.

Scope. Every subcommand acts on the current chat only: the identity comes from the
live query (current speaker = query variable `sender_id`), falling back to the
host session when there is no live query.

Language and markup. The reply is built in the language of the plugin setting `reply_language`
(LangBot 4.11.2 sends no language with a query; docs/HOST-FACTS.md) and marked up by
`components/common/chat_text.py`, so it reads the same as Markdown and as plain text.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator

from langbot_plugin.api.definition.components.command.command import Command
from langbot_plugin.api.entities.builtin.command.context import CommandReturn, ExecuteContext

from components.commands import candidates, changes, consolidate, person, settings, transfer, views
from components.commands.args import UsageError, command_rest, split_head
from components.commands.registry import Call, Registry
from components.common.chat_text import Own, inert, render
from components.common.credentials import credential_refusal
from components.common.envelope import command_message
from components.common.i18n import Catalogue, language_of, speaking
from ltm import LTMError, MemoryService
from ltm.langbot import identity_from_query

log = logging.getLogger("LongTermMemory")

ADMIN_PRIVILEGE = 2
# Every subcommand group, in the order `help` lists them.
REGISTRY = Registry((views.SUBCOMMANDS, changes.SUBCOMMANDS, transfer.SUBCOMMANDS, candidates.SUBCOMMANDS,
                     consolidate.SUBCOMMANDS, person.SUBCOMMANDS, settings.SUBCOMMANDS))

SAY = Catalogue({
    "memory.unknown": ("Unknown subcommand “{word}”.", "未知的子命令“{word}”。"),
    "memory.admin_only": ("!memory {topic}: this memory is shared with other chats or people, so only bot admins "
                          "can change it. An admin can allow everyone with the plugin setting "
                          "command_admin_only_in_groups.",
                          "!memory {topic}：这份记忆与其他聊天或其他人共享，只有机器人管理员可以修改。管理员可以用插件"
                          "设置 command_admin_only_in_groups 允许所有人修改。"),
    "memory.refused": ("!memory {topic}: {message}", "!memory {topic}：{message}"),
    "memory.internal": ("Memory is unavailable right now (internal error, see the plugin log).",
                        "记忆暂时不可用（内部错误，详见插件日志）。"),
})


class MemoryCommand(Command):
    def __init__(self) -> None:
        super().__init__()

        @self.subcommand("*", help="Inspect and manage this chat's long-term memory", usage="!memory help")
        async def dispatch(component: MemoryCommand, ctx: ExecuteContext) -> AsyncGenerator[CommandReturn, None]:
            # Called by the SDK as fn(component, ctx); only the first yield is delivered.
            yield CommandReturn(text=await component.respond(ctx))

    async def respond(self, ctx: ExecuteContext) -> str:
        """The one reply text, marked up for Markdown and plain text alike; never raises (an exception
        here would fail the host's command stage)."""
        try:
            language = language_of(self._config().get("reply_language"))
        except Exception:  # noqa: BLE001 - a broken config read must not cost the reply
            language = "en_US"
        with speaking(language):
            return render(await self._reply(ctx))

    async def _reply(self, ctx: ExecuteContext) -> Own:
        topic = ""
        try:
            head, rest = split_head(command_rest(ctx))
            topic = head.lower()
            if topic in ("-h", "--help", "?"):
                return REGISTRY.help_text()
            entry = REGISTRY.find(topic)
            if entry is None:
                return Own(SAY("memory.unknown", word=inert(head, 30)) + "\n" + REGISTRY.help_text())
            identity = await identity_from_query(ctx, ctx.session, ctx.query_id)
            memory: MemoryService = self.plugin.memory
            scope = await memory.scope_for(identity)
            is_admin = ctx.privilege >= ADMIN_PRIVILEGE
            config = self._config()
            admin_only = bool(config.get("command_admin_only_in_groups", True))
            if entry.mutating and not is_admin and scope.shared and admin_only:
                return SAY("memory.admin_only", topic=Own(entry.name))
            call = Call(ctx=ctx, memory=memory, scope=scope, topic=entry.name, rest=rest, is_admin=is_admin,
                        registry=REGISTRY, admin_only=admin_only, config=config)
            log.info("[LongTermMemory] command memory %s query=%s scope=%s user_key=%s sender=%s",
                     entry.name, ctx.query_id, scope.scope_key, scope.user_key, scope.sender_id or "-")
            return await entry.handler(call)
        except UsageError as exc:
            refusal = credential_refusal(None, command_rest(ctx))
            if refusal is not None and "secrets are never stored" not in str(exc.reason or ""):
                return SAY("memory.refused", topic=inert(topic or "overview", 30), message=command_message(refusal))
            return REGISTRY.usage_text(exc.topic, exc.reason)
        except LTMError as exc:
            log.info("[LongTermMemory] command memory %s refused: %s", topic or "overview", exc.code)
            # A message may quote a bad argument cut short (no longer a credential to the detector).
            exc = credential_refusal(exc, command_rest(ctx)) or exc
            return SAY("memory.refused", topic=inert(topic or "overview", 30), message=command_message(exc))
        except Exception:
            log.exception("[LongTermMemory] command memory %s failed", topic or "overview")
            return SAY("memory.internal")

    def _config(self) -> dict:
        config = self.plugin.get_config() or {}
        return config if isinstance(config, dict) else {}


__all__ = ["MemoryCommand"]
