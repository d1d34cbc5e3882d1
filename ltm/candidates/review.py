"""Accepting a candidate: how it maps onto the ordinary profile and episode writes (Q2).

The facade (`MemoryService.accept_candidate`) does the writing through its usual
`update_profile` and `remember` paths; this module only says what to write, and as whom:
- the write is attributed to the person who said it (the candidate's speaker), not to the
  reviewer, inside the reviewer's own scope (same `scope_key`, `user_key` and KB);
- an episode keeps its provenance: `source=candidate`, `source_ref=query:<id>`,
  `claim_type` (`user_statement` from the rules, `inference` from a model);
- a profile candidate merges its one value into the field (a name replaces the name).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ValidationError
from ..identity import MemoryScope
from .kinds import CandidateKind, ProfileField
from .records import Candidate, CandidateOrigin

EPISODE_SOURCE = "candidate"


@dataclass(frozen=True)
class CandidateRun:
    """What one turn's extraction did (for the log and the tests; never holds user text)."""

    origin: CandidateOrigin
    added: list[Candidate] = field(default_factory=list)
    auto_applied: list[Candidate] = field(default_factory=list)
    refused: int = 0
    duplicates: int = 0
    without_speaker: int = 0  # speaker-profile proposals of a turn whose sender is unknown
    skipped: str = ""
    rejected: str = ""


def speaker_scope(scope: MemoryScope, candidate: Candidate) -> MemoryScope:
    """The reviewer's scope, speaking as the candidate's speaker (so the memory is theirs)."""
    identity = candidate.speaker.identity(scope.query_id)
    if identity.session_key != scope.scope_key:
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
