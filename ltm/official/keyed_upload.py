"""A KB upload in the official LongTermMemory plugin's form: a JSON array of records (or one record, or an
export's envelope), each naming its memory space by `user_key` (E10).

Each record goes to the memory space its `user_key` names when this KB derives that space for one of the
host's bots (`scope_of_space_key`); any other key (the official default "imported", another bot's, a chat
key in bot isolation) is skipped and reported, never written elsewhere. The records are then read by this
plugin's own import rules (`episodes/transfer.py`: `parse_items`) and written one gated write per space
(`EpisodeTransfer.ingest_parts`), so a keyed upload is deleted, de-duplicated and audited like any document.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..episodes.transfer import EpisodeTransfer, ImportRecord, ImportResult, episode_list, parse_items
from ..errors import ValidationError
from ..host_values import escape_bot_uuid
from ..identity import Isolation, MemoryScope, scope_of_space_key
from ..kb_settings import KBSettings
from ..secrets import redact_for_log
from ..skipped import SkippedRecord
from ..timefields import format_utc, parse_naive_as_utc

UNNAMED_SPACE = "imported"  # the official upload's user_key for a record that names none


def keyed_items(payload: Any) -> tuple[list[Any], list[str]]:
    """An upload in the official plugin's form: a list of records (or one record), each naming its memory
    space by `user_key`; an export's envelope (`{"user_key", "episodes"}`) gives every record its key.
    Returns the records and the key each names ("" when it is not a string)."""
    default: Any = UNNAMED_SPACE
    if isinstance(payload, dict) and "episodes" in payload:
        default = payload.get("user_key") or UNNAMED_SPACE
        items = episode_list(payload)
    else:
        items = episode_list([payload] if isinstance(payload, dict) else payload)
    keys = []
    for item in items:
        key = item.get("user_key") or default if isinstance(item, dict) else default
        keys.append(key if isinstance(key, str) else "")  # as given: "g1 " and "g1" are two chats
    return [_naive_stamp_as_utc(item) for item in items], keys


def _naive_stamp_as_utc(item: Any) -> Any:
    """The official upload read a `timestamp` without a zone as UTC, and its files rely on it; any other
    time field keeps our rule (a zone is required)."""
    if not isinstance(item, dict) or not isinstance(item.get("timestamp"), str) or not item["timestamp"].strip():
        return item
    try:
        stamp = format_utc(parse_naive_as_utc(item["timestamp"], "timestamp"))
    except ValidationError:
        return item  # refused with its reason when the record is read
    return {**item, "timestamp": stamp}


def _no_space(key: str, isolation: Isolation) -> str:
    shown = redact_for_log(key, 60) or "(none)"
    if isolation is Isolation.BOT:
        return f"user_key {shown!r} is not a memory space of this knowledge base (bot isolation: bot:<bot uuid>)"
    return (f"user_key {shown!r} is not a memory space of this knowledge base (session isolation: "
            "<bot uuid>:group_<id> or <bot uuid>:person_<id>)")


def _bot_of(scope: MemoryScope) -> str:
    if scope.identity is not None:
        return scope.identity.bot_uuid
    return scope.space_key.removeprefix("bot:")


async def ingest_keyed(transfer: EpisodeTransfer, kb_id: str, settings: KBSettings, payload: Any, document_id: str,
                       bots: Collection[str] | None = None) -> list[ImportResult]:
    """Write an upload in the official plugin's form (`keyed_items`) as one document of `kb_id`: each record
    in the space its `user_key` names when this KB derives that space (`scope_of_space_key`) for one of
    `bots` (the host's bot uuids as it gives them; None: not known). The first result carries every
    skipped record."""
    items, keys = keyed_items(payload)
    batch = parse_items(items, source="document", default_source_ref=f"document:{document_id}")
    skipped = list(batch.skipped)
    ours = {escape_bot_uuid(b) for b in bots} if bots is not None else None
    grouped: dict[str, tuple[MemoryScope, list[ImportRecord]]] = {}
    for record in batch.records:
        key = keys[record.index]
        held = grouped.get(key)
        scope = held[0] if held else scope_of_space_key(key, kb_id, settings.isolation)
        if scope is None:
            skipped.append(SkippedRecord(record.index, _no_space(key, settings.isolation)))
        elif ours is not None and _bot_of(scope) not in ours:
            skipped.append(SkippedRecord(record.index, f"user_key {redact_for_log(key, 60)!r} names a bot "
                                                       "this LangBot does not have"))
        else:
            grouped.setdefault(key, (scope, []))[1].append(record)
    skipped.sort(key=lambda r: r.position)
    if not grouped:
        return [ImportResult([], skipped=skipped)]
    return await transfer.ingest_parts(settings, list(grouped.values()), document_id, skipped)
