#!/usr/bin/env python3
"""Load (issue 21, "Proofs to add"): many chats at once, then a steady soak, on Chroma and Qdrant.

The real plugin on the fake LangBot host of `testhost/` (the SDK's dispatch, a JSON round trip on
every call, store calls in worker threads as LangBot's adapter runs them: `bench/cost_env.py`).

1. **Burst**: `--chats` group chats (two speakers each) run `--turns` turns at the same time. A turn
   is what LangBot does for one user message: a PromptPreProcessing event (the injection recalls the
   chat's memories), then one tool or command call: `remember` (most turns), `recall_memory`,
   `update_profile`, a few `forget`s and `!memory import l2` of three memories.
2. **Soak**: turns of the same kinds at a steady `--soak-rate` turns per second for `--soak-seconds`,
   round robin over the chats (a chat's turns run one after the other, as one conversation's do).
   Every chat keeps at most `--soak-keep` of its soak memories (it forgets its oldest), so the data
   stays the same size and any growth of the plugin's memory is the plugin's, not the data's.
   The plugin's memory is sampled every `--sample-seconds`: the plugin's heap (every object
   reachable from the plugin instance, its components and its modules' globals, not into the SDK
   or the host: `plugin_heap`, also without the two holdings that have bounds of their own and
   fill up during a soak, `CAPPED`) and the process RSS (which also holds the stores and the fake
   host's storage, whose audit logs grow with every write by design).

After each phase every chat's memory is checked through the console: every acknowledged change is
stored (0 lost), nothing forgotten is still there, audit equals store (`testhost/audit_check.py`),
no fence anywhere; and every read during the run (each injection and each `recall_memory`) showed
only the chat's own memories (0 cross-space reads: every memory names its chat in its text).
Printed per backend and phase: p50 / p95 per operation, the counters, the memory samples.

  .venv/bin/python bench/load.py                                  # the reported run (about 25 minutes)
  .venv/bin/python bench/load.py --chats 4 --turns 5 --soak-seconds 3 --sample-seconds 1   # seconds

A benchmark, not a test: `tests/test_bench_smoke.py` runs a few seconds of it and asserts the
counters only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import time
from collections import Counter, OrderedDict, defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.cost_env import (  # noqa: E402 - after the sys.path line above
    command_line,
    current_rss_mb,
    environment,
    make_host,
    summary_ms,
    with_end_load,
    write_json,
)
from bench.plugin_env import quiet_logs  # noqa: E402 - after the sys.path line above
from testhost import PluginHarness, make_session  # noqa: E402 - after the sys.path line above
from testhost.audit_check import audit_mismatches  # noqa: E402 - after the sys.path line above

BOT = "load-bot"
WORDS = ("tea", "hiking", "chess", "rust", "piano", "garden", "cycling", "sushi", "jazz", "kayak", "lamps", "maps")
BURST_MIX = (("remember", 50), ("recall", 22), ("profile", 14), ("forget", 7), ("import", 7))
SOAK_MIX = (("remember", 40), ("recall", 30), ("profile", 20), ("forget", 5), ("import", 5))
_NEW_ID = re.compile(r"^new: (\S+)\s*$", re.MULTILINE)  # a reply line may end in a Markdown break
_TAG = re.compile(r"^\[chat (\d+)\]")


@dataclass
class Counters:
    failed: Counter[str] = field(default_factory=Counter)  # operation: answer code
    lost: list[str] = field(default_factory=list)
    resurrected: list[str] = field(default_factory=list)  # forgotten but still stored
    audit: list[str] = field(default_factory=list)
    cross_space_reads: list[str] = field(default_factory=list)
    fences: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"failed_operations": dict(self.failed), "lost_changes": len(self.lost),
                "forgotten_but_stored": len(self.resurrected), "audit_mismatches": len(self.audit),
                "cross_space_reads": len(self.cross_space_reads), "fences": len(self.fences),
                "examples": (self.lost + self.resurrected + self.audit + self.cross_space_reads + self.fences)[:10]}


class Chat:
    """One group chat: its own ledger of what the plugin acknowledged."""

    def __init__(self, index: int, rng: random.Random) -> None:
        self.index = index
        self.rng = rng
        self.launcher_id = f"load-{index}"
        self.speakers = (f"u{index}-a", f"u{index}-b")
        self.active: dict[str, str] = {}  # episode id -> content, as acknowledged
        # episode id -> who said it (or imported it): the forget tool deletes only the speaker's own
        # episodes or episodes with no speaker (docs/GUARANTEES.md), so a turn forgets only those
        self.owner: dict[str, str] = {}
        self.forgotten: set[str] = set()
        self.soak_ids: list[str] = []  # soak memories, oldest first
        self.traits: dict[str, list[str]] = {s: [] for s in self.speakers}
        self.lock = asyncio.Lock()
        self.turn = 0

    @property
    def space(self) -> dict[str, str]:
        key = f"{BOT}:group_{self.launcher_id}"
        return {"scope_key": key, "user_key": key}

    def forgettable_by(self, speaker: str) -> list[str]:
        return sorted(i for i in self.active if self.owner.get(i, "") in ("", speaker))

    def text(self, what: str) -> str:
        self.turn += 1
        return f"[chat {self.index}] {what} {self.rng.choice(WORDS)} {self.rng.choice(WORDS)} #{self.turn}"


class Load:
    def __init__(self, harness: PluginHarness, kb: str, counters: Counters) -> None:
        self.harness = harness
        self.host = harness.host
        self.kb = kb
        self.counters = counters
        self.latency: dict[str, list[float]] = defaultdict(list)

    # ------------------------------------------------------------------ one host call each
    def _open(self, chat: Chat, speaker: str, text: str) -> int:
        query_id = self.host.next_query_id()
        self.host.open_query(query_id, bot_uuid=BOT, launcher_type="group", launcher_id=chat.launcher_id,
                             sender_id=speaker, sender_name=speaker.upper(), message_text=text,
                             pipeline_kbs=[self.kb])
        return query_id

    def _session(self, chat: Chat) -> dict[str, Any]:
        return make_session("group", chat.launcher_id, sender_id=chat.speakers[0], bot_uuid=BOT)

    async def _timed(self, kind: str, coro: Any) -> Any:
        start = time.perf_counter()
        try:
            return await coro
        finally:
            self.latency[kind].append(time.perf_counter() - start)

    def _read(self, chat: Chat, where: str, contents: list[str]) -> None:
        for content in contents:
            tag = _TAG.match(content)
            if tag is None or int(tag.group(1)) != chat.index:
                self.counters.cross_space_reads.append(f"{where} of chat {chat.index} showed {content[:80]!r}")

    async def inject(self, chat: Chat, query_id: int) -> None:
        await self._timed("injection", self.harness.emit_event(
            "PromptPreProcessing",
            {"session_name": f"group_{chat.launcher_id}", "default_prompt": [{"role": "system", "content": "bot"}],
             "prompt": [{"role": "user", "content": "earlier"}]}, query_id=query_id))
        context = self.host.queries[query_id].variables.get("_ltm_context")
        if not isinstance(context, dict):
            self.counters.failed["injection: no context"] += 1
            return
        self._read(chat, "injection", [e["content"] for e in context.get("episodes") or []])

    async def tool(self, kind: str, chat: Chat, query_id: int, name: str, params: dict[str, Any]) -> dict[str, Any]:
        result = await self._timed(kind, self.harness.call_tool(name, params, session=self._session(chat),
                                                                query_id=query_id))
        if not isinstance(result, dict) or result.get("ok") is False:
            self.counters.failed[f"{kind}: {result.get('code') if isinstance(result, dict) else result!r}"] += 1
            return {}
        return result

    # ------------------------------------------------------------------ one turn
    async def turn(self, chat: Chat, mix: tuple[tuple[str, int], ...], soak: bool = False, keep: int = 0) -> None:
        async with chat.lock:
            speaker = chat.rng.choice(chat.speakers)
            kind = chat.rng.choices([k for k, _ in mix], weights=[w for _, w in mix])[0]
            if kind == "forget" and not chat.forgettable_by(speaker):
                kind = "remember"
            message = chat.text(f"{speaker} says")
            query_id = self._open(chat, speaker, message)
            try:
                await self.inject(chat, query_id)
                await getattr(self, f"_{kind}")(chat, query_id, speaker, soak)
                if soak:
                    while len(chat.soak_ids) > keep:
                        await self._forget_oldest(chat, query_id, speaker)
            finally:
                self.host.close_query(query_id)

    async def _forget_oldest(self, chat: Chat, query_id: int, speaker: str) -> None:
        """The chat's oldest soak memory, forgotten by whoever may (its speaker, in a turn of theirs)."""
        oldest = chat.soak_ids[0]
        owner = chat.owner.get(oldest, "")
        if owner in ("", speaker):
            await self._forget_id(chat, query_id, oldest)
        else:
            their_query = self._open(chat, owner, chat.text(f"{owner} says"))
            try:
                await self._forget_id(chat, their_query, oldest)
            finally:
                self.host.close_query(their_query)
        if oldest in chat.soak_ids:  # refused: counted as a failed operation; never retried for ever
            chat.soak_ids.remove(oldest)

    async def _remember(self, chat: Chat, query_id: int, speaker: str, soak: bool) -> None:
        content = chat.text(f"{speaker} likes")
        result = await self.tool("remember", chat, query_id, "remember", {"content": content})
        if result.get("episode_id"):
            chat.active[result["episode_id"]] = content
            chat.owner[result["episode_id"]] = speaker
            if soak:
                chat.soak_ids.append(result["episode_id"])

    async def _recall(self, chat: Chat, query_id: int, speaker: str, soak: bool) -> None:
        result = await self.tool("recall_memory", chat, query_id, "recall_memory",
                                 {"query": f"what does {speaker} like {chat.rng.choice(WORDS)}"})
        self._read(chat, "recall_memory", [e.get("content", "") for e in result.get("episodes") or []])

    async def _profile(self, chat: Chat, query_id: int, speaker: str, soak: bool) -> None:
        trait = f"likes {chat.rng.choice(WORDS)}"
        result = await self.tool("update_profile", chat, query_id, "update_profile",
                                 {"scope": "speaker", "traits": [trait]})
        if result:
            traits = [t for t in chat.traits[speaker] if t != trait] + [trait]
            chat.traits[speaker] = traits[-20:]  # max_profile_traits: the newest are kept

    async def _forget(self, chat: Chat, query_id: int, speaker: str, soak: bool) -> None:
        await self._forget_id(chat, query_id, chat.rng.choice(chat.forgettable_by(speaker)))

    async def _forget_id(self, chat: Chat, query_id: int, episode_id: str) -> None:
        result = await self.tool("forget", chat, query_id, "forget", {"episode_id": episode_id})
        if result:
            chat.active.pop(episode_id, None)
            chat.forgotten.add(episode_id)
            if episode_id in chat.soak_ids:
                chat.soak_ids.remove(episode_id)

    async def _import(self, chat: Chat, query_id: int, speaker: str, soak: bool) -> None:
        items = [{"content": chat.text("imported note")} for _ in range(3)]
        replies = await self._timed("import", self.harness.execute_command(
            "!memory import l2 " + json.dumps(items), session=self._session(chat), query_id=query_id, privilege=2))
        text = str(replies[0].get("text") or "") if replies else ""
        ids = _NEW_ID.findall(text)
        if len(ids) != len(items):
            self.counters.failed[f"import: {text.splitlines()[0][:80] if text else 'no reply'}"] += 1
            return
        for episode_id, item in zip(ids, items, strict=True):
            chat.active[episode_id] = item["content"]
            chat.owner[episode_id] = speaker  # kept without a speaker, or the importer's: either may forget it
            if soak:
                chat.soak_ids.append(episode_id)

    # ------------------------------------------------------------------ checks
    async def _console(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        response = await self.harness.page_api("console", endpoint, "POST", body)
        data = response.get("data") or {}
        if response.get("error") is not None or not data.get("ok"):
            self.counters.failed[f"console {endpoint}: {data.get('code') or response.get('error')}"] += 1
        return data

    async def verify(self, chats: list[Chat]) -> None:
        overview = await self._console("/overview", {})
        self.counters.fences += [json.dumps(f)[:200] for f in overview.get("fences") or []]
        for chat in chats:
            export = (await self._console("/export", {"space": chat.space})).get("export") or {}
            entries = ((await self._console("/audit/export", {"space": chat.space})).get("export") or {}).get(
                "entries") or []
            episodes = (export.get("l2") or {}).get("episodes") or []
            l1 = export.get("l1") or {}
            stored = {e["id"]: e for e in episodes}
            for episode_id, content in chat.active.items():
                if stored.get(episode_id, {}).get("content") != content:
                    self.counters.lost.append(f"chat {chat.index}: {episode_id} {content[:60]!r}")
            self.counters.resurrected += [f"chat {chat.index}: {i}" for i in chat.forgotten if i in stored]
            self.counters.audit += [f"chat {chat.index}: {p}" for p in audit_mismatches(entries, episodes, l1)]
            for speaker, traits in chat.traits.items():
                kept = ((l1.get("speaker_profiles") or {}).get(speaker) or {}).get("traits") or []
                if traits and kept != traits:
                    self.counters.lost.append(f"chat {chat.index}: traits of {speaker} {kept!r:.80} != {traits!r:.80}")

    def figures(self) -> dict[str, Any]:
        return {kind: summary_ms(values) for kind, values in sorted(self.latency.items())}


# ---------------------------------------------------------------------- memory of the plugin
_FOLLOWED = (dict, list, tuple, set, frozenset, OrderedDict, deque, defaultdict, Counter)
# Holdings with a bound of their own, which fill up during a soak: the storage value cache (at most
# `JsonStore.CACHE_BYTES` of records) and the injections of the last `INJECTION_TTL_SECONDS`.
CAPPED = ("JsonStore._values", "Diagnostics._injected")


def _plugin_object(value: Any) -> bool:
    module = getattr(type(value), "__module__", "") or ""
    return module == "main" or module.startswith(("ltm", "components"))


def plugin_heap(harness: PluginHarness, top: int = 6) -> dict[str, Any]:
    """What the plugin itself holds: every object reachable from the plugin instance, its components and
    the module globals of `ltm` and `components`, through builtin containers and the plugin's own objects
    (not into the SDK, asyncio or the host). Sizes are `sys.getsizeof` of each object reached, also
    summed by owner: the attribute of the plugin object (`Class.attribute`) it was first reached through."""
    assert harness.controller is not None
    stack: list[tuple[Any, str]] = [(harness.plugin, "plugin")]
    stack += [(c.component_instance, type(c.component_instance).__name__)
              for c in harness.controller.plugin_container.components]
    for name, module in list(sys.modules.items()):
        if name.startswith(("ltm.", "components.")) and module is not None:
            stack += [(v, f"{name}.{k}") for k, v in vars(module).items()
                      if isinstance(v, _FOLLOWED) or _plugin_object(v)]
    seen: set[int] = set()
    owners: Counter[str] = Counter()
    while stack:
        value, owner = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        owners[owner] += sys.getsizeof(value)
        if isinstance(value, dict):
            stack += [(item, owner) for item in (*value.keys(), *value.values())]
        elif isinstance(value, _FOLLOWED):
            stack += [(item, owner) for item in value]
        elif _plugin_object(value):
            fields = dict(vars(value)) if hasattr(value, "__dict__") else {}
            fields.update({slot: getattr(value, slot) for slot in getattr(type(value), "__slots__", ())
                           if isinstance(slot, str) and hasattr(value, slot)})
            stack += [(item, f"{type(value).__name__}.{name}") for name, item in fields.items()]
    total = sum(owners.values())
    capped = sum(owners[k] for k in CAPPED)
    return {"plugin_heap_mib": round(total / 2**20, 3), "plugin_heap_without_capped_mib": round((total - capped) / 2**20, 3),
            "plugin_objects": len(seen), "largest_kib": {k: round(v / 1024, 1) for k, v in owners.most_common(top)}}


def growth(samples: list[dict[str, Any]], key: str) -> dict[str, float]:
    """Least-squares slope (MiB per minute) over the second half of the samples, and the last sample
    against the first sample of the second half."""
    half = samples[len(samples) // 2:]
    if len(half) < 2:
        return {"slope_mib_per_min": 0.0, "second_half_change_mib": 0.0}
    xs = [s["t"] / 60 for s in half]
    ys = [s[key] for s in half]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    denominator = sum((x - mean_x) ** 2 for x in xs) or 1.0
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / denominator
    return {"slope_mib_per_min": round(slope, 3), "second_half_change_mib": round(ys[-1] - ys[0], 2)}


# ---------------------------------------------------------------------- phases
async def burst(load: Load, chats: list[Chat], turns: int) -> float:
    async def one_chat(chat: Chat) -> None:
        for _ in range(turns):
            await load.turn(chat, BURST_MIX)

    start = time.perf_counter()
    await asyncio.gather(*(one_chat(c) for c in chats))
    return time.perf_counter() - start


async def soak(load: Load, chats: list[Chat], seconds: float, rate: float, keep: int, sample_every: float
               ) -> dict[str, Any]:
    samples: list[dict[str, Any]] = []

    def sample(at: float, done: int) -> None:
        samples.append({"t": round(at, 1), **plugin_heap(load.harness), "rss_mib": current_rss_mb(),
                        "turns_done": done, "turns_waiting": len(pending)})
        print(f"  soak {json.dumps(samples[-1])}", flush=True)

    start = time.perf_counter()
    started = 0
    pending: set[asyncio.Task[None]] = set()
    next_sample = 0.0
    max_backlog = 0
    while (now := time.perf_counter() - start) < seconds:
        if now >= next_sample:
            sample(now, started - len(pending))
            next_sample += sample_every
        while started < int(now * rate) + 1:
            task = asyncio.create_task(load.turn(chats[started % len(chats)], SOAK_MIX, soak=True, keep=keep))
            pending.add(task)
            task.add_done_callback(pending.discard)
            started += 1
        max_backlog = max(max_backlog, len(pending))
        await asyncio.sleep(min(1 / rate, 0.05))
    if pending:
        await asyncio.gather(*pending)
    elapsed = time.perf_counter() - start
    sample(elapsed, started)
    return {"seconds": round(elapsed, 1), "turns": started, "rate_per_s": round(started / elapsed, 2),
            "max_backlog_turns": max_backlog, "samples": samples,
            "plugin_heap_growth": growth(samples, "plugin_heap_mib"),
            "plugin_heap_without_capped_growth": growth(samples, "plugin_heap_without_capped_mib"),
            "rss_growth": growth(samples, "rss_mib")}


async def run_backend(backend: str, args: argparse.Namespace) -> dict[str, Any]:
    host = make_host(backend)
    harness = PluginHarness(host)
    await harness.start({})
    quiet_logs()
    try:
        kb = await harness.create_memory_kb(isolation="session")
        rng = random.Random(args.seed)
        chats = [Chat(i, random.Random(rng.random())) for i in range(args.chats)]
        burst_counters = Counters()
        load = Load(harness, kb, burst_counters)
        burst_seconds = await burst(load, chats, args.turns)
        await load.verify(chats)
        print(f"{backend} burst done in {burst_seconds:.1f} s: {json.dumps(burst_counters.to_dict())}", flush=True)
        result: dict[str, Any] = {
            "backend": backend,
            "burst": {"chats": args.chats, "turns_per_chat": args.turns, "seconds": round(burst_seconds, 1),
                      "turns_per_s": round(args.chats * args.turns / burst_seconds, 2),
                      "latency_ms": load.figures(), "counters": burst_counters.to_dict()},
        }
        soak_counters = Counters()
        soak_load = Load(harness, kb, soak_counters)
        soaked = await soak(soak_load, chats, args.soak_seconds, args.soak_rate, args.soak_keep, args.sample_seconds)
        await soak_load.verify(chats)
        result["soak"] = {**soaked, "latency_ms": soak_load.figures(), "counters": soak_counters.to_dict()}
        return result
    finally:
        await harness.stop()
        await host.close()


def correctness(result: dict[str, Any]) -> dict[str, int]:
    """The counters that must all be 0, summed over backends and phases."""
    totals: Counter[str] = Counter()
    for row in result["rows"]:
        for phase in ("burst", "soak"):
            counters = row[phase]["counters"]
            totals["failed_operations"] += sum(counters["failed_operations"].values())
            for key in ("lost_changes", "forgotten_but_stored", "audit_mismatches", "cross_space_reads", "fences"):
                totals[key] += counters[key]
    return dict(totals)


def print_row(row: dict[str, Any]) -> None:
    for phase in ("burst", "soak"):
        data = row[phase]
        head = (f"{row['backend']} {phase}: {data.get('turns', data.get('chats', 0) * data.get('turns_per_chat', 0))} "
                f"turns in {data['seconds']} s")
        print(head, "counters", json.dumps({k: v for k, v in data["counters"].items() if k != "examples"}))
        for kind, figure in data["latency_ms"].items():
            print(f"  {kind:15} n={figure['n']:5} p50={figure['median']:8.1f} ms  p95={figure['p95']:8.1f} ms")
        if phase == "soak":
            print("  plugin heap growth", data["plugin_heap_growth"], "without the capped caches",
                  data["plugin_heap_without_capped_growth"], "rss growth", data["rss_growth"])
            for sample in data["samples"]:
                print("   ", json.dumps(sample))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default="chroma,qdrant")
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--soak-seconds", type=float, default=600.0)
    parser.add_argument("--soak-rate", type=float, default=5.0, help="turns per second")
    parser.add_argument("--soak-keep", type=int, default=5, help="soak memories each chat keeps")
    parser.add_argument("--sample-seconds", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--json", default="")
    return parser.parse_args(argv)


async def main_async(args: argparse.Namespace, argv: list[str] | None = None) -> dict[str, Any]:
    env = environment()
    rows = [await run_backend(b.strip(), args) for b in args.backends.split(",") if b.strip()]
    result = {"command": command_line("load.py", argv if argv is not None else sys.argv[1:]),
              "environment": with_end_load(env), "rows": rows}
    result["correctness"] = correctness(result)
    for row in rows:
        print_row(row)
    print("correctness (all must be 0):", json.dumps(result["correctness"]))
    print("command:", result["command"])
    if args.json:
        write_json(result, args.json)
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = asyncio.run(main_async(args, argv))
    return 0 if not any(result["correctness"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
