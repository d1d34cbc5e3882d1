"""Small migration bundles built in a test, and the plugin they are imported into, through the surfaces an
operator uses: the Memory Console's `/migrate` page API, and a memory KB upload.

A bundle here has the shape `scripts/export_official.py` writes (docs/OFFICIAL-PLUGIN.md, "The bundle"),
with the chats, settings and bots a test gives it; `record`, `audit` and `candidate` build one official
record of each part."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from testhost import PluginHarness
from tests.proof_support import new_host
from tests.service_helpers import ident

BOT = "bot-a"
CHAT = f"{BOT}:group_1"
ANN = "u1"


def bundle(chats: list[dict[str, Any]], settings: dict[str, Any] | None = None,
           bots: tuple[str, ...] = (BOT,)) -> dict[str, Any]:
    return {"format": "ltm-official-migration", "version": 1, "created_at": "2026-03-01T00:00:00Z",
            "source": {"plugin": "langbot-team/LongTermMemory", "fingerprint": "f" * 64, "kb_id": "kb-old",
                       "bots": list(bots), "database": "sqlite", "vector_store": "chroma"},
            "settings": settings or {}, "chats": chats}


def chat(key: str = CHAT, **parts: list[Any]) -> dict[str, Any]:
    return {"key": key, "profiles": [], "episodes": [], "audit": [], "candidates": [], **parts}


def record(n: int, content: str = "", status: str = "active", sender: str = ANN, **extra: Any) -> dict[str, Any]:
    """An official `export l2` record with the 12-hex id `e<n>`."""
    return {"id": f"e{n:011d}", "content": content or f"the plan number {n} is settled", "tags": ["plan"],
            "importance": 2, "timestamp": f"2026-01-{1 + n % 28:02d}T09:00:00Z", "sender_id": sender,
            "sender_name": "Ann", "source": "agent", "status": status, **extra}


def audit(n: int, operation: str = "remember", summary: str = "remembered a plan", *, sender: str = ANN,
          target: str = "", day: int = 1, **extra: Any) -> dict[str, Any]:
    return {"audit_id": f"a{n:011d}", "operation": operation, "scope_key": CHAT, "user_key": CHAT,
            "sender_id": sender, "sender_name": "Ann", "target_type": "episode", "target_id": target or f"e{n:011d}",
            "summary": summary, "timestamp": f"2025-06-{day:02d}T08:00:00Z", "query_id": 7, "metadata": {},
            **extra}


def candidate(n: int, content: str = "") -> dict[str, Any]:
    return {"candidate_id": f"c{n:011d}", "scope_key": CHAT, "user_key": CHAT, "candidate_type": "l2_episode",
            "status": "pending", "payload": {"content": content or f"Ann: we decided item {n}"}, "reason": "decision",
            "sender_id": ANN, "sender_name": "Ann", "query_id": 3, "created_at": "2026-01-05T08:00:00Z",
            "updated_at": "2026-01-05T08:00:00Z"}


@contextlib.asynccontextmanager
async def plugin(backend: str = "chroma", **kb_settings: Any) -> AsyncIterator[PluginHarness]:
    """The plugin started on a fresh test host of `backend` with a memory KB (`harness.kb`), the host
    listing bot-a."""
    host = await new_host(backend)
    host.bots = [BOT]
    harness = PluginHarness(host)
    await harness.start()
    try:
        harness.kb = await harness.create_memory_kb(**kb_settings)  # type: ignore[attr-defined]  # the fixture hands the KB on the harness
        yield harness
    finally:
        await harness.stop()


async def migrate(harness: PluginHarness, data: Any, *, dry_run: bool, **options: Any) -> dict[str, Any]:
    """The console's `/migrate` answer (a report, or `{"ok": false, "error"}`)."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    response = await harness.page_api("console", "/migrate", "POST", {"bundle": text, "dry_run": dry_run, **options})
    assert response["error"] is None, response
    return response["data"]


def chat_of(report: dict[str, Any], key: str = CHAT) -> dict[str, Any]:
    return next(c for c in report["chats"] if c["key"] == key)


async def scope_of(harness: PluginHarness, launcher: str = "1", kind: str = "group") -> Any:
    return await harness.plugin.memory.scope_for(ident(launcher, bot=BOT, kind=kind))


def stored_text(harness: PluginHarness) -> str:
    """Everything the plugin keeps in plugin storage, as one text (a credential must be nowhere in it)."""
    return "\n".join(v.decode("utf-8", "replace") for v in harness.host.storage.values())
