"""How an episode record sits in a LangBot vector store (its metadata and filters).

LangBot forwards metadata filters to each backend: Chroma takes them verbatim and
needs exactly one top-level key; Qdrant rebuilds them and cannot read `$and`. The
only form that works on both is one key with one operator, so composite
conditions are packed into one field (docs/HOST-FACTS.md, vector store filters):

- `user_key`       the isolation key (filter for search and listing);
- `speaker_key`    `<user_key>|<sender_id>` (filter for "this speaker in this space");
- `file_id`        `<user_key>#<episode_id>`: the host deletes by `file_id` (it has no
                   delete by id), and a packed id from another space cannot match;
- `uuid`, `text`   the episode id and content, the two fields fixed-schema stores keep.

The host's search returns no document text, so the content also lives in metadata.
Every record read back is checked for its `user_key` before it is returned.
"""

from __future__ import annotations

from typing import Any

from ..ports import IndexRecord

ROUTING_KEYS = frozenset({"user_key", "speaker_key", "file_id", "uuid", "text"})
HOST_KEY_PREFIX = "_langbot_"


def packed_file_id(space: str, record_id: str) -> str:
    return f"{space}#{record_id}"


def packed_speaker(space: str, speaker: str) -> str:
    return f"{space}|{speaker}"


def to_metadata(record: IndexRecord) -> dict[str, Any]:
    meta = dict(record.fields)
    meta.update(
        user_key=record.space,
        speaker_key=packed_speaker(record.space, record.speaker),
        file_id=packed_file_id(record.space, record.record_id),
        uuid=record.record_id,
        text=record.text,
    )
    return meta


def from_metadata(meta: Any, space: str, fallback_id: str = "") -> IndexRecord | None:
    """The record, or None when it is not of `space` (a foreign or damaged record: fail closed)."""
    if not isinstance(meta, dict) or meta.get("user_key") != space:
        return None
    fields = {k: v for k, v in meta.items() if k not in ROUTING_KEYS and not k.startswith(HOST_KEY_PREFIX)}
    record_id = str(meta.get("episode_id") or meta.get("uuid") or fallback_id)
    return IndexRecord(record_id, space, str(meta.get("sender_id") or ""),
                       str(meta.get("content") or meta.get("text") or ""), fields)


def space_filter(space: str) -> dict[str, Any]:
    return {"user_key": space}


def speaker_filter(space: str, speaker: str) -> dict[str, Any]:
    return {"speaker_key": packed_speaker(space, speaker)}


def record_filter(space: str, record_id: str) -> dict[str, Any]:
    return {"file_id": packed_file_id(space, record_id)}


def collection_filter(kb_id: str) -> dict[str, Any]:
    """Every record the host stored for this knowledge base (it adds this key on every upsert)."""
    return {"_langbot_knowledge_base_uuid": kb_id}
