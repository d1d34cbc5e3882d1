"""A stored memory candidate and its review state (Q1-Q4 in docs/REQUIREMENTS.md).

A candidate is a proposal, not a memory: it changes nothing until someone accepts it.
It keeps what a reviewer needs to judge it (the proposed content, the exact words of
the user it came from, which rule or model proposed it, who said it, in which query)
and, once decided, who decided, when, and what the acceptance wrote.

An `ignore` candidate stands for a message that looked like it held a credential: its
content is a fixed redacted text and its evidence is empty, so nothing of the message is
kept. It can be rejected (dismissed) but never accepted.
"""

from __future__ import annotations

import enum
import secrets
from dataclasses import dataclass, replace
from typing import Any

from ..errors import ValidationError
from ..identity import Identity
from ..profiles.model import FIELD_LABEL, TARGET_LABEL, ProfileTarget
from ..provenance import MessageRef, message_id_problem
from ..timefields import now_iso
from ..wording import Phrase, Said
from .kinds import FORGOTTEN_TEXT, SESSION, CandidateKind, ProfileField, ProposedMemory

USER_STATEMENT = "user_statement"
INFERENCE = "inference"
# An `ignore` candidate claims nothing: the message looked like a credential and none of it is kept.
REDACTED = "redacted"
MODEL_RULE = "model"

EPISODE_CANDIDATE = Phrase("candidate.what.episode", "episode")
IGNORE_CANDIDATE = Phrase("candidate.what.ignore", "ignore")
PROFILE_CANDIDATE = Phrase("candidate.what.profile", "{target} profile {field}")


