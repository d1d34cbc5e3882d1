"""Builders shared by the unit tests of the memory core on the in-memory ports."""

from __future__ import annotations

import json
from typing import Any

from ltm import Episode, Identity, MemoryScope, MemoryService, parse_records
from ltm.spaces import Space
from testhost.memory_ports import InMemoryPorts

KB = "kb-1"
MODEL = "emb-1"


def ident(launcher_id: str = "g1", *, bot: str = "bot-1", kind: str = "group", sender: str = "alice",
          name: str = "") -> Identity:
    return Identity.build(launcher_type=kind, launcher_id=launcher_id, bot_uuid=bot, sender_id=sender,
                          sender_name=name or sender.title())


async def memory_with_kb(fake: InMemoryPorts, kb_id: str = KB, **settings: Any) -> MemoryService:
    memory = MemoryService(fake.ports)
    await memory.register_kb(kb_id, {"embedding_model_uuid": MODEL, **settings})
    return memory


async def remember(memory: MemoryService, scope: MemoryScope, content: str, **fields: Any) -> Episode:
    return (await memory.remember(scope, {"content": content, **fields})).episode


async def import_many(memory: MemoryService, scope: MemoryScope, items: list[dict[str, Any]]) -> list[Episode]:
    return (await memory.import_episodes(scope, parse_records(items))).episodes


def l2(scope: MemoryScope) -> Space:
    return Space.l2(scope.l2)


def l1(scope: MemoryScope) -> Space:
    return Space.l1(scope.chat_key)


async def fenced(memory: MemoryService) -> list[str]:
    return [fence.space.key for fence in await memory.list_fences()]


async def audit_ops(memory: MemoryService, scope: MemoryScope) -> list[tuple[str, str]]:
    """(operation, target id) of the scope's audit log, oldest first."""
    return [(e["operation"], e["target_id"]) for e in await memory.audit_export(scope)]


def stored(fake: InMemoryPorts, scope: MemoryScope) -> dict[str, dict[str, Any]]:
    """The scope's records as the index holds them: id -> fields."""
    return {r.record_id: dict(r.fields) for r in fake.index.records(scope.kb_id, scope.space_key)}


def kv_json(fake: InMemoryPorts, key: str) -> Any:
    raw = fake.store.data.get(key)
    return None if raw is None else json.loads(raw)


def from_the_message(candidate: Any) -> str:
    """A candidate's stored form without what the plugin generates (its random id and its times), which
    may hold any short run of digits: the text a test looks for a secret's digits in."""
    return repr({k: v for k, v in candidate.to_dict().items() if k not in ("id", "created_at", "decided_at")})
