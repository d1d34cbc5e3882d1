"""Concurrency (issue 11, "Proofs to add"): concurrent writes, deletes and KB deletion, in one memory space and
across spaces, checked against the model of `tests.proof_support`.

- One space: conflicting operations on the same records run at once through every surface. The space's audit
  log is written in the order the per-space lock let the writes through, so replaying it on the model must
  reproduce the final state, accept every success at its place in that order, and explain every refusal by a
  state that existed at some point of it (serializability).
- Many spaces: operations of 12 places run at once; every space ends exactly as its own operations say, with
  every change audited once, in both isolation modes.
- Profiles: concurrent merges into one profile lose no update.
- KB deletion while writes of every kind are in flight (the host's vector store slowed down): nothing lands
  in the deleted KB, every write is either done before the removal (and audited) or refused, and a new memory
  KB starts empty.

The fake host's backend is slowed only to widen the windows in which tasks interleave; no timing is asserted.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from ltm import MemoryScope
from testhost import PluginHarness
from tests.chat import Place
from tests.proof_support import (
    ACTIVE,
    ARCHIVED,
    BOT_1,
    PLACES,
    SUPERSEDED,
    MemoryModel,
    ModelEpisode,
    Surfaces,
    chat_key,
    console_space,
    imported_ids,
    public_view,
    sender_key,
    space_key,
)

A = Place("group", "g1", BOT_1)


def slow_backend(host: Any, monkeypatch: pytest.MonkeyPatch, *, delay: float = 0.002) -> None:
    """Every vector write of the fake host takes a little longer, so many tasks are in flight at once."""
    for name in ("upsert", "delete"):
        real = getattr(host.backend, name)

        async def slowed(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            await asyncio.sleep(delay)
            return await _real(*args, **kwargs)

        monkeypatch.setattr(host.backend, name, slowed)


def outcome(reply: str, topic: str, ok_prefix: str) -> str:
    """ok / not_found / invalid for a `!memory` change reply."""
    if reply.startswith(ok_prefix):
        return "ok"
    assert reply.startswith(f"!memory {topic}:"), reply
    if "not found in this scope" in reply:
        return "not_found"
    assert "cannot" in reply, reply
    return "invalid"


def code(result: dict[str, Any]) -> str:
    if result.get("ok") is True:
        return "ok"
    return {"invalid_input": "invalid", "not_found": "not_found"}.get(str(result.get("code")), str(result))


async def export(s: Surfaces, place: Place, isolation: str = "session") -> dict[str, Any]:
    return (await s.console_ok("/export", {"space": console_space(place, isolation)}))["export"]


async def l2_audit(s: Surfaces, place: Place) -> list[tuple[str, str]]:
    """The place's audit, oldest first (log order: the order the space's lock let the writes through)."""
    entries = (await s.console_ok("/audit/export", {"space": console_space(place, "session")}))["export"]["entries"]
    return [(e["operation"], e["target_id"]) for e in entries]


# --------------------------------------------------------------------------- one space, conflicting writes

@pytest.mark.parametrize("round_", range(3))
async def test_conflicting_writes_in_one_space_are_serializable(harness: PluginHarness, kb: str,
                                                                monkeypatch: pytest.MonkeyPatch, round_: int) -> None:
    s = Surfaces(harness)

    async def remember(content: str, sender: str = "u1", tags: tuple[str, ...] = ()) -> str:
        result = await s.tool(A, sender, "remember", {"content": content, "tags": list(tags)})
        assert result["ok"], result
        return str(result["episode_id"])

    e = [await remember(f"existing note {i}", tags=("t",) if i == 3 else ()) for i in range(4)]
    e.append(await remember("bob's tagged note", "u2", ("t",)))
    e.append(await remember("an archived note"))
    assert (await s.console_ok("/episode/archive", {"space": console_space(A, "session"), "episode_id": e[5]}))
    initial = {i["id"]: i for i in (await export(s, A))["l2"]["episodes"]}
    audit_before = len(await l2_audit(s, A))
    slow_backend(harness.host, monkeypatch)
    space = console_space(A, "session")

    async def tool(name: str, params: dict[str, Any], sender: str = "u1") -> dict[str, Any]:
        return await s.tool(A, sender, name, params)

    async def command(text: str) -> str:
        return await s.command(A, "u1", text)

    ops: dict[str, Callable[[], Awaitable[Any]]] = {
        "archive e0 (command)": lambda: command(f"!memory archive {e[0]}"),
        "forget e0 (tool)": lambda: tool("forget", {"episode_id": e[0]}),
        "restore e0 (console)": lambda: s.console("/episode/restore", {"space": space, "episode_id": e[0]}),
        "archive e1 (console)": lambda: s.console("/episode/archive", {"space": space, "episode_id": e[1]}),
        "archive e1 (command)": lambda: command(f"!memory archive {e[1]}"),
        "supersede e2 (tool)": lambda: tool("remember", {"content": "a correction of note 2", "supersedes": [e[2]]}),
        "forget e2 (console)": lambda: s.console("/episode/delete", {"space": space, "episode_id": e[2]}),
        "restore e5 (command)": lambda: command(f"!memory restore {e[5]}"),
        "bulk delete tag t": lambda: command("!memory delete --tag t"),
        "import 3 tagged t": lambda: command("!memory import l2 " + json.dumps(
            [{"content": f"imported tagged note {i}", "tags": ["t"]} for i in range(3)])),
    }
    for i in range(6):
        ops[f"remember {i}"] = (lambda i=i: tool("remember", {"content": f"concurrent note {i}",
                                                             "tags": ["t"] if i % 2 else []},
                                                 "u2" if i % 3 == 0 else "u1"))
    names = list(ops)
    # Each round starts the same operations in another order.
    order = names[round_:] + names[:round_] if round_ % 2 == 0 else list(reversed(names))
    results = dict(zip(order, await asyncio.gather(*(ops[n]() for n in order))))

    # What each operation was told.
    told: dict[str, str] = {}
    new_ids: dict[str, list[str]] = {}
    created_tags: dict[str, set[str]] = {}  # the tags each new record was written with
    for name, result in results.items():
        if name.startswith("remember") or name.startswith("supersede"):
            told[name] = code(result)
            if result.get("ok"):
                new_ids[name] = [result["episode_id"]]
                odd = name.startswith("remember") and int(name.split()[1]) % 2
                created_tags[result["episode_id"]] = {"t"} if odd else set()
        elif name.startswith("import"):
            assert result.startswith("Imported 3 episodes"), result
            told[name], new_ids[name] = "ok", imported_ids(result)
            created_tags.update({i: {"t"} for i in new_ids[name]})
        elif name.startswith("bulk"):
            assert result.startswith(("Deleted", "No episodes match")), result
            told[name] = "ok"
            bulk_count = int(result.split()[1]) if result.startswith("Deleted") else 0
        elif "(command)" in name:
            verb = name.split()[0]
            told[name] = outcome(result, verb, {"archive": "Archived", "restore": "Restored"}[verb])
        else:
            told[name] = code(result)

    # Replay the audit log on the model: each success in its place, each refusal explained by some state.
    final_export = {i["id"]: i for i in (await export(s, A))["l2"]["episodes"]}
    log = (await l2_audit(s, A))[audit_before:]
    state: dict[str, dict[str, Any]] = {k: {"status": v["status"], "tags": set(v["tags"])} for k, v in initial.items()}
    states = [json.dumps(state, default=sorted, sort_keys=True)]
    applied: Counter[tuple[str, str]] = Counter()
    position = 0
    while position < len(log):
        operation, target = log[position]
        if operation == "bulk_delete":
            run = []
            while position < len(log) and log[position][0] == "bulk_delete":
                run.append(log[position][1])
                position += 1
            matching = {k for k, v in state.items() if "t" in v["tags"]}
            assert set(run) == matching, f"a bulk delete saw a state that never existed: {run} vs {matching}"
            assert len(run) == bulk_count, (run, bulk_count)
            for target in run:
                del state[target]
        else:
            position += 1
            if operation in ("remember", "import"):
                assert target not in state and target in created_tags, f"{target} was not created by this run"
                state[target] = {"status": ACTIVE, "tags": created_tags[target]}
            elif operation == "supersede":
                assert state[target]["status"] == ACTIVE, f"superseded a {state[target]['status']} record"
                state[target]["status"] = SUPERSEDED
            elif operation == "archive":
                assert state[target]["status"] == ACTIVE, f"archived a {state[target]['status']} record"
                state[target]["status"] = ARCHIVED
            elif operation == "restore":
                assert state[target]["status"] in (ARCHIVED, SUPERSEDED)
                state[target]["status"] = ACTIVE
            elif operation == "forget":
                assert target in state, "forgot a record that was already gone"
                del state[target]
            else:
                raise AssertionError(f"unexpected audit entry {operation}")
        applied[(operation, target)] += 1
        states.append(json.dumps(state, default=sorted, sort_keys=True))
    assert {k: v["status"] for k, v in state.items()} == {k: v["status"] for k, v in final_export.items()}
    assert max(applied.values(), default=1) == 1, f"a change was applied twice: {applied}"

    def ever(predicate: Callable[[dict[str, Any], str], bool], target: str) -> bool:
        return any(predicate(json.loads(snapshot), target) for snapshot in states)

    for name, result in told.items():
        target = e[int(name.split()[1][1])] if name.split()[1].startswith("e") else None
        if result == "ok":
            if name.startswith(("remember", "supersede", "import")):
                for new_id in new_ids[name]:
                    assert applied[("remember" if not name.startswith("import") else "import", new_id)] == 1, name
            elif target is not None:
                verb = {"archive": "archive", "forget": "forget", "restore": "restore"}[name.split()[0]]
                assert applied[(verb, target)] == 1, f"{name} was told ok but is not in the audit"
            continue
        assert target is not None, f"{name} was refused: {result}"
        if result == "not_found":
            assert ever(lambda st, t: t not in st, target), f"{name}: not found, but the record always existed"
        elif name.startswith("archive") or name.startswith("supersede"):
            assert ever(lambda st, t: t not in st or st[t]["status"] != ACTIVE, target), \
                f"{name}: refused ({result}) while always active"
        elif name.startswith("restore"):
            assert ever(lambda st, t: t in st and st[t]["status"] == ACTIVE, target), \
                f"{name}: refused ({result}) while never active"
    # Exactly one of two concurrent archives of e1 wins; e0 ends deleted (its forget always applies).
    assert sorted(told[n] for n in ("archive e1 (console)", "archive e1 (command)")) == ["invalid", "ok"]
    assert told["forget e0 (tool)"] == "ok" and e[0] not in final_export


# --------------------------------------------------------------------------- many spaces at once

@pytest.mark.parametrize("isolation", ["session", "bot"])
async def test_concurrent_writes_across_spaces_end_as_each_space_says(supported_host: Any, isolation: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    harness = PluginHarness(supported_host)
    await harness.start()
    try:
        await harness.create_memory_kb(isolation=isolation)
        s = Surfaces(harness)
        model = MemoryModel(isolation)
        places = PLACES[:12]
        seeded: dict[Place, str] = {}
        # Each text names its place by position too: in bot isolation the places share one space, and
        # "Ｇ1" and "g1" (full-width and plain) are one fact there, so one speaker's copy would not be written.
        for n, place in enumerate(places):
            seed = f"seed of place {n} {chat_key(place)}"
            result = await s.tool(place, "u1", "remember", {"content": seed})
            seeded[place] = result["episode_id"]
            model.add_episode(place, ModelEpisode(result["episode_id"], seed, ACTIVE, "u1"), "remember")
        slow_backend(supported_host, monkeypatch)

        async def work(place: Place, n: int) -> list[tuple[str, Any]]:
            key = f"place {n} {chat_key(place)}"
            calls = [s.tool(place, f"u{j}", "remember", {"content": f"note {j} of {key}"}) for j in range(3)]
            calls.append(s.tool(place, "u1", "update_profile", {"scope": "session", "traits": [f"trait {n}"]}))
            calls.append(s.command(place, "u1", f"!memory archive {seeded[place]}"))
            calls.append(s.command(place, "u1", "!memory import l2 " + json.dumps(
                [{"content": f"imported {j} of {key}", "sender_id": "u9"} for j in range(2)])))
            return [(kind, r) for kind, r in zip(("r0", "r1", "r2", "profile", "archive", "import"),
                                                  await asyncio.gather(*calls))]

        everything = await asyncio.gather(*(work(p, n) for n, p in enumerate(places)))
        for (place, n), results in zip(((p, n) for n, p in enumerate(places)), everything):
            key = f"place {n} {chat_key(place)}"
            for kind, result in results:
                if kind.startswith("r"):
                    j = int(kind[1])
                    assert result["ok"], result
                    model.add_episode(place, ModelEpisode(result["episode_id"], f"note {j} of {key}", ACTIVE,
                                                          sender_key(f"u{j}")), "remember")
                elif kind == "profile":
                    assert result["ok"], result
                    model.update_profile(place, "", "merge", {"traits": [f"trait {n}"]})
                elif kind == "archive":
                    assert result.startswith("Archived"), result
                    model.set_status(place, seeded[place], ARCHIVED, "archive")
                else:
                    ids = imported_ids(result)
                    for j, new_id in enumerate(ids):
                        model.add_episode(place, ModelEpisode(new_id, f"imported {j} of {key}", ACTIVE, "u9"),
                                          "import")
        for place in places:
            data = await export(s, place, isolation)
            assert {public_view(i) for i in data["l2"]["episodes"]} == model.l2_view(place), chat_key(place)
            assert data["l1"]["session_profile"]["traits"] == model.profile(place, "").traits
            audit = (await s.console_ok("/audit/export", {"space": console_space(place, isolation)}))
            got = Counter((e["operation"], e["target_id"]) for e in audit["export"]["entries"])
            assert got == model.audit_of(place), chat_key(place)
    finally:
        await harness.stop()


async def test_concurrent_profile_merges_lose_no_update(harness: PluginHarness, kb: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    s = Surfaces(harness)
    results = await asyncio.gather(*(
        s.tool(A, "u1", "update_profile", {"scope": which, "traits": [f"trait {i}"], "preferences": [f"pref {i}"]})
        for i in range(8) for which in ("session", "speaker")))
    assert all(r["ok"] for r in results), results
    data = (await export(s, A))["l1"]
    for profile in (data["session_profile"], data["speaker_profiles"]["u1"]):
        assert sorted(profile["traits"]) == sorted(f"trait {i}" for i in range(8))
        assert sorted(profile["preferences"]) == sorted(f"pref {i}" for i in range(8))
    audit = Counter(op for op, _ in await l2_audit(s, A))
    assert audit["update_profile"] == 16


# --------------------------------------------------------------------------- KB deletion during writes

async def test_kb_deletion_during_writes_of_every_kind_leaves_nothing_in_the_deleted_kb(
        harness: PluginHarness, kb: str, monkeypatch: pytest.MonkeyPatch) -> None:
    s = Surfaces(harness)
    host = harness.host
    places = PLACES[:6]
    seeded = {}
    for place in places:
        seeded[place] = (await s.tool(place, "u1", "remember", {"content": f"seed of {chat_key(place)}"}))["episode_id"]
        await s.command(place, "u1", "!memory import l2 " + json.dumps(
            [{"content": f"old {j} of {chat_key(place)}", "tags": ["old"]} for j in range(3)]))
    # Vector writes wait until released: the first wave of writes is in flight when the KB is deleted.
    released, entered = asyncio.Event(), asyncio.Event()
    for name in ("upsert", "delete"):
        real = getattr(host.backend, name)

        async def held(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            entered.set()
            await released.wait()
            return await _real(*args, **kwargs)

        monkeypatch.setattr(host.backend, name, held)
    document = json.dumps({"scope": {"bot_uuid": BOT_1, "session_name": A.session_name},
                           "episodes": [{"content": f"document fact {i}"} for i in range(3)]}).encode()

    def wave(place: Place, label: str) -> list[Awaitable[Any]]:
        key = chat_key(place)
        return [
            s.tool(place, "u1", "remember", {"content": f"{label} note of {key}"}),
            s.command(place, "u1", "!memory import l2 " + json.dumps(
                [{"content": f"{label} batch {j} of {key}"} for j in range(70)])),
            s.command(place, "u1", "!memory delete --tag old"),
            s.command(place, "u1", f"!memory archive {seeded[place]}"),
            s.tool(place, "u1", "forget", {"episode_id": seeded[place]}),
        ]

    def flat(label: str) -> Any:
        return asyncio.gather(*(c for p in places for c in wave(p, label)), return_exceptions=True)

    first = asyncio.ensure_future(flat("first"))
    ingest = asyncio.ensure_future(harness.ingest(kb, "doc-late", "memories.json", document))
    await asyncio.wait_for(entered.wait(), timeout=10)
    removal = asyncio.ensure_future(harness.kb_delete(kb))
    for _ in range(20):
        await asyncio.sleep(0)  # the removal now waits for the writes in flight
    second = asyncio.ensure_future(flat("second"))
    for _ in range(20):
        await asyncio.sleep(0)
    released.set()
    first_results, second_results, ingested, _ = await asyncio.gather(first, second, ingest, removal)

    # Nothing lands in the deleted KB's collection, whatever was in flight or came later.
    assert await host.dump_kb(kb) == []
    # Every write was either done (and audited) or refused; never an internal error.
    done: Counter[str] = Counter()
    for result in [*first_results, *second_results]:
        assert not isinstance(result, BaseException), result
        text = json.dumps(result) if isinstance(result, dict) else result
        assert "internal error" not in text and "unavailable" not in text.lower(), text
        ok = result.get("ok") is True if isinstance(result, dict) else not result.startswith("!memory ")
        done["ok" if ok else "refused"] += 1
        if not ok:
            assert "no memory knowledge base" in text or "was removed" in text or "not found" in text, text
    assert done["refused"] > 0, "no write came after the removal started"
    assert ingested["status"] in ("completed", "failed"), ingested
    # The changes told done are in the removed KB's audit.
    memory = harness.plugin.memory
    for n, place in enumerate(places):
        scope = MemoryScope(chat_key=chat_key(place), space_key=space_key(place, "session"), kb_id=kb)
        audited = Counter(e["operation"] for e in await memory.audit_export(scope))
        for label, results in (("first", first_results), ("second", second_results)):
            remembered, imported = results[5 * n], results[5 * n + 1]
            if isinstance(remembered, dict) and remembered.get("ok"):
                assert ("remember", remembered["episode_id"]) in {
                    (e["operation"], e["target_id"]) for e in await memory.audit_export(scope)}, label
            if isinstance(imported, str) and imported.startswith("Imported 70"):
                assert audited["import"] >= 3 + 70, (chat_key(place), label, audited)
    # A write now is refused, and a new memory KB starts empty.
    refused = await s.tool(A, "u1", "remember", {"content": "after the removal"})
    assert refused["ok"] is False and refused["code"] == "no_knowledge_base", refused
    new_kb = await harness.create_memory_kb()
    assert new_kb != kb and (await export(s, A))["l2"]["episodes"] == []
    assert await host.dump_kb(new_kb) == []
