"""Diagnostics: the health check (H), injection snapshots (I5), the double-recall note (I4)
and the list of known scopes an admin can choose from (M1).

The isolation probe asks the vector index itself (not the core's own re-check) whether
search, list and delete filtered on one space ever see or remove another space: the
point is to test the backend.
"""

from __future__ import annotations

import enum
import logging
import time
from dataclasses import dataclass
from typing import Any

from ._fences import FenceRegistry
from ._gate import WriteTx
from ._storage import JsonStore, audit_log_ids, scope_marker_key, scope_of_key, snapshot_key
from .errors import LTMError
from .identity import Isolation, MemoryScope, names_a_chat, user_key_for_session_key
from .kb_settings import EffectiveSettings, KBSettings, shown_value
from .ports import PROBE_TEXT, DescribedIndex, Embedder, HostDirectory, VectorIndex
from .spaces import INSTALLATION_KEY, Space, SpaceKind

log = logging.getLogger("LongTermMemory")
INJECTION_TTL_SECONDS = 300.0


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


@dataclass(frozen=True)
class KnownSpaces:
    """The installation's memory spaces as the plugin noted them (M1): every chat (L1 scope) that left
    a trace in plugin storage, and every L2 space of one KB, each with a chat that uses it ("" when
    only the space's own audit log names it). A space the plugin never noted is not here."""

    sessions: tuple[str, ...]
    l2: dict[str, str]  # user_key -> a scope_key that uses it


