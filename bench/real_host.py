#!/usr/bin/env python3
"""A chat turn inside the real LangBot 4.11.2, with LongTermMemory and without it (issue 14, goal 5).

One real stack (devhost: the scripted model server, the plugin runtime `lbp rt`, LangBot; all
on loopback, a fresh temporary data dir) is started once. On it:

- a memory KB "LTM bench memory" with every creation default (the plugin's shipped settings);
- two pipelines with the same configuration (the test Runner of tests/e2e, the same model and
  prompt, the memory KB attached), that differ only in LangBot's per-pipeline plugin binding:
  "with" binds LongTermMemory, "without" binds no plugin. An unbound plugin gets no event of
  that pipeline (no PromptPreProcessing injection, no tools offered), so the "without" turn has
  no plugin work at all; the action log below confirms it (its LongTermMemory column is 0).
- one debug-chat connection per pipeline (a person session), kept open for every turn; the
  "with" session's memory space gets --episodes synthetic episodes through `!memory import l2`
  (batches of 100) before anything is measured, so every turn's recall searches a real space.

- a third pipeline, "floor", the same again but bound to the benchmark's floor plugin
  (bench/floor_plugin, built and installed with devhost's own helpers): its PromptPreProcessing
  makes the floor's two host calls on the measured space (the question's embedding, one top-k
  vector search filtered on the space's `file_id`) and nothing else. The floor = the runtime's
  durations of those two calls (action log), in the same run; goal: added time per turn
  (with - without, medians) <= 1.5x the floor (`--no-floor` leaves it out).

Then --warmup turns on each pipeline, then --turns measured turns on each, interleaved (the
order rotates every question) so drift hits all alike; each round sends the same question.
Turn time = from sending the message on the debug-chat WebSocket to the final reply.

Host calls: every process of the stack gets `DEVHOST_ACTION_LOG` (devhost/sitecustomize/
devhost_action_probe.py), so the plugin runtime logs each plugin-protocol action with its
peer plugin. Per turn (window = from this turn's send to the next turn's send):
- `ltm_sdk`: SDK actions LongTermMemory made (each is relayed by the runtime to LangBot);
- `runner_sdk`: SDK actions of the Runner (the host's agent: prompt, query variables, tools, LLM);
- `langbot_to_runtime`: LangBot's own calls into the runtime (events, tool listing, the run);
- `host_to_ltm`: the part of those the runtime forwarded to LongTermMemory.
The plugin's share of host calls = ltm_sdk / (ltm_sdk + runner_sdk + langbot_to_runtime).
The model server's request log gives the embedding and chat requests per turn.

  .venv/bin/python bench/real_host.py                          # 30 turns each, 300 episodes
  .venv/bin/python bench/real_host.py --turns 50 --episodes 1000 --embedder minilm
  .venv/bin/python bench/real_host.py --chat-delay-ms 1000        # a model that takes 1 s per answer

Uses LTM_LBVENV / LTM_EMBED_VENV like the e2e suite. Writes JSON to
bench/.cache/results/real_host.json (or --json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from devhost.chat import DebugChat, ModelLog  # noqa: E402 - after the sys.path line above
from devhost.langbot_setup import build_plugin, ensure_pipeline, find_named, install_plugin  # noqa: E402 - after the sys.path line above
from devhost.lbclient import LTM_PLUGIN, RUNNER_PLUGIN, LangBotClient  # noqa: E402 - after the sys.path line above
from devhost.stack import SetupInfo, Stack, StackConfig  # noqa: E402 - after the sys.path line above

BENCH_KB = "LTM bench memory"
WITH = "LTM bench: with LongTermMemory"
WITHOUT = "LTM bench: without LongTermMemory"
FLOOR = "LTM bench: recall floor"
FLOOR_PLUGIN = ("ltm-bench", "FloorQuery")
FLOOR_PLUGIN_DIR = ROOT / "bench" / "floor_plugin"
LTM_ID = "/".join(LTM_PLUGIN)
RUNNER_ID_PEER = "/".join(RUNNER_PLUGIN)
FLOOR_ID = "/".join(FLOOR_PLUGIN)
IMPORTED_INTO = re.compile(r"Imported \d+ episodes? into (\S+)")
IMPORT_BATCH = 100
DEFAULT_JSON = ROOT / "bench" / ".cache" / "results" / "real_host.json"
MEMORY_LINES = re.compile(r"I see (\d+) memory lines?")

_PEOPLE = ["my sister Ana", "my brother Tom", "my manager Priya", "my friend Kenji", "my neighbour Olga",
           "my dentist", "my landlord", "my daughter Mia", "my colleague Ravi", "my cousin Lea"]
_PLACES = ["Lisbon", "Berlin", "Kyoto", "the lake house", "Porto", "the office", "Vienna", "the gym",
           "Oslo", "the farmers market", "Montreal", "the climbing hall"]
_THINGS = ["the marathon training plan", "the kitchen renovation", "the new apartment", "the guitar lessons",
           "the budget spreadsheet", "the wedding speech", "the camping trip", "the book club novel",
           "the job interview", "the birthday party", "the garden beds", "the flight tickets",
           "the tax return", "the puppy's vaccinations", "the release deadline", "the sourdough recipe"]
_TEMPLATES = [
    "I told {person} that {thing} has to be done before we go to {place}.",
    "{person} recommended a small cafe near {place}; I want to try it after {thing}.",
    "We moved {thing} to next Friday because {person} is travelling to {place}.",
    "I spent about {n} euros on {thing} last month and {person} thinks that is too much.",
    "Reminder for myself: call {person} about {thing} on day {n} of the month.",
    "{person} and I argued about {thing}; we agreed to talk again in {place}.",
    "My plan for {place}: finish {thing}, then meet {person} for dinner at {n} pm.",
    "I prefer to handle {thing} in the morning; {person} prefers the evening.",
    "{person} lent me a book about {place}, it helped with {thing}.",
    "I am worried that {thing} will collide with the trip to {place} that {person} booked.",
]
_QUESTIONS = [
    "what did I tell {person} about {thing}?",
    "when are we going to {place} again?",
    "how much did I spend on {thing}?",
    "what did {person} recommend near {place}?",
    "why did we move {thing}?",
    "what is my plan for {place}?",
    "do I prefer mornings or evenings for {thing}?",
    "what was the argument with {person} about?",
    "who booked the trip to {place}?",
    "which book did {person} lend me?",
]


# ----------------------------------------------------------------------------- data
def synthetic_episodes(n: int, seed: int = 14) -> list[dict[str, Any]]:
    """Deterministic diary-like episodes over a year (`!memory import l2` records), all different:
    the import stores a repeated fact once, so a repeat would make a batch import fewer records."""
    rng = random.Random(seed)
    items = []
    seen: set[str] = set()
    for i in range(n):
        text = ""
        while not text or text in seen:
            text = rng.choice(_TEMPLATES).format(person=rng.choice(_PEOPLE), place=rng.choice(_PLACES),
                                                 thing=rng.choice(_THINGS), n=rng.randint(2, 28))
        seen.add(text)
        day = 1 + (i * 7) % 28
        items.append({"content": text[0].upper() + text[1:], "timestamp": f"2025-{1 + i % 12:02d}-{day:02d}T09:30:00Z",
                      "importance": 1 + i % 5})
    return items


def questions(n: int, seed: int = 41) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(_QUESTIONS).format(person=rng.choice(_PEOPLE), place=rng.choice(_PLACES),
                                          thing=rng.choice(_THINGS)) for _ in range(n)]


# ----------------------------------------------------------------------------- figures
def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


def timing(values: list[float]) -> dict[str, Any]:
    return {"n": len(values), "p50_ms": round(statistics.median(values), 2), "p95_ms": round(percentile(values, 95), 2),
            "mean_ms": round(statistics.fmean(values), 2), "min_ms": round(min(values), 2),
            "max_ms": round(max(values), 2)}


def read_actions(folder: Path) -> list[dict[str, Any]]:
    """Every logged action of the plugin runtime (`lbp-<pid>.jsonl`), sorted by start time."""
    records = []
    for path in sorted(folder.glob("lbp-*.jsonl")) if folder.is_dir() else []:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip():
                try:
                    records.append(json.loads(line))
                except ValueError:
                    continue  # a line being written while we read
    return sorted(records, key=lambda r: r.get("t", 0.0))


def classify(record: dict[str, Any]) -> str | None:
    plugin_side = record.get("handler") == "PluginConnectionHandler"
    peer = record.get("peer")
    if plugin_side and record.get("dir") == "in":
        if peer == FLOOR_ID:
            return "floor_sdk"
        return "ltm_sdk" if peer == LTM_ID else "runner_sdk" if peer == RUNNER_ID_PEER else "other_plugin_sdk"
    if plugin_side and record.get("dir") == "out":
        return "host_to_ltm" if peer == LTM_ID else "host_to_floor" if peer == FLOOR_ID else None
    if not plugin_side and record.get("dir") == "in":
        return "langbot_to_runtime"
    return None


KINDS = ("ltm_sdk", "runner_sdk", "other_plugin_sdk", "langbot_to_runtime", "host_to_ltm", "floor_sdk", "host_to_floor")
FLOOR_ACTIONS = ("invoke_embedding", "vector_search")  # the floor: the question's embedding + one top-k search


def per_turn_calls(turns: list[dict[str, Any]], actions: list[dict[str, Any]],
                   requests: list[dict[str, Any]]) -> dict[str, Any]:
    """Host calls per turn, by pipeline: each action/model request belongs to the turn whose window
    (its send time up to the next turn's send) holds its start."""
    ordered = sorted(turns, key=lambda t: t["sent"])
    bounds = [(t, t["sent"], ordered[i + 1]["sent"] if i + 1 < len(ordered) else t["replied"] + 1.0)
              for i, t in enumerate(ordered)]
    out: dict[str, Any] = {}
    for label in sorted({t["pipeline"] for t in turns}):
        mine = [(t, lo, hi) for t, lo, hi in bounds if t["pipeline"] == label and t["measured"]]
        counts: dict[str, list[int]] = {kind: [] for kind in KINDS}
        by_action: dict[str, Counter[str]] = {kind: Counter() for kind in KINDS}
        durations: dict[str, dict[str, list[float]]] = {kind: {} for kind in KINDS}
        ltm_calls: dict[str, list[float]] = {}
        ltm_ms: list[float] = []
        handler_ms: list[float] = []
        floor_ms: list[float] = []  # per turn: the two floor calls (floor pipeline: the bench plugin's; "with": the plugin's)
        handler: list[float] = []  # per turn: how long the runtime waited for the plugin's PromptPreProcessing
        handler_rest: list[float] = []  # ... less the plugin's own embedding call in it
        waited: list[int] = []  # per turn: the calls the plugin's injection made that ended before it answered
        after: list[int] = []  # ... and those that ended after it (the reply did not wait for them)
        embeds: list[int] = []
        chats: list[int] = []
        for _turn, lo, hi in mine:
            inside = [r for r in actions if lo <= r.get("t", 0.0) < hi]
            for kind in KINDS:
                chosen = [r for r in inside if classify(r) == kind]
                counts[kind].append(len(chosen))
                by_action[kind].update(str(r.get("action")) for r in chosen)
                seen: Counter[str] = Counter()
                for r in chosen:
                    action = str(r.get("action"))
                    seen[action] += 1
                    durations[kind].setdefault(action, []).append(float(r.get("ms") or 0.0))
                    if kind == "ltm_sdk":  # the n-th call of an action in the turn (the searches differ)
                        ltm_calls.setdefault(f"{action}#{seen[action]}", []).append(float(r.get("ms") or 0.0))
            ltm_ms.append(sum(float(r.get("ms") or 0.0) for r in inside if classify(r) == "ltm_sdk"))
            own = "floor_sdk" if label == "floor" else "ltm_sdk"
            floor_ms.append(sum(float(r.get("ms") or 0.0) for r in inside
                                if classify(r) == own and r.get("action") in FLOOR_ACTIONS))
            handler_ms.append(sum(float(r.get("ms") or 0.0) for r in inside if classify(r) == "host_to_ltm"))
            sdk_kind, event_kind = ("floor_sdk", "host_to_floor") if label == "floor" else ("ltm_sdk", "host_to_ltm")
            injection = injection_event(inside, sdk_kind, event_kind)
            if injection is not None:
                embedding = first_embedding(inside, sdk_kind)
                handler.append(float(injection.get("ms") or 0.0))
                handler_rest.append(handler[-1] - float((embedding or {}).get("ms") or 0.0))
            if injection is not None and label != "floor":
                # The calls its injection waited for: made and answered while it ran. Those after it: ended
                # after it answered, and not made while the runtime had another event with the plugin.
                begun, ended = float(injection.get("t") or 0.0), end_of(injection)
                own_calls = [r for r in inside if classify(r) == "ltm_sdk" and float(r.get("t") or 0.0) >= begun]
                others = [r for r in inside if classify(r) == "host_to_ltm" and r is not injection]
                waited.append(sum(1 for r in own_calls if end_of(r) <= ended))
                after.append(sum(1 for r in own_calls if end_of(r) > ended and not any(
                    float(o.get("t") or 0.0) <= float(r.get("t") or 0.0) <= end_of(o) for o in others)))
            reqs = [r for r in requests if lo <= float(r.get("time") or 0.0) < hi]
            embeds.append(sum(1 for r in reqs if r.get("kind") == "embeddings"))
            chats.append(sum(1 for r in reqs if r.get("kind") == "chat"))
        turns_n = max(1, len(mine))
        per_turn = {kind: round(sum(values) / turns_n, 2) for kind, values in counts.items()}
        host_total = per_turn["ltm_sdk"] + per_turn["runner_sdk"] + per_turn["other_plugin_sdk"] \
            + per_turn["langbot_to_runtime"]
        out[label] = {
            "turns": len(mine),
            "per_turn": per_turn,
            "ltm_sdk_min_max": [min(counts["ltm_sdk"], default=0), max(counts["ltm_sdk"], default=0)],
            "by_action_per_turn": {kind: {a: round(c / turns_n, 2) for a, c in sorted(by_action[kind].items())}
                                   for kind in KINDS if by_action[kind]},
            "ms_by_action_p50": {kind: {a: round(statistics.median(v), 2) for a, v in sorted(durations[kind].items())}
                                 for kind in KINDS if durations[kind]},
            "ltm_sdk_ms_by_call_p50": {c: round(statistics.median(v), 2) for c, v in sorted(ltm_calls.items())},
            "ltm_sdk_ms_sum_p50": round(statistics.median(ltm_ms), 2) if ltm_ms else 0.0,
            "embedding_plus_searches_ms_p50": round(statistics.median(floor_ms), 2) if floor_ms else 0.0,
            "host_to_ltm_ms_sum_p50": round(statistics.median(handler_ms), 2) if handler_ms else 0.0,
            "ltm_share_of_host_calls": round(per_turn["ltm_sdk"] / host_total, 3) if host_total else 0.0,
            "injection_ms_p50": round(statistics.median(handler), 2) if handler else None,
            "injection_without_embedding_ms_p50": round(statistics.median(handler_rest), 2) if handler_rest else None,
            "ltm_sdk_waited_per_turn": round(sum(waited) / max(1, len(waited)), 2) if waited else None,
            "ltm_sdk_waited_min_max": [min(waited), max(waited)] if waited else None,
            "ltm_sdk_after_reply_per_turn": round(sum(after) / max(1, len(after)), 2) if after else None,
            "embedding_requests_per_turn": round(sum(embeds) / turns_n, 2),
            "chat_requests_per_turn": round(sum(chats) / turns_n, 2),
        }
    return out


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def difference(a: float | None, b: float | None) -> float | None:
    return round(a - b, 2) if a is not None and b is not None else None


def end_of(record: dict[str, Any]) -> float:
    return float(record.get("t") or 0.0) + float(record.get("ms") or 0.0) / 1000.0


def first_embedding(inside: list[dict[str, Any]], sdk_kind: str) -> dict[str, Any] | None:
    return next((r for r in inside if classify(r) == sdk_kind and r.get("action") == "invoke_embedding"), None)


def injection_event(inside: list[dict[str, Any]], sdk_kind: str = "ltm_sdk", event_kind: str = "host_to_ltm"
                    ) -> dict[str, Any] | None:
    """A plugin's injection: the event the runtime forwarded to it during which the plugin asked for the
    question's embedding (its PromptPreProcessing)."""
    embedding = first_embedding(inside, sdk_kind)
    if embedding is None:
        return None
    start = float(embedding.get("t") or 0.0)
    events = [r for r in inside if classify(r) == event_kind and r.get("action") == "emit_event"
              and float(r.get("t") or 0.0) <= start <= end_of(r)]
    return events[0] if events else None


# ----------------------------------------------------------------------------- the run
def prepare(info: SetupInfo, *, default_kb: bool, floor: bool = False) -> tuple[str, str, str, str | None]:
    """The memory KB and the two pipelines; returns (kb, with, without).

    One LongTermMemory installation keeps one memory KB. devhost's setup creates it with
    consolidation and candidate extraction on (for people trying the review flows); with
    `default_kb` that KB is deleted and "LTM bench memory" is created with every creation default
    (the shipped settings). Without it (the smoke test on the shared e2e stack) the setup's KB is used."""
    client = LangBotClient(info.base_url, token=info.token)
    client.workspace_uuid = info.workspace_uuid
    kb_uuid = info.kb_uuid
    if default_kb:
        kb = find_named(client.get("/knowledge/bases"), "bases", BENCH_KB)
        if kb:
            kb_uuid = kb["uuid"]
        else:
            if info.kb_uuid:
                client.delete(f"/knowledge/bases/{info.kb_uuid}")
            kb_uuid = client.create_memory_kb(BENCH_KB, info.embedding_model_uuid)
    with_uuid = ensure_pipeline(client, WITH, llm_uuid=info.llm_model_uuid, kb_uuids=[kb_uuid], plugins=[LTM_PLUGIN],
                                description="bench/real_host.py: LongTermMemory bound")
    without_uuid = ensure_pipeline(client, WITHOUT, llm_uuid=info.llm_model_uuid, kb_uuids=[kb_uuid], plugins=[],
                                   description="bench/real_host.py: the same pipeline, no plugin bound")
    floor_uuid = None
    if floor:
        floor_uuid = ensure_pipeline(client, FLOOR, llm_uuid=info.llm_model_uuid, kb_uuids=[kb_uuid],
                                     plugins=[FLOOR_PLUGIN],
                                     description="bench/real_host.py: the same pipeline with the floor query plugin")
    return kb_uuid, with_uuid, without_uuid, floor_uuid


def install_floor(info: SetupInfo, lbvenv: Path, state_dir: Path) -> None:
    """Build and install the floor query plugin (bench/floor_plugin) with devhost's own helpers."""
    client = LangBotClient(info.base_url, token=info.token)
    client.workspace_uuid = info.workspace_uuid
    package = build_plugin(str(lbvenv.resolve() / "bin" / "lbp"), FLOOR_PLUGIN_DIR, state_dir / "dist-floor")
    install_plugin(client, package, FLOOR_PLUGIN, state_dir)


def install_window_variant(info: SetupInfo, lbvenv: Path, state_dir: Path, window: int) -> None:
    """Install LongTermMemory built from a copy of this checkout whose `RecallRecipe.vector_window`
    default is `window` (benchmark only: the installed plugin has no other way to be told; the
    checkout itself is not changed)."""
    import shutil

    stage = state_dir / f"window-{window}"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for name in ("manifest.yaml", "main.py", "requirements.txt", "README.md", "assets", "components", "ltm", "readme",
                 "scripts", "pages"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, stage / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif source.exists():
            shutil.copy2(source, stage / name)
    ranking = stage / "ltm" / "episodes" / "ranking.py"
    text, count = re.subn(r"vector_window: int = \d+", f"vector_window: int = {window}", ranking.read_text())
    if count != 1:
        raise RuntimeError("RecallRecipe.vector_window not found in ltm/episodes/ranking.py")
    ranking.write_text(text)
    done = subprocess.run(["bash", str(stage / "scripts" / "build.sh"), str(stage / "dist")], cwd=str(stage),
                          env=dict(os.environ, LBP=str(lbvenv.resolve() / "bin" / "lbp")), capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise RuntimeError(f"building the window-{window} variant failed:\n{done.stdout}\n{done.stderr}")
    client = LangBotClient(info.base_url, token=info.token)
    client.workspace_uuid = info.workspace_uuid
    install_plugin(client, next((stage / "dist").glob("*.lbpkg")), LTM_PLUGIN, state_dir)


def configure_floor(info: SetupInfo, kb_uuid: str, space_key: str, top_k: int) -> None:
    """Point the floor plugin at the measured memory space: its collection, embedding model, space token."""
    from ltm.langbot.layout import space_token

    client = LangBotClient(info.base_url, token=info.token)
    client.workspace_uuid = info.workspace_uuid
    client.put(f"/plugins/{FLOOR_PLUGIN[0]}/{FLOOR_PLUGIN[1]}/config", {
        "collection_id": kb_uuid, "embedding_model_uuid": info.embedding_model_uuid,
        "file_id": space_token(space_key), "top_k": top_k})
    client.wait_plugin(*FLOOR_PLUGIN)


def fill(chat: DebugChat, episodes: list[dict[str, Any]]) -> dict[str, Any]:
    started = time.perf_counter()
    replies = []
    for start in range(0, len(episodes), IMPORT_BATCH):
        batch = episodes[start:start + IMPORT_BATCH]
        reply = chat.send("!memory import l2 " + json.dumps({"episodes": batch}, ensure_ascii=False), timeout=600)
        replies.append(reply)
        if f"Imported {len(batch)} episode" not in reply:
            raise RuntimeError(f"!memory import l2 failed: {reply[:400]}")
    seconds = time.perf_counter() - started
    found = IMPORTED_INTO.search(replies[0]) if replies else None
    return {"episodes": len(episodes), "seconds": round(seconds, 2),
            "episodes_per_s": round(len(episodes) / seconds, 1) if seconds else None,
            "first_reply": replies[0].splitlines()[0][:200] if replies else "",
            "user_key": found.group(1) if found else None}


def run_bench(info: SetupInfo, *, action_log: Path, request_log: Path, turns: int = 30, warmup: int = 5,
              episodes: int = 300, default_kb: bool = True, floor: bool = False, floor_top_k: int = 5
              ) -> dict[str, Any]:
    """Measure on a running, set-up stack (devhost `Stack` with `action_log`). With `floor` (the floor
    plugin installed, `install_floor`) a third pipeline runs the floor query on the measured space."""
    kb_uuid, with_uuid, without_uuid, floor_uuid = prepare(info, default_kb=default_kb, floor=floor)
    model_log = ModelLog(request_log)
    texts = questions(warmup + turns)
    log: list[dict[str, Any]] = []
    memory_lines: list[int] = []
    with DebugChat(info.base_url, with_uuid, info.token, info.workspace_uuid) as with_chat, \
            DebugChat(info.base_url, without_uuid, info.token, info.workspace_uuid) as without_chat, \
            DebugChat(info.base_url, floor_uuid or without_uuid, info.token, info.workspace_uuid) as floor_chat:
        filled = fill(with_chat, synthetic_episodes(episodes)) if episodes else {"episodes": 0}
        chats = {"with": with_chat, "without": without_chat}
        if floor_uuid is not None:
            if not filled.get("user_key"):
                raise RuntimeError("the floor needs the measured space: no import reply named it")
            configure_floor(info, kb_uuid, filled["user_key"], floor_top_k)
            chats["floor"] = floor_chat
        labels = list(chats)
        for i, text in enumerate(texts):
            measured = i >= warmup
            shift = i % len(labels)  # rotate the order, so drift and caches fall on every pipeline alike
            order = labels[shift:] + labels[:shift]
            for label in order:
                sent = time.time()
                clock = time.perf_counter()
                reply = chats[label].send(text, timeout=120)
                elapsed_ms = (time.perf_counter() - clock) * 1000.0
                log.append({"pipeline": label, "measured": measured, "sent": sent, "replied": time.time(),
                            "ms": elapsed_ms, "question": text})
                context = "[LongTermMemory] context: yes" in reply
                if label == "with" and not context:
                    raise RuntimeError(f"no LongTermMemory context in a 'with' turn: {reply[:300]}")
                if label != "with" and context:
                    raise RuntimeError(f"LongTermMemory context in a 'without' turn: {reply[:300]}")
                found = MEMORY_LINES.search(reply)
                if label == "with" and measured and found:
                    memory_lines.append(int(found.group(1)))
    time.sleep(0.5)  # let the last action lines land
    actions = read_actions(action_log)
    calls = per_turn_calls(log, actions, model_log.records())
    with_ms = [t["ms"] for t in log if t["measured"] and t["pipeline"] == "with"]
    without_ms = [t["ms"] for t in log if t["measured"] and t["pipeline"] == "without"]
    with_t, without_t = timing(with_ms), timing(without_ms)
    floor_figures: dict[str, Any] | None = None
    if floor_uuid is not None:
        floor_turns = timing([t["ms"] for t in log if t["measured"] and t["pipeline"] == "floor"])
        floor_ms = calls["floor"]["embedding_plus_searches_ms_p50"]
        added = with_t["p50_ms"] - without_t["p50_ms"]
        floor_figures = {
            "top_k": floor_top_k, "turn": floor_turns,
            "floor_ms_p50": floor_ms,  # the floor plugin's invoke_embedding + vector_search, at the runtime
            "floor_turn_added_ms_p50": round(floor_turns["p50_ms"] - without_t["p50_ms"], 2),
            "added_over_floor": round(added / floor_ms, 3) if floor_ms else None,
            # issue 44's goal (<= 1.3): what the plugin adds to a turn over what the floor plugin adds
            "added_over_floor_plugin": round(added / (floor_turns["p50_ms"] - without_t["p50_ms"]), 3)
            if floor_turns["p50_ms"] > without_t["p50_ms"] else None,
            "plugin_embedding_plus_searches_ms_p50": calls["with"]["embedding_plus_searches_ms_p50"],
            # The two PromptPreProcessing handlers as the runtime waited for them, and the same less each one's own
            # embedding call (the same request to the same model server, and the noisiest call on a busy machine).
            "injection_over_floor_injection": ratio(calls["with"]["injection_ms_p50"],
                                                     calls["floor"]["injection_ms_p50"]),
            "injection_without_embedding_minus_floor_ms": difference(
                calls["with"]["injection_without_embedding_ms_p50"], calls["floor"]["injection_without_embedding_ms_p50"]),
        }
    return {
        "bench": "real_host",
        "turns": turns, "warmup": warmup, "episodes": episodes, "kb_uuid": kb_uuid,
        "kb": "creation defaults" if default_kb else "devhost setup KB (consolidation + candidate extraction on)",
        "baseline": "same pipeline configuration (Runner, model, prompt, memory KB attached) with no plugin bound "
                    "(LangBot per-pipeline plugin binding)",
        "fill": filled,
        "with": with_t,
        "without": without_t,
        "ratio_p50": round(with_t["p50_ms"] / without_t["p50_ms"], 3),
        "ratio_p95": round(with_t["p95_ms"] / without_t["p95_ms"], 3),
        "added_ms_p50": round(with_t["p50_ms"] - without_t["p50_ms"], 2),
        "memory_lines_p50": statistics.median(memory_lines) if memory_lines else None,
        "floor": floor_figures,
        "host_calls": calls,
        "actions_logged": len(actions),
    }


def versions(lbvenv: Path) -> dict[str, str]:
    code = ("import importlib.metadata as m\nfor p in ('langbot', 'langbot-plugin', 'chromadb'):\n"
            "    try: print(p, m.version(p))\n    except Exception: print(p, '?')")
    try:
        done = subprocess.run([str(lbvenv / "bin" / "python"), "-c", code], capture_output=True, text=True,
                              timeout=60)
        return dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    except (OSError, subprocess.SubprocessError):
        return {}


def machine() -> dict[str, Any]:
    model = ""
    try:
        model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "")
    except OSError:
        pass
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "cpu_model": model}


def print_report(result: dict[str, Any], command: str) -> None:
    w, wo = result["with"], result["without"]
    print(f"\nreal LangBot {result.get('versions', {}).get('langbot', '?')}: {result['turns']} measured turns each "
          f"(+{result['warmup']} warm-up), {result['episodes']} episodes in the memory space, "
          f"embedder {result.get('embedder', '?')}, scripted model delay {result.get('chat_delay_ms', 0):g} ms")
    print(f"  fill: {result['fill']}")
    print(f"  {'pipeline':<10} {'p50 ms':>9} {'p95 ms':>9} {'mean ms':>9}")
    for label, figures in (("with", w), ("without", wo)):
        print(f"  {label:<10} {figures['p50_ms']:>9.1f} {figures['p95_ms']:>9.1f} {figures['mean_ms']:>9.1f}")
    print(f"  ratio of medians {result['ratio_p50']:.3f}x (goal <= 1.15x), p95 {result['ratio_p95']:.3f}x, "
          f"added p50 {result['added_ms_p50']:.1f} ms; memory lines in the prompt p50 {result['memory_lines_p50']}")
    floor = result.get("floor")
    if floor:
        print(f"  floor ({floor['top_k']}-nearest search + embedding, through the host, same run): p50 "
              f"{floor['floor_ms_p50']:.1f} ms; added per turn / floor = {floor['added_over_floor']}x; "
              f"the floor pipeline's turn adds {floor['floor_turn_added_ms_p50']:.1f} ms; added per turn / the floor "
              f"plugin's added = {floor['added_over_floor_plugin']}x (goal <= 1.3x); the plugin's own embedding "
              f"+ search p50 {floor['plugin_embedding_plus_searches_ms_p50']:.1f} ms")
    if floor:
        with_calls, floor_calls = result["host_calls"]["with"], result["host_calls"]["floor"]
        print(f"  PromptPreProcessing as the runtime waited for it, p50: LongTermMemory "
              f"{with_calls['injection_ms_p50']} ms ({with_calls['injection_without_embedding_ms_p50']} ms without its "
              f"embedding), the floor plugin {floor_calls['injection_ms_p50']} ms "
              f"({floor_calls['injection_without_embedding_ms_p50']} ms without); ratio "
              f"{floor['injection_over_floor_injection']}x, difference without the embeddings "
              f"{floor['injection_without_embedding_minus_floor_ms']} ms")
    for label in result["host_calls"]:
        calls = result["host_calls"][label]
        print(f"  host calls per turn ({label}): {calls['per_turn']}; LongTermMemory share "
              f"{calls['ltm_share_of_host_calls']:.0%}; time in LongTermMemory's handlers p50 {calls['host_to_ltm_ms_sum_p50']} ms "
              f"(its SDK calls, summed: {calls['ltm_sdk_ms_sum_p50']} ms); "
              f"model requests: {calls['embedding_requests_per_turn']} embeddings, {calls['chat_requests_per_turn']} chat")
        for kind, actions in calls["by_action_per_turn"].items():
            print(f"    {kind}: {actions}")
            print(f"    {kind} ms p50 by action: {calls['ms_by_action_p50'].get(kind, {})}")
        if calls.get("ltm_sdk_waited_per_turn") is not None:
            print(f"    LongTermMemory calls per turn its injection waited for: {calls['ltm_sdk_waited_per_turn']} "
                  f"(min-max {calls['ltm_sdk_waited_min_max']}); ended after it answered: "
                  f"{calls['ltm_sdk_after_reply_per_turn']}")
        if calls["ltm_sdk_ms_by_call_p50"]:
            print(f"    ltm_sdk ms p50 by call in the turn: {calls['ltm_sdk_ms_by_call_p50']}")
    print(f"\n  command: {command}")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30, help="measured turns per pipeline (default 30)")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up turns per pipeline (default 5)")
    parser.add_argument("--episodes", type=int, default=300, help="episodes imported into the memory space")
    parser.add_argument("--embedder", default=os.environ.get("LTM_EMBEDDER", "auto"),
                        choices=["auto", "minilm", "hashing"], help="the model server's embedder (default auto)")
    parser.add_argument("--vdb", default=os.environ.get("LTM_VDB", "chroma"), choices=["chroma", "milvus"])
    parser.add_argument("--chat-delay-ms", type=float, default=0.0,
                        help="the scripted model waits this long per chat answer, a stand-in for a real model's "
                             "latency (default 0: the host's and the plugin's own time only)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--window", type=int, default=None,
                        help="install LongTermMemory with this vector_window instead of the shipped default "
                             "(built from a patched copy of the checkout)")
    parser.add_argument("--no-floor", dest="floor", action="store_false",
                        help="skip the third pipeline that measures the floor (embedding + top-k search)")
    parser.add_argument("--keep-data", action="store_true", help="keep the temporary data dir")
    args = parser.parse_args(list(argv) if argv is not None else None)
    command = "python bench/real_host.py " + " ".join(shlex.quote(a) for a in (list(argv) if argv is not None
                                                                                 else sys.argv[1:]))
    data_dir = Path(tempfile.mkdtemp(prefix="ltm-realhost-"))
    config = StackConfig.from_env(data_dir, embedder=args.embedder, vdb=args.vdb)
    config.chat_base_url = config.chat_api_key = config.chat_model = None  # the scripted model only
    config.action_log = data_dir / "actions"
    os.environ["LTM_MODEL_CHAT_DELAY_MS"] = str(args.chat_delay_ms)  # read by devhost/model_server.py
    stack = Stack(config)
    try:
        stack.start()
        info = stack.setup()
        if args.window is not None:
            install_window_variant(info, config.lbvenv, data_dir, args.window)
        if args.floor:
            install_floor(info, config.lbvenv, data_dir)
        result = run_bench(info, action_log=config.action_log, request_log=stack.request_log, turns=args.turns,
                           warmup=args.warmup, episodes=args.episodes, floor=args.floor)
    finally:
        stack.stop()
        if not args.keep_data:
            import shutil

            shutil.rmtree(data_dir, ignore_errors=True)
    result.update(command=command, chat_delay_ms=args.chat_delay_ms, window=args.window or "shipped default", embedder=stack.embedder_label, vdb=args.vdb, versions=versions(config.lbvenv),
                  machine=machine(), when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2))
    print_report(result, command)
    print(f"  JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
