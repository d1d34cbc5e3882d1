"""Move plugin-storage records written by release 0.1 to the escaped key layout (v2).

Release 0.1 joined host identifiers with ":" into keys (`profile:<scope>:speaker:<sender>`,
`audit:<scope>:<n>`, ...), so some distinct identifiers shared a key. Release 0.2 escapes every
component (`ltm/_storage.py`). This step runs once, before the first storage access of a
plugin process that finds no layout marker:

1. list every key, read each old record and classify it (an old audit key that could be a
   head or a chunk is told apart by its value: a head is an object, a chunk a list);
2. write each record under its new key (an overwrite, so running again is harmless);
3. delete the old keys, append one `storage_migration` entry to the installation's audit log,
   and write the marker last.

A crash at any point leaves every record readable under its old key, its new key or both,
and the next start simply runs the remaining steps again (idempotent, resumable). Records
whose old keys had already collided cannot be told apart any more; they are moved once, to
the interpretation the value supports, and counted as `ambiguous` in the audit entry.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from .._audit import AuditEntry, AuditLog
from .._bookkeeping import Bookkeeping
from .._storage import (
    KB_CONFIGS_KEY,
    LAYOUT_KEY,
    LAYOUT_VERSION,
    audit_chunk_key,
    audit_head_key,
    document_key,
    fence_key,
    profile_key,
    snapshot_key,
)
from ..operations import Operation
from ..spaces import INSTALLATION_KEY
from ..timefields import now_iso
from ..wording import Phrase

log = logging.getLogger("LongTermMemory")
MOVED = Phrase("audit.storage_moved", "moved {count} records to the escaped key layout")


@dataclass
class MigrationPlan:
    moves: dict[str, str] = field(default_factory=dict)  # old key -> new key
    ambiguous: int = 0
    unknown: list[str] = field(default_factory=list)


def _audit_log_id(old_log: str) -> str:
    return INSTALLATION_KEY if old_log == INSTALLATION_KEY else f"l1:{old_log}"


def plan_move(key: str, value: Any, plan: MigrationPlan) -> None:
    """Where one release-0.1 record goes."""
    kind, _, rest = key.partition(":")
    if kind == "profile" and rest:
        if rest.endswith(":session"):
            plan.moves[key] = profile_key(rest[: -len(":session")])
        elif ":speaker:" in rest:
            scope, _, speaker = rest.partition(":speaker:")
            plan.ambiguous += ":speaker:" in speaker
            plan.moves[key] = profile_key(scope, speaker)
        else:
            plan.unknown.append(key)
    elif kind == "audit" and rest:
        head, _, tail = rest.rpartition(":")
        if isinstance(value, list) and head and tail.isdigit():
            plan.moves[key] = audit_chunk_key(_audit_log_id(head), int(tail))
            plan.ambiguous += tail.isdigit() and ":" in head and head.rpartition(":")[2].isdigit()
        elif isinstance(value, dict):
            plan.moves[key] = audit_head_key(_audit_log_id(rest))
        else:
            plan.unknown.append(key)
    elif kind == "fence" and rest:
        plan.moves[key] = fence_key(rest)
    elif kind == "snapshot" and rest:
        plan.moves[key] = snapshot_key(rest)
    elif kind == "doc" and ":" in rest:
        kb_id, _, document_id = rest.partition(":")
        plan.moves[key] = document_key(kb_id, document_id)
    else:
        plan.unknown.append(key)


async def migrate_storage(store: Bookkeeping) -> MigrationPlan | None:
    """Run the migration if the marker says it is needed; `store` must be a raw store (no first-use step)."""
    marker = await store.get(LAYOUT_KEY)
    if isinstance(marker, dict) and marker.get("version") == LAYOUT_VERSION:
        return None
    old_keys = [k for k in await store.keys("") if not k.startswith("v2/") and k not in (KB_CONFIGS_KEY, LAYOUT_KEY)]
    plan = MigrationPlan()
    values: dict[str, Any] = {}
    for key in old_keys:
        values[key] = await store.get(key)
        if values[key] is not None:
            plan_move(key, values[key], plan)
    for old, new in plan.moves.items():
        await store.set(new, values[old])
    for old in plan.moves:
        await store.delete(old)
    if plan.moves or plan.unknown:
        await AuditLog(store).append_many(INSTALLATION_KEY, [AuditEntry(
            operation=Operation.STORAGE_MIGRATION, target_type="storage", target_id=f"layout v{LAYOUT_VERSION}",
            chat_key=INSTALLATION_KEY, summary=MOVED(count=len(plan.moves)),
            meta={"moved": len(plan.moves), "ambiguous": plan.ambiguous, "left": len(plan.unknown)},
        )])
        log.info("[LongTermMemory] storage layout migrated: moved=%d ambiguous=%d left=%d", len(plan.moves),
                 plan.ambiguous, len(plan.unknown))
    await store.set(LAYOUT_KEY, {"version": LAYOUT_VERSION, "migrated_at": now_iso(), "moved": len(plan.moves)})
    return plan
