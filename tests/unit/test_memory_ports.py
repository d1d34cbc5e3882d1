"""The in-memory ports keep the promises of `ltm.ports`: the unit tests are only as honest as they are."""

from __future__ import annotations

import asyncio

import pytest

from ltm.errors import HostError, OutcomeUnknown, ValidationError
from ltm.ports import ChatMessage, IndexRecord
from ltm.spaces import L2Space
from testhost.memory_ports import InMemoryPorts

C = "kb-1"


def rec(record_id: str, space_key: str, speaker: str = "", text: str = "", **fields: object) -> IndexRecord:
    return IndexRecord(record_id, space_key, speaker, text or record_id, dict(fields))


def sp(space_key: str, kb_id: str = C) -> L2Space:
    return L2Space(kb_id, space_key)


async def put(fake: InMemoryPorts, records: list[IndexRecord], vectors: list[list[float]], kb_id: str = C) -> None:
    """Records of several spaces, written as the port takes them: one upsert per space, in order."""
    for space_key in dict.fromkeys(r.space_key for r in records):
        mine = [(r, v) for r, v in zip(records, vectors) if r.space_key == space_key]
        await fake.index.upsert(sp(space_key, kb_id), [r for r, _ in mine], [v for _, v in mine])


async def test_store_keeps_bytes_per_key_and_lists_keys_by_prefix() -> None:
    fake = InMemoryPorts()
    await fake.store.set("a:2", b"two")
    await fake.store.set("a:1", b"one")
    await fake.store.set("b:1", b"other")
    assert await fake.store.get("a:1") == b"one"
    assert await fake.store.get("missing") is None
    assert await fake.store.keys("a:") == ["a:1", "a:2"]
    await fake.store.delete("a:1")
    await fake.store.delete("never-there")
    assert await fake.store.keys("") == ["a:2", "b:1"]


