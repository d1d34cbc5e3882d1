"""Proof: the dry run is the import (issue 43, "Proofs to add"). Over generated migration bundles (three
chats of every part, with statuses, supersede links, repeated facts, credentials, records over a limit,
records the official plugin was told to forget, candidates, settings) and a plugin that may already hold
memory or an earlier import of part of the bundle, through the console's `/migrate`:

1. the dry run's report equals the import's, field by field (what is written, held already, skipped and
   why, per chat and part; every setting's action);
2. importing twice equals importing once: the second import writes nothing (no vector, no audit entry)
   and every chat reads the same;
3. an import cut at any of its host writes (the host refuses it) and run again (after an admin clears
   the fences the cut left) ends in the same memory as an uninterrupted import: every record, profile,
   candidate, migrated audit entry and setting, no supersede link naming a record that is not stored,
   and the writes the two runs report add up to the uninterrupted run's.

Deterministic (`derandomize=True`) and bounded so it runs in the README test command in about a minute;
a longer run:

    LTM_MIGRATION_EXAMPLES=200 .venv/bin/python -m pytest tests/test_migration_property.py
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A
from langbot_plugin.entities.io.errors import ActionCallError

from tests.migration_support import BOT, audit, bundle, candidate, chat, migrate, plugin, record
from tests.service_helpers import ident

EXAMPLES = int(os.environ.get("LTM_MIGRATION_EXAMPLES", "25"))
TRACE = os.environ.get("LTM_MIGRATION_TRACE") == "1"
# Shrinking a failing case reruns the plugin hundreds of times: only when asked for.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if os.environ.get("LTM_MIGRATION_SHRINK")
                                                          else [])
PARTS = ("profiles", "episodes", "audit", "candidates")
WRITES = (A.VECTOR_UPSERT.value, A.VECTOR_DELETE.value, A.SET_PLUGIN_STORAGE.value, A.DELETE_PLUGIN_STORAGE.value)
CHATS = (("group", "1"), ("group", "2"), ("person", "3"))
FACTS = ("the standup is at 10am", "the standup is at 9am", "the venue is the old hall", "the launch moved to May",
         "Bo studies openings on Sunday", "password: hunter2hunter2", "x" * 2001)


def _key(kind: str, launcher: str) -> str:
    return f"{BOT}:{kind}_{launcher}"


@st.composite
def chat_parts(draw: Any, number: int, kind: str, launcher: str) -> dict[str, Any]:
    ids = [f"e{number}{n:010d}" for n in range(draw(st.integers(0, 7)))]
    episodes = []
    for n, episode_id in enumerate(ids):
        item = record(n, draw(st.sampled_from(FACTS)), draw(st.sampled_from(("active", "active", "superseded",
                                                                                "archived", "deleted"))),
                      sender=draw(st.sampled_from(("u1", "u2"))))
        item["id"] = episode_id
        if draw(st.booleans()):
            item["superseded_by"] = draw(st.sampled_from([*ids, "e99999999999"]))
        if draw(st.integers(0, 9)) == 0:
            item["tags"] = [f"t{i}" for i in range(11)]
        episodes.append(item)
    entries = []
    for n in range(draw(st.integers(0, 4))):
        operation = draw(st.sampled_from(("remember", "forget", "delete_l2_bulk", "restore", "x" * 70)))
        target = draw(st.sampled_from([*ids, "e99999999999", "t" * 250]))
        entries.append(audit(number * 100 + n, operation, draw(st.sampled_from(
            ("remembered a plan", "x " * 73 + "sk-proj-abcdefghijklmnop1234567890ABCDEF"))), target=target,
            day=draw(st.integers(1, 28)), metadata={"episode_ids": [target]}))
    candidates = [candidate(number * 100 + n) for n in range(draw(st.integers(0, 3)))]
    for item in candidates:
        item["status"] = draw(st.sampled_from(("pending", "rejected", "accepted")))
    profiles = []
    if draw(st.booleans()):
        profiles.append({"type": "session", "scope_key": _key(kind, launcher),
                         "profile": {"name": "", "notes": draw(st.sampled_from(("the release team", ""))),
                                     "traits": [], "preferences": []}})
    if draw(st.booleans()):
        profiles.append({"type": "speaker", "scope_key": _key(kind, launcher), "sender_id": "u1", "profile": {
            "name": "Ann", "traits": ["plays chess"], "freeform_traits": ["plays chess"],
            "profile_slots": {"traits": {"city": {"value": "lives in Rome", "updated_at": "2026-02-01T10:00:00Z",
                                                  "history": [{"value": "lives in Oslo", "status": "superseded",
                                                               "timestamp": "2025-01-01T00:00:00Z"}]}}}}})
    return chat(_key(kind, launcher), episodes=episodes, audit=entries, candidates=candidates, profiles=profiles)


@st.composite
def cases(draw: Any) -> dict[str, Any]:
    chats = [draw(chat_parts(number, kind, launcher)) for number, (kind, launcher) in enumerate(CHATS, 1)]
    chosen = {"recency_half_life_days": draw(st.sampled_from((14, 30))), "vector_weight": 0.7}
    if draw(st.booleans()):
        chosen["isolation"] = draw(st.sampled_from(("session", "bot")))
    return {"bundle": bundle(chats, settings=chosen), "remembered": draw(st.booleans()),
            "earlier": draw(st.booleans()), "forgotten": draw(st.booleans()), "cut": draw(st.floats(0, 1))}


def _options(case: dict[str, Any]) -> dict[str, Any]:
    """The console's options of the case (only what differs from the default is sent)."""
    return {"include_forgotten": True} if case["forgotten"] else {}


