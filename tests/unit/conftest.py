"""Fixtures of the unit tests: the memory core on in-memory ports (no SDK, no vector database).

- ``fake``: a fresh `InMemoryPorts` (text search on, embedding model "emb-1");
- ``memory``: a `MemoryService` over it with the memory KB "kb-1" registered (session isolation);
- ``alice``: the scope of sender alice in group g1 of bot-1; ``bob``: sender bob in the same chat;
- ``stranger``: sender carol in another chat (g2) of the same bot, another memory space.
Registration happens before each test body, and the call log is cleared afterwards, so a test
counts only its own host calls.
"""

from __future__ import annotations

import pytest

from ltm import MemoryScope, MemoryService
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import ident, memory_with_kb


@pytest.fixture
def fake() -> InMemoryPorts:
    return InMemoryPorts()


@pytest.fixture
async def memory(fake: InMemoryPorts) -> MemoryService:
    service = await memory_with_kb(fake)
    fake.calls.reset()
    return service


@pytest.fixture
async def alice(memory: MemoryService) -> MemoryScope:
    return await memory.scope_for(ident("g1", sender="alice"))


@pytest.fixture
async def bob(memory: MemoryService) -> MemoryScope:
    return await memory.scope_for(ident("g1", sender="bob"))


@pytest.fixture
async def stranger(memory: MemoryService) -> MemoryScope:
    return await memory.scope_for(ident("g2", sender="carol"))
