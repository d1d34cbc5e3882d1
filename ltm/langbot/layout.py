"""How an episode record sits in a LangBot vector store (record layout 2).

Every one of LangBot 4.11.2's six vector backends keeps, returns and can filter on
`file_id`; Milvus and pgvector keep nothing else but `text` and `uuid`, and Valkey
Search filters on `file_id` alone (docs/HOST-FACTS.md 6.3, 6.4, 12). So isolation
rests on `file_id`, and everything needed to rebuild a record travels in `text`:

- `file_id`  the memory space's token, `ltm2-<sha256 of the space, hex>`: one value
             per space, lower-case hex only (Milvus quotes it unescaped, Valkey's tag
             index folds case and splits on commas), 69 characters (the limit is 255);
- `uuid`     `<space token>.<episode id>`: a single record's key for get and delete;
             it names the space too, so a delete by `uuid` cannot reach another space
             (insert-only stores also use the second key `<...>.b`, see `record_key`);
- `text`     the whole record, serialized (`{"ltm": 2, "space": ..., "content": ...}`);
- record id  a UUID derived from `uuid` (Qdrant takes UUIDs only): a rewrite of the
             same episode hits the same id, and no two spaces ever share one.

Backends that keep plugin metadata also get `user_key` and `speaker_key =
<user_key>|<sender>` (a one-key filter for "this speaker in this space", which the probe
uses to learn whether the store filters on metadata). The episode's own fields are not
repeated as metadata: everything is read from `text`, and a store that keeps metadata
(Chroma keeps one row per key and record) pays for every extra key on every row a search
returns. Records written before that still carry them; reads ignore them. The searchable
content goes to the host as the record's document, which is what full-text search matches.

A record read back is used only when its `file_id` is the asked space's token and its
serialized `text` names the same space (fail closed). Records of layout 1
(`file_id = <user_key>#<episode id>`, fields as metadata) are recognized for the
migration only (`legacy_record`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..ports import IndexRecord
from ..timefields import newest_per_id

LAYOUT = 2
TOKEN_PREFIX = "ltm2-"
ALT_SUFFIX = ".b"  # the second key of a record on insert-only stores (see record_key)
GONE_SUFFIX = "-gone"  # a space's graveyard: where a record is moved to be deleted on file_id-only stores
HOST_KEY_PREFIX = "_langbot_"
FLAT_ROUTING_KEYS = frozenset({"user_key", "speaker_key", "file_id", "uuid", "text", "ltm_layout"})
_RECORD_NAMESPACE = uuid.UUID("6f1d3c52-8f0e-4c1b-9a59-2f7e4b8d0c11")
_LEGACY_FILE_ID = re.compile(r"^(?P<space>.+)#(?P<id>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                             r"[0-9a-fA-F]{12})$")


@dataclass(frozen=True)
class LegacyPage:
    """Records of layout 1, each with the key that deletes exactly it (what the core's layout
    migration reads, `ltm/migrations/layout.py`)."""

    records: list[tuple[IndexRecord, str]]
    scanned: int  # rows looked at (of any layout)
    more: bool


@functools.lru_cache(maxsize=4096)  # every row read back is checked against its space's token
def space_token(space: str) -> str:
    digest = hashlib.sha256(b"ltm-space\x00" + space.encode("utf-8")).hexdigest()
    return TOKEN_PREFIX + digest


def gone_token(space: str) -> str:
    return space_token(space) + GONE_SUFFIX


def record_key(space: str, record_id: str, *, alt: bool = False) -> str:
    """The `uuid` metadata value of one record. Insert-only stores keep a record under one of two
    keys: a change writes the new row under the other key before the old row is deleted, so no
    lost answer or cancellation between the two steps can lose the record."""
    return f"{space_token(space)}.{record_id}" + (ALT_SUFFIX if alt else "")


def record_keys(space: str, record_id: str) -> tuple[str, str]:
    return record_key(space, record_id), record_key(space, record_id, alt=True)


def is_alt(meta: Any) -> bool:
    return isinstance(meta, dict) and str(meta.get("uuid") or "").endswith(ALT_SUFFIX)


def host_id(space: str, record_id: str, *, alt: bool = False) -> str:
    """The id the host stores the record under."""
    return str(uuid.uuid5(_RECORD_NAMESPACE, record_key(space, record_id, alt=alt)))


def packed_speaker(space: str, speaker: str) -> str:
    return f"{space}|{speaker}"


def serialize(record: IndexRecord) -> str:
    payload = {"ltm": LAYOUT, "space": record.space_key, "id": record.record_id, "speaker": record.speaker,
               "content": record.text, "fields": dict(record.fields)}
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def to_metadata(record: IndexRecord, *, gone: bool = False, alt: bool = False) -> dict[str, Any]:
    """Metadata of one record; `gone=True` files it under the space's graveyard instead."""
    return dict(
        user_key=record.space_key,
        speaker_key=packed_speaker(record.space_key, record.speaker),
        file_id=gone_token(record.space_key) if gone else space_token(record.space_key),
        uuid=record_key(record.space_key, record.record_id, alt=alt),
        text=serialize(record),
        ltm_layout=LAYOUT,
    )