class Diagnostics:
    def __init__(self, store: JsonStore, fences: FenceRegistry, index: VectorIndex, embedder: Embedder,
                 directory: HostDirectory) -> None:
        self._store = store
        self._fences = fences
        self._index = index
        self._embedder = embedder
        self._directory = directory
        self._injected: dict[tuple[str, str], float] = {}
        self._noted: set[str] = set()

    # ------------------------------------------------------------------ health (H)
    async def health(self, found: tuple[str, KBSettings] | None, scope: MemoryScope | None,
                     pipeline_kbs: list[str] | None, described: EffectiveSettings | None = None) -> HealthReport:
        if found is None:
            return HealthReport([HealthItem("kb", Level.RED, "no memory knowledge base configured")])
        kb_id, settings = found
        items: list[HealthItem] = []
        try:
            host_kbs = set(await self._directory.knowledge_base_ids())
        except LTMError:
            host_kbs = set()
        if host_kbs and kb_id not in host_kbs:
            items.append(HealthItem("kb", Level.RED,
                                    f"memory knowledge base {kb_id} is registered but LangBot no longer has it"))
        else:
            items.append(HealthItem("kb", Level.GREEN,
                                    f"memory knowledge base {kb_id} registered ({settings.isolation.value} isolation)"))
        if pipeline_kbs is not None:
            if kb_id in pipeline_kbs:
                items.append(HealthItem("pipeline", Level.GREEN, "memory knowledge base is attached to this pipeline: "
                                        "memories are injected before each reply"))
            else:
                items.append(HealthItem("pipeline", Level.AMBER, "memory knowledge base is not attached to this "
                                        "pipeline: no automatic memory here (tools still work)"))
        vector = None
        try:
            vectors = await self._embedder.embed(settings.embedding_model_uuid, [PROBE_TEXT])
            vector = vectors[0] if vectors else None
        except LTMError as exc:
            items.append(HealthItem("embedding", Level.RED, f"embedding model does not answer: {exc}"))
        else:
            if vector:
                items.append(HealthItem("embedding", Level.GREEN,
                                        f"embedding model answers ({len(vector)} dimensions)"))
            else:
                items.append(HealthItem("embedding", Level.RED, "embedding model returned an empty vector"))
        if vector:
            items.extend(await self._isolation(kb_id, vector))
        if scope is not None:
            fenced = [f for f in await self.fences_of(scope.with_kb(scope.kb_id or kb_id)) if f is not None]
            if fenced:
                items.append(HealthItem("fence", Level.AMBER, "writes paused by a fence since " + fenced[0].since))
            else:
                items.append(HealthItem("fence", Level.GREEN, "no write fence on this scope"))
        if described is not None:
            items.append(settings_item(described))
        return HealthReport(items)

    async def _isolation(self, kb_id: str, vector: list[float]) -> list[HealthItem]:
        """The two-probe test decides (B3); the store item then says what this store can and cannot do."""
        try:
            problems = await self._index.probe_isolation(kb_id, vector)
        except LTMError as exc:
            problems = [f"probe failed: {exc}"]
        profile = self._index.profile(kb_id) if isinstance(self._index, DescribedIndex) else None
        items: list[HealthItem] = []
        if any("another scope" in p for p in problems):
            items.append(HealthItem("isolation", Level.RED, "LEAK: " + "; ".join(problems) + ". Memory on this "
                                    "vector store is not safe: another chat's memories could be shown."))
        elif problems:
            items.append(HealthItem("isolation", Level.RED, "the vector store failed the isolation probe: "
                                    + "; ".join(problems)))
        else:
            items.append(HealthItem("isolation", Level.GREEN, "search, list and delete stay inside one scope"))
        if profile is not None:
            if profile.cannot:
                items.append(HealthItem("store", Level.AMBER, f"vector store {profile.kind}: works with limits. "
                                        "Cannot: " + "; ".join(profile.cannot) + ". Can: " + "; ".join(profile.can)))
            else:
                items.append(HealthItem("store", Level.GREEN, f"vector store {profile.kind}: "
                                        + "; ".join(profile.can)))
        return items

    async def fences_of(self, scope: MemoryScope) -> list[Any]:
        spaces = [Space.l1(scope.scope_key)]
        if scope.kb_id:
            spaces.append(Space.l2(scope.kb_id, scope.user_key))
        return [await self._fences.get(space) for space in spaces]

    # ------------------------------------------------------------------ injection snapshots (I5)
    async def save_snapshot(self, scope: MemoryScope, snapshot: dict[str, Any]) -> None:
        """Latest injection of a scope. Diagnostic data, not memory: no fence and no audit either way."""
        await self._store.set(snapshot_key(scope.scope_key), snapshot)

    async def snapshot(self, scope: MemoryScope) -> dict[str, Any] | None:
        value = await self._store.get(snapshot_key(scope.scope_key))
        return value if isinstance(value, dict) else None

    async def snapshot_shows(self, scope: MemoryScope, sender_id: str, episode_ids: set[str]) -> bool:
        """Whether the scope's injection snapshot shows `sender_id` speaking or quotes one of `episode_ids`."""
        snapshot = await self.snapshot(scope)
        if snapshot is None:
            return False
        raw_speaker = snapshot.get("speaker")
        speaker: dict[str, Any] = raw_speaker if isinstance(raw_speaker, dict) else {}
        quoted = {str(e.get("id")) for e in snapshot.get("episodes") or [] if isinstance(e, dict)}
        return str(speaker.get("id") or "") == sender_id or bool(quoted & episode_ids)

    async def drop_snapshot(self, tx: WriteTx, scope: MemoryScope, sender_id: str, episode_ids: set[str]) -> bool:
        """Inside the scope's L1 write (a person's erasure, audited there): delete the injection snapshot
        when it shows that person."""
        if not await self.snapshot_shows(scope, sender_id, episode_ids):
            return False
        await tx.call("storage delete", lambda: self._store.delete(snapshot_key(scope.scope_key)))
        tx.applied(tx.operation, "snapshot", scope.scope_key, "injection snapshot removed: it showed this person")
        return True

    # ------------------------------------------------------------------ double recall (I4)
    def note_injection(self, scope: MemoryScope, text: str) -> None:
        """This turn's memories were injected: the runner's automatic re-retrieval of the memory KB
        with the same message is answered empty, once."""
        now = time.monotonic()
        self._injected = {k: t for k, t in self._injected.items() if now - t < INJECTION_TTL_SECONDS}
        self._injected[(scope.scope_key, " ".join(text.split()))] = now

    def consume_injection(self, scope: MemoryScope, text: str) -> bool:
        stamp = self._injected.pop((scope.scope_key, " ".join(text.split())), None)
        return stamp is not None and time.monotonic() - stamp < INJECTION_TTL_SECONDS

    # ------------------------------------------------------------------ known scopes (M1)
    async def note_scope(self, scope: MemoryScope) -> None:
        """Remember that a session scope wrote memory, once per scope and process. Bookkeeping only:
        a failure is logged, never reported (the change itself is already stored and audited)."""
        if scope.scope_key in self._noted or not names_a_chat(scope.scope_key):
            return
        try:
            await self._store.set(scope_marker_key(scope.scope_key), {"user_key": scope.user_key})
        except LTMError as exc:
            log.warning("[LongTermMemory] scope marker not written scope=%s: %s", scope.scope_key, exc.code)
            return
        self._noted.add(scope.scope_key)

    async def known_scopes(self) -> list[str]:
        scopes = {scope_of_key(key) for key in await self._store.keys("")}
        return sorted(s for s in scopes if s and s != INSTALLATION_KEY)

    async def known_spaces(self, kb_id: str, isolation: Isolation) -> KnownSpaces:
        """Every chat noted so far and every L2 space of `kb_id`: the spaces its chats derive in
        `isolation`, and every space of that KB with an audit log (every L2 write is audited in its
        space, so a space that ever held a record of this KB has one)."""
        sessions = await self.known_scopes()
        l2: dict[str, str] = {}
        for scope_key in sessions:
            l2.setdefault(user_key_for_session_key(scope_key, isolation), scope_key)
        if kb_id:
            for log_id in audit_log_ids(await self._store.keys("")):
                space = Space.from_key(log_id)
                if space is not None and space.kind is SpaceKind.L2 and space.kb_id == kb_id:
                    l2.setdefault(space.user_key, "")
        return KnownSpaces(tuple(sessions), l2 if kb_id else {})

    async def holds_memories(self, kb_id: str, spaces: KnownSpaces) -> str | None:
        """The first known L2 space of `kb_id` that holds a record (one page of one record each), or None."""
        for user_key in sorted(spaces.l2):
            page = await self._index.page(kb_id, user_key, 1, 0)
            if any(r.space == user_key for r in page.records):
                return user_key
        return None


def settings_item(described: EffectiveSettings) -> HealthItem:
    """Which settings the installation runs with: the creation settings, and each override."""
    changed = described.overridden
    if not changed:
        return HealthItem("settings", Level.GREEN, "the knowledge base's creation settings apply (no overrides)")
    shown = "; ".join(f"{v.name} = {shown_value(v.value)} (created {shown_value(v.creation)})" for v in changed)
    return HealthItem("settings", Level.GREEN, f"{len(changed)} setting(s) overridden for this installation: {shown}")

