"""A fingerprint of what recall ranks, to show that a refactor changed nothing.

The LoCoMo figure moves by a few questions between runs of the same code (Chroma's search is
approximate), so it cannot tell a behaviour-preserving change from a small regression. This runs
recall on the in-memory test ports, whose vector search is exact and repeatable, over the LoCoMo
tuning conversations with the hashing embedder, for three retrieval strategies and three recipes
(shipped, word index off, summaries folded), and prints one SHA-256 of every scored field of every
result (ids, scores and their parts, as `repr`, so a change in the last bit shows).

Run it on two commits and compare the two lines it prints:

    .venv/bin/python bench/recall_fingerprint.py            # two conversations, about 2,150 recalls
    .venv/bin/python bench/recall_fingerprint.py --all      # every tuning conversation

`--dump FILE` also writes the whole JSON, to find where two runs part. `LTM_LOCOMO_ZIP` names the data
set (docs/BENCHMARK-DATA.md).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.locomo_data import Conversation, load_split
from bench.plugin_env import no_save_delay, slug
from ltm import QUERY_RECALL, Identity, MemoryService, RecallFilters, parse_records
from ltm.secrets import secret_kind
from ltm.timefields import parse_stored
from testhost.hooks import index_space, recall_at, top
from testhost.memory_ports import InMemoryPorts

STRATEGIES = ("auto", "hybrid", "vector")
# Edge questions on top of each conversation's own: empty, a tag, blanks, two tags.
EDGE_QUESTIONS = ("", "d1", "  ", "D3 d5")


async def _conversation(conv: Conversation, strategy: str) -> list[list[Any]]:
    ports = InMemoryPorts(dim=256)
    memory = MemoryService(ports.ports)
    await memory.register_kb("kb-1", {"embedding_model_uuid": "emb-1", "retrieval_strategy": strategy})  # the fake knows emb-1
    first = conv.turns[0].speaker
    identity = Identity.build(launcher_type="group", launcher_id=f"c{conv.conv_id}", bot_uuid="bot-1",
                              sender_id=slug(first), sender_name=first)
    scope = await memory.scope_for(identity)
    items = [{"id": t.dia_id, "content": t.content, "timestamp": t.timestamp, "event_at": t.timestamp,
              "sender_id": slug(t.speaker), "sender_name": t.speaker, "tags": [t.dia_id.split(":")[0].lower()]}
             for t in conv.turns if not secret_kind(t.content)]
    await memory.import_episodes(scope, parse_records(items, source="import"))
    await index_space(memory, scope)
    moment = parse_stored(max(t.timestamp for t in conv.turns))
    shipped = top(50, QUERY_RECALL)
    recipes = {"shipped": shipped,
               "no_word_index": replace(shipped, lexical_weight=0.0, strip_named_speakers=False),
               "folded": replace(shipped, fold_summary_sources=True, current_only=True)}
    rows: list[list[Any]] = []
    for name, recipe in recipes.items():
        for question in [qa.question for qa in conv.qas] + list(EDGE_QUESTIONS):
            filters = RecallFilters(tags=("d1", "d2")) if question.strip() in ("", "d1") else RecallFilters()
            ranked = await recall_at(memory, scope, question, recipe, moment, filters)
            rows.append([strategy, name, question, [
                [s.episode.original_id, repr(s.score), repr(s.vector), repr(s.lexical), repr(s.bonus),
                 repr(s.context), repr(s.session), repr(s.distance)] for s in ranked]])
    return rows


async def _run(limit: int | None) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for conv in load_split("tuning", limit=limit):
        for strategy in STRATEGIES:
            rows.extend(await _conversation(conv, strategy))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every tuning conversation (default: the first two)")
    parser.add_argument("--dump", type=Path, help="also write every ranked result as JSON here")
    args = parser.parse_args(argv)
    logging.disable(logging.CRITICAL)  # the plugin's warnings about the data set's oddities are not results
    no_save_delay()
    rows = asyncio.run(_run(None if args.all else 2))
    text = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
    if args.dump:
        args.dump.write_text(text, encoding="utf-8")
    results = sum(len(row[3]) for row in rows)
    print(f"recalls {len(rows)}, ranked results {results}, sha256 {hashlib.sha256(text.encode()).hexdigest()}")
    print(f"command: .venv/bin/python bench/recall_fingerprint.py{' --all' if args.all else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
