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
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ._bookkeeping import Bookkeeping
from ._fences import FenceRegistry
from ._gate import WriteTx
from ._storage import (
    SNAPSHOT_PREFIX,
    JsonStore,
    audit_log_ids,
    platform_event_key,
    scope_marker_key,
    scope_of_key,
    snapshot_key,
)
from .errors import LTMError
from .identity import ISOLATION, Isolation, MemoryScope, names_a_chat, space_key_for_chat_key
from .kb_settings import EffectiveSettings, KBSettings, shown_value
from .ports import PROBE_TEXT, DescribedIndex, Embedder, HostDirectory, VectorIndex
from .spaces import INSTALLATION_KEY, L2Space, Space, SpaceKind
from .wording import Phrase, Said

log = logging.getLogger("LongTermMemory")
INJECTION_TTL_SECONDS = 300.0


class Level(str, enum.Enum):
    GREEN = "green"
    AMBER = "amber"
    RED = "red"


@dataclass(frozen=True)
class HealthItem:
    """One line of the health check: what was checked (`key`), how it went, and what was found, as a
    code and parameters (`said`) that each surface words in its reader's language."""

    key: str
    level: Level
    said: Said

    @property
    def message(self) -> str:
        return self.said.english

    def to_dict(self) -> dict[str, Any]:
        coded = self.said.to_dict()
        return {"key": self.key, "level": self.level.value, "message": self.message, "code": coded["code"],
                "params": coded["params"]}


