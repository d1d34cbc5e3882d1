"""A fold cut short at any point loses no turn and doubles none (V2), on the in-memory ports.

The plugin "dies" at each host write of a fold in turn, once before the write reaches the host and once
just after (the write applied, its answer never seen): from then on every call of that process fails
and nothing it would do on its failure paths (a fence, an audit entry) lands. A second service then
starts on the same storage, as LangBot's runtime relaunches a dead plugin. Whatever the point, the
record holds every turn exactly once (still in the record, or folded into the summary), the chat is
fenced exactly when the dead write had started (its write-ahead marker is found), and once an admin
clears the fence the chat records and folds again with the next turn number.
"""

from __future__ import annotations

from typing import Any

import pytest

from ltm import LTMError, MemoryScope, MemoryService, OutcomeUnknown, SpokenTurn
from ltm._storage import WRITE_MARK_PREFIX
from testhost.memory_ports import Call, InMemoryPorts
from tests.unit.support import ident, memory_with_kb

SETTINGS = {"conversation_enabled": True, "conversation_max_turns": 6, "conversation_model_uuid": "llm-1"}
WRITES = ("store.set", "store.delete")


def said(n: int) -> SpokenTurn:
    return SpokenTurn(f"message {n}", f"reply {n}", "ann", "Ann")


async def ready(fake: InMemoryPorts) -> tuple[MemoryService, MemoryScope]:
    """Four turns recorded (a fold is due at five of six), the model scripted, the call log cleared."""
    memory = await memory_with_kb(fake, **SETTINGS)
    fake.llm.script = lambda request: "Ann wrote messages 1 and 2."
    ann = await memory.scope_for(ident("g1", sender="ann"))
    for n in range(1, 5):
        await memory.record_turn(ann, said(n))
    fake.calls.reset()
    return memory, ann


def is_write(call: Call) -> bool:
    return call.op in WRITES


def accounted(record: Any) -> list[int]:
    """Every turn number the record accounts for: folded (1..covers_to) and still held."""
    return list(range(1, record.summary.covers_to + 1)) + [t.seq for t in record.turns]


async def count_writes() -> int:
    """The host writes of the fifth turn: its append, then the fold it starts (checked to happen)."""
    fake = InMemoryPorts()
    memory, ann = await ready(fake)
    outcome = await memory.record_turn(ann, said(5))
    assert outcome.fold is not None and outcome.fold.folded == 2
    return sum(1 for c in fake.calls.log if is_write(c))


async def crash_at(point: int, applied: bool) -> tuple[list[int], int, bool]:
    """Kill the plugin at the `point`-th write of the fifth turn; relaunch; check; return what was found:
    the turn numbers accounted for, the summary's `covers_to`, and whether the chat was fenced."""
    fake = InMemoryPorts()
    memory, ann = await ready(fake)
    dying = fake.faults.fail("store.*", OutcomeUnknown("the plugin process is gone"), after_apply=applied,
                             skip=point, where=is_write)
    fake.faults.fail("store.*", OutcomeUnknown("the plugin process is gone"), times=None,
                     where=lambda call: dying.fired > 0)
    try:
        await memory.record_turn(ann, said(5))
    except LTMError:  # what the dead process saw as the service names it (a late write, the marker, is only logged)
        pass
    assert dying.fired == 1
    marker_left = any(k.startswith(WRITE_MARK_PREFIX) for k in fake.store.data)
    fake.faults.clear()

    relaunched = MemoryService(fake.ports)
    record = await relaunched.conversation(ann)
    held = accounted(record)
    assert sorted(held) == held and len(set(held)) == len(held), ("a turn is both folded and held", point)
    assert held in ([1, 2, 3, 4], [1, 2, 3, 4, 5]), (held, point)  # the fifth turn landed or not
    fences = [f.space.key for f in await relaunched.list_fences()]
    assert fences == ([f"l1:{ann.chat_key}"] if marker_left else []), (fences, marker_left, point)

    await relaunched.clear_fences(ann)
    outcome = await relaunched.record_turn(ann, said(6))
    assert outcome.turn is not None and outcome.turn.seq == held[-1] + 1, point  # numbers are never reused
    after = await relaunched.conversation(ann)
    assert accounted(after) == [*held, outcome.turn.seq], point
    return held, record.summary.covers_to, bool(fences)


@pytest.mark.parametrize("applied", [False, True], ids=["before-the-write", "after-the-write"])
async def test_a_crash_at_any_write_of_a_turn_and_its_fold_loses_and_doubles_nothing(applied: bool) -> None:
    writes = await count_writes()
    found = [await crash_at(point, applied) for point in range(writes)]
    # The points cover every state a crash can leave: nothing of the turn, the turn without its fold, the
    # fold landed; and the chat fenced (a write had started) as well as not.
    assert {(len(held), covers) for held, covers, _ in found} >= {(5, 2)} | ({(4, 0)} if not applied else set())
    assert (5, 0) in {(len(held), covers) for held, covers, _ in found}
    assert {fenced for _, _, fenced in found} == {True, False}