class CandidateStatus(str, enum.Enum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class CandidateOrigin(str, enum.Enum):
    RULES = "rules"
    MODEL = "model"


ALL_STATUSES = (CandidateStatus.PENDING, CandidateStatus.ACCEPTED, CandidateStatus.REJECTED)


def new_candidate_id(taken: set[str]) -> str:
    """Short enough to type in a chat (`c-` and 8 hex digits), unique within the scope's queue."""
    while True:
        candidate_id = "c-" + secrets.token_hex(4)
        if candidate_id not in taken:
            return candidate_id


def claim_type_of(kind: CandidateKind, origin: CandidateOrigin) -> str:
    """Rules state what the user said, a model infers it; an ignore candidate claims nothing."""
    if kind is CandidateKind.IGNORE:
        return REDACTED
    return INFERENCE if origin is CandidateOrigin.MODEL else USER_STATEMENT


@dataclass(frozen=True)
class Speaker:
    """Who wrote the message a candidate comes from (and where): enough to rebuild the turn's identity."""

    launcher_type: str
    launcher_id: str
    bot_uuid: str = ""
    sender_id: str = ""
    sender_name: str = ""
    message_id: str = ""  # the platform message it was said in (X1); "" when the host named none

    @classmethod
    def of(cls, identity: Identity) -> Speaker:
        return cls(identity.launcher_type, identity.launcher_id, identity.bot_uuid, identity.sender_id,
                   identity.sender_name, identity.message_id)

    def identity(self, query_id: int | None) -> Identity:
        """The turn that said it: what an accepted candidate writes is attributed to it, message included."""
        return Identity.build(launcher_type=self.launcher_type, launcher_id=self.launcher_id,
                              bot_uuid=self.bot_uuid, sender_id=self.sender_id, sender_name=self.sender_name,
                              query_id=query_id, message_id=self.message_id)

    def to_dict(self) -> dict[str, str]:
        data = {"launcher_type": self.launcher_type, "launcher_id": self.launcher_id, "bot_uuid": self.bot_uuid,
                "sender_id": self.sender_id, "sender_name": self.sender_name}
        return {**data, "message_id": self.message_id} if self.message_id else data

    @classmethod
    def from_dict(cls, who: Any) -> Speaker:
        message_id = str(who.get("message_id") or "")
        return cls(str(who["launcher_type"]), str(who["launcher_id"]), str(who.get("bot_uuid") or ""),
                   str(who.get("sender_id") or ""), str(who.get("sender_name") or ""),
                   "" if message_id_problem(message_id) else message_id)


@dataclass(frozen=True)
class Candidate:
    candidate_id: str
    kind: CandidateKind
    content: str
    evidence: str
    rule: str
    origin: CandidateOrigin
    claim_type: str
    source_ref: str
    speaker: Speaker
    created_at: str
    query_id: int | None = None
    target: str | None = None  # profile candidates: "speaker" | "session"
    field: ProfileField | None = None  # profile candidates: name | traits | preferences
    status: CandidateStatus = CandidateStatus.PENDING
    decided_at: str | None = None
    decided_by: str = ""  # a sender id, the name a caller without a chat identity gave, or "auto"
    applied_type: str | None = None  # "episode", "speaker_profile" or "session_profile"
    applied_id: str | None = None  # the episode id, the speaker's sender id or "session"
    applied_existing: bool = False  # accepting found the fact stored already: `applied_id` held it, nothing written

    @classmethod
    def proposed(cls, item: ProposedMemory, *, origin: CandidateOrigin, speaker: Speaker, query_id: int,
                 candidate_id: str) -> Candidate:
        """A new pending candidate of one turn: rules state what the user said, a model infers it."""
        return cls(
            candidate_id=candidate_id, kind=item.kind, content=item.content, evidence=item.evidence,
            rule=item.rule, origin=origin,
            claim_type=claim_type_of(item.kind, origin),
            source_ref=f"query:{query_id}", speaker=speaker, created_at=now_iso(), query_id=query_id,
            target=item.target if item.kind is CandidateKind.PROFILE else None,
            field=item.field if item.kind is CandidateKind.PROFILE else None,
        )

    @property
    def message(self) -> MessageRef | None:
        """The platform message it was proposed from, in its chat (None when none is known)."""
        return self.speaker.identity(None).message if self.speaker.message_id else None

    @property
    def is_pending(self) -> bool:
        return self.status is CandidateStatus.PENDING

    @property
    def same_as_key(self) -> tuple[str, str, str, str, str]:
        """Two candidates with this key propose the same thing for the same person."""
        return (self.kind.value, self.target or "", self.field.value if self.field else "",
                self.speaker.sender_id, " ".join(self.content.casefold().split()))

    def decided(self, status: CandidateStatus, by: str, applied_type: str | None = None,
                applied_id: str | None = None, applied_existing: bool = False) -> Candidate:
        return replace(self, status=status, decided_at=now_iso(), decided_by=by, applied_type=applied_type,
                       applied_id=applied_id, applied_existing=applied_existing)

    def applied_as_episode(self, episode_ids: set[str]) -> bool:
        """Accepted as one of these episodes, and still holding its text."""
        return (self.applied_type == "episode" and self.applied_id in episode_ids
                and (self.content, self.evidence) != (FORGOTTEN_TEXT, ""))

    def without_text(self) -> Candidate:
        """The candidate once its memory is deleted: the decision stays, the words go (content and quote)."""
        return replace(self, content=FORGOTTEN_TEXT, evidence="")

    def describe(self) -> Said:
        """What the candidate proposes, without its content (safe for audit summaries and logs)."""
        if self.kind is CandidateKind.PROFILE:
            target = TARGET_LABEL[ProfileTarget.SESSION if self.target == SESSION else ProfileTarget.SPEAKER]
            return PROFILE_CANDIDATE(target=target(), field=FIELD_LABEL[(self.field or ProfileField.TRAITS).value]())
        return EPISODE_CANDIDATE() if self.kind is CandidateKind.EPISODE else IGNORE_CANDIDATE()

    def to_dict(self) -> dict[str, Any]:
        """Storage form. The evidence of a model candidate is its content, so it is kept once."""
        return {
            "id": self.candidate_id, "kind": self.kind.value, "content": self.content,
            "evidence": None if self.evidence == self.content else self.evidence,
            "rule": self.rule, "origin": self.origin.value, "claim_type": self.claim_type,
            "source_ref": self.source_ref, "created_at": self.created_at, "query_id": self.query_id,
            "target": self.target, "field": self.field.value if self.field else None,
            "status": self.status.value, "decided_at": self.decided_at, "decided_by": self.decided_by,
            "applied_type": self.applied_type, "applied_id": self.applied_id,
            **({"applied_existing": True} if self.applied_existing else {}),
            "speaker": self.speaker.to_dict(),
        }

    @classmethod
    def from_dict(cls, raw: Any) -> Candidate:
        """Raises ValidationError for a record this version cannot read (the queue skips it)."""
        if not isinstance(raw, dict):
            raise ValidationError("a stored candidate is not an object")
        try:
            who = raw["speaker"]
            field = raw.get("field")
            query_id = raw.get("query_id")
            content = str(raw["content"])
            evidence = raw.get("evidence")
            kind = CandidateKind(raw["kind"])
            # Ignore candidates stored before `redacted` existed said `user_statement`.
            claim_type = REDACTED if kind is CandidateKind.IGNORE else str(raw["claim_type"])
            return cls(
                candidate_id=str(raw["id"]), kind=kind, content=content,
                evidence=content if evidence is None else str(evidence), rule=str(raw.get("rule") or ""),
                origin=CandidateOrigin(raw["origin"]), claim_type=claim_type,
                source_ref=str(raw["source_ref"]),
                speaker=Speaker.from_dict(who),
                created_at=str(raw["created_at"]),
                query_id=query_id if isinstance(query_id, int) and not isinstance(query_id, bool) else None,
                target=raw.get("target") or None, field=ProfileField(field) if field else None,
                status=CandidateStatus(raw["status"]), decided_at=raw.get("decided_at") or None,
                decided_by=str(raw.get("decided_by") or ""), applied_type=raw.get("applied_type") or None,
                applied_id=raw.get("applied_id") or None, applied_existing=raw.get("applied_existing") is True,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValidationError(f"a stored candidate cannot be read ({type(exc).__name__})") from None

    def to_public(self) -> dict[str, Any]:
        """The public view every review surface shows."""
        return {
            "id": self.candidate_id, "kind": self.kind.value, "content": self.content,
            "evidence": self.evidence, "rule": self.rule, "origin": self.origin.value,
            "claim_type": self.claim_type, "source_ref": self.source_ref, "target": self.target,
            "field": self.field.value if self.field else None, "status": self.status.value,
            "created_at": self.created_at, "query_id": self.query_id,
            "sender_id": self.speaker.sender_id, "sender_name": self.speaker.sender_name,
            "decided_at": self.decided_at, "decided_by": self.decided_by,
            "applied_type": self.applied_type, "applied_id": self.applied_id,
            "applied_existing": self.applied_existing,
            **({"message": message.to_dict()} if (message := self.message) else {}),
        }
