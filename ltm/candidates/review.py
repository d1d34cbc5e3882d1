"""The candidate review flow (Q1-Q3): propose from one message, list, accept, reject, auto-apply.

Accepting goes through the ordinary profile and episode writes (`ProfileBook.update`,
`EpisodeLifecycle.remember`, audited there), then marks the candidate decided in the queue
(audited as `candidate_accept`, `candidate_auto_apply` or `candidate_reject`):
- the write is attributed to the person who said it (the candidate's speaker), not to the
  reviewer, inside the reviewer's own scope (same `scope_key`, `user_key` and KB);
- an episode keeps its provenance: `source=candidate`, `source_ref=query:<id>`,
  `claim_type` (`user_statement` from the rules, `inference` from a model);
- a profile candidate merges its one value into the field (a name replaces the name).

Candidates never duplicate memory: before anything is queued, each proposal is compared with
the speaker's active episodes in the space (which include what the same turn's tools just wrote:
the hook runs after the reply) and with the target profile's values, by the same rules as the
write paths (`episodes/duplicates.py`: the same fact, or a near duplicate). A proposal that
repeats memory is not queued; it is counted with the queue's own duplicates (`CandidateRun`).
Accepting a candidate whose fact was stored meanwhile writes nothing and records the existing
episode's id (`applied_existing`).

Accepting is apply, then mark, under the scope's decision lock, so one candidate is never
applied twice; the queue's fence is checked before memory changes, and a mark that still fails
becomes `PartialWrite` naming what was written (reject the candidate rather than accept it again).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import params
from .._fences import FenceRegistry
from ..episodes.duplicates import DuplicateFinder, Finding, Match, Probe
from ..episodes.lifecycle import EpisodeLifecycle
from ..errors import FencedError, HostError, LTMError, NotFound, PartialWrite, ValidationError
from ..identity import MemoryScope
from ..kb_settings import KBSettings
from ..operations import Operation
from ..ports import LanguageModel
from ..profiles.book import ProfileBook, Profiles
from ..profiles.model import Profile
from ..spaces import Space
from .candidate import ALL_STATUSES, Candidate, CandidateOrigin, CandidateStatus, Speaker
from .extraction import extract
from .kinds import SPEAKER, CandidateKind, ProfileField, ProposedMemory
from .queue import CandidatePage, CandidateQueue

log = logging.getLogger("LongTermMemory")

EPISODE_SOURCE = "candidate"
AUTO_REVIEWER = "auto"

OpenKb = Callable[[MemoryScope], Awaitable[KBSettings]]


@dataclass(frozen=True)
class CandidateRun:
    """What one turn's extraction did (for the log and the tests; never holds user text)."""

    origin: CandidateOrigin
    added: list[Candidate] = field(default_factory=list)
    auto_applied: list[Candidate] = field(default_factory=list)
    refused: int = 0
    duplicates: int = 0  # already pending in the queue, or already in memory (`remembered`)
    remembered: int = 0  # of those: the fact is already in the speaker's episodes or the profile
    without_speaker: int = 0  # speaker-profile proposals of a turn whose sender is unknown
    skipped: str = ""
    rejected: str = ""


def speaker_scope(scope: MemoryScope, candidate: Candidate) -> MemoryScope:
    """The reviewer's scope, speaking as the candidate's speaker (so the memory is theirs)."""
    identity = candidate.speaker.identity(scope.query_id)
    if identity.chat_key != scope.chat_key:
        raise ValidationError(f"candidate {candidate.candidate_id} was proposed in another chat")
    return replace(scope, identity=identity)


def episode_fields(candidate: Candidate) -> dict[str, Any]:
    return {"content": candidate.content, "source_ref": candidate.source_ref, "claim_type": candidate.claim_type}


def profile_change(candidate: Candidate) -> tuple[str, dict[str, Any]]:
    """(target, update_profile fields)."""
    if candidate.kind is not CandidateKind.PROFILE or candidate.field is None or candidate.target is None:
        raise ValidationError(f"candidate {candidate.candidate_id} is not a profile candidate")
    if candidate.field is ProfileField.NAME:
        return candidate.target, {"name": candidate.content}
    return candidate.target, {candidate.field.value: [candidate.content]}


