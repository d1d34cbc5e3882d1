"""The installation's memory knowledge base (S8): registration, removal, settings, scopes.

One installation keeps one memory KB, recorded in the installation-wide `kb_configs`
record in plugin storage; every change to that record is serialized and fenced on
the installation space. Creating the KB also prepares its vector store (a probe with a
real vector, so the first call on a new collection is a write of the model's dimension).
Every L2 operation starts with `open` (or `open_kb`): the KB's settings, and its records
moved to the current record layout first (`migrations/layout.py`, once per process).
"""

from __future__ import annotations

import asyncio
import copy
import logging
from functools import partial
from typing import Any

from ._fences import FenceRegistry
from ._gate import WriteGate, WriteTx, resend
from ._storage import (
    KB_CONFIGS_KEY,
    SNAPSHOT_PREFIX,
    JsonStore,
    document_prefix,
    draft_kb_prefix,
    draft_log_kb_prefix,
    layout_marker_key,
    lineage_kb_prefix,
    word_index_kb_prefix,
)
from .episodes.store import EpisodeStore
from .errors import HostError, HostFailure, LTMError, NoKnowledgeBase, UnrecordedChange, ValidationError
from .identity import ISOLATION, Identity, Isolation, MemoryScope
from .kb_settings import EffectiveSettings, KBSettings, describe, effective
from .migrations.layout import LayoutMigrations
from .operations import Operation
from .ports import PROBE_TEXT, DescribedIndex, HostDirectory, StoreProfile, VectorIndex
from .spaces import Space, SpaceKind
from .timefields import now_iso
from .wording import Phrase

log = logging.getLogger("LongTermMemory")
# A whole record or a delete of the KB's removal or withdrawal, re-sent this many times: LangBot removes
# (or rolls back) the KB whatever the plugin answers, so those writes cannot wait for an admin.
RESEND = 3
REGISTERED = Phrase("audit.kb_registered", "memory knowledge base registered ({isolation} isolation)")
WITHDRAWN = Phrase("audit.kb_registration_withdrawn", "registration withdrawn: {reason}")
STALE_DROPPED = Phrase("audit.kb_stale_dropped", "stale registration dropped: LangBot no longer has this "
                       "knowledge base")
REMOVED = Phrase("audit.kb_removed", "memory knowledge base removed with its vectors")
ORPHAN_FENCE_CLEARED = Phrase("audit.fence_cleared_kb_removed", "cleared: its knowledge base was removed")
DATA_CLEARED = Phrase("audit.kb_data_cleared", "documents, drafts and lineage records of the removed knowledge base "
                      "deleted: {count}")
DATA_CLEARED_LEFT = Phrase("audit.kb_data_cleared_left", "documents, drafts and lineage records of the removed "
                           "knowledge base deleted: {count}; left (never read again): {left}")