async def _prepare(harness: Any, case: dict[str, Any]) -> None:
    """The plugin as the case finds it: maybe a memory of its own, maybe the first chat imported before."""
    memory = harness.plugin.memory
    if case["remembered"]:
        await memory.remember(await memory.scope_for(ident("1", bot=BOT)), {"content": "a memory of its own"})
    if case["earlier"]:
        await migrate(harness, {**case["bundle"], "chats": case["bundle"]["chats"][:1]}, dry_run=False,
                      **_options(case))


async def _state(harness: Any) -> dict[str, Any]:
    """Everything a migration writes, as every chat reads it, with links by official id."""
    memory = harness.plugin.memory
    state: dict[str, Any] = {"settings": {n: (await memory.settings()).value(n).value
                                          for n in ("recency_half_life_days", "isolation")}}
    for kind, launcher in CHATS:
        scope = await memory.scope_for(ident(launcher, bot=BOT, kind=kind))
        stored = {e.episode_id: e for e in await memory.all_episodes(scope)}
        for episode in stored.values():
            assert episode.superseded_by in (None, "", *stored), f"a link names no record: {episode}"
        original = {i: e.original_id or e.content for i, e in stored.items()}
        state[f"episodes {scope.space_key}"] = sorted(
            (original[i], e.content, e.status.value, original.get(e.superseded_by or "", ""), e.sender_id)
            for i, e in stored.items())
        state[f"profiles {scope.chat_key}"] = await memory.export_profiles(scope)
        page = await memory.candidate_page(scope, all_statuses=True, page_size=50)
        state[f"candidates {scope.chat_key}"] = sorted((c.candidate_id, c.status.value, c.content)
                                                       for c in page.candidates)
        state[f"audit {scope.chat_key}"] = sorted(
            (e["meta"]["official_audit_id"], e["operation"], e["time"], e["summary"])
            for e in await memory.audit_export(scope) if "official_audit_id" in (e.get("meta") or {}))
    return state


def _cut_at(cut: Any, writes: list[tuple[str, Any]]) -> int:
    """The write to refuse: a fraction of the run's writes, or the `nth` write of one `action`."""
    if isinstance(cut, dict):
        return [i for i, (name, _) in enumerate(writes) if name == cut["action"]][cut["nth"]]
    return min(int(cut * len(writes)), len(writes) - 1)


