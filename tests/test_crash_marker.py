"""A plugin process that dies in the middle of a write (docs/GUARANTEES.md, "A plugin process that dies
in the middle of a write"), on the test host.

"Killed" here means: from one host call on, nothing the first plugin instance sends reaches the host
(every later call, the one in flight included, fails without being applied), so whatever it would have
done on its failure paths (a fence, an audit entry) never lands. A second instance then starts on the
same storage and vector store, as LangBot's runtime relaunches a dead plugin.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.entities.io.errors import ActionCallError, ConnectionClosedError

from ltm._storage import WRITE_MARK_PREFIX
from testhost import FakeLangBotHost, PluginHarness
from tests.chat import Place
from tests.proof_support import BOT_1, Surfaces, chat_key, console_space

# SeekDB and pgvector run this file in the default run too (tests/stores.py).
pytestmark = pytest.mark.stores_slice

PLACE_A = Place("group", "g1", BOT_1)
PLACE_B = Place("group", "g2", BOT_1)
SPEAKER = "u1"


class Killer:
    """Wraps the host: the first call that `matches` is applied (if `applies`) and then never answered;
    `kill()` makes it and every later call fail without reaching the host."""

    def __init__(self, host: FakeLangBotHost, matches: Callable[[str, dict[str, Any]], bool], *,
                 applies: bool = True) -> None:
        self.host, self.real, self.matches, self.applies = host, host.call_action, matches, applies
        self.reached = asyncio.Event()
        self._dead = asyncio.Event()
        host.call_action = self.call_action  # type: ignore[method-assign]

    async def call_action(self, action: Any, data: dict[str, Any], timeout: float | None = 15.0, **kw: Any) -> Any:
        if self._dead.is_set():
            raise ConnectionClosedError("the plugin process is gone")
        if not self.reached.is_set() and self.matches(getattr(action, "value", str(action)), data):
            if self.applies:
                await self.real(action, data, timeout, **kw)
            self.reached.set()
            await self._dead.wait()
            raise ConnectionClosedError("the plugin process is gone")
        return await self.real(action, data, timeout, **kw)

    def kill(self) -> None:
        self._dead.set()

    def remove(self) -> None:
        self.host.call_action = self.real  # type: ignore[method-assign]


async def started(host: FakeLangBotHost) -> tuple[PluginHarness, Surfaces, str]:
    harness = PluginHarness(host)
    await harness.start()
    kb = await harness.create_memory_kb()
    return harness, Surfaces(harness), kb


async def relaunch(harness: PluginHarness, killer: Killer, task: asyncio.Future[Any]) -> None:
    """The old process is gone; LangBot starts a new one on the same host."""
    killer.kill()
    await harness.stop()
    await asyncio.wait({task}, timeout=10)
    killer.remove()
    await harness.start(harness.plugin_config)


def marks(host: FakeLangBotHost) -> list[str]:
    return [k for k in host.storage if k.startswith(WRITE_MARK_PREFIX)]


async def fences(s: Surfaces) -> dict[str, dict[str, Any]]:
    return {f["space"]: f for f in (await s.console_ok("/overview"))["fences"]}


async def stored_and_audited(s: Surfaces, place: Place) -> tuple[set[str], set[str]]:
    space = console_space(place, "session")
    export = (await s.console_ok("/export", {"space": space}))["export"]
    stored = {e["id"] for e in (export["l2"] or {}).get("episodes", [])}
    entries = (await s.console_ok("/audit/export", {"space": space}))["export"]["entries"]
    return stored, {e["target_id"] for e in entries if e["target_type"] == "episode"}


def first_upsert(action: str, data: dict[str, Any]) -> bool:
    return action == A.VECTOR_UPSERT.value


@pytest.fixture
def host(supported_host: FakeLangBotHost) -> FakeLangBotHost:
    """Every supported backend (Chroma, Qdrant, Milvus Lite)."""
    return supported_host


async def test_a_plugin_killed_after_its_first_host_write_comes_back_with_that_space_fenced(host):
    harness, s, kb = await started(host)
    try:
        acked_a = await s.tool(PLACE_A, SPEAKER, "remember", {"content": "acknowledged before the kill"})
        acked_b = await s.tool(PLACE_B, SPEAKER, "remember", {"content": "the neighbour's note"})
        assert acked_a["ok"] and acked_b["ok"]
        killer = Killer(host, first_upsert)
        payload = json.dumps([{"content": f"imported note {i}"} for i in range(70)])
        task = asyncio.ensure_future(s.command(PLACE_A, SPEAKER, f"!memory import l2 {payload}"))
        await asyncio.wait_for(killer.reached.wait(), timeout=30)
        await relaunch(harness, killer, task)

        l2_a = f"l2:{kb}:{chat_key(PLACE_A)}"
        fenced = await fences(s)
        assert set(fenced) == {l2_a}, fenced  # exactly the space of the write in flight
        assert fenced[l2_a]["operation"] == "import"
        assert fenced[l2_a]["reason"] == "the plugin stopped during import"
        assert "the plugin stopped during import" in await s.command(PLACE_A, SPEAKER, "!memory health")
        assert "no write fence" in await s.command(PLACE_B, SPEAKER, "!memory health")
        assert marks(host) == []  # the stale marker became the fence and is gone
        stored, audited = await stored_and_audited(s, PLACE_A)
        assert acked_a["episode_id"] in stored & audited  # acknowledged before the kill: stored and audited
        unaudited = stored - audited
        assert len(unaudited) == 64  # the first upsert of the import landed; only the fence accounts for it
        stored_b, audited_b = await stored_and_audited(s, PLACE_B)
        assert stored_b == audited_b == {acked_b["episode_id"]}
        refused = await s.tool(PLACE_A, SPEAKER, "remember", {"content": "while fenced"})
        assert refused["code"] == "fenced"
        assert (await s.tool(PLACE_B, SPEAKER, "remember", {"content": "B keeps writing"}))["ok"]

        # Clearing it works like any fence: audited, and it stays cleared across a restart.
        cleared = await s.console_ok("/fence/clear", {"space": console_space(PLACE_A, "session")})
        assert l2_a in cleared["cleared"]
        entries = (await s.console_ok("/audit/export", {"space": console_space(PLACE_A, "session")}))
        assert "fence_clear" in {e["operation"] for e in entries["export"]["entries"]}
        await harness.restart(fresh_modules=False)
        assert await fences(s) == {} and marks(host) == []
        assert (await s.tool(PLACE_A, SPEAKER, "remember", {"content": "after the admin's check"}))["ok"]
    finally:
        await harness.stop()


async def test_a_plugin_killed_before_any_host_write_leaves_no_fence(host):
    harness, s, kb = await started(host)
    try:
        assert (await s.tool(PLACE_A, SPEAKER, "remember", {"content": "kept"}))["ok"]
        before = (dict(host.storage), await host.dump_kb(kb))
        # The embedding call is a read: the write is killed before it sends anything.
        killer = Killer(host, lambda action, _: action == A.INVOKE_EMBEDDING.value, applies=False)
        task = asyncio.ensure_future(s.tool(PLACE_A, SPEAKER, "remember", {"content": "never sent"}))
        await asyncio.wait_for(killer.reached.wait(), timeout=30)
        await relaunch(harness, killer, task)
        assert await fences(s) == {}
        assert marks(host) == []
        assert await host.dump_kb(kb) == before[1]
        assert (await s.tool(PLACE_A, SPEAKER, "remember", {"content": "writes go on"}))["ok"]
    finally:
        await harness.stop()


async def test_a_refused_marker_write_refuses_the_write_before_anything_is_sent(host):
    harness, s, kb = await started(host)
    try:
        assert (await s.tool(PLACE_A, SPEAKER, "remember", {"content": "kept"}))["ok"]
        before = (dict(host.storage), await host.dump_kb(kb))
        sent: list[str] = []
        real = host.call_action

        async def refuse_the_marker(action: Any, data: dict[str, Any], timeout: float | None = 15.0,
                                    **kw: Any) -> Any:
            value = getattr(action, "value", str(action))
            if value == A.SET_PLUGIN_STORAGE.value and str(data.get("key", "")).startswith(WRITE_MARK_PREFIX):
                raise ActionCallError("[StorageError] disk full")
            if value in (A.VECTOR_UPSERT.value, A.SET_PLUGIN_STORAGE.value, A.DELETE_PLUGIN_STORAGE.value):
                sent.append(value)
            return await real(action, data, timeout, **kw)

        host.call_action = refuse_the_marker  # type: ignore[method-assign]
        result = await s.tool(PLACE_A, SPEAKER, "remember", {"content": "refused at the marker"})
        host.call_action = real  # type: ignore[method-assign]
        assert result["ok"] is False and result["code"] == "host_error", result
        assert sent == []  # nothing after the refused marker write
        assert (dict(host.storage), await host.dump_kb(kb)) == before
        assert await fences(s) == {}
        await harness.restart(fresh_modules=False)
        assert await fences(s) == {}
        assert (await s.tool(PLACE_A, SPEAKER, "remember", {"content": "the next one goes through"}))["ok"]
    finally:
        await harness.stop()


async def test_a_marker_that_cannot_be_removed_fences_its_space_now_and_after_a_restart(host):
    harness, s, kb = await started(host)
    try:
        host.fail_next(A.DELETE_PLUGIN_STORAGE, ActionCallError("[StorageError] busy"), after_dispatch=False)
        result = await s.tool(PLACE_A, SPEAKER, "remember", {"content": "stored and audited"})
        assert result["ok"], result  # the change itself is complete: stored and audited
        l2_a = f"l2:{kb}:{chat_key(PLACE_A)}"
        fenced = await fences(s)
        assert set(fenced) == {l2_a} and fenced[l2_a]["reason"].startswith("write-ahead marker not removed")
        stored, audited = await stored_and_audited(s, PLACE_A)
        assert stored == audited == {result["episode_id"]}
        await harness.restart(fresh_modules=False)
        assert set(await fences(s)) == {l2_a}
        assert marks(host) == []  # the fence is stored, so the marker was removed at last
    finally:
        await harness.stop()
