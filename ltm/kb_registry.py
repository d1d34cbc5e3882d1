"""The installation's memory knowledge base (S8): registration, removal, settings, scopes.

One installation keeps one memory KB, recorded in the installation-wide `kb_configs`
record in plugin storage; every change to that record is serialized and fenced on
the installation space.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from ._fences import FenceRegistry
from ._storage import (
    KB_CONFIGS_KEY,
    JsonStore,
    document_prefix,
    draft_kb_prefix,
    draft_log_kb_prefix,
    lineage_kb_prefix,
)
from .episodes.store import EpisodeStore
from .errors import LTMError, NoKnowledgeBase, ValidationError
from .gate import WriteGate
from .identity import Identity, Isolation, MemoryScope
from .kb_settings import KBSettings
from .ports import HostDirectory
from .spaces import Space, SpaceKind
from .timefields import now_iso

log = logging.getLogger("LongTermMemory")


class KnowledgeBaseRegistry:
    def __init__(self, gate: WriteGate, store: JsonStore, fences: FenceRegistry, episodes: EpisodeStore,
                 directory: HostDirectory) -> None:
        self._gate = gate
        self._store = store
        self._fences = fences
        self._episodes = episodes
        self._directory = directory
        self._cache: dict[str, Any] | None = None
        self._gone: set[str] | None = None  # registered KBs LangBot no longer has (checked once per process)

    async def _record(self) -> dict[str, Any]:
        if self._cache is None:
            raw = await self._store.get(KB_CONFIGS_KEY, {})
            if not isinstance(raw, dict):
                raw = {}
            raw.setdefault("order", [])
            raw.setdefault("kbs", {})
            self._cache = raw
        return self._cache

    async def register(self, kb_id: str, raw_settings: Any) -> KBSettings:
        if not kb_id:
            raise ValidationError("knowledge base id is required")
        settings = KBSettings.parse(raw_settings)
        async with self._gate.write(None, Space.installation(), "kb_register") as tx:
            record = await self._record()
            others = [k for k in record["order"] if k != kb_id]
            stale = await self._stale(others, refresh=True)
            live = [k for k in others if k not in stale]
            if live:
                raise ValidationError(f"LongTermMemory already has a memory knowledge base ({live[0]}); "
                                      "one installation keeps one memory knowledge base")
            for old in stale:
                # A registration LangBot rolled back, or a removal that stopped part-way: the KB is gone on
                # the host, so its record must not block a new memory KB.
                tx.noted("kb_unregister", "knowledge_base", old, "stale registration dropped: LangBot no longer "
                         "has this knowledge base")
            new = {"order": [kb_id], "kbs": {kb_id: {**settings.to_dict(), "registered_at": now_iso()}}}
            await tx.call("storage write", lambda: self._store.set(KB_CONFIGS_KEY, new))
            self._cache = new
            self._gate.collection_registered(kb_id)
            tx.applied("kb_register", "knowledge_base", kb_id,
                       f"memory knowledge base registered ({settings.isolation.value} isolation)")
        log.info("[LongTermMemory] memory knowledge base registered kb=%s isolation=%s", kb_id,
                 settings.isolation.value)
        return settings

    async def unregister(self, kb_id: str) -> bool:
        """Delete the KB's vectors, document indexes, consolidation drafts and lineage, fences and config
        (F4). Never refused by a fence: the host removes the KB whatever the plugin answers."""
        async with self._gate.removing_collection(kb_id), \
                self._gate.write(None, Space.installation(), "kb_unregister", enforce_fence=False) as tx:
            record = await self._record()
            known = kb_id in record["kbs"]
            if known:
                # The configuration goes first: whatever stops the clean-up below, the removed KB is no
                # longer the memory KB (LangBot deletes its row whatever this hook answers).
                new = {"order": [k for k in record["order"] if k != kb_id],
                       "kbs": {k: v for k, v in record["kbs"].items() if k != kb_id}}
                await tx.call("storage write", lambda: self._store.set(KB_CONFIGS_KEY, new))
                self._cache = new
            try:
                await tx.call("vector delete", lambda: self._episodes.drop_collection(kb_id))
            except LTMError as exc:
                log.warning("[LongTermMemory] could not wipe vectors of kb=%s: %s", kb_id, exc.code)
            for fence in await self._fences.all():
                if fence.space.kind is SpaceKind.L2 and fence.space.kb_id == kb_id:
                    await tx.call("storage delete", partial(self._fences.clear, fence.space))
                    tx.noted("fence_clear", "fence", fence.space.key, "cleared because the knowledge base was removed")
            for key in await self._store.keys(document_prefix(kb_id)):
                await tx.call("storage delete", partial(self._store.delete, key))
            # Consolidation data of this collection only: pending drafts (they quote source texts),
            # closed-proposal logs and summary lineage (K5).
            try:
                cleared = 0
                for prefix in (draft_kb_prefix(kb_id), draft_log_kb_prefix(kb_id), lineage_kb_prefix(kb_id)):
                    for key in await self._store.keys(prefix):
                        await tx.call("storage delete", partial(self._store.delete, key))
                        cleared += 1
                if cleared:
                    tx.noted("draft_clear", "knowledge_base", kb_id,
                             f"{cleared} consolidation record(s) of the removed knowledge base deleted")
            except LTMError as exc:
                log.warning("[LongTermMemory] could not clear consolidation drafts of kb=%s: %s", kb_id, exc.code)
            tx.applied("kb_unregister", "knowledge_base", kb_id, "memory knowledge base removed with its vectors")
        log.info("[LongTermMemory] memory knowledge base removed kb=%s", kb_id)
        return known

    async def _stale(self, kb_ids: list[str], *, refresh: bool = False) -> set[str]:
        """Registered KBs that are gone: removed in this process, or absent from LangBot's list (asked
        once per process, or again when `refresh`; an unanswered or empty list proves nothing)."""
        gone = {k for k in kb_ids if self._gate.collection_removed(k)}
        if kb_ids and (self._gone is None or refresh):
            try:
                on_host = set(await self._directory.knowledge_base_ids())
            except LTMError:
                on_host = set()
            self._gone = {k for k in kb_ids if on_host and k not in on_host}
        return gone | {k for k in kb_ids if self._gone and k in self._gone}

    async def memory_kb(self) -> tuple[str, KBSettings] | None:
        record = await self._record()
        stale = await self._stale(list(record["order"]))
        for kb_id in record["order"]:
            if kb_id in stale:
                continue
            raw = record["kbs"].get(kb_id)
            if raw:
                return kb_id, KBSettings.parse(raw)
        return None

    async def settings(self, kb_id: str) -> KBSettings:
        record = await self._record()
        raw = record["kbs"].get(kb_id)
        if not raw:
            raise NoKnowledgeBase(f"knowledge base {kb_id} is not a LongTermMemory knowledge base")
        return KBSettings.parse(raw)

    async def scope_for(self, identity: Identity, kb_id: str | None = None) -> MemoryScope:
        """The scope of a turn. Without a memory KB, L1 still works; L2 calls raise NoKnowledgeBase."""
        if kb_id:
            return MemoryScope.for_identity(identity, (await self.settings(kb_id)).isolation, kb_id)
        found = await self.memory_kb()
        if found is None:
            return MemoryScope.for_identity(identity, Isolation.SESSION, "")
        return MemoryScope.for_identity(identity, found[1].isolation, found[0])
