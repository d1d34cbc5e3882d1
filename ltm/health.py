"""Health check (SPEC H): the same probe for `!memory health` and the console.

The isolation probe writes two throwaway records under two fresh `user_key`s and
asks the host, with exactly the filters the service uses, whether search, list
and delete filtered on one key ever see or remove the other. It talks to the
host port directly (not through the service's scope re-check) because the point
is to test the backend's own filtering. Probes are removed by their packed
`file_id`, which every backend keeps.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from typing import Any

from .episodes import scoped_record_id
from .errors import LTMError
from .host_port import HostPort
from .kb_config import KBSettings

PROBE_TEXT = "LongTermMemory isolation probe"


class Level(str, enum.Enum):
    GREEN = "green"
    AMBER = "amber"
    RED = "red"


@dataclass(frozen=True)
class HealthItem:
    key: str
    level: Level
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "level": self.level.value, "message": self.message}


@dataclass(frozen=True)
class HealthReport:
    items: list[HealthItem]

    @property
    def level(self) -> Level:
        levels = {i.level for i in self.items}
        return Level.RED if Level.RED in levels else Level.AMBER if Level.AMBER in levels else Level.GREEN

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level.value, "items": [i.to_dict() for i in self.items]}


async def check_embedding(port: HostPort, settings: KBSettings) -> tuple[HealthItem, list[float] | None]:
    try:
        vectors = await port.embed(settings.embedding_model_uuid, [PROBE_TEXT])
        vector = vectors[0] if vectors else []
    except LTMError as exc:
        return HealthItem("embedding", Level.RED, f"embedding model does not answer: {exc}"), None
    if not vector:
        return HealthItem("embedding", Level.RED, "embedding model returned an empty vector"), None
    return HealthItem("embedding", Level.GREEN, f"embedding model answers ({len(vector)} dimensions)"), vector


async def check_isolation(port: HostPort, kb_id: str, vector: list[float]) -> HealthItem:
    run = uuid.uuid4().hex[:12]
    keys = {"a": f"health-probe:{run}:a", "b": f"health-probe:{run}:b"}
    ids = {side: str(uuid.uuid4()) for side in keys}
    file_ids = [scoped_record_id(keys[s], ids[s]) for s in keys]

    def meta(side: str) -> dict[str, Any]:
        return {"episode_id": ids[side], "uuid": ids[side], "file_id": scoped_record_id(keys[side], ids[side]),
                "user_key": keys[side], "content": PROBE_TEXT, "text": PROBE_TEXT, "status": "archived",
                "source": "health_probe"}

    problems: list[str] = []
    try:
        await port.vector_upsert(kb_id, [ids["a"], ids["b"]], [vector, vector], [meta("a"), meta("b")],
                                 [PROBE_TEXT, PROBE_TEXT])
        found = await port.vector_search(kb_id, vector, 10, {"user_key": keys["a"]})
        found_ids = {str(r.get("id")) for r in found}
        if ids["b"] in found_ids:
            problems.append("search filtered on one scope returned another scope's record")
        listing = await port.vector_list(kb_id, {"user_key": keys["a"]}, 10, 0)
        items = listing.get("items") or []
        if ids["b"] in {str(i.get("id")) for i in items}:
            problems.append("list filtered on one scope returned another scope's record")
        if not any((i.get("metadata") or {}).get("user_key") == keys["a"] for i in items):
            problems.append("the store dropped the record's scope metadata")
        await port.vector_delete(kb_id, filters={"user_key": keys["a"]})
        remaining = await port.vector_list(kb_id, {"file_id": file_ids[1]}, 10, 0)
        if ids["b"] not in {str(i.get("id")) for i in remaining.get("items") or []}:
            problems.append("delete filtered on one scope removed another scope's record")
    except LTMError as exc:
        problems.append(f"probe failed: {exc}")
    finally:
        try:
            await port.vector_delete(kb_id, file_ids=file_ids)
        except LTMError:
            problems.append("probe records could not be removed")
    if problems:
        return HealthItem(
            "isolation", Level.RED,
            "LEAK: " + "; ".join(problems) + ". This vector store does not keep or filter plugin metadata "
            "(fixed-schema stores such as Milvus or pgvector); use Chroma, Qdrant or SeekDB.",
        )
    return HealthItem("isolation", Level.GREEN, "search, list and delete stay inside one scope")