SNAPSHOT_DELAY = 10.0  # seconds from a turn to its snapshot's write (a restart meanwhile loses it: diagnostic data)
SNAPSHOT_DROPPED = Phrase("audit.snapshot_dropped", "injection snapshot removed: it showed this person")
SNAPSHOT_QUOTED = Phrase("audit.snapshot_quoted", "injection snapshot removed: it quoted a deleted memory")
# Every line the health check can say (ltm/wording.py).
_SAYS = {key: Phrase(f"health.{key}", english) for key, english in {
    "no_kb": "no memory knowledge base configured",
    "kb_gone": "memory knowledge base {kb_id} is registered but LangBot no longer has it",
    "kb_ok": "memory knowledge base {kb_id} registered ({isolation} isolation)",
    "pipeline_ok": "memory knowledge base is attached to this processor: memories are injected before each reply",
    "pipeline_missing": "memory knowledge base is not attached to this processor: no automatic memory here "
                        "(tools still work)",
    "embedding_failed": "embedding model does not answer: {error}",
    "embedding_ok": "embedding model answers ({dimensions} dimensions)",
    "embedding_empty": "embedding model returned an empty vector",
    "isolation_leak": "LEAK: {problems}. Memory on this vector store is not safe: another chat's memories could "
                      "be shown.",
    "isolation_failed": "the vector store failed the isolation probe: {problems}",
    "isolation_ok": "search, list and delete stay inside one scope",
    "probe_failed": "probe failed: {error}",
    "store_limited": "vector store {kind}: works with limits. Cannot: {cannot}. Can: {can}",
    "store_ok": "vector store {kind}: {can}",
    "fenced": "writes paused by a fence since {since} ({reason})",
    "not_fenced": "no write fence on this scope",
    "settings_created": "the knowledge base's creation settings apply (no overrides)",
    "settings_overridden": "settings overridden for this installation ({count}): {overrides}",
    "setting_override": "{name} = {value} (created {creation})",
    "platform_none": "no platform event received from this bot yet: to follow recalls and members who leave, "
                     "bind LongTermMemory's event processor to the bot (README, Platform events)",
    "platform_seen": "platform events reach the plugin: the event processor is bound (last: {event_type} at {at})",
}.items()}


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
    def __init__(self, store: Bookkeeping, fences: FenceRegistry, index: VectorIndex, embedder: Embedder,
                 directory: HostDirectory) -> None:
        self._store = store
        self._fences = fences
        self._index = index
        self._embedder = embedder
        self._directory = directory
        self._injected: dict[tuple[str, str], float] = {}
        self._noted: set[str] = set()
        self.deleted: dict[str, None] = {}  # episode ids deleted by this process, newest last (`QuotedSnapshots`)

    # ------------------------------------------------------------------ health (H)
    async def health(self, found: tuple[str, KBSettings] | None, scope: MemoryScope | None,
                     pipeline_kbs: list[str] | None, described: EffectiveSettings | None = None) -> HealthReport:
        if found is None:
            return HealthReport([HealthItem("kb", Level.RED, _SAYS["no_kb"]())])
        kb_id, settings = found
        items: list[HealthItem] = []
        try:
            host_kbs = set(await self._directory.knowledge_base_ids())
        except LTMError:
            host_kbs = set()
        if host_kbs and kb_id not in host_kbs:
            items.append(HealthItem("kb", Level.RED, _SAYS["kb_gone"](kb_id=kb_id)))
        else:
            items.append(HealthItem("kb", Level.GREEN,
                                    _SAYS["kb_ok"](kb_id=kb_id, isolation=ISOLATION[settings.isolation]())))
        if pipeline_kbs is not None:
            if kb_id in pipeline_kbs:
                items.append(HealthItem("pipeline", Level.GREEN, _SAYS["pipeline_ok"]()))
            else:
                items.append(HealthItem("pipeline", Level.AMBER, _SAYS["pipeline_missing"]()))
        vector = None
        try:
            vectors = await self._embedder.embed(settings.embedding_model_uuid, [PROBE_TEXT])
            vector = vectors[0] if vectors else None
        except LTMError as exc:
            items.append(HealthItem("embedding", Level.RED, _SAYS["embedding_failed"](error=exc.message)))
        else:
            if vector:
                items.append(HealthItem("embedding", Level.GREEN, _SAYS["embedding_ok"](dimensions=len(vector))))
            else:
                items.append(HealthItem("embedding", Level.RED, _SAYS["embedding_empty"]()))
        if vector:
            items.extend(await self._isolation(kb_id, vector))
        if scope is not None:
            fenced = [f for f in await self.fences_of(scope.with_kb(scope.kb_id or kb_id)) if f is not None]
            if fenced:
                items.append(HealthItem("fence", Level.AMBER,
                                        _SAYS["fenced"](since=fenced[0].since, reason=fenced[0].reason)))
            else:
                items.append(HealthItem("fence", Level.GREEN, _SAYS["not_fenced"]()))
            if scope.identity is not None and scope.identity.bot_uuid:
                items.append(await self._platform_item(scope.identity.bot_uuid))
        if described is not None:
            items.append(settings_item(described))
        return HealthReport(items)

    async def _platform_item(self, bot_uuid: str) -> HealthItem:
        """Whether the bot's platform events reach the plugin: the event processor notes each one it gets
        (the plugin cannot ask LangBot which processors a bot has: a bound processor is seen by its first
        event, and one bound on an adapter that delivers none stays unseen)."""
        last = await self.platform_event(bot_uuid)
        if last is None:
            return HealthItem("platform_events", Level.GREEN, _SAYS["platform_none"]())
        return HealthItem("platform_events", Level.GREEN, _SAYS["platform_seen"](
            event_type=str(last.get("event_type") or ""), at=str(last.get("at") or "")))

    async def _isolation(self, kb_id: str, vector: list[float]) -> list[HealthItem]:
        """The two-probe test decides (B3); the store item then says what this store can and cannot do."""
        try:
            problems = await self._index.probe_isolation(kb_id, vector)
        except LTMError as exc:
            problems = [_SAYS["probe_failed"](error=exc.message).english]
        profile = self._index.profile(kb_id) if isinstance(self._index, DescribedIndex) else None
        items: list[HealthItem] = []
        if any("another scope" in p for p in problems):
            items.append(HealthItem("isolation", Level.RED, _SAYS["isolation_leak"](problems="; ".join(problems))))
        elif problems:
            items.append(HealthItem("isolation", Level.RED, _SAYS["isolation_failed"](problems="; ".join(problems))))
        else:
            items.append(HealthItem("isolation", Level.GREEN, _SAYS["isolation_ok"]()))
        if profile is not None:
            if profile.cannot:
                items.append(HealthItem("store", Level.AMBER, _SAYS["store_limited"](
                    kind=profile.kind, cannot=list(profile.cannot), can=list(profile.can))))
            else:
                items.append(HealthItem("store", Level.GREEN, _SAYS["store_ok"](kind=profile.kind,
                                                                                can=list(profile.can))))
        return items

    async def fences_of(self, scope: MemoryScope) -> list[Any]:
        spaces = [Space.l1(scope.chat_key)]
        if scope.kb_id:
            spaces.append(Space.l2(scope.l2))
        return [await self._fences.get(space) for space in spaces]

    # ------------------------------------------------------------------ injection snapshots (I5)
    async def save_snapshot(self, scope: MemoryScope, snapshot: dict[str, Any]) -> None:
        """Latest injection of a scope. Diagnostic data, not memory: no fence and no audit either way. A
        turn that recalled an episode deleted meanwhile does not keep its words here (`QuotedSnapshots`)."""
        await self._store.set(snapshot_key(scope.chat_key), self._without_deleted(snapshot))

    def save_snapshot_later(self, scope: MemoryScope, snapshot: dict[str, Any]) -> None:
        """The same, written SNAPSHOT_DELAY seconds later: the turn neither waits for a diagnostic record
        nor has LangBot writing it while it still works on the turn (measured: a write right after the
        injection slowed LangBot's next steps by more than the injection saved), and a busy chat's
        snapshots are written once per delay. Until it lands, reads see it, and a delete of snapshots (a
        forget, an erasure, a KB's removal) drops it or waits for its write (`Bookkeeping.set_later`)."""
        self._store.set_later(snapshot_key(scope.chat_key), self._without_deleted(snapshot), delay=SNAPSHOT_DELAY)

    def _without_deleted(self, snapshot: dict[str, Any]) -> dict[str, Any]:
        episodes = snapshot.get("episodes")
        if self.deleted and isinstance(episodes, list) and quoted_ids(snapshot) & self.deleted.keys():
            snapshot = {**snapshot, "episodes": [e for e in episodes if not (isinstance(e, dict)
                                                                             and str(e.get("id")) in self.deleted)]}
        return snapshot

    async def snapshot(self, scope: MemoryScope) -> dict[str, Any] | None:
        value = await self._store.get(snapshot_key(scope.chat_key))
        return value if isinstance(value, dict) else None

    async def snapshot_shows(self, scope: MemoryScope, sender_id: str, episode_ids: set[str]) -> bool:
        """Whether the scope's injection snapshot shows `sender_id` speaking or quotes one of `episode_ids`."""
        snapshot = await self.snapshot(scope)
        if snapshot is None:
            return False
        raw_speaker = snapshot.get("speaker")
        speaker: dict[str, Any] = raw_speaker if isinstance(raw_speaker, dict) else {}
        return str(speaker.get("id") or "") == sender_id or bool(quoted_ids(snapshot) & episode_ids)

    async def drop_snapshot(self, tx: WriteTx, scope: MemoryScope, sender_id: str, episode_ids: set[str]) -> bool:
        """Inside the scope's L1 write (a person's erasure, audited there): delete the injection snapshot
        when it shows that person."""
        if not await self.snapshot_shows(scope, sender_id, episode_ids):
            return False
        await tx.delete(snapshot_key(scope.chat_key))
        tx.applied(tx.operation, "snapshot", scope.chat_key, SNAPSHOT_DROPPED())
        return True

    # ------------------------------------------------------------------ double recall (I4)
    def note_injection(self, scope: MemoryScope, text: str) -> None:
        """This turn's memories were injected: the runner's automatic re-retrieval of the memory KB
        with the same message is answered empty, once."""
        now = time.monotonic()
        self._injected = {k: t for k, t in self._injected.items() if now - t < INJECTION_TTL_SECONDS}
        self._injected[(scope.chat_key, " ".join(text.split()))] = now

    def consume_injection(self, scope: MemoryScope, text: str) -> bool:
        stamp = self._injected.pop((scope.chat_key, " ".join(text.split())), None)
        return stamp is not None and time.monotonic() - stamp < INJECTION_TTL_SECONDS

    # ------------------------------------------------------------------ known scopes (M1)
    async def note_scope(self, scope: MemoryScope) -> None:
        """Remember that a session scope wrote memory, once per scope and process. Bookkeeping only:
        a failure is logged, never reported (the change itself is already stored and audited)."""
        if scope.chat_key in self._noted or not names_a_chat(scope.chat_key):
            return
        try:
            await self._store.set(scope_marker_key(scope.chat_key), {"user_key": scope.space_key})
        except LTMError as exc:
            log.warning("[LongTermMemory] scope marker not written scope=%s: %s", scope.chat_key, exc.code)
            return
        self._noted.add(scope.chat_key)

    async def note_platform_event(self, bot_uuid: str, event_type: str, at: str) -> None:
        """The bot's event processor delivered an event (bookkeeping for the health check: a failure is
        logged, never reported)."""
        try:
            await self._store.set(platform_event_key(bot_uuid), {"event_type": event_type[:60], "at": at})
        except LTMError as exc:
            log.warning("[LongTermMemory] platform event of bot %s not noted: %s", bot_uuid, exc.code)

    async def platform_event(self, bot_uuid: str) -> dict[str, Any] | None:
        """The last event the bot's event processor delivered ({event_type, at}), or None."""
        found = await self._store.get(platform_event_key(bot_uuid))
        return found if isinstance(found, dict) else None

    async def known_scopes(self) -> list[str]:
        scopes = {scope_of_key(key) for key in await self._store.keys("")}
        return sorted(s for s in scopes if s and s != INSTALLATION_KEY)

    async def known_spaces(self, kb_id: str, isolation: Isolation) -> KnownSpaces:
        """Every chat noted so far and every L2 space of `kb_id`: the spaces its chats derive in
        `isolation`, and every space of that KB with an audit log (every L2 write is audited in its
        space, so a space that ever held a record of this KB has one)."""
        sessions = await self.known_scopes()
        l2: dict[str, str] = {}
        for chat_key in sessions:
            l2.setdefault(space_key_for_chat_key(chat_key, isolation), chat_key)
        if kb_id:
            for log_id in audit_log_ids(await self._store.keys("")):
                space = Space.from_key(log_id)
                if space is not None and space.kind is SpaceKind.L2 and space.kb_id == kb_id:
                    l2.setdefault(space.space_key, "")
        return KnownSpaces(tuple(sessions), l2 if kb_id else {})

    async def holds_memories(self, kb_id: str, spaces: KnownSpaces) -> str | None:
        """The first known L2 space of `kb_id` that holds a record (one page of one record each), or None."""
        for space_key in sorted(spaces.l2):
            page = await self._index.page(L2Space(kb_id, space_key), 1, 0)
            if any(r.space_key == space_key for r in page.records):
                return space_key
        return None