async def test_search_filters_exactly_on_space_and_speaker() -> None:
    fake = InMemoryPorts()
    await put(fake, [rec("1", "s1", "alice"), rec("2", "s1", "bob"), rec("3", "s2", "alice")],
                            [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    assert {h.record.record_id for h in await fake.index.search(sp("s1"), [1.0, 0.0], 10)} == {"1", "2"}
    assert [h.record.record_id for h in await fake.index.search(sp("s1"), [1.0, 0.0], 10, speaker="alice")] == ["1"]
    assert await fake.index.search(sp("s3"), [1.0, 0.0], 10) == []
    assert await fake.index.search(sp("s1", "other-kb"), [1.0, 0.0], 10) == []


async def test_search_orders_by_cosine_distance_and_cuts_top_k() -> None:
    fake = InMemoryPorts()
    await put(fake, [rec("same", "s"), rec("orthogonal", "s"), rec("opposite", "s"), rec("near", "s")],
                            [[2.0, 0.0], [0.0, 3.0], [-1.0, 0.0], [1.0, 1.0]])
    hits = await fake.index.search(sp("s"), [1.0, 0.0], 10)
    assert [h.record.record_id for h in hits] == ["same", "near", "orthogonal", "opposite"]
    assert [round(h.distance, 6) for h in hits] == [0.0, round(1 - 2 ** -0.5, 6), 1.0, 2.0]
    assert [h.record.record_id for h in await fake.index.search(sp("s"), [1.0, 0.0], 2)] == ["same", "near"]


async def test_pages_walk_one_space_in_insertion_order() -> None:
    fake = InMemoryPorts()
    await put(fake, [rec(f"r{i}", "s" if i % 2 == 0 else "t") for i in range(10)], [[1.0, 0.0]] * 10)
    first = await fake.index.page(sp("s"), 2, 0)
    second = await fake.index.page(sp("s"), 2, 2)
    last = await fake.index.page(sp("s"), 2, 4)
    assert [r.record_id for r in first.records] == ["r0", "r2"] and first.more
    assert [r.record_id for r in second.records] == ["r4", "r6"] and second.more
    assert [r.record_id for r in last.records] == ["r8"] and not last.more


async def test_delete_and_get_stay_inside_the_named_space() -> None:
    fake = InMemoryPorts()
    await put(fake, [rec("1", "s1"), rec("2", "s2")], [[1.0, 0.0], [0.0, 1.0]])
    assert await fake.index.get(sp("s1"), "2") is None
    await fake.index.delete(sp("s1"), ["2", "unknown"])
    assert [r.record_id for r in fake.index.records(C)] == ["1", "2"]
    await fake.index.delete(sp("s2"), ["2"])
    assert [r.record_id for r in fake.index.records(C)] == ["1"]
    await fake.index.drop_kb(C)
    assert fake.index.records(C) == []


async def test_upsert_is_applied_whole_or_not_at_all() -> None:
    fake = InMemoryPorts()
    with pytest.raises(HostError):
        await fake.index.upsert(sp("s"), [rec("1", "s"), rec("2", "s", nested={"not": "flat"})], [[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(HostError):
        await fake.index.upsert(sp("s"), [rec("1", "s"), rec("2", "s")], [[1.0, 0.0], [1.0, 0.0, 0.0]])
    with pytest.raises(HostError):
        await fake.index.upsert(sp("s"), [rec("1", "s")], [])
    with pytest.raises(ValueError):  # one space per write: the port names it, every record is of it
        await fake.index.upsert(sp("s"), [rec("1", "s"), rec("2", "t")], [[1.0, 0.0], [1.0, 0.0]])
    assert fake.index.records(C) == []


async def test_text_search_is_a_case_insensitive_substring_match_or_absent() -> None:
    fake = InMemoryPorts()
    records = [rec("1", "s", text="The Blue Door"), rec("2", "s", text="red door"), rec("3", "t", text="blue door")]
    await put(fake, records, [[1.0, 0.0]] * 3)
    hits = await fake.index.search_text(sp("s"), "blue DOOR", [1.0, 0.0], 10)
    assert hits is not None and [h.record.record_id for h in hits] == ["1"]
    without = InMemoryPorts(text_search=False)
    await put(without, records, [[1.0, 0.0]] * 3)
    assert await without.index.search_text(sp("s"), "blue door", [1.0, 0.0], 10) is None


async def test_isolation_probe_is_clean_on_an_isolated_index_and_cleans_up() -> None:
    fake = InMemoryPorts()
    await put(fake, [rec("kept", "s")], [[1.0, 0.0]])
    assert await fake.index.probe_isolation(C, [1.0, 0.0]) == []
    assert [r.record_id for r in fake.index.records(C)] == ["kept"]


async def test_isolation_probe_reports_every_leak_of_a_leaking_index() -> None:
    fake = InMemoryPorts()
    fake.index.ignore_space_filter = True
    problems = await fake.index.probe_isolation(C, [1.0, 0.0])
    assert any(p.startswith("search") for p in problems)
    assert any(p.startswith("list") for p in problems)
    assert any(p.startswith("get") for p in problems)
    assert any(p.startswith("delete") for p in problems)
    assert fake.index.records(C) == []


async def test_leaking_index_returns_foreign_records_on_every_read() -> None:
    fake = InMemoryPorts()
    await put(fake, [rec("mine", "s1"), rec("theirs", "s2")], [[1.0, 0.0], [1.0, 0.0]])
    fake.index.ignore_space_filter = True
    assert {h.record.record_id for h in await fake.index.search(sp("s1"), [1.0, 0.0], 10)} == {"mine", "theirs"}
    assert {r.record_id for r in (await fake.index.page(sp("s1"), 10, 0)).records} == {"mine", "theirs"}
    assert await fake.index.get(sp("s1"), "theirs") is not None


async def test_fault_before_apply_changes_nothing_and_after_apply_loses_only_the_answer() -> None:
    fake = InMemoryPorts()
    fake.faults.fail("store.set", HostError("refused"))
    with pytest.raises(HostError):
        await fake.store.set("k", b"v")
    assert fake.store.data == {}
    fake.faults.fail("store.set", OutcomeUnknown("lost"), after_apply=True)
    with pytest.raises(OutcomeUnknown):
        await fake.store.set("k", b"v")
    assert fake.store.data == {"k": b"v"}
    await fake.store.set("k", b"w")  # each rule fired once (times=1)
    assert fake.store.data == {"k": b"w"}


async def test_fault_skip_times_and_where_select_the_calls_that_fail() -> None:
    fake = InMemoryPorts()
    fake.faults.fail("store.set", HostError("refused"), skip=1, times=2, where=lambda c: c.args["key"].startswith("x"))
    await fake.store.set("x1", b"")  # skipped
    await fake.store.set("y1", b"")  # does not match
    for key in ("x2", "x3"):
        with pytest.raises(HostError):
            await fake.store.set(key, b"")
    await fake.store.set("x4", b"")  # rule exhausted
    assert sorted(fake.store.data) == ["x1", "x4", "y1"]


async def test_fault_can_cancel_and_unknown_operations_are_refused() -> None:
    fake = InMemoryPorts()
    fake.faults.fail("index.*", asyncio.CancelledError())
    with pytest.raises(asyncio.CancelledError):
        await fake.index.get(sp("s"), "1")
    with pytest.raises(ValueError):
        fake.faults.fail("index.upsertt", HostError("typo"))


async def test_pause_holds_a_call_until_released() -> None:
    fake = InMemoryPorts()
    pause = fake.faults.pause("store.set")
    task = asyncio.create_task(fake.store.set("k", b"v"))
    call = await pause.wait_reached()
    assert call.args["key"] == "k" and fake.store.data == {} and not task.done()
    pause.release()
    await task
    assert fake.store.data == {"k": b"v"}


async def test_pause_after_apply_applies_before_holding() -> None:
    fake = InMemoryPorts()
    pause = fake.faults.pause("store.set", after_apply=True)
    task = asyncio.create_task(fake.store.set("k", b"v"))
    await pause.wait_reached()
    assert fake.store.data == {"k": b"v"}
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_calls_are_counted_per_operation_including_failures() -> None:
    fake = InMemoryPorts()
    fake.faults.fail("index.get", HostError("refused"))
    with pytest.raises(HostError):
        await fake.index.get(sp("s"), "1")
    await fake.index.get(sp("s"), "1")
    await fake.index.search(sp("s"), [1.0], 3)
    await fake.store.keys()
    assert fake.calls.count("index.get") == 2
    assert fake.calls.count("index.*") == 3
    assert fake.calls.counts()["store.keys"] == 1
    fake.calls.reset()
    assert fake.calls.count("index.*") == 0


async def test_embedder_is_deterministic_and_refuses_unknown_models() -> None:
    fake = InMemoryPorts(dim=32)
    first = await fake.embedder.embed("emb-1", ["hello world", "hello world", "other"])
    assert first[0] == first[1] != first[2] and len(first[0]) == 32
    with pytest.raises(HostError):
        await fake.embedder.embed("no-such-model", ["x"])


async def test_scripted_model_answers_from_its_queue_and_records_requests() -> None:
    fake = InMemoryPorts()
    fake.llm.queue("first", "second")
    ask = [ChatMessage("user", "hi")]
    assert await fake.llm.complete("m", ask, timeout_s=5, max_output_chars=100) == "first"
    assert await fake.llm.complete("m", ask, timeout_s=5, max_output_chars=100) == "second"
    with pytest.raises(HostError):
        await fake.llm.complete("m", ask, timeout_s=5, max_output_chars=100)
    fake.llm.queue("far too long")
    with pytest.raises(ValidationError):
        await fake.llm.complete("m", ask, timeout_s=5, max_output_chars=3)
    assert len(fake.llm.requests) == 4 and fake.llm.requests[0].messages == tuple(ask)


async def test_scripted_model_can_answer_with_a_function() -> None:
    fake = InMemoryPorts(script=lambda request: request.messages[-1].content.upper())
    assert await fake.llm.complete("m", [ChatMessage("user", "echo")], timeout_s=1, max_output_chars=10) == "ECHO"


async def test_directory_lists_known_and_added_knowledge_bases() -> None:
    fake = InMemoryPorts()
    await fake.index.upsert(sp("s", "kb-x"), [rec("1", "s")], [[1.0]])
    fake.directory.added.add("kb-y")
    assert await fake.directory.knowledge_base_ids() == ["kb-x", "kb-y"]
    fake.directory.removed.add("kb-x")
    assert await fake.directory.knowledge_base_ids() == ["kb-y"]


async def test_state_snapshot_detects_any_change() -> None:
    fake = InMemoryPorts()
    await put(fake, [rec("1", "s", status="active")], [[1.0, 0.0]])
    before = fake.state()
    assert fake.state() == before
    await put(fake, [rec("1", "s", status="archived")], [[1.0, 0.0]])
    assert fake.state() != before
