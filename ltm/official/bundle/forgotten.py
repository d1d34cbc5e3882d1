"""The episodes the official plugin was asked to forget or delete, read from its audit log.

On LangBot 4.11.2 the official `forget` (its tool, its command) and its console's delete answer "deleted"
but leave the record in its store as it was: its delete matches a metadata field it never writes
(docs/OFFICIAL-PLUGIN.md, "Migration"). The extractor then reads such a record with its old status, often
`active`. The official audit log names every id it was asked to remove:

- `forget` (the tool and `!memory forget`), `delete` (the console's delete) and `deleted` (the console's
  status change to deleted): `target_id` is the episode's id;
- `delete_l2_bulk` (`!memory delete --speaker/--tag/...`): `metadata.episode_ids` lists the ids;
- a later `restore` (the console's status change to active) brings an id back.

The importer skips these records unless the operator asks for them (`include_forgotten`), and the dry run
lists each with the request that removed it. The official log keeps the newest 1,000 entries of a chat,
so a removal older than that is not known here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...secrets import redact_for_log
from .reading import ChatPart

REMOVING = frozenset({"forget", "delete", "deleted"})
BULK = "delete_l2_bulk"
RESTORING = "restore"


@dataclass(frozen=True)
class Removal:
    operation: str
    time: str

    @property
    def reason(self) -> str:
        when = f" on {self.time[:10]}" if self.time else ""
        return (f"the official plugin was asked to remove it ({self.operation}{when}, its audit log); not brought "
                "back unless you import with include_forgotten")


def removed_ids(chats: list[ChatPart]) -> dict[str, Removal]:
    """Episode id -> the last request that removed it, over every chat's audit log (an episode of a bot's
    shared space is removed from one chat's log), oldest request first so a later restore wins."""
    events: list[tuple[str, str, str]] = []  # (time, operation, id)
    for chat in chats:
        for raw in chat.audit:
            if not isinstance(raw, dict) or not isinstance(raw.get("operation"), str):
                continue
            operation, stamp = raw["operation"], str(raw.get("timestamp") or "")
            if operation in REMOVING or operation == RESTORING:
                events += [(stamp, operation, i) for i in _ids([raw.get("target_id")])]
            elif operation == BULK and isinstance(raw.get("metadata"), dict):
                events += [(stamp, operation, i) for i in _ids(raw["metadata"].get("episode_ids"))]
    removed: dict[str, Removal] = {}
    for stamp, operation, episode_id in sorted(events, key=lambda e: e[0]):
        if operation == RESTORING:
            removed.pop(episode_id, None)
        else:
            removed[episode_id] = Removal(redact_for_log(operation, 20), redact_for_log(stamp, 25))
    return removed


def _ids(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [i for i in items if isinstance(i, str) and i]


def record_id(raw: Any) -> str:
    """The official id of an `export l2` record, as the episode import reads it."""
    if not isinstance(raw, dict):
        return ""
    value = raw.get("id") or raw.get("episode_id")
    return value if isinstance(value, str) else ""
