"""Finding and erasing everything the plugin keeps about one sender id, in every memory space the
installation noted (docs/REQUIREMENTS.md, "One person across chats").

The spaces come from the known-scopes registry (`Diagnostics.known_spaces`): every chat that left
a trace in plugin storage, and every L2 space of the memory KB that has an audit log. A space the
plugin never noted (records put into the collection by something else) is not searched: it is
neither exported nor erased, and the counts say how many spaces were searched.

Erasing goes space by space, each inside its own gated write, so each is serialized with that
space's other writes, refused while it is fenced (the fenced space is reported and the others go
on) and audited in that space's own log: L2 first (the person's episodes, and first whatever was
derived from them, K5), then L1 (their speaker profile, the candidates of their messages, an
injection snapshot that shows them or quotes their episodes; then, in the conversation record's own
gated write, their turns, and the summary rebuilt without their words, `ltm/conversation/fold.py`).
Last, the audit logs of the spaces searched (every log of the installation when erasing everywhere)
stop naming them (`AuditLog.scrub`): entries stay, with "(erased)" where their sender id was. It runs
on every erase that is not a dry run, even one that found nothing left, so running an interrupted
erase again finishes it.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from .._audit import AuditLog
from .._fences import FenceRegistry
from .._gate import WriteGate
from ..candidates.queue import CandidateQueue
from ..chat_labels import ChatLabels
from ..consolidation.drafts import DraftBook
from ..conversation import Conversations
from ..diagnostics import Diagnostics, KnownSpaces
from ..episodes.lifecycle import DeleteCriteria, EpisodeLifecycle
from ..episodes.store import EpisodeStore
from ..errors import FencedError, HostFailure, LTMError, ValidationError
from ..identity import Identity, Isolation, MemoryScope, clean_id, space_key_for_chat_key
from ..kb_registry import KnowledgeBaseRegistry
from ..operations import Operation
from ..profiles.book import ProfileBook
from ..spaces import L2Space, Space, SpaceKind
from .holdings import Outcome, PersonErasure, PersonRecords, PersonSpace, SpaceErasure

log = logging.getLogger("LongTermMemory")
MAX_SENDER_ID_CHARS = 200


def speaker_of(value: object) -> str:
    """A sender id as an admin or a chat gives it: exact (never a display name), not blank."""
    text = value if isinstance(value, str) else ""
    if not isinstance(value, str) or len(text) > MAX_SENDER_ID_CHARS:
        raise ValidationError(f"sender_id is required: a sender id of at most {MAX_SENDER_ID_CHARS} characters")
    speaker = clean_id(text)
    if not speaker:
        raise ValidationError("sender_id is required: the sender id of the person")
    return speaker


def chat_spaces(scope: MemoryScope) -> KnownSpaces:
    """The spaces of one chat: its L1 scope and, with a memory KB, its L2 space."""
    return KnownSpaces((scope.chat_key,), {scope.space_key: scope.chat_key} if scope.kb_id else {})


class PersonRegistry:
    def __init__(self, gate: WriteGate, fences: FenceRegistry, kbs: KnowledgeBaseRegistry, diagnostics: Diagnostics,
                 episodes: EpisodeStore, lifecycle: EpisodeLifecycle, drafts: DraftBook, profiles: ProfileBook,
                 candidates: CandidateQueue, audit: AuditLog, labels: ChatLabels,
                 conversations: Conversations) -> None:
        self._gate = gate
        self._labels = labels
        self._audit = audit
        self._kbs = kbs
        self._fences = fences
        self._diagnostics = diagnostics
        self._episodes = episodes
        self._lifecycle = lifecycle
        self._drafts = drafts
        self._profiles = profiles
        self._candidates = candidates
        self._conversations = conversations

    async def _kb(self) -> tuple[str, Isolation]:
        found = await self._kbs.memory_kb()
        if found is None:
            return "", Isolation.SESSION  # profiles and candidates only
        await self._kbs.open_kb(found[0])  # its records in the current layout first
        return found[0], found[1].isolation

    async def find_speaker(self, sender_id: object, chat: MemoryScope | None = None) -> PersonRecords:
        """Every record of one sender id in every known space of the installation, or in one chat's."""
        speaker = speaker_of(sender_id)
        kb_id, isolation = await self._kb()
        spaces = chat_spaces(chat) if chat is not None else await self._diagnostics.known_spaces(kb_id, isolation)
        return await self.find(kb_id, isolation, speaker, spaces)

    async def erase_speaker(self, sender_id: object, *, dry_run: bool, chat: MemoryScope | None = None,
                           actor: Identity | None = None) -> PersonErasure:
        found = await self.find_speaker(sender_id, chat)
        kb_id, isolation = await self._kb()
        result = await self.erase(found, isolation, dry_run=dry_run, actor=actor)
        if dry_run:
            return result
        logs = (await self._audit.log_ids() if chat is None
                else [Space.l1(chat.chat_key).key, *([Space.l2(L2Space(kb_id, chat.space_key)).key] if kb_id else [])])
        records = {i for s in found.spaces for i in (*(e.episode_id for e in s.episodes), *s.summaries)}
        result = replace(result, spaces=result.spaces + await self._scrub_audit(logs, found.sender_id, records))
        # No chat's label goes on naming them (a label is not memory: nothing to count or audit).
        for chat_key in [chat.chat_key] if chat is not None else await self._diagnostics.known_scopes():
            try:
                await self._labels.forget_speaker(chat_key, found.sender_id)
            except LTMError as exc:
                log.warning("[LongTermMemory] person erase: label of %s not cleared: %s", chat_key, exc.code)
        return result

    async def _scrub_audit(self, logs: list[str], sender_id: str, records: set[str]) -> tuple[SpaceErasure, ...]:
        """The audit logs stop naming the person; a log that could not be rewritten is reported as failed
        (the erase can be run again)."""
        failed: list[SpaceErasure] = []
        scrubbed = 0
        for log_id in logs:
            try:
                scrubbed += await self._audit.scrub(log_id, sender_id, records)
            except HostFailure as exc:
                space = Space.from_key(log_id) or Space.installation()
                log.warning("[LongTermMemory] person erase: audit log %s not rewritten: %s", log_id, exc.code)
                key = space.space_key if space.kind is SpaceKind.L2 else space.chat_key or log_id
                failed.append(SpaceErasure(space.kind, key, Outcome.FAILED, {}, exc.message, exc.code))
        log.info("[LongTermMemory] person erase: %d audit entries no longer name the person (%d logs)", scrubbed,
                 len(logs))
        return tuple(failed)

    async def find(self, kb_id: str, isolation: Isolation, sender_id: str, spaces: KnownSpaces) -> PersonRecords:
        """Every record of `sender_id` in `spaces`, all statuses (a read: nothing waits for it)."""
        found: list[PersonSpace] = []
        quoted: set[str] = set()
        for space_key in sorted(spaces.l2) if kb_id else []:
            l2 = L2Space(kb_id, space_key)
            listing = await self._episodes.enumerate(l2)
            theirs = tuple(e for e in listing.episodes if e.sender_id == sender_id)
            ids = {e.episode_id for e in theirs}
            lineage = await self._drafts.lineage(l2) if ids else {}
            summaries = tuple(sorted(s for s, sources in lineage.items() if s not in ids and ids & set(sources)))
            quoted |= ids | set(summaries)  # a snapshot may quote a summary of them (built with another's words)
            space = PersonSpace(SpaceKind.L2, space_key, spaces.l2[space_key], theirs, summaries,
                                fenced=await self._fences.get(Space.l2(l2)) is not None,
                                truncated=listing.truncated)
            if space.holds:
                found.append(space)
        for chat_key in spaces.sessions:
            scope = self._scope(chat_key, "", kb_id, isolation)
            profile = await self._profiles.speaker_profile(chat_key, sender_id)
            candidates = tuple(c for c in await self._candidates.all(scope) if c.speaker.sender_id == sender_id)
            snapshot = await self._diagnostics.snapshot_shows(scope, sender_id, quoted)
            record = await self._conversations.view(scope)
            space = PersonSpace(SpaceKind.L1, chat_key, chat_key, speaker_profile=profile, candidates=candidates,
                                snapshot=snapshot, conversation_turns=record.turns_of(sender_id),
                                conversation_summary=record.summary.may_hold(sender_id),
                                fenced=await self._fences.get(Space.l1(chat_key)) is not None)
            if space.holds:
                found.append(space)
        return PersonRecords(sender_id, kb_id, tuple(found), len(spaces.sessions), len(spaces.l2) if kb_id else 0)

    async def erase(self, found: PersonRecords, isolation: Isolation, *, dry_run: bool,
                    actor: Identity | None = None) -> PersonErasure:
        """Erase what `find` found, space by space (a dry run writes nothing and says what it would
        erase). A fenced space is reported and not written; a failure in one space does not stop the
        others. `actor`: the chat identity that asked (None for an operator's page), named in the audit."""
        outcomes: list[SpaceErasure] = []
        quoted = {i for s in found.spaces for i in (*(e.episode_id for e in s.episodes), *s.summaries)}
        for space in sorted(found.spaces, key=lambda s: s.kind is not SpaceKind.L2):  # L2 first
            if dry_run:
                outcomes.append(SpaceErasure(space.kind, space.key, Outcome.FENCED if space.fenced else Outcome.PLANNED,
                                             space.counts()))
                continue
            scope = self._scope(space.chat_key or space.key, space.key if space.kind is SpaceKind.L2 else "",
                                found.kb_id, isolation, actor)
            try:
                counts = (await self._erase_l2(scope, found.sender_id, space) if space.kind is SpaceKind.L2
                          else await self._erase_l1(scope, found.sender_id, quoted, space))
            except FencedError as exc:
                outcomes.append(SpaceErasure(space.kind, space.key, Outcome.FENCED, {}, exc.message, exc.code))
                continue
            except LTMError as exc:
                log.warning("[LongTermMemory] person erase in %s %s failed: %s", space.kind.value, space.key, exc.code)
                outcomes.append(SpaceErasure(space.kind, space.key, Outcome.FAILED, {}, exc.message, exc.code))
                continue
            outcomes.append(SpaceErasure(space.kind, space.key, Outcome.ERASED, counts))
        result = PersonErasure(found.sender_id, dry_run, tuple(outcomes))
        if not dry_run:
            log.info("[LongTermMemory] person erase kb=%s spaces=%d fenced=%d failed=%d", found.kb_id, len(outcomes),
                     len(result.of(Outcome.FENCED)), len(result.of(Outcome.FAILED)))
        return result

    async def _erase_l2(self, scope: MemoryScope, sender_id: str, space: PersonSpace) -> dict[str, int]:
        """The person's episodes of one L2 space, in one gated bulk delete (its cascade removes the
        summaries built from them first and clears the drafts that quote them, K5)."""
        deleted = await self._lifecycle.bulk_delete(scope, DeleteCriteria(speaker=sender_id),
                                                    operation=Operation.PERSON_ERASE)
        return {"episodes": len(deleted), "summaries": len(space.summaries) if deleted else 0}

    async def _erase_l1(self, scope: MemoryScope, sender_id: str, quoted: set[str],
                        space: PersonSpace) -> dict[str, int]:
        async with self._gate.write_l1(scope, Operation.PERSON_ERASE) as tx:
            profile = await self._profiles.erase_speaker(tx, scope.chat_key, sender_id)
            candidates = await self._candidates.erase_speaker(tx, scope, sender_id)
            snapshot = await self._diagnostics.drop_snapshot(tx, scope, sender_id, quoted)
        # Their conversation turns, and the summary rebuilt without them: the record's own gated write.
        turns = await self._conversations.erase_speaker(scope, sender_id)
        # A snapshot found quoting their episodes may already be gone with them (the L2 step deletes every
        # snapshot quoting a deleted episode, audited there): it counts as erased either way, since after
        # this write no snapshot of the chat shows them or quotes them.
        return {"speaker_profiles": int(profile), "candidates": len(candidates),
                "snapshots": int(snapshot or space.snapshot), "conversation_turns": turns,
                "conversation_summaries": int(space.conversation_summary)}

    @staticmethod
    def _scope(chat_key: str, space_key: str, kb_id: str, isolation: Isolation,
               actor: Identity | None = None) -> MemoryScope:
        """A space's scope, keyed by the keys the plugin stored; `actor` (who asked) is named in the audit."""
        scope = MemoryScope.stored(chat_key, space_key or space_key_for_chat_key(chat_key, isolation), kb_id,
                                   isolation)
        return replace(scope, identity=actor) if actor is not None else scope
