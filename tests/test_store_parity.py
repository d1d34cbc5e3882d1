"""The test host's SeekDB and pgvector backends answer like LangBot 4.11.2's own adapters.

The same calls (tests/store_parity_calls.py: writes with free metadata, searches with portable,
dropped and malformed filters, full text, listing pages, deletes by filter and by file) run on
LangBot's `SeekDBVectorDatabase` / `PgVectorDatabase` in `.lbvenv` (with the SeekDB / psycopg
packages its extras name) and on our backends; every answer must match: ids, order, distances,
metadata kept or dropped, totals, deleted counts, and the class of every error.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from devhost.provision import REPO, ensure_lbvenv, ensure_lbvenv_vdb
from testhost.vectors import make_backend
from testhost.vectors.pgvector import _PostgresServer
from tests.store_parity_calls import CALLS, COLLECTION, answer_of

pytestmark = pytest.mark.slow


async def _ours(store: str) -> list[dict[str, Any]]:
    backend: Any = make_backend(store)
    answers = []
    try:
        for _label, name, args in CALLS:
            try:
                if name == "upsert":
                    result = await backend.upsert(COLLECTION, args["ids"], args["vectors"], args["metadatas"],
                                                  args["documents"])
                elif name == "search":
                    result = await backend.search(COLLECTION, args["vector"], args["top_k"], args.get("filters"),
                                                  args.get("search_type", "vector"), args.get("query_text", ""))
                elif name == "list":
                    result = await backend.list(COLLECTION, args.get("filters"), args.get("limit", 20),
                                                args.get("offset", 0))
                else:
                    result = await backend.delete(COLLECTION, args.get("file_ids"), args.get("filters"))
                answers.append(answer_of(result))
            except Exception as exc:  # the error's class is the answer
                answers.append(answer_of(error=exc))
    finally:
        await backend.close()
    return answers


def _langbots(store: str, where: str) -> list[dict[str, Any]]:
    venv = ensure_lbvenv(REPO / ".lbvenv")
    ensure_lbvenv_vdb(venv, store)
    done = subprocess.run([str(venv / "bin" / "python"), str(Path(__file__).parent / "store_parity_calls.py"),
                           store, where], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _compare(ours: list[dict[str, Any]], langbots: list[dict[str, Any]]) -> None:
    assert len(langbots) == len(CALLS)
    different = [f"{label}:\n  ours    {mine}\n  LangBot {theirs}"
                 for (label, _, _), mine, theirs in zip(CALLS, ours, langbots) if mine != theirs]
    assert not different, "\n".join(different)


async def test_seekdb_backend_answers_like_langbots_adapter(tmp_path: Path) -> None:
    ours = await _ours("seekdb")
    langbots = _langbots("seekdb", str(tmp_path / "seekdb"))
    _compare(ours, langbots)
    # The calls reach what makes SeekDB differ from the fixed-schema stores.
    by_label = {label: answer for (label, _, _), answer in zip(CALLS, ours)}
    assert [hit[0] for hit in by_label["search free key"]["hits"]] == ["r-b", "r-c"]
    # SeekDB ignores an operator it does not know: every row comes back (Chroma would refuse).
    assert len(by_label["search bad operator"]["hits"]) == 3
    assert "gone" not in by_label["list"]["items"][0][2]


async def test_pgvector_backend_answers_like_langbots_adapter() -> None:
    ours = await _ours("pgvector")
    # LangBot's adapter uses the same PostgreSQL (its own workspace), so it also accepts our table.
    # A plain `postgresql://` would make LangBot open its table with psycopg2, which it does not
    # install: the connection string names psycopg (README).
    langbots = _langbots("pgvector", _PostgresServer.uri().replace("postgresql://", "postgresql+psycopg://", 1))
    _compare(ours, langbots)
    by_label = {label: answer for (label, _, _), answer in zip(CALLS, ours)}
    assert by_label["search before any write"].get("error")
    assert len(by_label["search free key"]["hits"]) == 3  # the free key was dropped
    assert [item[0] for item in by_label["list"]["items"]] == ["r-a", "r-b", "r-c"]  # vector-id order