def quoted_ids(snapshot: dict[str, Any]) -> set[str]:
    """The ids of the episodes (summaries included) an injection snapshot quotes."""
    episodes = snapshot.get("episodes")
    return {str(e.get("id")) for e in episodes if isinstance(e, dict)} if isinstance(episodes, list) else set()


Lineage = Callable[[L2Space], Awaitable[dict[str, list[str]]]]


class QuotedSnapshots:
    """Deleted memories leave no words in injection snapshots (I5, K5). A snapshot quotes what it
    injected, in full; before episodes are deleted (forget on any surface, a bulk delete, a document's
    removal, a person's erasure), every snapshot of a chat of that space that quotes one of them, or a
    summary built from them, is deleted in the same L2 write and audited in its log. Only chats that can
    share the space are read (as `ForgottenCandidates` does), and only on a delete: never on a turn.
    Runs before the summaries themselves are removed (their lineage is read here)."""

    KEEP_DELETED = 10_000  # ids remembered for turns that recalled them just before they were deleted

    def __init__(self, store: JsonStore, lineage: Lineage, deleted: dict[str, None] | None = None) -> None:
        self._store = store
        self._lineage = lineage
        self._deleted = deleted if deleted is not None else {}

    async def before_change(self, tx: WriteTx, scope: MemoryScope, episode_ids: Sequence[str], *,
                            removed: bool) -> None:
        if not removed or not episode_ids:
            return  # an archived or superseded episode is still kept: a snapshot quoting it may stay
        ids = set(episode_ids)
        ids |= {s for s, sources in (await self._lineage(scope.l2)).items() if ids.intersection(sources)}
        for episode_id in ids:  # a turn that recalled one before this delete saves its snapshot without it
            self._deleted.pop(episode_id, None)
            self._deleted[episode_id] = None
        while len(self._deleted) > self.KEEP_DELETED:
            del self._deleted[next(iter(self._deleted))]
        for key in sorted(await self._store.keys(SNAPSHOT_PREFIX)):
            chat = scope_of_key(key)
            if chat is None or not (chat == scope.space_key
                                    or space_key_for_chat_key(chat, Isolation.BOT) == scope.space_key):
                continue
            snapshot = await self._store.get(key)
            if not (isinstance(snapshot, dict) and snapshot.get("kb_id") == scope.kb_id
                    and snapshot.get("user_key") == scope.space_key and quoted_ids(snapshot) & ids):
                continue
            await tx.delete(key)
            tx.applied(tx.operation, "snapshot", chat, SNAPSHOT_QUOTED())


def settings_item(described: EffectiveSettings) -> HealthItem:
    """Which settings the installation runs with: the creation settings, and each override."""
    changed = described.overridden
    if not changed:
        return HealthItem("settings", Level.GREEN, _SAYS["settings_created"]())
    shown = [_SAYS["setting_override"](name=v.name, value=shown_value(v.value), creation=shown_value(v.creation))
             for v in changed]
    return HealthItem("settings", Level.GREEN, _SAYS["settings_overridden"](count=len(changed), overrides=shown))
