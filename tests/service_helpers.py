"""Small builders shared by the service-level tests."""

from __future__ import annotations

from typing import Any

from ltm.identity import Identity, MemoryScope
from ltm.service import MemoryService
from testhost import FakeLangBotHost, PluginHarness
from testhost.hooks import top


def ident(launcher_id: str = "g1", *, bot: str = "bot-1", kind: str = "group", sender: str = "alice",
          name: str = "") -> Identity:
    return Identity.build(launcher_type=kind, launcher_id=launcher_id, bot_uuid=bot, sender_id=sender,
                          sender_name=name or sender.title())


async def start_with_kb(host: FakeLangBotHost, **settings: Any) -> tuple[PluginHarness, str]:
    harness = PluginHarness(host)
    await harness.start()
    kb_id = await harness.create_memory_kb(**settings)
    return harness, kb_id


async def scope(memory: MemoryService, identity: Identity) -> MemoryScope:
    return await memory.scope_for(identity)


async def contents(memory: MemoryService, sc: MemoryScope, query: str = "plan", top_k: int = 20) -> set[str]:
    return {hit.episode.content for hit in await memory.recall(sc, query, recipe=top(top_k))}
