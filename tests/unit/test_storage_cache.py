"""The plugin keeps what it wrote: reads of missing keys and of its own recent records cost no host
call, and a write with an unknown outcome sends the next read back to the host."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from ltm._bookkeeping import Bookkeeping
from ltm.errors import HostError, OutcomeUnknown
from testhost.memory_ports import InMemoryPorts


async def test_a_missing_key_and_a_record_it_wrote_are_answered_without_the_host() -> None:
    fake = InMemoryPorts()
    store = Bookkeeping(fake.ports.store)
    await store.set("a", {"x": 1})
    fake.calls.reset()
    assert await store.get("missing") is None and await store.get("a") == {"x": 1}
    assert fake.calls.count("store.*") == 0
    assert await store.keys("") == ["a"] and fake.calls.count("store.*") == 0


async def test_records_written_before_the_process_started_are_listed_once_and_read_once() -> None:
    fake = InMemoryPorts()
    await Bookkeeping(fake.ports.store).set("old", [1, 2])
    store = Bookkeeping(fake.ports.store)  # a new process
    fake.calls.reset()
    assert await store.get("old") == [1, 2] and await store.get("old") == [1, 2]
    assert (fake.calls.count("store.keys"), fake.calls.count("store.get")) == (1, 1)


async def test_a_write_with_an_unknown_outcome_is_read_back_from_the_host() -> None:
    fake = InMemoryPorts()
    store = Bookkeeping(fake.ports.store)
    await store.set("k", "before")
    fake.faults.fail("store.set", OutcomeUnknown("no answer"), after_apply=True)
    with pytest.raises(OutcomeUnknown):
        await store.set("k", "after")
    fake.calls.reset()
    assert await store.get("k") == "after"  # it was applied: the host knows
    assert fake.calls.count("store.get") == 1
    fake.faults.fail("store.set", OutcomeUnknown("no answer"), after_apply=False)
    with pytest.raises(OutcomeUnknown):
        await store.set("new", 1)
    assert await store.keys("n") == []  # settled by one listing: it was not applied


async def test_a_refused_write_changes_nothing_it_knows() -> None:
    fake = InMemoryPorts()
    store = Bookkeeping(fake.ports.store)
    await store.set("k", "kept")
    fake.faults.fail("store.set", HostError("refused"))
    with pytest.raises(HostError):
        await store.set("k", "lost")
    fake.calls.reset()
    assert await store.get("k") == "kept" and fake.calls.count("store.*") == 0


async def test_the_value_cache_is_bounded_by_bytes() -> None:
    fake = InMemoryPorts()
    store = Bookkeeping(fake.ports.store)
    store.CACHE_BYTES = 10_000
    for i in range(50):
        await store.set(f"k{i}", "x" * 900)
    assert store._cached_bytes <= 10_000
    fake.calls.reset()
    assert await store.get("k0") == "x" * 900  # evicted, still readable from the host
    assert fake.calls.count("store.get") == 1


async def test_a_write_still_with_the_host_sends_readers_to_the_host() -> None:
    """A caller cancelled while its write is in flight never learns the outcome: while the write is out,
    the cache must not answer with the value from before it."""
    fake = InMemoryPorts()
    store = Bookkeeping(fake.ports.store)
    await store.set("k", "before")
    pause = fake.faults.pause("store.set", after_apply=True)
    writer = asyncio.create_task(store.set("k", "after"))
    await pause.wait_reached()
    assert await store.get("k") == "after"  # applied at the host, answer not back yet
    writer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writer
    assert await store.get("k") == "after"


async def test_a_write_left_for_later_is_read_at_once_and_lands_without_a_waiter() -> None:
    """`set_later` (the injection snapshot): the caller does not wait, reads see the value at once, and only
    the newest value waiting is written while one write is with the host."""
    fake = InMemoryPorts()
    store = Bookkeeping(fake.ports.store)
    await store.set("snap", {"n": 0})
    pause = fake.faults.pause("store.set")
    store.set_later("snap", {"n": 1})
    held = await pause.wait_reached()
    assert held.args["key"] == "snap" and await store.get("snap") == {"n": 1}
    store.set_later("snap", {"n": 2})
    store.set_later("snap", {"n": 3})  # {"n": 2} is never written: a newer value replaced it
    assert await store.get("snap") == {"n": 3} and await store.keys("sn") == ["snap"]
    pause.release()
    await store.writes_landed()
    assert [c.args["key"] for c in fake.calls.of("store.set")].count("snap") == 3  # {"n": 0}, 1, 3
    assert json.loads(await fake.ports.store.get("snap")) == {"n": 3}
    fake.calls.reset()
    assert await store.get("snap") == {"n": 3} and fake.calls.count("store.*") == 0


async def test_a_delete_waits_for_a_later_write_in_flight_and_wins() -> None:
    """A forget or an erasure deleting the snapshot while its write is with the host: the write lands first,
    then the delete, so the record never comes back; a value still waiting is not written at all."""
    fake = InMemoryPorts()
    store = Bookkeeping(fake.ports.store)
    pause = fake.faults.pause("store.set")
    store.set_later("snap", "quotes a memory")
    await pause.wait_reached()
    store.set_later("snap", "quotes it again")  # waiting behind the write in flight
    deleting = asyncio.create_task(store.delete("snap"))
    await asyncio.sleep(0.01)
    assert not deleting.done() and fake.calls.count("store.delete") == 0  # it waits for the write in flight
    pause.release()
    await deleting
    await store.writes_landed()
    assert await fake.ports.store.get("snap") is None and await store.get("snap") is None
    assert [c.args["key"] for c in fake.calls.of("store.set")] == ["snap"]  # the waiting value was dropped


async def test_a_later_write_the_host_refuses_is_logged_and_reads_show_what_the_host_holds(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="LongTermMemory")  # another test may have quietened it
    fake = InMemoryPorts()
    store = Bookkeeping(fake.ports.store)
    await store.set("snap", "kept")
    fake.faults.fail("store.set", HostError("refused"))
    store.set_later("snap", "lost")
    await store.writes_landed()
    assert await store.get("snap") == "kept"
    assert "storage record snap not written: host_error" in caplog.text
    with pytest.raises(HostError):
        store.set_later("snap", {1, 2})  # not JSON: refused at once, nothing waits
    assert await store.get("snap") == "kept"


async def test_a_write_left_for_later_with_a_delay_waits_and_writes_the_newest_value_once() -> None:
    """With a delay (the snapshot's): nothing reaches the host before it, values given meanwhile are written
    as one, a delete before it leaves nothing to write, and `writes_landed` writes what waits now."""
    fake = InMemoryPorts()
    store = Bookkeeping(fake.ports.store)
    await store.keys()  # the first listing, before counting
    fake.calls.reset()
    for n in range(3):
        store.set_later("snap", {"n": n}, delay=0.2)
    await asyncio.sleep(0.05)
    assert fake.calls.count("store.set") == 0 and await store.get("snap") == {"n": 2}
    await asyncio.sleep(0.3)
    await store.writes_landed()
    assert fake.calls.count("store.set") == 1 and json.loads(await fake.ports.store.get("snap")) == {"n": 2}
    store.set_later("snap", {"n": 3}, delay=0.2)
    await store.delete("snap")  # a forget before it is due: nothing waits any more
    await asyncio.sleep(0.3)
    assert fake.calls.count("store.set") == 1 and await fake.ports.store.get("snap") is None
    store.set_later("snap", {"n": 4}, delay=60)
    await store.writes_landed()  # written now, not in a minute
    assert json.loads(await fake.ports.store.get("snap")) == {"n": 4}
