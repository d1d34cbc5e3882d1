"""Proof: every field of every foreign format goes through the one credential detector (issue 43, "Proofs
to add"). The formats are the official plugin's: the migration bundle (console `/migrate`), its L1 export
(`!memory import l1`), its L2 export (`!memory import l2`) and its KB upload array (a memory KB document).

The rows are derived from the readers, not listed by hand: every key a reader module asks a record for
(`.get("key")`, `["key"]`, found by parsing `ltm/official/` and the episode import's modules), with every
key of a full sample record of each format. Each key is set, at every level of each sample where a record
can hold it, to a credential (as text, and as a one-item list), and the format is imported through its
surface. The credential must then be nowhere: not in plugin storage, not in a vector row, not in the
reply or report, not in a log line. A reader that starts to read a new key gets its rows without an edit
here.
"""

from __future__ import annotations

import ast
import copy
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import official_install as oi
from tests.chat import open_chat
from tests.migration_support import BOT, bundle, migrate, plugin
from tests.service_helpers import ident

ROOT = Path(__file__).resolve().parents[1]
READERS = sorted((ROOT / "ltm" / "official").rglob("*.py")) + [
    ROOT / "ltm" / "episodes" / name for name in ("transfer.py", "model.py") if (ROOT / "ltm" / "episodes" / name).exists()]
# A stated password with an API key after it, and a bare access token: a value cut to 30 characters (a
# message quoting it) would still look like the first and no longer like the second.
CREDENTIALS = ("password: hunter2hunter2 sk-proj-QwErTyUiOpAsDfGhJkLzXcVbNm12345678",
               "ghp_ZyXwVuTsRqPoNmLkJiHgFeDcBa0123456789")
MARKS = ("hunter2hunter2", "QwErTyUiOp", "ZyXwVuTsRq")


def read_keys() -> set[str]:
    """Every key the readers ask a record for."""
    keys: set[str] = set()
    for module in READERS:
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop")
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                keys.add(node.args[0].value)
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(
                    node.slice.value, str):
                keys.add(node.slice.value)
    return keys


def l2_record(n: int) -> dict[str, Any]:
    return {"id": f"r{n:011d}", "content": f"the fact number {n} of the sample", "tags": ["plan"], "importance": 2,
            "timestamp": "2026-01-10T09:00:00Z", "sender_id": "u1", "sender_name": "Ann", "source": "agent",
            "status": "active", "superseded_by": "", "event_at": "2026-01-09T09:00:00Z", "source_ref": "chat"}


def l1_entry(n: int) -> dict[str, Any]:
    slot = {"value": f"lives in town {n}", "updated_at": "2026-02-01T10:00:00Z", "confidence": 0.9,
            "history": [{"value": "lives in Paris", "timestamp": "2025-11-01T10:00:00Z", "status": "superseded",
                         "reason": "profile_update"}]}
    return {"type": "speaker", "scope_key": f"{BOT}:group_1", "sender_id": f"s{n}", "profile": {
        "name": "Ann", "traits": [f"likes hiking {n}"], "preferences": [], "notes": "a note",
        "updated_at": "2026-02-01T10:00:00Z", "freeform_traits": [f"likes hiking {n}"], "freeform_preferences": [],
        "profile_slots": {"traits": {"city": slot}, "preferences": {}}}}


def audit_entry(n: int) -> dict[str, Any]:
    return {"audit_id": f"a{n:011d}", "operation": "remember", "scope_key": "k", "user_key": "k", "sender_id": "u1",
            "sender_name": "Ann", "target_type": "episode", "target_id": "e1", "summary": "remembered",
            "timestamp": "2026-01-01T08:00:00Z", "query_id": 7, "metadata": {"episode_ids": ["e1"]}}


def candidate_entry(n: int) -> dict[str, Any]:
    return {"candidate_id": f"c{n:011d}", "candidate_type": "l1_profile", "status": "pending",
            "payload": {"target_scope": "speaker", "field": "traits", "action": "add", "value": f"likes tea {n}"},
            "reason": "preference", "sender_id": "u1", "sender_name": "Ann", "query_id": 3,
            "created_at": "2026-01-05T08:00:00Z", "updated_at": "2026-01-05T08:00:00Z"}


def keys_of(*samples: Any) -> set[str]:
    found: set[str] = set()
    for sample in samples:
        for node in nodes(sample):
            found |= set(node[1])
    return found


def nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Every object of a sample, with its path."""
    if isinstance(value, dict):
        yield path, value
        for key, child in value.items():
            yield from nodes(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from nodes(child, (*path, index))


KEYS = sorted(read_keys() | keys_of(l2_record(0), l1_entry(0), audit_entry(0), candidate_entry(0),
                                    oi.KB_SETTINGS, bundle([])))


def variants(sample: Any) -> Iterator[tuple[str, Any]]:
    """The sample with one key of one of its objects set to a credential (each as text, the first also as a
    one-item list)."""
    for path, _ in list(nodes(sample)):
        for key in KEYS:
            for value in (*CREDENTIALS, [CREDENTIALS[0]]):
                copied = copy.deepcopy(sample)
                target = copied
                for step in path:
                    target = target[step]
                target[key] = value
                yield f"{'/'.join(map(str, path))}/{key}={type(value).__name__}", copied


def leaks(*texts: str) -> list[str]:
    return [mark for mark in MARKS for text in texts if mark in text]


async def everything(harness: Any) -> str:
    """What the plugin keeps (storage and every vector row of its KB) as one text."""
    stored = [v.decode("utf-8", "replace") for v in harness.host.storage.values()]
    rows = await harness.host.dump_kb(harness.kb)
    return "\n".join(stored) + json.dumps([{k: v for k, v in r.items() if k not in ("vector", "embedding")}
                                            for r in rows], ensure_ascii=False, default=str)


@pytest.fixture(autouse=True)
def _logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)


async def test_every_field_of_an_official_l2_export_and_upload_array(caplog):
    records = [record for _, record in variants(l2_record(0))]
    sample_id = l2_record(0)["id"]
    for n, record in enumerate(records):  # each its own fact and id, or all but the first would repeat it
        if isinstance(record.get("content"), str) and "sample" in record["content"]:
            record["content"] = f"the fact number {n} of the sample"
        if record.get("id") == sample_id:
            record["id"] = f"r{n:011d}"
    async with plugin() as harness:
        chat = open_chat(harness, "g1")
        for start in range(0, len(records), 300):  # a command reply names the first records it skipped
            reply = await chat.run("!memory import l2 " + json.dumps({"version": 1, "episodes": records[start:start + 300]}))
            assert not leaks(reply), reply
        imported = len(await harness.host.dump_kb(harness.kb))
        for where, envelope in variants({"version": 1, "exported_at": "2026-03-20T08:00:00Z", "scope_key": "k",
                                         "user_key": "k", "statuses": ["active"], "count": 1}):
            envelope.setdefault("episodes", [l2_record(9999)])
            assert not leaks(await chat.run("!memory import l2 " + json.dumps(envelope))), where
        # Into another chat's space: in g1's own, every record would be "already imported" and none read again.
        upload = [{**r, "user_key": r.get("user_key", "bot-1:group_g2")} for r in records]
        harness.host.bots = ["bot-1"]
        result = await harness.ingest(harness.kb, "doc-1", "memories.json", json.dumps(upload).encode())
        assert not leaks(json.dumps(result, default=str)), result
        uploaded = len(await harness.host.dump_kb(harness.kb)) - imported
        # Most variants are stored (a credential in them redacted, or a field refused alone); a variant that is
        # refused whole cannot show a leak, so a proof that stored little would prove little.
        assert imported >= 200 and uploaded >= 200, (len(records), imported, uploaded)
        assert not leaks(await everything(harness), caplog.text)


async def test_every_field_of_an_official_l1_export(caplog):
    entries = [entry for _, entry in variants(l1_entry(0))]
    for n, entry in enumerate(entries):
        if entry.get("sender_id") == "s0":
            entry["sender_id"] = f"s{n}"
    async with plugin() as harness:
        chat = open_chat(harness, "g1")
        payload = {"version": 1, "exported_at": "2026-03-20T08:00:00Z", "profiles": entries}
        for n, start in enumerate(range(0, len(entries), 900)):  # an import takes at most 1,000 profiles
            scope = await harness.plugin.memory.scope_for(ident(f"g{n + 2}", bot="bot-1"))
            found = await harness.plugin.memory.import_profiles(scope, {**payload, "profiles": entries[start:start + 900]})
            assert not leaks(json.dumps([[s.position, s.reason] for s in found.skipped])), found.skipped
        assert not leaks(await chat.run("!memory import l1 " + json.dumps({**payload, "profiles": entries[:200]})))
        for where, root in variants({"version": 1, "exported_at": "2026-03-20T08:00:00Z"}):
            root.setdefault("profiles", [l1_entry(0)])
            assert not leaks(await chat.run("!memory import l1 " + json.dumps(root))), where
        assert not leaks(await everything(harness), caplog.text)


async def test_every_field_of_a_migration_bundle(caplog):
    parts = {"episodes": l2_record, "audit": audit_entry, "candidates": candidate_entry, "profiles": l1_entry}
    chats = []
    for part, sample in parts.items():
        for _, item in variants(sample(0)):
            n = len(chats)
            if part == "episodes" and isinstance(item.get("content"), str) and "sample" in item["content"]:
                item["content"] = f"the fact number {n} of the sample"
            chats.append({"key": f"{BOT}:group_{n}", part: [item]})
    for _, whole_chat in variants({"key": f"{BOT}:group_x", "episodes": [l2_record(1)]}):
        if whole_chat["key"] == f"{BOT}:group_x":  # the key itself is planted in its own row
            whole_chat["key"] = f"{BOT}:group_x{len(chats)}"
        chats.append(whole_chat)
    async with plugin() as harness:
        report = await migrate(harness, bundle(chats, settings=dict(oi.KB_SETTINGS)), dry_run=False)
        assert not leaks(json.dumps(report, ensure_ascii=False)), [
            (c["key"], c["problem"], [c[p] for p in ("profiles", "episodes", "audit", "candidates")])
            for c in report["chats"] if leaks(json.dumps(c, ensure_ascii=False))][:3]
        for where, whole in variants(bundle([], settings={**oi.KB_SETTINGS, "retrieval": {"top_k": 5}})):
            if not isinstance(whole.get("chats"), list) or whole.get("chats"):
                whole["chats"] = [{"key": f"{BOT}:group_1", "episodes": [l2_record(2)]}]
            assert not leaks(json.dumps(await migrate(harness, whole, dry_run=True), ensure_ascii=False)), where
        assert not leaks(await everything(harness), caplog.text)
