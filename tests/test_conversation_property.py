"""The conversation record's budget holds at any length, and no turn is lost before it is folded (V1, V2).

Hypothesis drives long random conversations through the service on the in-memory ports: turns of
random length from a few speakers (some far over the side budget, some holding a credential), random
budgets, a scripted chat model that sometimes answers well, sometimes too long, empty or with a
credential (the fallback then folds), folds requested at random, and now and then one speaker erased.
After every step the stored record is read back and checked:

- at most `conversation_max_turns` turns and `conversation_max_chars` characters; the summary's text and
  its digest each within `conversation_summary_max_chars`;
- every turn ever recorded (and not erased) is either still in the record or folded (its number is at
  most the summary's `covers_to`), each at most once; the record's turns come after `covers_to`, in order;
- an erased speaker has no turn, no digest line and no place among the summary's speakers.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ltm import MemoryService, SpokenTurn
from ltm.conversation.digest import render
from testhost.memory_ports import InMemoryPorts, ModelRequest
from tests.unit.support import ident, memory_with_kb

SPEAKERS = ("ann", "bo", "cy")
ANSWERS = ("good", "long", "empty", "credential")

step = st.one_of(
    st.tuples(st.just("turn"), st.sampled_from(SPEAKERS), st.integers(0, 5_000), st.integers(0, 3_000),
              st.booleans()),
    st.tuples(st.just("fold")),
    st.tuples(st.just("erase"), st.sampled_from(SPEAKERS)),
)


def text_of(length: int, seq: int, secret: bool) -> str:
    body = (f"t{seq} " + "lorem ipsum dolor sit amet. " * (length // 28 + 1))[:length]
    return f"my password is Zebra-{seq}-Quartz and {body}" if secret else body


def model(answers: list[str], budget: int) -> Any:
    def reply(request: ModelRequest) -> str:
        kind = answers[len(reply.calls) % len(answers)]  # type: ignore[attr-defined]  # the calls are counted on the function
        reply.calls.append(kind)  # type: ignore[attr-defined]  # the calls are counted on the function
        if kind == "good":
            return ("summary " * budget)[: max(1, budget // 2)]
        if kind == "long":
            return "x" * (budget + 50)
        if kind == "empty":
            return "   "
        return "the api key is sk_live_51HqLyjWDarjtT1zdp7dc"
    reply.calls = []  # type: ignore[attr-defined]  # the calls are counted on the function
    return reply


async def check(memory: MemoryService, scope: Any, limits: dict[str, int], live: dict[int, str],
                erased: set[str]) -> None:
    record = await memory.conversation(scope)
    summary = record.summary
    assert len(record.turns) <= limits["conversation_max_turns"]
    assert record.chars <= limits["conversation_max_chars"]
    assert len(summary.text) <= limits["conversation_summary_max_chars"]
    assert len(render(summary.digest, summary.dropped)) <= limits["conversation_summary_max_chars"]
    seqs = [t.seq for t in record.turns]
    assert seqs == sorted(set(seqs)) and all(s > summary.covers_to for s in seqs)
    assert set(seqs) <= set(live), "a turn that was erased, or never recorded, is in the record"
    lost = [s for s in live if s not in seqs and s > summary.covers_to]
    assert not lost, f"turns lost before they were folded: {lost}"
    for person in erased:
        assert all(t.sender_id != person for t in record.turns)
        assert all(line.sender_id != person for line in summary.digest) and person not in summary.speakers
    for line in summary.digest:
        assert line.seq <= summary.covers_to


async def run(steps: list[tuple[Any, ...]], limits: dict[str, int], answers: list[str]) -> None:
    fake = InMemoryPorts()
    memory = await memory_with_kb(fake, conversation_enabled=True, conversation_model_uuid="llm-1", **limits)
    fake.llm.script = model(answers, limits["conversation_summary_max_chars"])
    scopes = {name: await memory.scope_for(ident("g1", sender=name)) for name in SPEAKERS}
    live: dict[int, str] = {}
    erased: set[str] = set()
    for number, action in enumerate(steps):
        if action[0] == "turn":
            _, who, said, replied, secret = action
            seq = number
            outcome = await memory.record_turn(scopes[who], SpokenTurn(
                text_of(said, seq, secret) or "hi", text_of(replied, seq, False), who, who.title()))
            assert outcome.turn is not None
            live[outcome.turn.seq] = who
            erased.discard(who)
        elif action[0] == "fold":
            await memory.fold_conversation(scopes["ann"])
        else:
            who = action[1]
            await memory.erase_conversation_speaker(scopes["ann"], who)
            live = {s: w for s, w in live.items() if w != who}
            erased.add(who)
        await check(memory, scopes["ann"], limits, live, erased)
    assert b"Quartz" not in b"".join(fake.store.data.values())
    assert b"sk_live" not in b"".join(fake.store.data.values())


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=20, max_size=160),
       max_turns=st.integers(2, 30), max_chars=st.integers(2_000, 20_000), summary_chars=st.integers(200, 3_000),
       answers=st.lists(st.sampled_from(ANSWERS), min_size=1, max_size=6))
def test_budgets_hold_and_no_turn_is_lost_over_long_random_conversations(
        steps: list[tuple[Any, ...]], max_turns: int, max_chars: int, summary_chars: int, answers: list[str]) -> None:
    limits = {"conversation_max_turns": max_turns, "conversation_max_chars": max_chars,
              "conversation_summary_max_chars": summary_chars}
    asyncio.run(run(steps, limits, answers))
