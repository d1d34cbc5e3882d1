"""Expiry and de-duplication agree (issue 35, "Proof to add"), on Chroma, Qdrant and Milvus Lite.

Hypothesis draws sequences of steps on ONE fact of one speaker in one chat: state it (in another
wording, with or without validity bounds, or with the bounds of its stored record), let time pass
(the one clock seam, `ltm.timefields.clock`, moved forward: a `valid_until` goes by), correct it
(`remember` with `supersedes` naming its active record) and forget one of its records. Every step
runs through the real plugin on the test host (tools, `!memory export l2`, the PromptPreProcessing
injection). After each step:

- the stored records of the fact (every status) hold at most ONE active record, so never two
  current records of one fact; and
- the prompt built for a turn about the fact holds it exactly when that record is still shown (active,
  its `valid_until` not passed; a record that starts later is shown with "not yet in effect"), once.

Each example uses its own chat (its own memory space) and its own fact, so examples do not see each
other. Runs are deterministic (a fixed seed, no example database). The default is a few examples,
seconds per backend; a longer run:

    LTM_EXPIRY_EXAMPLES=200 LTM_EXPIRY_STEPS=16 .venv/bin/python -m pytest tests/test_expiry_property.py

(`LTM_EXPIRY_SEED` picks another seed.)
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from ltm import timefields
from ltm.timefields import format_utc, parse_stored
from testhost import PluginHarness
from tests.chat import Chat, Place, open_chat, prompt_turn

# One of issue 35's three proofs: it also runs on SeekDB and pgvector in the default run (tests/stores.py).
pytestmark = pytest.mark.stores_slice

EXAMPLES = int(os.environ.get("LTM_EXPIRY_EXAMPLES", "25"))
STEPS = int(os.environ.get("LTM_EXPIRY_STEPS", "10"))
SEED = int(os.environ.get("LTM_EXPIRY_SEED", "20261203"))

# Each fact with the possessive wrapper of its language (`sameness.fact_key` drops one).
FACTS = (("spare key is in locker {n}", "The user's "), ("Mia's bike is parked at rack {n}", "my "),
         ("工位在{n}号桌", "我的"))
# Wordings of one fact that `fact_key` folds together: case, a full stop, the wrapper, spaces.
WORDINGS = ("{fact}", "{fact}.", "{wrapper}{fact}", "  {fact_upper} ")
# Bounds a statement gives, in days from the moment it is made; `stored` repeats the active record's.
# Quarter days, while time passes in half days, so a bound never falls on the moment a turn is built.
BOUNDS = ("none", "until", "from", "both", "stored")
DAYS = (0.25, 1.25, 2.25, 4.25)
EXAMPLE_NUMBERS = itertools.count(1)


@dataclass(frozen=True)
class Step:
    kind: str  # state, correct, later, forget
    wording: int = 0
    bounds: str = "none"
    days: float = 0.0
    pick: int = 0


statements = st.builds(Step, st.sampled_from(["state", "correct"]), st.integers(0, len(WORDINGS) - 1),
                       st.sampled_from(BOUNDS), st.sampled_from(DAYS))
steps = st.one_of(statements, statements,
                  st.builds(Step, st.just("later"), days=st.sampled_from((0.5, 1.0, 1.5, 3.0))),
                  st.builds(Step, st.just("forget"), pick=st.integers(0, 3)))


class Run:
    """One example: its chat, its fact and its clock (time passed so far)."""

    def __init__(self, harness: PluginHarness, number: int, fact: str, wrapper: str) -> None:
        self.place = Place("group", f"expiry-{number}")
        self.chat: Chat = open_chat(harness, self.place.launcher_id)
        self.harness = harness
        self.fact = fact
        self.wrapper = wrapper
        self.passed = timedelta(0)
        # The model: the validity bounds of what the user last said of the fact (and did not forget);
        # None when memory should hold nothing of it.
        self.believed: dict[str, str] | None = None

    def now(self) -> datetime:
        return timefields.clock()

    def worded(self, index: int) -> str:
        return WORDINGS[index].format(fact=self.fact, fact_upper=self.fact.upper(), wrapper=self.wrapper)

    def bounds(self, kind: str, days: float, active: dict[str, Any] | None) -> dict[str, str]:
        at = self.now()
        ahead, behind = format_utc(at + timedelta(days=days)), format_utc(at - timedelta(days=days))
        if kind == "stored":
            return stated(active) if active else {}
        return {"none": {}, "until": {"valid_until": ahead}, "from": {"valid_from": ahead},
                "both": {"valid_from": behind, "valid_until": ahead}}[kind]

    async def records(self) -> list[dict[str, Any]]:
        return await self.chat.export_l2()

    async def apply(self, step: Step) -> None:
        records = await self.records()
        active = next((r for r in records if r["status"] == "active"), None)
        if step.kind == "later":
            self.passed += timedelta(days=step.days)
            return
        if step.kind == "forget":
            if records:
                target = records[step.pick % len(records)]["id"]
                done = await self.chat.tool("forget", {"episode_id": target})
                assert done["ok"], done
                if target == (active or {}).get("id"):
                    self.believed = None
            return
        bounds = self.bounds(step.bounds, step.days, active)
        params: dict[str, Any] = {"content": self.worded(step.wording), **bounds}
        shown = active if active is not None and not expired(active, self.now()) else None
        # A statement is a repeat only of a shown record whose bounds it does not contradict.
        repeat = step.kind == "state" and shown is not None and (not bounds or bounds == stated(shown))
        if step.kind == "correct" and active is not None:
            params["supersedes"] = [active["id"]]
        answer = await self.chat.tool("remember", params)
        assert answer["ok"], answer
        assert bool(answer.get("already_remembered")) == repeat, (step, active, answer)
        if repeat:
            assert shown is not None and answer["episode_id"] == shown["id"]
        else:
            self.believed = bounds

    async def check(self, history: list[Step]) -> None:
        records = await self.records()
        active = [r for r in records if r["status"] == "active"]
        assert len(active) <= 1, f"two active records of one fact after {history}: {active}"
        now = self.now()
        shown = [r for r in active if not expired(r, now)]
        turn = await prompt_turn(self.harness, self.place, "u1", "Alice", f"what about this: {self.fact}?")
        lines = [line for line in turn.memory_text.splitlines()
                 if line.startswith("memory ") and self.fact.casefold() in line.casefold()]
        assert len(lines) == len(shown), f"after {history}: stored {records}, prompt {turn.memory_text}"
        believed_shown = self.believed is not None and not expired(self.believed, now)
        assert len(lines) == int(believed_shown), f"after {history}: told {self.believed}, prompt {lines}"
        for line, record in zip(lines, shown):
            starts = parse_stored(record.get("valid_from"))
            assert ("(not yet in effect)" in line) == (starts is not None and starts > now), line


def stated(record: dict[str, Any]) -> dict[str, str]:
    return {k: record[k] for k in ("valid_from", "valid_until") if record.get(k)}


def expired(record: dict[str, Any], now: datetime) -> bool:
    until = parse_stored(record.get("valid_until"))
    return until is not None and until <= now


@seed(SEED)
@settings(max_examples=EXAMPLES, database=None, deadline=None, print_blob=False,
          phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(fact=st.sampled_from(FACTS), sequence=st.lists(steps, min_size=1, max_size=STEPS))
async def test_the_prompt_shows_a_fact_exactly_while_its_one_active_record_holds(
        harness: PluginHarness, fact: tuple[str, str], sequence: list[Step]) -> None:
    if not harness.host.kbs:
        await harness.create_memory_kb()
    number = next(EXAMPLE_NUMBERS)  # a new chat (its own space) and fact per example
    run = Run(harness, number, fact[0].format(n=number), fact[1])
    try:
        timefields.clock = lambda: timefields.system_clock() + run.passed
        history: list[Step] = []
        for step in sequence:
            await run.apply(step)
            history.append(step)
            await run.check(history)
    finally:
        timefields.clock = timefields.system_clock