class CandidateReview:
    def __init__(self, queue: CandidateQueue, fences: FenceRegistry, llm: LanguageModel, profiles: ProfileBook,
                 lifecycle: EpisodeLifecycle, open_kb: OpenKb, duplicates: DuplicateFinder) -> None:
        self._queue = queue
        self._fences = fences
        self._llm = llm
        self._profiles = profiles
        self._lifecycle = lifecycle
        self._open_kb = open_kb  # the KB settings an accepted episode is written with
        self._duplicates = duplicates

    async def propose(self, scope: MemoryScope, settings: KBSettings, user_text: str) -> CandidateRun:
        """The candidates one user message proposes, queued as pending in the scope of that turn; with
        `candidate_auto_apply`, rule candidates are accepted at once (model candidates never are)."""
        origin = CandidateOrigin.MODEL if settings.candidate_model_uuid else CandidateOrigin.RULES
        if not settings.candidate_extraction_enabled:
            return CandidateRun(origin, skipped="candidate extraction is off for this memory knowledge base")
        identity, query_id = scope.identity, scope.query_id
        if identity is None or query_id is None:
            raise ValidationError("candidates come from a live turn: its speaker and query id are required")
        result = await extract(user_text, max_candidates=settings.candidate_max_per_turn,
                               model_uuid=settings.candidate_model_uuid, llm=self._llm)
        if result.rejected:
            log.warning("[LongTermMemory] candidate model answer rejected query=%s scope=%s: %s", query_id,
                        scope.chat_key, result.rejected)
        usable = [p for p in result.proposals if identity.sender_id or p.target != SPEAKER]
        fresh = await self._not_remembered(scope, settings, usable)
        speaker = Speaker.of(identity)
        queued = await self._queue.propose(scope, [
            Candidate.proposed(p, origin=result.origin, speaker=speaker, query_id=query_id, candidate_id="")
            for p in fresh])
        applied: list[Candidate] = []
        if settings.candidate_auto_apply:
            for candidate in queued.added:
                if candidate.origin is not CandidateOrigin.RULES or candidate.kind is CandidateKind.IGNORE:
                    continue
                try:
                    applied.append(await self._accept(scope, candidate.candidate_id, Operation.CANDIDATE_AUTO_APPLY,
                                                      AUTO_REVIEWER))
                except LTMError as exc:
                    log.warning("[LongTermMemory] candidate %s not auto-applied scope=%s: %s",
                                candidate.candidate_id, scope.chat_key, exc.code)
        remembered = len(usable) - len(fresh)
        return CandidateRun(result.origin, queued.added, applied, queued.refused, queued.duplicates + remembered,
                            remembered, len(result.proposals) - len(usable), result.skipped, result.rejected)

    async def _not_remembered(self, scope: MemoryScope, settings: KBSettings, proposals: list[ProposedMemory]
                              ) -> list[ProposedMemory]:
        """The proposals whose fact is not in memory yet. An episode proposal is compared with the
        speaker's episodes and both profiles; a profile proposal's value with its profile's values, and
        the words the user said ("I am vegetarian") with the speaker's episodes."""
        checked = [p for p in proposals if p.kind is not CandidateKind.IGNORE]
        if not checked:
            return proposals
        profiles = await self._profiles.current(scope)
        speaker = scope.sender_id
        in_space: list[Finding] = await self._duplicates.against_space(
            scope.l2, settings.embedding_model_uuid,
            [Probe(p.content if p.kind is CandidateKind.EPISODE else p.evidence or p.content, speaker)
             for p in checked])
        in_profiles = await self._duplicates.against_texts(settings.embedding_model_uuid, [
            Probe(p.content, speaker, known=_profile_values(p, profiles)) for p in checked])
        repeated = {id(p) for p, space, profile in zip(checked, in_space, in_profiles)
                    if space.repeats or profile.repeats}
        if repeated:
            log.info("[LongTermMemory] %d candidate(s) already in memory, not queued scope=%s", len(repeated),
                     scope.chat_key)
        return [p for p in proposals if id(p) not in repeated]

    async def page(self, scope: MemoryScope, *, all_statuses: bool, page: int, page_size: int,
                   statuses: Sequence[CandidateStatus] = ()) -> CandidatePage:
        """Newest first: pending candidates, every status, or only `statuses` when given."""
        chosen = tuple(statuses) or (ALL_STATUSES if all_statuses else (CandidateStatus.PENDING,))
        return await self._queue.page(scope, chosen, page, page_size)

    async def get(self, scope: MemoryScope, candidate_id: Any) -> Candidate:
        return await self._queue.get(scope, params.record_id(candidate_id, "candidate_id"))

    async def accept(self, scope: MemoryScope, candidate_id: Any, reviewer: str) -> Candidate:
        cid = params.record_id(candidate_id, "candidate_id")
        return await self._accept(scope, cid, Operation.CANDIDATE_ACCEPT, _reviewer(scope, reviewer))

    async def reject(self, scope: MemoryScope, candidate_id: Any, reviewer: str) -> Candidate:
        """Writes no memory; the candidate stays listed (all statuses) as rejected."""
        cid = params.record_id(candidate_id, "candidate_id")
        async with self._queue.deciding(scope):
            return await self._queue.decide(scope, cid, CandidateStatus.REJECTED, Operation.CANDIDATE_REJECT,
                                            by=_reviewer(scope, reviewer))

    async def _accept(self, scope: MemoryScope, candidate_id: str, operation: Operation, by: str) -> Candidate:
        async with self._queue.deciding(scope):
            candidate = await self._queue.get(scope, candidate_id)
            self._queue.check_decidable(candidate, accepting=True)
            as_speaker = speaker_scope(scope, candidate)
            # The queue must take the mark before memory changes, or the candidate would stay pending.
            await self._fences.check(Space.l1(scope.chat_key))
            applied_type, applied_id, existing = await self._apply(as_speaker, candidate)
            try:
                accepted = await self._queue.decide(scope, candidate_id, CandidateStatus.ACCEPTED, operation,
                                                    by=by, applied_type=applied_type, applied_id=applied_id,
                                                    applied_existing=existing)
            except (HostError, FencedError) as exc:
                raise PartialWrite(
                    f"candidate {candidate_id} was applied ({applied_type} {applied_id}) but could not be marked "
                    f"accepted ({exc.message}); it still shows as pending, so reject it instead of accepting it "
                    "again", applied=[f"{applied_type}:{applied_id}"], cause=exc.code) from exc
            if applied_type != "episode":
                return accepted
            return await self._forgotten_meanwhile(scope, as_speaker, accepted, applied_id)

    async def _forgotten_meanwhile(self, scope: MemoryScope, as_speaker: MemoryScope, accepted: Candidate,
                                   episode_id: str) -> Candidate:
        """The accepted candidate, without its text when its episode was forgotten before the mark.
        The accept itself is done: a redaction that fails is logged, not reported as a failed accept."""
        async def episode_there() -> bool:
            try:
                await self._lifecycle.episode(as_speaker, episode_id)
            except NotFound:
                return False
            return True

        try:
            return await self._queue.redact_if_forgotten(scope, accepted, episode_there)
        except LTMError as exc:
            log.warning("[LongTermMemory] candidate %s: its episode %s was forgotten during the accept and its "
                        "text could not be removed yet scope=%s: %s", accepted.candidate_id, episode_id,
                        scope.chat_key, exc.code)
            return accepted

    async def _apply(self, as_speaker: MemoryScope, candidate: Candidate) -> tuple[str, str, bool]:
        """The ordinary write a candidate stands for: (what was written, its id, whether that record
        already held the fact so nothing new was written)."""
        if candidate.kind is CandidateKind.EPISODE:
            settings = await self._open_kb(as_speaker)
            remembered = await self._lifecycle.remember(as_speaker, settings, episode_fields(candidate),
                                                        source=EPISODE_SOURCE)
            return "episode", remembered.episode.episode_id, not remembered.created
        target, change = profile_change(candidate)
        await self._profiles.update(as_speaker, target, change)
        return f"{target}_profile", candidate.speaker.sender_id if target == SPEAKER else "session", False


def _profile_values(proposal: ProposedMemory, profiles: Profiles) -> tuple[Match, ...]:
    """The profile values a proposal is compared with: its own profile's, or both for an episode."""
    chosen: list[tuple[str, Profile | None]] = []
    if proposal.kind is CandidateKind.EPISODE or proposal.target == SPEAKER:
        chosen.append(("speaker profile", profiles.speaker))
    if proposal.kind is CandidateKind.EPISODE or proposal.target != SPEAKER:
        chosen.append(("session profile", profiles.session))
    values: list[Match] = []
    for label, profile in chosen:
        if profile is None:
            continue
        values += [Match(profile.name, where=f"{label} name")] if profile.name else []
        values += [Match(t, where=f"{label} traits") for t in profile.traits]
        values += [Match(p, where=f"{label} preferences") for p in profile.preferences]
    return tuple(values)


def _reviewer(scope: MemoryScope, reviewer: str) -> str:
    """Who decided: the caller's own name for itself (a page without a chat identity names its
    surface), else the chat sender who ran the review."""
    return reviewer or scope.sender_id or "unknown"
