#!/usr/bin/env python3
"""The conversation record's cost per turn against a turn without it (issue 42, phase 2).

Two plugins on two fresh fake LangBot hosts (`bench.cost_env.CostHost`: real embedded Chroma behind the
host's worker threads, every host call counted), one with the conversation record off (the baseline),
one with it on (`conversation_host_window` 0, so every recorded turn the host lacks is packed, the
largest pack; `conversation_max_turns` 20 and the other budgets at their defaults; the fold by a chat
model the fake host answers at once with a fixed 600-character summary). Both hold the same 200
episodes and profiles. Each turn of one group chat, as LangBot makes it:

1. PromptPreProcessing (the injection, and with the record on the context pack): wall time, plugin CPU
   (the event-loop thread's CPU minus the host's routes on it), host calls by action, the memory block's
   characters and the pack's (its `conversation_summary` and `earlier_turn` lines);
2. NormalMessageResponded (what the reply waits for): wall time, plugin CPU and host calls of the
   handler alone (the host sends the reply when it returns);
3. the background work the handler started (recording the turn, and the fold when one is due), until
   it ends: its host calls, plugin CPU and wall time, turns with and without a fold apart.

The hook's one-second wait for a streamed reply to settle (`REPLY_QUIET_S`) is set to 0 here: it is a
wait, not work, and it is off the reply path either way. Candidate extraction is off in both, so the
responded handler's figures are the record's alone. Medians over the measured turns (after --warmup).

  .venv/bin/python bench/conversation_cost.py                  # 60 turns (20 warm-up), chroma
  .venv/bin/python bench/conversation_cost.py --turns 100 --warmup 30
Writes JSON to bench/.cache/results/conversation_cost.json (or --json PATH).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.cost_env import (  # noqa: E402 - after the sys.path line above
    RESULTS,
    CostHost,
    command_line,
    direct_fill,
    environment,
    make_host,
    summary_ms,
    with_end_load,
    write_json,
)
from bench.host_calls import BOT, GROUP, SPEAKER, SPEAKER_NAME, speaker_scope, synthetic_episodes  # noqa: E402 - after the sys.path line above
from components.event_listener import conversation_hook  # noqa: E402 - after the sys.path line above

ON = {"conversation_enabled": True, "conversation_host_window": 0, "conversation_model_uuid": "llm-1"}
SUMMARY = ("The group planned the harbour trip: " + "who brings what, when the boat leaves, the weather. " * 12)[:600]
SAID = ["what time does the ferry to the {0} island leave on Saturday?", "I can bring the {0} and two thermoses",
        "remind me who booked the {0} table last time", "the forecast says wind from the {0} after noon"]
WORDS = ["north", "cedar", "lantern", "harbour", "copper", "willow", "granite", "meadow"]


def pack_chars(block: str) -> int:
    return sum(len(line) + 1 for line in block.splitlines()
               if line.startswith(("conversation_summary", "earlier_turn", "Earlier in this chat")))


class Chat:
    def __init__(self, host: CostHost, harness: Any, kb: str) -> None:
        self.host, self.harness, self.kb = host, harness, kb
        self.qid = 5000

    def _plugin_cpu(self, cpu0: float) -> float:
        return max(0.0, time.thread_time() - cpu0 - self.host.host_cpu)

    async def turn(self, n: int) -> dict[str, Any]:
        host, harness = self.host, self.harness
        self.qid += 1
        text = SAID[n % len(SAID)].format(WORDS[n % len(WORDS)])
        host.open_query(self.qid, bot_uuid=BOT, launcher_type="group", launcher_id=GROUP, sender_id=SPEAKER,
                        sender_name=SPEAKER_NAME, message_text=text, pipeline_kbs=[self.kb])
        event = {"session_name": f"group_{GROUP}", "default_prompt": [{"role": "system", "content": "You are a bot."}],
                 "prompt": []}
        host.reset_counts()
        cpu0, wall0 = time.thread_time(), time.perf_counter()
        answer = await harness.emit_event("PromptPreProcessing", event, query_id=self.qid)
        prompt = {"wall": time.perf_counter() - wall0, "cpu": self._plugin_cpu(cpu0), "calls": host.calls_by_action()}
        block = next((m["content"] for m in answer["event"]["default_prompt"]
                      if str(m.get("content", "")).startswith("[LongTermMemory]")), "")
        prompt.update(block_chars=len(block), pack_chars=pack_chars(block))

        reply = {"launcher_type": "group", "launcher_id": GROUP, "sender_id": SPEAKER, "prefix": "",
                 "session": {"launcher_type": "group", "launcher_id": GROUP, "sender_id": SPEAKER},
                 "response_text": f"Sure: noted about the {WORDS[(n + 3) % len(WORDS)]}.", "finish_reason": "stop",
                 "funcs_called": [], "reply_message_chain": None}
        host.reset_counts()
        cpu0, wall0 = time.thread_time(), time.perf_counter()
        await harness.emit_event("NormalMessageResponded", reply, query_id=self.qid)
        responded = {"wall": time.perf_counter() - wall0, "cpu": self._plugin_cpu(cpu0),
                     "calls": host.calls_by_action()}
        host.reset_counts()
        cpu0, wall0 = time.thread_time(), time.perf_counter()
        await harness.settle(timeout=60)
        background = {"wall": time.perf_counter() - wall0, "cpu": self._plugin_cpu(cpu0),
                      "calls": host.calls_by_action()}
        background["fold"] = background["calls"].get("invoke_llm", 0) > 0
        host.close_query(self.qid)
        return {"prompt": prompt, "responded": responded, "background": background}


def calls_median(runs: list[dict[str, Any]]) -> dict[str, float]:
    names = sorted({name for r in runs for name in r["calls"]})
    return {name: statistics.median(r["calls"].get(name, 0) for r in runs) for name in names}


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    if not runs:
        return {"n": 0}
    return {"n": len(runs), "wall_ms": summary_ms([r["wall"] for r in runs]),
            "plugin_cpu_ms": summary_ms([r["cpu"] for r in runs]),
            "host_calls_median": calls_median(runs),
            "host_calls_total_median": statistics.median(sum(r["calls"].values()) for r in runs)}


async def measure(recording: bool, args: argparse.Namespace) -> dict[str, Any]:
    host = make_host(args.backend)
    host.llm_script = lambda messages, payload: SUMMARY
    harness, memory, scope = await speaker_scope(host)
    try:
        if recording:
            for name, value in ON.items():
                await memory.set_setting(name, value)
        await direct_fill(harness, host, [(scope, synthetic_episodes(args.episodes))])
        await memory.update_profile(scope, "session", {"preferences": ["answer in English"]})
        chat = Chat(host, harness, scope.kb_id)
        turns = [await chat.turn(n) for n in range(args.warmup + args.turns)][args.warmup:]
        record = await memory.conversation(scope)
    finally:
        await harness.stop()
        await host.close()
    background = [t["background"] for t in turns]
    return {
        "recording": recording,
        "prompt": {**summarize([t["prompt"] for t in turns]),
                   "block_chars": summary_ms([t["prompt"]["block_chars"] / 1000 for t in turns]),
                   "pack_chars": summary_ms([t["prompt"]["pack_chars"] / 1000 for t in turns])},
        "responded": summarize([t["responded"] for t in turns]),
        "background_record_only": summarize([b for b in background if not b["fold"]]),
        "background_with_fold": summarize([b for b in background if b["fold"]]),
        "folds": sum(1 for b in background if b["fold"]),
        "record_at_end": {"turns": len(record.turns), "chars": record.chars, "summary_chars": len(record.summary.text),
                          "folded": record.summary.folded},
        "calls_by_action_all_turns": dict(sum((Counter(t["prompt"]["calls"]) + Counter(t["responded"]["calls"])
                                               + Counter(t["background"]["calls"]) for t in turns), Counter())),
    }


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--backend", default="chroma")
    parser.add_argument("--json", default=str(RESULTS / "conversation_cost.json"))
    args = parser.parse_args(argv)
    conversation_hook.REPLY_QUIET_S = 0.0
    env = environment()
    baseline = await measure(False, args)
    recording = await measure(True, args)
    result = {"command": command_line("conversation_cost.py", argv), "environment": with_end_load(env),
              "baseline": baseline, "recording": recording}
    path = write_json(result, args.json)
    print(json.dumps({k: result[k] for k in ("baseline", "recording")}, indent=1))
    print(f"written to {path}", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