class KnowledgeBaseRegistry:
    def __init__(self, gate: WriteGate, store: JsonStore, fences: FenceRegistry, episodes: EpisodeStore,
                 index: VectorIndex, layouts: LayoutMigrations, directory: HostDirectory) -> None:
        self._gate = gate
        self._store = store
        self._fences = fences
        self._episodes = episodes
        self._index = index
        self._layouts = layouts
        self._directory = directory
        self._cache: dict[str, Any] | None = None
        self._gone: set[str] | None = None  # registered KBs LangBot no longer has (checked once per process)
        # Parsed settings per KB, valid while its stored dict is the same object (every change makes a new one):
        # a turn reads them three times.
        self._parsed: dict[str, tuple[Any, KBSettings]] = {}

    async def _record(self) -> dict[str, Any]:
        if self._cache is None:
            raw = await self._store.get(KB_CONFIGS_KEY, {})
            if not isinstance(raw, dict):
                raw = {}
            raw.setdefault("order", [])
            raw.setdefault("kbs", {})
            self._cache = raw
        return self._cache

    async def configuration(self) -> dict[str, Any]:
        """A copy of the stored configuration record (to undo a registration with)."""
        return copy.deepcopy(await self._record())

    async def register(self, kb_id: str, raw_settings: Any) -> KBSettings:
        """Record the memory KB, then prepare its vector store. LangBot deletes the KB again when this
        fails or is cancelled, so a registration that does not finish is withdrawn (D6)."""
        previous = await self.configuration()
        settings = await self._record_registration(kb_id, raw_settings)
        try:
            await self._layouts.mark_current(kb_id)
            await self._prepare_store(kb_id, settings)
        except BaseException as exc:
            reason = "the vector store could not be prepared" if isinstance(exc, LTMError) else "creation was cancelled"
            await asyncio.shield(self.withdraw(kb_id, previous, reason))
            raise
        return settings

    async def _prepare_store(self, kb_id: str, settings: KBSettings) -> StoreProfile | None:
        """Probe the store with a real vector, so the first call on a new collection is a write of the
        embedding model's dimension, and the index knows what the store can do. A probe that cannot run
        raises HostError (the registration is then withdrawn)."""
        if not isinstance(self._index, DescribedIndex):
            return None
        try:
            vector = (await self._episodes.embed(settings.embedding_model_uuid, [PROBE_TEXT]))[0]
            return await self._index.prepare(kb_id, vector)
        except LTMError as exc:
            # A Milvus collection created by any other call gets the host's default dimension for ever.
            log.warning("[LongTermMemory] could not prepare the vector store of kb=%s: %s", kb_id, exc.code)
            raise HostError(f"the memory knowledge base cannot be used: its vector store could not be prepared "
                            f"({exc.message}). LangBot removes it again; create it once more when the "
                            "embedding model and the vector store answer") from None

    async def _record_registration(self, kb_id: str, raw_settings: Any) -> KBSettings:
        if not kb_id:
            raise ValidationError("knowledge base id is required")
        settings = KBSettings.parse_creation(raw_settings)
        attempted, previous = False, {}
        try:
            async with self._gate.write(None, Space.installation(), Operation.KB_REGISTER) as tx:
                record = await self._record()
                previous = copy.deepcopy(record)
                others = [k for k in record["order"] if k != kb_id]
                stale = await self._stale(others, refresh=True)
                live = [k for k in others if k not in stale]
                if live:
                    raise ValidationError(f"LongTermMemory already has a memory knowledge base ({live[0]}); "
                                          "one installation keeps one memory knowledge base")
                for old in stale:
                    # A registration LangBot rolled back, or a removal that stopped part-way: the KB is gone on
                    # the host, so its record must not block a new memory KB.
                    tx.noted(Operation.KB_UNREGISTER, "knowledge_base", old, STALE_DROPPED())
                await self._clear_orphan_fences(tx, keep=kb_id)
                new = {"order": [kb_id], "kbs": {kb_id: {**settings.to_dict(), "registered_at": now_iso()}}}
                attempted = True
                await tx.set(KB_CONFIGS_KEY, new)
                self._cache = new
                self._gate.kb_registered(kb_id)
                self._gate.kb_isolation(kb_id, settings.isolation)
                tx.applied(Operation.KB_REGISTER, "knowledge_base", kb_id,
                           REGISTERED(isolation=ISOLATION[settings.isolation]()))
        except BaseException as exc:
            if not attempted:
                raise
            # LangBot deletes the KB again when this hook fails, so the registration is withdrawn too.
            withdrawn = await asyncio.shield(self.withdraw(kb_id, previous, "registration did not finish"))
            if withdrawn and isinstance(exc, UnrecordedChange):  # its "was applied" is no longer true
                raise HostError("the memory knowledge base cannot be registered: the installation's audit log "
                                "did not take its entry. Nothing was kept, LangBot removes the knowledge base "
                                "again, and installation writes are paused until an admin checks the log and "
                                "clears the fence") from None
            raise
        log.info("[LongTermMemory] memory knowledge base registered kb=%s isolation=%s", kb_id,
                 settings.isolation.value)
        return settings

    async def withdraw(self, kb_id: str, previous: dict[str, Any], reason: str) -> bool:
        """Undo a registration whose hook fails (LangBot rolls the KB back): the configuration record goes
        back to `previous`. True when the stored record is known to be `previous` again; never raises an
        LTMError (the caller reports its own error)."""
        if kb_id not in previous.get("kbs", {}):
            self._gate.mark_removed(kb_id)
        try:
            async with self._gate.write(None, Space.installation(), Operation.KB_REGISTER, enforce_fence=False) as tx:
                self._cache = None  # the failed write may or may not have landed: read what is stored
                if await self._record() == previous:
                    return True
                await tx.set(KB_CONFIGS_KEY, previous, attempts=RESEND)
                self._cache = previous
                tx.applied(Operation.KB_REGISTER_ROLLBACK, "knowledge_base", kb_id, WITHDRAWN(reason=reason))
            return True
        except LTMError as exc:
            log.error("[LongTermMemory] registration of kb=%s could not be withdrawn (%s)", kb_id, exc.code)
            return False

    async def _clear_orphan_fences(self, tx: WriteTx, keep: str) -> None:
        """L2 fences of a knowledge base that is no longer the memory KB guard nothing: a removal that
        stopped before clearing them must not leave them behind for ever (the next registration clears
        what a refused delete left)."""
        for fence in await self._fences.all():
            if fence.space.kind is SpaceKind.L2 and fence.space.kb_id != keep:
                try:
                    await tx.call("storage delete", partial(resend, partial(self._fences.clear, fence.space), RESEND))
                except HostError as exc:
                    log.warning("[LongTermMemory] fence of removed kb=%s not cleared yet: %s", fence.space.kb_id,
                                exc.code)
                    continue
                tx.noted(Operation.FENCE_CLEAR, "fence", fence.space.key, ORPHAN_FENCE_CLEARED())

    async def unregister(self, kb_id: str) -> bool:
        """Delete the KB's vectors, document indexes, consolidation drafts and lineage, fences and config
        (F4). Never refused by a fence, and it goes on past failed steps: LangBot removes the KB whatever
        the plugin answers, so the removal is audited first and only an unknown outcome stops it (fenced)."""
        try:
            return await self._unregister(kb_id)
        finally:
            self._episodes.records_rewritten(kb_id)  # no word index of a removed KB survives

    async def _unregister(self, kb_id: str) -> bool:
        async with self._gate.removing_kb(kb_id), \
                self._gate.write(None, Space.installation(), Operation.KB_UNREGISTER, enforce_fence=False,
                                 target=kb_id) as tx:
            record = await self._record()
            known = kb_id in record["kbs"]
            tx.applied(Operation.KB_UNREGISTER, "knowledge_base", kb_id, REMOVED())
            config_error: HostFailure | None = None
            if known:
                # The configuration goes first: whatever stops the clean-up below, the removed KB is no
                # longer the memory KB. The whole record is rewritten, so re-sending it is safe; if the
                # store still will not take it, the clean-up goes on and the error is reported at the end
                # (this process skips the removed KB either way).
                new = {"order": [k for k in record["order"] if k != kb_id],
                       "kbs": {k: v for k, v in record["kbs"].items() if k != kb_id}}
                try:
                    await tx.set(KB_CONFIGS_KEY, new, attempts=RESEND)
                    self._cache = new
                except HostFailure as exc:
                    config_error = exc
            try:
                # Not guarded: records of a removed KB guard nothing, so a lost answer needs no fence.
                await tx.index_write("vector drop", partial(self._episodes.drop_kb, kb_id=kb_id), guarded=False)
            except LTMError as exc:
                log.warning("[LongTermMemory] could not wipe vectors of kb=%s: %s", kb_id, exc.code)
            await self._clear_orphan_fences(tx, keep=next(iter((await self._record())["order"]), ""))
            # Everything that holds the KB's records or their words goes inside this write: the saved word
            # indexes (pages of records' text) and the injection snapshots that quote its memories, too.
            keys = [key for prefix in (document_prefix(kb_id), draft_kb_prefix(kb_id), draft_log_kb_prefix(kb_id),
                                       lineage_kb_prefix(kb_id), word_index_kb_prefix(kb_id), layout_marker_key(kb_id))
                    for key in await self._store.keys(prefix)] + await self._snapshots_of(kb_id)
            left = 0
            for key in keys:
                try:
                    await tx.delete(key)
                except HostError as exc:
                    left += 1  # a refusal: the key of a removed KB is never read again
                    log.warning("[LongTermMemory] storage key of removed kb=%s not deleted: %s", kb_id, exc.code)
            if keys:
                tx.noted(Operation.KB_DATA_CLEAR, "knowledge_base", kb_id,
                         DATA_CLEARED_LEFT(count=len(keys) - left, left=left) if left
                         else DATA_CLEARED(count=len(keys)))
            if config_error is not None:
                raise config_error
        log.info("[LongTermMemory] memory knowledge base removed kb=%s", kb_id)
        return known

    async def _snapshots_of(self, kb_id: str) -> list[str]:
        """The injection snapshots that quote memories of `kb_id` (a snapshot names the KB it recalled from)."""
        found = []
        for key in await self._store.keys(SNAPSHOT_PREFIX):
            snapshot = await self._store.get(key)
            if isinstance(snapshot, dict) and snapshot.get("kb_id") == kb_id:
                found.append(key)
        return found


    async def _stale(self, kb_ids: list[str], *, refresh: bool = False) -> set[str]:
        """Registered KBs that are gone: removed in this process, or absent from LangBot's list (asked
        once per process, or again when `refresh`). An unanswered list proves nothing, nor does an empty
        one (a host still starting may list nothing), except for the KB whose removal a fence says was
        interrupted (D5): LangBot deletes a KB whatever its removal hook achieved."""
        gone = {k for k in kb_ids if self._gate.kb_removed(k)}
        if kb_ids and (self._gone is None or refresh):
            try:
                on_host: set[str] | None = set(await self._directory.knowledge_base_ids())
            except LTMError:
                on_host = None
            removing = await self._interrupted_removal() if on_host == set() else ""
            self._gone = {k for k in kb_ids if on_host is not None and k not in on_host
                          and (on_host or k == removing)}
        return gone | {k for k in kb_ids if self._gone and k in self._gone}

    async def _interrupted_removal(self) -> str:
        """The KB a removal was removing when its outcome became unknown (the installation's fence)."""
        fence = await self._fences.get(Space.installation())
        return fence.target if fence is not None and fence.operation == Operation.KB_UNREGISTER else ""

    async def memory_kb(self) -> tuple[str, KBSettings] | None:
        record = await self._record()
        stale = await self._stale(list(record["order"]))
        for kb_id in record["order"]:
            if kb_id in stale:
                continue
            raw = record["kbs"].get(kb_id)
            if raw:
                return kb_id, self._effective(kb_id, raw)
        return None

    async def open(self, scope: MemoryScope) -> KBSettings:
        """The one step before every L2 operation of a scope: its memory KB's settings (NoKnowledgeBase
        without one), with the KB's records in the current record layout."""
        if not scope.kb_id:
            raise NoKnowledgeBase()
        return await self.open_kb(scope.kb_id)

    async def open_kb(self, kb_id: str) -> KBSettings:
        """`open` for an operation that names the KB itself (a document of it)."""
        settings = await self.settings(kb_id)
        await self._layouts.ensure(kb_id, settings)
        return settings

    async def settings(self, kb_id: str) -> KBSettings:
        """The KB's effective settings: its creation settings with the installation's overrides."""
        return self._effective(kb_id, await self._stored_entry(kb_id))

    def _effective(self, kb_id: str, raw: dict[str, Any]) -> KBSettings:
        known = self._parsed.get(kb_id)
        if known is not None and known[0] is raw:
            settings = known[1]
        else:
            settings = effective(raw)
            self._parsed[kb_id] = (raw, settings)
        self._gate.kb_isolation(kb_id, settings.isolation)  # a turn's scope derived before a change is stale
        return settings

    async def _stored_entry(self, kb_id: str) -> dict[str, Any]:
        """The cached record's own entry of the KB (never changed in place: a change stores a new record)."""
        raw: dict[str, Any] | None = (await self._record())["kbs"].get(kb_id)
        if not raw:
            raise NoKnowledgeBase(f"knowledge base {kb_id} is not a LongTermMemory knowledge base")
        return raw

    async def entry(self, kb_id: str) -> dict[str, Any]:
        """A copy of the KB's stored entry: its creation settings and, under `overrides`, the overrides."""
        return copy.deepcopy(await self._stored_entry(kb_id))

    async def described(self, kb_id: str) -> EffectiveSettings:
        return describe(kb_id, await self.entry(kb_id))

    async def store_overrides(self, tx: WriteTx, kb_id: str, overrides: dict[str, Any]) -> None:
        """Rewrite the configuration record with the KB's new overrides (one storage write inside `tx`, an
        installation write). From the next call on, every reader of the settings sees them."""
        record = await self.configuration()
        entry = record["kbs"].get(kb_id)
        if not entry:
            raise NoKnowledgeBase(f"knowledge base {kb_id} is not a LongTermMemory knowledge base")
        if overrides:
            entry["overrides"] = dict(overrides)
        else:
            entry.pop("overrides", None)
        try:
            await tx.set(KB_CONFIGS_KEY, record)
        except BaseException:
            self._cache = None  # refused, lost or cancelled: read what is stored next time
            raise
        self._cache = record
        self._effective(kb_id, entry)

    async def scope_for(self, identity: Identity, kb_id: str | None = None) -> MemoryScope:
        """The scope of a turn. Without a memory KB, L1 still works; L2 calls raise NoKnowledgeBase."""
        if kb_id:
            return MemoryScope.for_identity(identity, (await self.settings(kb_id)).isolation, kb_id)
        found = await self.memory_kb()
        if found is None:
            return MemoryScope.for_identity(identity, Isolation.SESSION, "")
        return MemoryScope.for_identity(identity, found[1].isolation, found[0])
