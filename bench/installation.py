#!/usr/bin/env python3
"""A realistic installation: one memory KB, many spaces, one huge space (issue 14, goal 4).

One fake LangBot host (real embedded Chroma, or real local-mode Qdrant) runs the real plugin
through `PluginHarness`. Its one memory KB holds --episodes (default 100,000) episodes over
--spaces (default 1,000) group chats whose sizes follow a Zipf law fitted so that the biggest
space holds about --biggest (default 20,000), plus one more group chat with --huge (default
100,000) episodes. The bulk is written by `cost_env.direct_fill` (record layout 2, the import's
own record builder and the plugin's own vector index, 2,000 records per write); then the
plugin is restarted (a new plugin process, nothing built yet) and measured:

- injection (PromptPreProcessing through the SDK dispatch) p50/p95 for the smallest, the
  median and the biggest Zipf space and for the huge space, each after its cold turn (the
  first turn on the space, reported separately with the RSS it added), plus the floor
  (one embedding + one bare filtered top-k query) of the same space;
- `remember`, `forget` (of the episode just remembered) and `update_profile` (speaker
  profile) latency, p50/p95, in the huge space and in the smallest space;
- `import l2` throughput: what `!memory import l2` runs (`parse_records` + `import_episodes`)
  on a --import-batch (default 2,000) batch into a fresh space: episodes/s, host embedding
  calls and texts per 1,000 episodes, host vector writes;
- audit: append of one entry (the write gate's `append_many`) and the newest page of
  `audit_page` (what `!memory audit` shows) on a log of 100 entries and on one of 100,000
  entries (filled by `append_many` in batches of 5,000), and the last page of each;
- `list`: `!memory list` through the SDK's command dispatch in the huge space (one in ten of its
  episodes archived): the first, a middle and the last page, the first with archived records and
  the last of every status; each with its host calls (after the space's index is back);
- peak memory: the RSS high-water mark of the process (`resource.getrusage`: host, store and
  plugin share this process), the RSS when the bulk was written, and the RSS each cold turn
  added (the plugin's lazily built per-space state; the store is warmed by a floor query first).

  .venv/bin/python bench/installation.py                          # chroma, full size (several minutes)
  .venv/bin/python bench/installation.py --backends chroma,qdrant
  .venv/bin/python bench/installation.py --episodes 2000 --spaces 20 --biggest 400 --huge 3000 --runs 5
Writes JSON to bench/.cache/results/installation.json (or --json PATH).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A  # noqa: E402 - after the sys.path line above

from bench.cost_env import (  # noqa: E402 - after the sys.path line above
    KEYED_READ,
    RESULTS,
    command_line,
    current_rss_mb,
    direct_fill,
    environment,
    make_host,
    peak_rss_mb,
    summary_ms,
    with_end_load,
    write_json,
)
from bench.host_calls import BOT, SPEAKER, SPEAKER_NAME, synthetic_episodes  # noqa: E402 - after the sys.path line above
from bench.plugin_env import quiet_logs  # noqa: E402 - after the sys.path line above
from bench.turn_cost import QUESTIONS, Turns  # noqa: E402 - after the sys.path line above
from ltm import parse_records  # noqa: E402 - after the sys.path line above
from ltm.episodes.lifecycle import STORED  # noqa: E402 - after the sys.path line above
from ltm.episodes.model import LISTED_STATUSES, EpisodeStatus  # noqa: E402 - after the sys.path line above
from ltm.episodes.transfer import IMPORTED  # noqa: E402 - after the sys.path line above
from ltm.identity import Identity  # noqa: E402 - after the sys.path line above
from testhost import PluginHarness, make_session  # noqa: E402 - after the sys.path line above
from testhost.hooks import index_space  # noqa: E402 - after the sys.path line above

HUGE_GROUP = "huge"
AUDIT_FILL_BATCH = 5000


def zipf_sizes(total: int, spaces: int, biggest: int) -> tuple[list[int], float]:
    """`spaces` sizes, each >= 1, summing to `total`, n_i ~ 1 / i**s with s chosen (bisection) so that
    the biggest is about `biggest`; rounding leftovers go to the biggest."""
    def sizes_for(s: float) -> list[int]:
        weights = [1 / (i ** s) for i in range(1, spaces + 1)]
        norm = sum(weights)
        return [max(1, int(total * w / norm)) for w in weights]

    low, high = 0.0, 4.0
    for _ in range(60):
        mid = (low + high) / 2
        if sizes_for(mid)[0] < biggest:
            low = mid
        else:
            high = mid
    exponent = (low + high) / 2
    sizes = sizes_for(exponent)
    sizes[0] += total - sum(sizes)
    return sizes, exponent


def identity_of(group: str) -> Identity:
    return Identity.build(launcher_type="group", launcher_id=group, bot_uuid=BOT, sender_id=SPEAKER,
                          sender_name=SPEAKER_NAME)


class Installation:
    def __init__(self, backend: str, args: argparse.Namespace) -> None:
        self.backend, self.args = backend, args
        self.host = make_host(backend, args.host_threads)
        self.harness = PluginHarness(self.host)
        self.kb = ""
        self.top_k = 5
        self.scopes: dict[str, Any] = {}
        self.sizes: dict[str, int] = {}

    @property
    def memory(self) -> Any:
        return self.harness.plugin.memory

    async def build(self) -> dict[str, Any]:
        args = self.args
        await self.harness.start({})
        quiet_logs()
        self.kb = await self.harness.kb_create(config={"embedding_model_uuid": "emb-1"})
        sizes, exponent = zipf_sizes(args.episodes, args.spaces, args.biggest)
        groups = []
        for rank, size in enumerate(sizes, start=1):
            name = f"z{rank}"
            scope = await self.memory.scope_for(identity_of(name), self.kb)
            self.scopes[name], self.sizes[name] = scope, size
            groups.append((scope, synthetic_episodes(size, seed=rank)))
        huge = await self.memory.scope_for(identity_of(HUGE_GROUP), self.kb)
        self.scopes[HUGE_GROUP], self.sizes[HUGE_GROUP] = huge, args.huge
        huge_items = synthetic_episodes(args.huge, seed=0)
        for item in huge_items[3::10]:
            item["status"] = "archived"  # one in ten: the listing's status filter has something to find
        groups.append((huge, huge_items))
        t0 = time.perf_counter()
        writes = await direct_fill(self.harness, self.host, groups)
        fill_s = time.perf_counter() - t0
        for name in ("z1", HUGE_GROUP, f"z{len(sizes)}"):
            await self.memory.update_profile(self.scopes[name], "session", {"preferences": ["answer in English"]})
            await self.memory.update_profile(self.scopes[name], "speaker", {"name": "Ally", "traits": ["likes travel"]})
        found = await self.memory.memory_kb()
        assert found is not None and found[0] == self.kb
        self.top_k = found[1].auto_recall_top_k
        gc.collect()
        rss_filled = current_rss_mb()
        ordered = sorted(sizes)
        return {"spaces": len(sizes) + 1, "episodes": sum(sizes) + args.huge, "zipf_exponent": round(exponent, 4),
                "zipf_sizes": {"biggest": max(sizes), "median": ordered[len(ordered) // 2], "smallest": min(sizes),
                               "spaces_over_1000": sum(1 for s in sizes if s > 1000)},
                "huge_space": args.huge, "fill_s": round(fill_s, 1), "fill_writes": writes,
                "rss_after_fill_mb": rss_filled}

    def turns(self, name: str) -> Turns:
        return Turns(self.host, self.harness, self.kb, self.scopes[name], self.top_k, group=name)

    # ------------------------------------------------------------------ injection per space
    async def cold_turn(self, name: str) -> dict[str, Any]:
        """The first turn on the space in this plugin process (call after a restart)."""
        turns = self.turns(name)
        await turns.floor(QUESTIONS[0])  # the store's own first-query work is not the plugin's
        gc.collect()
        rss0 = current_rss_mb()
        cold = await turns.turn(QUESTIONS[0])
        gc.collect()
        return {"wall_ms": round(cold["wall"] * 1000, 2), "plugin_cpu_ms": round(cold["plugin_cpu"] * 1000, 2),
                "host_calls_total": sum(cold["calls"].values()), "host_calls": cold["calls"],
                "rss_added_mb": round(current_rss_mb() - rss0, 1)}

    async def injection(self, label: str, name: str) -> dict[str, Any]:
        """Warm turns: the space's in-process indexes were built empty and kept current by the fill."""
        turns = self.turns(name)
        for i in range(self.args.warmup):
            await turns.turn(QUESTIONS[(i + 1) % len(QUESTIONS)])
        runs, floors = [], []
        for i in range(self.args.runs):
            question = QUESTIONS[i % len(QUESTIONS)]
            runs.append(await turns.turn(question))
            floors.append(await turns.floor(question))
        snapshot = await self.memory.snapshot(self.scopes[name]) or {}
        turn_ms, floor_ms = summary_ms([r["wall"] for r in runs]), summary_ms([f["wall"] for f in floors])
        return {"space": label, "group": name, "episodes": self.sizes[name], "turn_ms": turn_ms, "floor_ms": floor_ms,
                "ratio_median": round(turn_ms["median"] / floor_ms["median"], 3) if floor_ms["median"] else None,
                "plugin_cpu_ms": summary_ms([r["plugin_cpu"] for r in runs]),
                "host_calls_total": max(sum(r["calls"].values()) for r in runs), "host_calls": runs[0]["calls"],
                "keyed_reads_share": round(sum(1 for r in runs if r["calls"].get(KEYED_READ)) / len(runs), 3),
                "cold_turn": None,
                "episodes_injected": len(snapshot.get("episodes") or []), "errors": snapshot.get("errors") or []}

    # ------------------------------------------------------------------ single writes
    async def timed(self, fn: Any) -> tuple[float, dict[str, int], Any]:
        self.host.reset_counts()
        t0 = time.perf_counter()
        value = await fn()
        return time.perf_counter() - t0, self.host.calls_by_action(), value

    async def writes(self, name: str) -> dict[str, Any]:
        scope = self.scopes[name]
        out: dict[str, Any] = {"group": name, "episodes": self.sizes[name]}
        remembered, forgotten, profiled = [], [], []
        calls: dict[str, dict[str, int]] = {}
        for i in range(self.args.runs):
            wall, calls["remember"], episode = await self.timed(lambda i=i: self.memory.remember(
                scope, {"content": f"Alice booked the dentist for Friday, appointment {i}", "importance": 3}))
            remembered.append(wall)
            wall, calls["forget"], _ = await self.timed(lambda e=episode: self.memory.forget(scope, e.episode.episode_id))
            forgotten.append(wall)
            wall, calls["update_profile"], _ = await self.timed(lambda i=i: self.memory.update_profile(
                scope, "speaker", {"traits": [f"trait {i % 5}"]}))
            profiled.append(wall)
        for op, values in (("remember", remembered), ("forget", forgotten), ("update_profile", profiled)):
            out[op] = {"ms": summary_ms(values), "host_calls": calls[op], "host_calls_total": sum(calls[op].values())}
        return out

    # ------------------------------------------------------------------ import l2
    async def import_throughput(self) -> dict[str, Any]:
        scope = await self.memory.scope_for(identity_of("import-target"), self.kb)
        items = synthetic_episodes(self.args.import_batch, seed=99)
        self.host.reset_counts()
        t0 = time.perf_counter()
        episodes = (await self.memory.import_episodes(scope, parse_records(items, source="import"))).episodes
        wall = time.perf_counter() - t0
        calls = self.host.calls_by_action()
        n = len(episodes)
        embed_calls = calls.get(A.INVOKE_EMBEDDING.value, 0)
        return {"batch": n, "wall_s": round(wall, 2), "episodes_per_s": round(n / wall, 1),
                "embedding_calls_per_1000": round(embed_calls * 1000 / n, 1),
                "embedded_texts_per_1000": round(self.host.embedded_text_count * 1000 / n, 1),
                "vector_writes_per_1000": round(calls.get(A.VECTOR_UPSERT.value, 0) * 1000 / n, 1),
                "host_calls": calls, "host_work_s": round(self.host.host_wall, 2)}

    # ------------------------------------------------------------------ audit
    async def audit(self, name: str, entries: int) -> dict[str, Any]:
        from ltm._audit import AuditEntry
        from ltm._gate import WriteGate

        scope = self.scopes[name]
        audit_log = self.memory.parts.audit  # the service's own log: the gate appends through it
        log_id = next(i for i in WriteGate.logs_of(scope) if i.startswith("l2:"))
        have = await audit_log.count(log_id)
        t0 = time.perf_counter()
        while have < entries:
            batch = [AuditEntry("import", "episode", str(uuid.uuid4()), scope.chat_key, scope.space_key, SPEAKER,
                                SPEAKER_NAME, None, IMPORTED(status="active")) for _ in range(min(AUDIT_FILL_BATCH,
                                                                                             entries - have))]
            await audit_log.append_many(log_id, batch)
            have += len(batch)
        fill_s = time.perf_counter() - t0
        appends, pages = [], []
        append_calls: dict[str, int] = {}
        page_calls: dict[str, int] = {}
        for i in range(self.args.runs):
            entry = AuditEntry("remember", "episode", str(uuid.uuid4()), scope.chat_key, scope.space_key, SPEAKER,
                               SPEAKER_NAME, None, STORED(chars=i, importance=3))
            wall, append_calls, _ = await self.timed(lambda e=entry: audit_log.append_many(log_id, [e]))
            appends.append(wall)
            wall, page_calls, first = await self.timed(lambda: self.memory.audit_page(scope, 1, 10))
            pages.append(wall)
        last_wall, last_calls, _ = await self.timed(lambda: self.memory.audit_page(scope, first.pages, 10))
        return {"group": name, "log": "l2 space log", "entries": await audit_log.count(log_id),
                "merged_total": first.total, "fill_s": round(fill_s, 1),
                "append_ms": summary_ms(appends), "append_host_calls": append_calls,
                "first_page_ms": summary_ms(pages), "first_page_host_calls": page_calls,
                "last_page": first.pages, "last_page_ms": round(last_wall * 1000, 2),
                "last_page_host_calls_total": sum(last_calls.values())}

    # ------------------------------------------------------------------ list
    async def command(self, name: str, text: str) -> tuple[float, dict[str, int], str]:
        """One `!memory ...` chat command in the group's live query, through the SDK's command dispatch."""
        query_id = 900_000 + len(self.host.calls) % 90_000
        self.host.open_query(query_id, bot_uuid=BOT, launcher_type="group", launcher_id=name, sender_id=SPEAKER,
                             sender_name=SPEAKER_NAME, pipeline_kbs=[self.kb])
        session = make_session("group", name, sender_id=SPEAKER, bot_uuid=BOT)
        try:
            wall, calls, replies = await self.timed(lambda: self.harness.execute_command(
                text, session=session, query_id=query_id, privilege=2))
        finally:
            self.host.close_query(query_id)
        return wall, calls, str((replies or [{}])[0].get("text") or "")

    async def listing(self, name: str) -> dict[str, Any]:
        """`!memory list` pages in the space (after its index is back, if this process restarted): the first
        page, one in the middle, the last, the first with a status filter and the last with every status;
        the service's own page too (what the console's Episodes page calls)."""
        scope = self.scopes[name]
        t0 = time.perf_counter()
        await index_space(self.memory, scope)
        ready_s = time.perf_counter() - t0
        first = await self.memory.list_episodes(scope, page=1)
        archived = await self.memory.list_episodes(scope, (EpisodeStatus.ARCHIVED,), page=1)
        every = await self.memory.list_episodes(scope, LISTED_STATUSES, page=1)
        pages = {"first": "!memory list 1", "middle": f"!memory list {max(1, first.pages // 2)}",
                 "last": f"!memory list {first.pages}", "archived, first": "!memory list 1 --include-archived",
                 "every status, last": f"!memory list {every.pages} --include-archived --include-superseded"}
        out: dict[str, Any] = {"group": name, "episodes": self.sizes[name], "listed_total": first.total,
                               "truncated": first.truncated, "pages": first.pages,
                               "archived_total": archived.total, "index_ready_s": round(ready_s, 2), "command": {}}
        # The bot's first command asks its platform once (plain text or Markdown, kept 10 minutes): not a
        # cost of paging, so one command warms it up before the pages are measured.
        await self.command(name, "!memory list 1")
        for label, text in pages.items():
            walls, calls, reply = [], {}, ""
            for _ in range(max(1, self.args.runs // 4)):
                wall, calls, reply = await self.command(name, text)
                walls.append(wall)
            out["command"][label] = {"text": text, "ms": summary_ms(walls), "host_calls": calls,
                                     "host_calls_total": sum(calls.values()), "reply_lines": reply.count("\n") + 1}
        wall, calls, deep = await self.timed(lambda: self.memory.list_episodes(scope, page=first.pages))
        out["service_last_page"] = {"ms": round(wall * 1000, 2), "host_calls": calls, "rows": len(deep.episodes)}
        # (compatibility with the older fields)
        out.update(first_page_ms=out["command"]["first"]["ms"]["median"],
                   first_page_host_calls=out["command"]["first"]["host_calls"], deepest_page=first.pages,
                   deepest_page_ms=out["command"]["last"]["ms"]["median"],
                   deepest_page_host_calls=out["command"]["last"]["host_calls"], deepest_page_rows=len(deep.episodes))
        return out

    async def close(self) -> None:
        await self.harness.stop()
        await self.host.close()


async def measure(backend: str, args: argparse.Namespace) -> dict[str, Any]:
    inst = Installation(backend, args)
    try:
        print(f"  {backend}: filling ...", file=sys.stderr, flush=True)
        built = await inst.build()
        zipf = sorted((n for n in inst.sizes if n != HUGE_GROUP), key=lambda n: inst.sizes[n])
        chosen = [("smallest", zipf[0]), ("median", zipf[len(zipf) // 2]), ("biggest Zipf", zipf[-1]),
                  ("huge", HUGE_GROUP)]
        result: dict[str, Any] = {"backend": backend, "installation": built, "injection": []}
        for label, name in chosen:
            print(f"  {backend}: injection in the {label} space ({inst.sizes[name]:,}) ...", file=sys.stderr, flush=True)
            result["injection"].append(await inst.injection(label, name))
        result["rss_before_restart_mb"] = current_rss_mb()
        await inst.harness.restart(fresh_modules=False)  # a new plugin process: nothing built yet
        quiet_logs()
        for (label, name), row in zip(chosen, result["injection"]):
            if inst.sizes[name] <= args.cold_max:
                print(f"  {backend}: cold turn in the {label} space ...", file=sys.stderr, flush=True)
                row["cold_turn"] = await inst.cold_turn(name)
        print(f"  {backend}: remember / forget / update_profile ...", file=sys.stderr, flush=True)
        result["writes"] = [await inst.writes(HUGE_GROUP), await inst.writes(zipf[0])]
        print(f"  {backend}: import ...", file=sys.stderr, flush=True)
        result["import_l2"] = await inst.import_throughput()
        print(f"  {backend}: audit ...", file=sys.stderr, flush=True)
        result["audit"] = [await inst.audit(zipf[0], args.audit_small), await inst.audit(HUGE_GROUP, args.audit_big)]
        print(f"  {backend}: list ...", file=sys.stderr, flush=True)
        result["list"] = await inst.listing(HUGE_GROUP)
        result["peak_rss_mb"] = peak_rss_mb()
        result["rss_end_mb"] = current_rss_mb()
        return result
    finally:
        await inst.close()


def report(result: dict[str, Any]) -> None:
    env = result["environment"]
    print(f"command: {result['command']}")
    print(f"machine: {env['machine']['cpu']}, {env['machine']['cores']} cores; python {env['machine']['python']}; "
          f"{', '.join(f'{k} {v}' for k, v in env['versions'].items())}")
    print(f"code: {env['code']['branch']} {env['code']['commit'][:12]}"
          f"{' (uncommitted changes)' if env['code']['uncommitted_changes'] else ''}; {result['runs']} runs per figure")
    for r in result["rows"]:
        inst = r["installation"]
        print(f"\n## {r['backend']}: {inst['episodes']:,} episodes in {inst['spaces']:,} spaces (Zipf s="
              f"{inst['zipf_exponent']}, sizes {inst['zipf_sizes']}, + one of {inst['huge_space']:,}); fill "
              f"{inst['fill_s']} s; RSS after fill {inst['rss_after_fill_mb']} MB; peak RSS {r['peak_rss_mb']} MB")
        print("| space | episodes | turn p50 | turn p95 | floor p50 | ratio | plugin CPU p50 | host calls | cold turn ms "
              "| RSS added by cold turn MB |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for i in r["injection"]:
            print(f"| {i['space']} | {i['episodes']:,} | {i['turn_ms']['median']:.1f} | {i['turn_ms']['p95']:.1f} | "
                  f"{i['floor_ms']['median']:.1f} | {i['ratio_median']:.2f}x | {i['plugin_cpu_ms']['median']:.2f} | "
                  f"{i['host_calls_total']} | "
                  + (f"{i['cold_turn']['wall_ms']:.0f} | {i['cold_turn']['rss_added_mb']} |" if i["cold_turn"]
                     else "not measured | - |"))
        print("| operation | space episodes | p50 ms | p95 ms | host calls |")
        print("|---|---:|---:|---:|---:|")
        for w in r["writes"]:
            for op in ("remember", "forget", "update_profile"):
                print(f"| {op} | {w['episodes']:,} | {w[op]['ms']['median']:.1f} | {w[op]['ms']['p95']:.1f} | "
                      f"{w[op]['host_calls_total']} |")
        imp = r["import_l2"]
        print(f"import l2: {imp['batch']:,} episodes in {imp['wall_s']} s = {imp['episodes_per_s']}/s; per 1,000: "
              f"{imp['embedding_calls_per_1000']} embedding calls ({imp['embedded_texts_per_1000']} texts), "
              f"{imp['vector_writes_per_1000']} vector writes")
        for a in r["audit"]:
            print(f"audit log of {a['entries']:,} entries: append p50 {a['append_ms']['median']:.1f} ms "
                  f"(p95 {a['append_ms']['p95']:.1f}); newest page p50 {a['first_page_ms']['median']:.1f} ms "
                  f"(p95 {a['first_page_ms']['p95']:.1f}); last page ({a['last_page']:,}) {a['last_page_ms']:.0f} ms, "
                  f"{a['last_page_host_calls_total']} host calls")
        li = r["list"]
        print(f"list in the {li['episodes']:,}-episode space ({li['listed_total']:,} active listed, {li['pages']:,} "
              f"pages, truncated {li['truncated']}; index back after {li['index_ready_s']} s):")
        for label, c in li["command"].items():
            print(f"  {c['text']} ({label}): p50 {c['ms']['median']:.1f} ms, max {c['ms']['max']:.1f} ms, host calls "
                  f"{c['host_calls']}")
        errors = [(i["space"], i["errors"]) for i in r["injection"] if i["errors"]]
        if errors:
            print(f"injection errors: {errors}")
    print(f"\nJSON: {result['json']}")


async def run(argv: list[str]) -> dict[str, Any]:
    args = parse_args(argv)
    quiet_logs()
    env = environment()  # the code state measured: taken before the run
    rows = [await measure(backend, args) for backend in args.backends]
    result = {"benchmark": "installation", "command": command_line("installation.py", argv),
              "environment": with_end_load(env), "runs": args.runs, "warmup": args.warmup,
              "host_threads": args.host_threads, "rows": rows,
              "json": str(args.json)}
    write_json(result, args.json)
    return result


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default="chroma")
    parser.add_argument("--episodes", type=int, default=100_000, help="episodes over the Zipf spaces")
    parser.add_argument("--spaces", type=int, default=1000)
    parser.add_argument("--biggest", type=int, default=20_000, help="target size of the biggest Zipf space")
    parser.add_argument("--huge", type=int, default=100_000, help="episodes of the one extra space")
    parser.add_argument("--import-batch", type=int, default=2000)
    parser.add_argument("--audit-small", type=int, default=100)
    parser.add_argument("--audit-big", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--json", type=Path, default=RESULTS / "installation.json")
    parser.add_argument("--cold-max", type=int, default=100_000,
                        help="measure the cold turn (after a plugin restart) only in spaces up to this size")
    parser.add_argument("--no-host-threads", dest="host_threads", action="store_false",
                        help="run store calls on the event loop (the test host's default) instead of in threads")
    args = parser.parse_args(argv)
    args.backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not set(args.backends) <= {"chroma", "qdrant"}:
        parser.error("backends: chroma, qdrant")
    if args.spaces < 3 or args.episodes < args.spaces or not 0 < args.biggest <= args.episodes:
        parser.error("need at least 3 spaces, one episode per space, and 0 < biggest <= episodes")
    if not 1 <= args.import_batch <= 5000:
        parser.error("--import-batch: 1 to 5,000 (one import holds at most 5,000 episodes)")
    return args


def main(argv: list[str] | None = None) -> int:
    result = asyncio.run(run(list(sys.argv[1:] if argv is None else argv)))
    report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
