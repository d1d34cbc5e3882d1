"""One sequence of vector calls, run on LangBot 4.11.2's own SeekDB / pgvector adapters (this file run
by `.lbvenv`'s Python) and on the test host's (tests/test_store_parity.py), answers compared.

Run as a script it imports LangBot and prints the answers as JSON lines; imported, it only offers
`CALLS` and `answer_of`, so the plugin's environment never needs LangBot.
Usage: python tests/store_parity_calls.py seekdb <folder> | pgvector <postgresql uri>
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

DIM = 384  # one of pgvector's allowed dimensions, so both stores take the same vectors
COLLECTION = "lb_0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"


def vec(axis: int, lean: float = 0.0) -> list[float]:
    """A unit axis with a small lean on the next one: distances that differ, no ties."""
    values = [0.0] * DIM
    values[axis] = 1.0
    values[axis + 1] = lean
    return values


ROWS = {
    "ids": ["r-b", "r-a", "r-c"],
    "vectors": [vec(0, 0.1), vec(0, 0.5), vec(5, 0.2)],
    "metadatas": [
        {"text": "alice likes green tea", "file_id": "f1", "uuid": "u1", "scope_key": "s1", "n": 1,
         "gone": None, "tags": ["a", "b"]},
        {"text": "bob drinks coffee", "file_id": "f2", "uuid": "u2", "scope_key": "s2", "n": 2},
        {"text": "carol reads", "file_id": "f3", "uuid": "u3", "scope_key": "s1", "n": 3},
    ],
    "documents": ["alice likes green tea", "bob drinks coffee", "carol reads"],
}

# (label, operation, arguments); the operations are the host's vector calls.
CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("search before any write", "search", {"vector": vec(0), "top_k": 5}),
    ("list before any write", "list", {}),
    ("upsert", "upsert", ROWS),
    ("search", "search", {"vector": vec(0), "top_k": 5}),
    ("search top 1", "search", {"vector": vec(5), "top_k": 1}),
    ("search file_id", "search", {"vector": vec(0), "top_k": 5, "filters": {"file_id": "f2"}}),
    ("search uuid", "search", {"vector": vec(0), "top_k": 5, "filters": {"uuid": {"$in": ["u1", "u3"]}}}),
    ("search free key", "search", {"vector": vec(0), "top_k": 5, "filters": {"scope_key": "s1"}}),
    ("search two keys", "search", {"vector": vec(0), "top_k": 5, "filters": {"scope_key": "s1", "n": 3}}),
    ("search $and", "search", {"vector": vec(0), "top_k": 5,
                               "filters": {"$and": [{"scope_key": "s1"}, {"n": {"$gte": 2}}]}}),
    ("search $nin", "search", {"vector": vec(0), "top_k": 5, "filters": {"file_id": {"$nin": ["f1"]}}}),
    ("search bad operator", "search", {"vector": vec(0), "top_k": 5, "filters": {"file_id": {"$like": "f"}}}),
    ("full text", "search", {"vector": vec(0), "top_k": 5, "search_type": "full_text", "query_text": "coffee"}),
    ("list", "list", {"limit": 10}),
    ("list page", "list", {"limit": 1, "offset": 1}),
    ("list free key", "list", {"filters": {"scope_key": "s1"}}),
    ("list file_id", "list", {"filters": {"file_id": "f3"}}),
    ("delete free key", "delete", {"filters": {"scope_key": "s2"}}),
    ("list after free-key delete", "list", {}),
    ("delete uuid", "delete", {"filters": {"uuid": "u1"}}),
    ("delete file_ids", "delete", {"file_ids": ["f3", "missing"]}),
    ("list at the end", "list", {}),
    ("upsert other size", "upsert", {"ids": ["r-x"], "vectors": [[1.0] * 8], "metadatas": [{"text": "x"}],
                                     "documents": ["x"]}),
]


def answer_of(result: Any = None, error: BaseException | None = None) -> dict[str, Any]:
    """A comparable answer: hits and items with rounded distances, or the error's class."""
    if error is not None:
        return {"error": type(error).__name__}
    if isinstance(result, list):
        return {"hits": [[h["id"], round(float(h["distance"]), 4), _plain(h["metadata"])] for h in result]}
    if isinstance(result, dict):
        return {"items": [[i["id"], i["document"], _plain(i["metadata"])] for i in result["items"]],
                "total": result["total"]}
    return {"value": result}


def _plain(meta: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in sorted((meta or {}).items())}


# ------------------------------------------------------------------ LangBot's side (run as a script)

class _Logger:
    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None


class _Config:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data


class _App:
    """The parts of LangBot's `Application` its vector adapters read."""

    def __init__(self, vdb: dict[str, Any]) -> None:
        self.logger = _Logger()
        self.instance_config = _Config({"vdb": vdb})