def _writes(report: dict[str, Any]) -> Counter[str]:
    """What a run says it wrote, per part (a run refused whole wrote nothing)."""
    return Counter({part: sum(c[part]["write"] for c in report.get("chats", [])) for part in PARTS})


async def _clear_fences(harness: Any) -> None:
    memory = harness.plugin.memory
    for kind, launcher in CHATS:
        await memory.clear_fences(await memory.scope_for(ident(launcher, bot=BOT, kind=kind)))
    await memory.clear_fences(None, installation=True)


async def _check(case: dict[str, Any]) -> None:
    data, options = case["bundle"], _options(case)
    async with plugin() as harness:
        await _prepare(harness, case)
        dry = await migrate(harness, data, dry_run=True, **options)
        harness.host.reset_counts()
        done = await migrate(harness, data, dry_run=False, **options)
        writes = [(name, body) for name, body in harness.host.calls if name in WRITES]
        if TRACE:
            print(f"\nwrites {len(writes)}; done {dict(_writes(done))}; skipped "
                  f"{ {p: sum(len(c[p]['skipped']) for c in done['chats']) for p in PARTS} }")
        assert "chats" in done, done  # a run, not a refusal
        # `changes_spaces` tells the page to reload its space list after a write; it is not the report.
        report = {"dry_run": None, "changes_spaces": None}
        assert {**dry, **report} == {**done, **report}, "the dry run is not the import"
        clean = await _state(harness)
        audit_before = {k: v for k, v in clean.items() if k.startswith("audit")}
        harness.host.reset_counts()
        again = await migrate(harness, data, dry_run=False, **options)
        assert not +_writes(again) and harness.host.count(A.VECTOR_UPSERT) == 0, again
        assert await _state(harness) == clean and audit_before == {k: v for k, v in clean.items()
                                                                   if k.startswith("audit")}
    if not writes:
        return
    cut_at = _cut_at(case["cut"], writes)
    action = writes[cut_at][0]
    async with plugin() as harness:
        await _prepare(harness, case)
        harness.host.fail_next(action, ActionCallError("refused by the host"), after_dispatch=False,
                               skip=sum(1 for name, _ in writes[:cut_at] if name == action))
        cut = await migrate(harness, data, dry_run=False, **options)
        await _clear_fences(harness)
        rerun = await migrate(harness, data, dry_run=False, **options)
        assert await _state(harness) == clean, (cut_at, writes[cut_at])
        assert _writes(cut) + _writes(rerun) == _writes(done), (cut_at, _writes(cut), _writes(rerun), _writes(done))


def _repeated_fact_and_a_refused_isolation() -> dict[str, Any]:
    """A fact stated twice by one speaker (the import keeps one: found only by embedding it) and an isolation
    change the import refuses, since the KB holds a memory already."""
    episodes = [record(1, "the venue is the old hall"), record(2, "the venue is the old hall")]
    return {"bundle": bundle([chat(_key("group", "2"), episodes=episodes, candidates=[candidate(1)])],
                             settings={"isolation": "bot"}),
            "remembered": True, "earlier": False, "forgotten": False, "cut": 0.5}


def _a_link_across_vector_writes() -> dict[str, Any]:
    """More records than one vector write takes, the first superseded by the last, cut in the middle."""
    episodes = [record(n) for n in range(70)]
    episodes[0] = record(0, "the first version of the plan", "superseded", superseded_by="e00000000069")
    return {"bundle": bundle([chat(_key("group", "1"), episodes=episodes)]), "remembered": False,
            "earlier": False, "forgotten": False, "cut": {"action": A.VECTOR_UPSERT.value, "nth": 1}}


@example(_repeated_fact_and_a_refused_isolation())
@example(_a_link_across_vector_writes())
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, print_blob=False, phases=PHASES,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_the_dry_run_is_the_import_twice_is_once_and_a_cut_import_run_again_is_whole(case: dict[str, Any]) -> None:
    asyncio.run(_check(json.loads(json.dumps(case))))