def parse(meta: Any) -> IndexRecord | None:
    """The record a layout-2 row holds, whatever space it is in; None for anything else."""
    if not isinstance(meta, dict):
        return None
    raw = meta.get("text")
    if not isinstance(raw, str) or not raw.startswith('{"ltm":'):
        return None
    try:
        payload = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(payload, dict) or payload.get("ltm") != LAYOUT:
        return None
    space, record_id, fields = payload.get("space"), payload.get("id"), payload.get("fields")
    if not isinstance(space, str) or not space or not isinstance(record_id, str) or not record_id:
        return None
    if meta.get("file_id") != space_token(space) or meta.get("uuid") not in record_keys(space, record_id):
        return None  # the routing fields disagree with the payload: damaged or forged
    return IndexRecord(record_id, space, str(payload.get("speaker") or ""), str(payload.get("content") or ""),
                       fields if isinstance(fields, dict) else {})


def row_record_id(meta: Any, space: str) -> str | None:
    """The record id a layout-2 row of `space` is filed under, read from its routing fields alone (no
    decoding of `text`); None when the row is not filed under that space. `from_metadata` still checks
    the payload when the row is decoded."""
    if not isinstance(meta, dict):
        return None
    token = space_token(space)
    key = meta.get("uuid")
    if meta.get("file_id") != token or not isinstance(key, str) or not key.startswith(token + "."):
        return None
    record_id = key[len(token) + 1 :]
    if record_id.endswith(ALT_SUFFIX):
        record_id = record_id[: -len(ALT_SUFFIX)]
    return record_id or None


def from_metadata(meta: Any, space: str) -> IndexRecord | None:
    """The record, or None when it is not a layout-2 record of `space` (fail closed)."""
    record = parse(meta)
    return record if record is not None and record.space_key == space else None


def status_changed_at(record: IndexRecord) -> str:
    return str(record.fields.get("status_changed_at") or record.fields.get("timestamp") or "")


def newest(records: Iterable[IndexRecord]) -> list[IndexRecord]:
    """One record per id, the most recently changed one."""
    return newest_per_id(records, lambda r: r.record_id, status_changed_at)


# ----------------------------------------------------------------------------- filters
def space_filter(space: str) -> dict[str, Any]:
    return {"file_id": space_token(space)}


def speaker_filter(space: str, speaker: str) -> dict[str, Any]:
    return {"speaker_key": packed_speaker(space, speaker)}


def keys_filter(space: str, record_ids: Iterable[str]) -> dict[str, Any]:
    """Every row of these records, under either of their keys."""
    return {"uuid": {"$in": [key for r in record_ids for key in record_keys(space, r)]}}


def exact_keys_filter(keys: Iterable[str]) -> dict[str, Any]:
    listed = list(keys)
    return {"uuid": listed[0]} if len(listed) == 1 else {"uuid": {"$in": listed}}


def collection_filter(kb_id: str) -> dict[str, Any]:
    """Every record the host stored for this knowledge base (it adds this key on every upsert;
    only stores that keep plugin metadata can filter on it)."""
    return {"_langbot_knowledge_base_uuid": kb_id}


# ----------------------------------------------------------------------------- layout 1
def legacy_record(meta: Any, row_id: str = "") -> tuple[IndexRecord, str] | None:
    """A record written by layout 1 (`file_id = <user_key>#<episode id>`) and its `file_id`, or None.

    Stores that keep metadata still have every field; fixed-schema stores kept only `text`
    (the content), `file_id` and `uuid`, so the record comes back with its content alone."""
    if not isinstance(meta, dict) or meta.get("ltm_layout") == LAYOUT:
        return None
    file_id = meta.get("file_id")
    if not isinstance(file_id, str):
        return None
    match = _LEGACY_FILE_ID.match(file_id)
    if match is None:
        return None
    space, record_id = match.group("space"), match.group("id")
    if meta.get("user_key") not in (None, space):
        return None
    fields = {k: v for k, v in meta.items()
              if k not in FLAT_ROUTING_KEYS and not k.startswith(HOST_KEY_PREFIX)}
    fields.setdefault("episode_id", record_id)
    text = str(meta.get("content") or meta.get("text") or "")
    fields.setdefault("content", text)
    return IndexRecord(record_id, space, str(meta.get("sender_id") or ""), text, fields), file_id


def legacy_deletable(file_id: str) -> bool:
    """Milvus puts a deleted `file_id` between double quotes unescaped: never send one with a quote
    or a backslash (it would change the delete expression)."""
    return '"' not in file_id and "\\" not in file_id and len(file_id) <= 255