def _flatten(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The vector manager's flattening of a batch-shaped search answer."""
    if not results or "ids" not in results or not results["ids"]:
        return []

    def first(value: Any) -> list[Any]:
        return value[0] if value and isinstance(value[0], list) else (value or [])

    ids, dists, metas = first(results["ids"]), first(results.get("distances", [])), first(results.get("metadatas", []))
    return [{"id": pid, "distance": dists[i] if i < len(dists) else 0.0,
             "metadata": metas[i] if i < len(metas) else {}} for i, pid in enumerate(ids)]


async def _run_langbot(store: str, where: str) -> list[dict[str, Any]]:
    if store == "seekdb":
        from langbot.pkg.vector.vdbs.seekdb import SeekDBVectorDatabase

        db: Any = SeekDBVectorDatabase(_App({"use": "seekdb", "seekdb": {"mode": "embedded", "path": where}}))
        op = _seekdb_op(db)
    else:
        from langbot.pkg.vector.vdbs.pgvector_db import PgVectorDatabase

        db = PgVectorDatabase(_App({"use": "pgvector"}), connection_string=where)
        op = _pgvector_op(db)
    answers = []
    for _label, name, args in CALLS:
        try:
            answers.append(answer_of(await op(name, args)))
        except Exception as exc:  # the error's class is the answer
            answers.append(answer_of(error=exc))
    await db.close()
    return answers


def _seekdb_op(db: Any) -> Callable[[str, dict[str, Any]], Awaitable[Any]]:
    async def op(name: str, args: dict[str, Any]) -> Any:
        if name == "upsert":
            await db.add_embeddings(COLLECTION, args["ids"], args["vectors"], args["metadatas"], args["documents"])
            # SeekDB builds its vector index asynchronously; wait for it as the test host does.
            db._collections[db._normalize_collection_name(COLLECTION)].refresh_index()
            return None
        if name == "search":
            return _flatten(await db.search(COLLECTION, args["vector"], args["top_k"],
                                            args.get("search_type", "vector"), args.get("query_text", ""),
                                            args.get("filters")))
        if name == "list":
            items, total = await db.list_by_filter(COLLECTION, args.get("filters"), args.get("limit", 20),
                                                   args.get("offset", 0))
            return {"items": items, "total": total}
        if args.get("file_ids"):
            for file_id in args["file_ids"]:
                await db.delete_by_file_id(COLLECTION, file_id)
            return len(args["file_ids"])
        return await db.delete_by_filter(COLLECTION, args["filters"])

    return op


def _pgvector_op(db: Any) -> Callable[[str, dict[str, Any]], Awaitable[Any]]:
    from langbot.pkg.vector.vdbs.pgvector_db import PgVectorScope

    selected: dict[str, int] = {}

    def scope(expected: int | None, initialize: bool) -> Any:
        # The vector manager's `_resolve_pgvector_scope`, with the knowledge base row kept here.
        if expected is not None and expected not in db.allowed_dimensions:
            raise ValueError(f"Embedding dimension {expected} is not enabled for this deployment")
        current = selected.get(COLLECTION)
        if current is None and expected is not None and initialize:
            current = selected[COLLECTION] = expected
        if expected is not None and current != expected:
            raise ValueError("Knowledge base embedding dimension mismatch")
        return PgVectorScope(workspace_uuid="ws-parity", knowledge_base_uuid=COLLECTION,
                             embedding_dimension=current)

    async def op(name: str, args: dict[str, Any]) -> Any:
        if name == "upsert":
            return await db.add_embeddings(COLLECTION, args["ids"], args["vectors"], args["metadatas"],
                                           args["documents"], scope=scope(len(args["vectors"][0]), True))
        if name == "search":
            return _flatten(await db.search(COLLECTION, args["vector"], args["top_k"],
                                            args.get("search_type", "vector"), args.get("query_text", ""),
                                            args.get("filters"), scope=scope(len(args["vector"]), False)))
        if name == "list":
            items, total = await db.list_by_filter(COLLECTION, args.get("filters"), args.get("limit", 20),
                                                   args.get("offset", 0), scope=scope(None, False))
            return {"items": items, "total": total}
        if args.get("file_ids"):
            for file_id in args["file_ids"]:
                await db.delete_by_file_id(COLLECTION, file_id, scope=scope(None, False))
            return len(args["file_ids"])
        return await db.delete_by_filter(COLLECTION, args["filters"], scope=scope(None, False))

    return op


if __name__ == "__main__":
    for answer in asyncio.run(_run_langbot(sys.argv[1], sys.argv[2])):
        print(json.dumps(answer))
