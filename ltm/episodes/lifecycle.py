"""Episode writes: remember (with explicit supersede), archive, restore, forget, bulk delete.

Every mutating function here runs inside one `WriteGate.write_l2` block of the scope's L2
space, so it is serialized, fenced and audited in one place (docs/ARCHITECTURE.md,
"The write gate"). Validation that needs stored records happens under the lock,
before the first host write: a refused request writes nothing.

A new episode that states the same fact as an active episode of the same speaker in the space
is not written again (`duplicates.py`): the caller gets the existing one (`Remembered.created`
is False), audited as `remember_duplicate`. A near duplicate is written and named
(`Remembered.similar`) so it can be superseded. A correction (`supersedes`) is always written:
it changes other records. A restatement of a fact whose record no longer holds it (its
`valid_until` has passed, or the restatement gives other validity bounds) is written as the
fact's current record and supersedes that record, exactly like a correction naming it: one
active record per fact, and the old one kept as history (docs/GUARANTEES.md, "Expiry and one
fact, one record").

Records derived from episodes (consolidation summaries and pending review drafts,
K5) are handled through `DerivedRecords`: before an episode is superseded,
archived, forgotten or bulk-deleted, in the same locked write, whatever was
derived from it in the same space is removed first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any, Protocol

from .. import params
from .._gate import WriteGate, WriteTx
from ..errors import HostError, NotFound, NotPermitted, ValidationError
from ..guards import refuse_secrets
from ..identity import MemoryScope
from ..kb_settings import KBSettings
from ..operations import Operation
from ..timefields import now_iso, parse_stored
from ..wording import Phrase, Said
from .duplicates import DuplicateFinder, Probe
from .model import STATUS_LABEL, Episode, EpisodeDraft, EpisodeStatus, new_episode_id
from .store import UPSERT_BATCH, EpisodeStore

log = logging.getLogger("LongTermMemory")

MAX_SUPERSEDES = 20  # corrected episodes per `remember`

STORED = Phrase("audit.episode_stored", "stored episode ({chars} chars, importance {importance})")
ALREADY_REMEMBERED = Phrase("audit.already_remembered",
                            "already remembered: the same fact is stored; nothing was written")
SUPERSEDED_BY = Phrase("audit.episode_superseded", "superseded by {episode_id}")
CORRECTION_ROLLED_BACK = Phrase("audit.correction_rolled_back",
                                "correction refused by the store; the new episode was removed again")
STATUS_CHANGED = Phrase("audit.status_changed", "{before} -> {after}")
DELETED = Phrase("audit.episode_deleted", "deleted {status} episode")
BULK_DELETED = Phrase("audit.bulk_deleted", "deleted by bulk delete")
# What deleted an episode in a bulk deletion, by the operation that ran it.
DELETED_BY = {Operation.BULK_DELETE: BULK_DELETED,
              Operation.PERSON_ERASE: Phrase("audit.person_erased", "deleted by person erase")}


def new_episode(scope: MemoryScope, draft: EpisodeDraft) -> Episode:
    """A fresh episode of the caller's space, attributed to the caller's speaker."""
    identity = scope.identity
    return Episode(
        episode_id=new_episode_id(),
        space_key=scope.space_key,
        content=draft.content,
        timestamp=now_iso(),
        importance=draft.importance,
        tags=draft.tags,
        sender_id=scope.sender_id,
        sender_name=scope.sender_name,
        bot_uuid=identity.bot_uuid if identity else "",
        session_name=identity.session_name if identity else "",
        source=draft.source,
        fact=draft.fact,
        message=identity.message if identity else None,
    )


async def write_episodes(tx: WriteTx, store: EpisodeStore, settings: KBSettings, episodes: Sequence[Episode],
                         audit: Callable[[WriteTx, Episode], None],
                         vectors: Sequence[Sequence[float]] | None = None) -> None:
    """Embed (nothing written yet, so a failure there is harmless) unless `vectors` are given, then
    upsert in batches; each batch is one gated host write and is audited as soon as it is applied."""
    if vectors is None:
        vectors = await store.embed(settings.embedding_model_uuid, [e.content for e in episodes])
    space = tx.space.as_l2
    for start in range(0, len(episodes), UPSERT_BATCH):
        batch = episodes[start : start + UPSERT_BATCH]
        await tx.index_write("vector upsert", partial(store.upsert_batch, space=space, episodes=batch,
                                                      vectors=vectors[start : start + len(batch)]))
        for episode in batch:
            audit(tx, episode)


@dataclass(frozen=True)
class Remembered:
    """What `remember` did: `episode` is the new record, or (`created` False) the active one that
    already states the same fact, so nothing was written. `similar`: near duplicates of the speaker
    that stay active beside the new record (supersede or forget one of them if it is outdated)."""

    episode: Episode
    created: bool = True
    similar: tuple[Episode, ...] = ()


@dataclass(frozen=True)
class RestoreResult:
    episode: Episode
    previous_status: EpisodeStatus
    # The correction that superseded the restored record and is still active: two versions are now active.
    active_correction: Episode | None = None


@dataclass(frozen=True)
class DeleteCriteria:
    """Filters of a scoped bulk delete: all given ones must match; at least one is required.
    `speaker` is a sender id (never a display name)."""

    speaker: str = ""
    tag: str = ""
    before: datetime | None = None
    status: EpisodeStatus | None = None

    def __post_init__(self) -> None:
        if not (self.speaker or self.tag or self.before or self.status):
            raise ValidationError("give at least one filter: speaker, tag, before or status")

    def matches(self, episode: Episode) -> bool:
        if self.speaker and self.speaker != episode.sender_id:
            return False
        if self.tag and self.tag.lower() not in episode.tags:
            return False
        if self.status and episode.status is not self.status:
            return False
        if self.before:
            stored = parse_stored(episode.timestamp)
            if stored is None or stored >= self.before:
                return False
        return True


class DerivedRecords(Protocol):
    """What depends on episodes of a space (K5). Called inside the space's L2 write, before the change:
    `removed=True` when the episodes are deleted, False when they only stop being active (superseded,
    archived). Implemented by `ltm.consolidation`; every write it makes goes through `tx`."""

    async def before_change(self, tx: WriteTx, scope: MemoryScope, episode_ids: Sequence[str], *,
                            removed: bool) -> None: ...


class NoDerivedRecords:
    async def before_change(self, tx: WriteTx, scope: MemoryScope, episode_ids: Sequence[str], *,
                            removed: bool) -> None:
        return None


class DerivedInOrder:
    """Several kinds of derived records, each told in turn (summaries and drafts, then candidates)."""

    def __init__(self, *kinds: DerivedRecords) -> None:
        self._kinds = kinds

    async def before_change(self, tx: WriteTx, scope: MemoryScope, episode_ids: Sequence[str], *,
                            removed: bool) -> None:
        for kind in self._kinds:
            await kind.before_change(tx, scope, episode_ids, removed=removed)


class EpisodeLifecycle:
    def __init__(self, gate: WriteGate, store: EpisodeStore, derived: DerivedRecords | None = None,
                 duplicates: DuplicateFinder | None = None) -> None:
        self._gate = gate
        self._store = store
        self._derived: DerivedRecords = derived or NoDerivedRecords()
        self._duplicates = duplicates or DuplicateFinder(store)

    async def _get(self, scope: MemoryScope, episode_id: str) -> Episode:
        episode = await self._store.get(scope.l2, episode_id)
        if episode is None:
            raise NotFound(f"episode {episode_id} not found in this scope", episode_id=episode_id)
        return episode

    async def episode(self, scope: MemoryScope, episode_id: Any) -> Episode:
        """One episode of the scope's space; an id of another space is not found, like one of none."""
        return await self._get(scope, params.record_id(episode_id, "episode_id"))

    async def remember(self, scope: MemoryScope, settings: KBSettings, raw: dict[str, Any], *,
                       source: str = "tool") -> Remembered:
        """T1 / E4-E5: the fields as a caller sent them (`supersedes`: the ids this corrects), all
        validated before any write."""
        draft = EpisodeDraft.parse(raw, source=source)
        supersedes = params.word_list(raw.get("supersedes"), "supersedes", max_items=MAX_SUPERSEDES,
                                      item_chars=params.MAX_ID_CHARS)
        return await self._remember(scope, settings, draft, supersedes)

    async def _remember(self, scope: MemoryScope, settings: KBSettings, draft: EpisodeDraft,
                        supersedes: Sequence[str]) -> Remembered:
        """Every supersede target is checked before any write; a correction whose second step is
        refused is rolled back, so two active versions of a fact never stay behind. The duplicate
        check runs under the space's lock, so two identical calls at once still leave one record."""
        refuse_secrets(draft.texts())
        async with self._gate.write_l2(scope, Operation.REMEMBER) as tx:
            targets: list[Episode] = []
            for target_id in supersedes:
                target = await self._store.get(scope.l2, target_id)
                if target is None:
                    raise ValidationError(f"episode {target_id} is not in this scope; nothing was written")
                if not target.is_active:
                    raise ValidationError(
                        f"episode {target_id} is {target.status.value}, not active, in this scope; nothing was written")
                if target.sender_id != scope.sender_id:
                    raise ValidationError(f"episode {target_id} belongs to another speaker; only its own speaker can "
                                          "correct it. Nothing was written")
                targets.append(target)
            fresh = new_episode(scope, draft)
            # One embedding call for the new record and every named target, before any write: if it fails,
            # nothing changed.
            vectors = await self._store.embed(settings.embedding_model_uuid,
                                              [fresh.content, *(t.content for t in targets)])
            stated = (draft.fact.valid_from, draft.fact.valid_until)
            (finding,) = await self._duplicates.against_space(
                scope.l2, settings.embedding_model_uuid,
                [Probe(fresh.content, fresh.sender_id, vectors[0], validity=stated if any(stated) else None)])
            if finding.same is not None and finding.same.episode is not None and not targets:
                existing = finding.same.episode
                tx.noted(Operation.REMEMBER_DUPLICATE, "episode", existing.episode_id, ALREADY_REMEMBERED())
                log.info("[LongTermMemory] remember scope=%s user_key=%s already remembered", scope.chat_key,
                         scope.space_key)
                return Remembered(existing, created=False)
            # The fact's records that no longer hold it are superseded by the restatement, like named targets.
            # Each is read whole first: the finder's copy may come from the space index, which keeps only
            # what ranking reads, and writing it back would drop the rest of the record.
            named = {t.episode_id for t in targets}
            outdated = [e for e in [await self._store.get(scope.l2, o.episode_id)
                                    for o in finding.outdated if o.episode_id not in named]
                        if e is not None and e.is_active]
            if outdated:
                vectors = [*vectors, *await self._store.embed(settings.embedding_model_uuid,
                                                              [e.content for e in outdated])]
                targets += outdated
            episode = replace(fresh, supersedes=tuple(t.episode_id for t in targets))
            stamp = now_iso()
            replaced = [t.with_status(EpisodeStatus.SUPERSEDED, superseded_by=episode.episode_id,
                                      superseded_at=stamp) for t in targets]
            target_ids = {t.episode_id for t in targets}
            similar = tuple(m.episode for m in (*([finding.same] if finding.same else []), *finding.similar)
                            if m.episode is not None and m.episode.episode_id not in target_ids)
            if targets:
                # K5: summaries built from a corrected record, and drafts that quote it, go first.
                await self._derived.before_change(tx, scope, [t.episode_id for t in targets], removed=False)
            await write_episodes(tx, self._store, settings, [episode], lambda t, e: t.applied(
                Operation.REMEMBER, "episode", e.episode_id,
                STORED(chars=len(e.content), importance=e.importance),  # no tags: they are memory text
                **({"similar": [m.episode_id for m in similar]} if similar else {})),
                vectors=vectors[:1])
            if targets:
                try:
                    await write_episodes(tx, self._store, settings, replaced, lambda t, e: t.applied(
                        Operation.SUPERSEDE, "episode", e.episode_id, SUPERSEDED_BY(episode_id=episode.episode_id)),
                        vectors=vectors[1:])
                except HostError as exc:
                    await tx.index_write("vector delete", lambda index: self._store.delete(
                        index, scope.l2, [episode.episode_id]))
                    tx.reverted(Operation.REMEMBER_ROLLBACK, "episode", episode.episode_id,
                                CORRECTION_ROLLED_BACK())
                    raise HostError(f"the correction was not stored ({exc.message}); nothing changed") from None
        log.info("[LongTermMemory] remember scope=%s user_key=%s superseded=%d similar=%d", scope.chat_key,
                 scope.space_key, len(targets), len(similar))
        return Remembered(episode, similar=similar)

    async def archive(self, scope: MemoryScope, settings: KBSettings, episode_id: Any) -> Episode:
        result = await self._set_status(scope, settings, params.record_id(episode_id, "episode_id"),
                                        (EpisodeStatus.ACTIVE,), EpisodeStatus.ARCHIVED, Operation.ARCHIVE)
        return result.episode

    async def restore(self, scope: MemoryScope, settings: KBSettings, episode_id: Any) -> RestoreResult:
        return await self._set_status(scope, settings, params.record_id(episode_id, "episode_id"),
                                      (EpisodeStatus.ARCHIVED, EpisodeStatus.SUPERSEDED), EpisodeStatus.ACTIVE,
                                      Operation.RESTORE)

    async def _set_status(self, scope: MemoryScope, settings: KBSettings, episode_id: str,
                          allowed: tuple[EpisodeStatus, ...], new_status: EpisodeStatus, operation: Operation
                          ) -> RestoreResult:
        correction: Episode | None = None
        async with self._gate.write_l2(scope, operation) as tx:
            episode = await self._get(scope, episode_id)
            if episode.status not in allowed:
                raise ValidationError(f"episode {episode.episode_id} is {episode.status.value}; cannot {operation} it")
            updated = episode.with_status(new_status)
            if new_status is not EpisodeStatus.ACTIVE:
                await self._derived.before_change(tx, scope, [episode.episode_id], removed=False)
            await write_episodes(tx, self._store, settings, [updated], lambda t, e: t.applied(
                operation, "episode", e.episode_id,
                STATUS_CHANGED(before=STATUS_LABEL[episode.status](), after=STATUS_LABEL[new_status]()),
                previous_status=episode.status.value))
            if new_status is EpisodeStatus.ACTIVE and episode.superseded_by:
                found = await self._store.get(scope.l2, episode.superseded_by)
                correction = found if found is not None and found.is_active else None
        return RestoreResult(updated, episode.status, correction)

    async def forget(self, scope: MemoryScope, episode_id: Any, *, operation: Operation = Operation.FORGET,
                     own_only: bool = False) -> Episode:
        """Delete one episode of the space. `own_only`: in a shared chat, only the current speaker's own
        episodes or episodes without a speaker (the `forget` tool, which anyone in the chat can steer)."""
        episode_id = params.record_id(episode_id, "episode_id")
        async with self._gate.write_l2(scope, operation) as tx:
            episode = await self._get(scope, episode_id)
            if own_only and scope.shared and episode.sender_id not in ("", scope.sender_id):
                raise NotPermitted(f"episode {episode.episode_id} was said by another speaker, and this chat's memory "
                                   "is shared: only a bot admin can delete it. Nothing was deleted",
                                   episode_id=episode.episode_id)
            await self._derived.before_change(tx, scope, [episode.episode_id], removed=True)
            await tx.index_write("vector delete", lambda index: self._store.delete(
                index, scope.l2, [episode.episode_id]))
            tx.applied(operation, "episode", episode.episode_id, DELETED(status=STATUS_LABEL[episode.status]()))
        return episode

    async def bulk_delete(self, scope: MemoryScope, criteria: DeleteCriteria, *,
                          operation: Operation = Operation.BULK_DELETE) -> list[Episode]:
        """Enumerate the space under its lock, delete only the matches, audit each (C delete; a person's
        erasure is one with `speaker`, audited as its own `operation`).

        A space larger than one enumeration is handled in rounds: deleted records leave the
        listing, so each round sees records the previous one could not."""
        deleted: list[Episode] = []
        async with self._gate.write_l2(scope, operation) as tx:
            while True:
                listing = await self._store.enumerate(scope.l2)
                matches = [e for e in listing.episodes if criteria.matches(e)]
                await self.delete_within(tx, scope, matches, DELETED_BY.get(operation, BULK_DELETED)())
                deleted.extend(matches)
                if not listing.truncated or not matches:
                    return deleted

    async def delete_within(self, tx: WriteTx, scope: MemoryScope, episodes: Sequence[Episode], summary: Said) -> None:
        """Inside the caller's L2 write of `scope`: delete `episodes` (whatever was derived from them first,
        K5), in batches, each audited as the write's operation with `summary`."""
        if not episodes:
            return
        await self._derived.before_change(tx, scope, [e.episode_id for e in episodes], removed=True)
        for start in range(0, len(episodes), UPSERT_BATCH):
            batch = episodes[start : start + UPSERT_BATCH]
            await tx.index_write("vector delete", partial(self._store.delete, space=scope.l2,
                                                          episode_ids=[e.episode_id for e in batch]))
            for episode in batch:
                tx.applied(tx.operation, "episode", episode.episode_id, summary)
