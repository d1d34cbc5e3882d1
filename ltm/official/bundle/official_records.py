"""The official plugin's audit entries, candidates and KB settings, read into this plugin's records.

- An audit entry (`audit_id, operation, scope_key, user_key, sender_id, sender_name, target_type,
  target_id, summary, timestamp, query_id, metadata`) keeps its operation, target, speaker and time;
  its summary is kept inside a "migrated from the official plugin" sentence and the entry names its
  official id (`meta.migrated_from`, `meta.official_audit_id`), which is how a second import knows it.
  Its `metadata` is not carried (its keys are the official plugin's own). A summary that looks like
  a credential is skipped, never stored.
- A candidate (`candidate_id, candidate_type, status, payload, reason, sender_id, sender_name,
  query_id, created_at, updated_at`) becomes a candidate of the chat's queue with the id
  `c-<official id>` (so a second import knows it), its status and its decision time.
  `l2_episode` -> an episode candidate; `l1_profile` for name, traits or preferences -> a profile
  candidate (its `fact_key` is not kept); `ignore` -> an ignore candidate with the fixed redacted
  text. Notes candidates have no equivalent here and are skipped.
- Settings: see `SETTING_EQUIVALENTS`.
"""

from __future__ import annotations

from typing import Any

from ... import params
from ..._audit import AuditEntry, ForeignOperation
from ...candidates.candidate import REDACTED, USER_STATEMENT, Candidate, CandidateOrigin, CandidateStatus, Speaker
from ...candidates.kinds import SESSION, SPEAKER, CandidateKind, ProfileField, redacted_text
from ...errors import ValidationError
from ...guards import refuse_secrets
from ...identity import Identity, MemoryScope, clean_id
from ...secrets import secret_kind
from ...timefields import normalize_time, now_iso
from ...wording import Phrase
from .reading import OFFICIAL_PLUGIN

MIGRATED_ENTRY = Phrase("audit.migrated_entry", "migrated from the official plugin: {summary}")
MAX_CARRIED_SUMMARY = 160
OFFICIAL_RULE = "official"

# Official creation setting -> this plugin's setting of the same meaning. Those not listed have no
# equivalent; `NO_EQUIVALENT` says why for the ones an operator may look for.
SETTING_EQUIVALENTS = (
    "isolation", "recency_half_life_days", "auto_recall_top_k", "retrieval_strategy", "exact_match_boost",
    "consolidation_enabled", "consolidation_max_candidates", "candidate_extraction_enabled",
    "candidate_auto_apply", "candidate_max_per_turn",
)
NO_EQUIVALENT = {
    "embedding_model_uuid": "chosen when this plugin's memory knowledge base was created",
    "vector_weight": "this plugin weighs vector and word matches itself; there is no such setting",
    "consolidation_min_age_days": "here it counts days since a record was superseded, there the age of "
                                  "low-importance active records",
    "consolidation_apply_profile_updates": "reserved and never applied there; here it lets reviewed drafts "
                                           "change profiles, so it is left for you to turn on",
    "top_k": "a retrieval setting of the knowledge base: set it in LangBot's knowledge base page",
}


def audit_entry(raw: Any, scope: MemoryScope) -> tuple[str, AuditEntry]:
    """(official audit id, the entry for this chat's log); ValidationError with the reason otherwise."""
    if not isinstance(raw, dict):
        raise ValidationError("must be an object")
    audit_id = params.text(raw.get("audit_id"), "audit_id", max_chars=64)
    operation = params.text(raw.get("operation"), "operation", max_chars=64)
    target_type = params.text(raw.get("target_type"), "target_type", max_chars=64, required=False)
    target_id = params.text(raw.get("target_id"), "target_id", max_chars=200, required=False)
    sender_id = clean_id(params.text(_as_text(raw.get("sender_id")), "sender_id", max_chars=200, required=False))
    sender_name = params.text(raw.get("sender_name"), "sender_name", max_chars=200, required=False)
    summary = " ".join(params.text(raw.get("summary"), "summary", max_chars=2000, required=False,
                                   multiline=True).split())
    if len(summary) > MAX_CARRIED_SUMMARY:
        summary = summary[:MAX_CARRIED_SUMMARY - 1] + "…"
    time = normalize_time(raw.get("timestamp"), "timestamp")
    if time is None:
        raise ValidationError("timestamp is required")
    if secret_kind(summary):
        raise ValidationError("its summary looks like a credential")
    refuse_secrets([("the sender_id", sender_id), ("the sender_name", sender_name), ("the target_id", target_id),
                    ("the audit_id", audit_id)])
    query_id = raw.get("query_id")
    entry = AuditEntry(
        operation=ForeignOperation(operation), target_type=target_type, target_id=target_id, chat_key=scope.chat_key,
        space_key=scope.space_key, sender_id=sender_id, sender_name=sender_name,
        query_id=query_id if isinstance(query_id, int) and not isinstance(query_id, bool) else None,
        summary=MIGRATED_ENTRY(summary=summary),
        meta={"migrated_from": OFFICIAL_PLUGIN, "official_audit_id": audit_id}, time=time)
    return audit_id, entry


def candidate(raw: Any, chat: Identity) -> Candidate:
    """One official candidate as a candidate of this chat's queue; ValidationError with the reason."""
    if not isinstance(raw, dict):
        raise ValidationError("must be an object")
    official_id = params.text(raw.get("candidate_id"), "candidate_id", max_chars=64)
    kind_name = params.choice(raw.get("candidate_type"), "candidate_type", ("l1_profile", "l2_episode", "ignore"))
    status = CandidateStatus(params.choice(raw.get("status") or "pending", "status",
                                           [s.value for s in CandidateStatus]))
    given = raw.get("payload")
    payload: dict[str, Any] = given if isinstance(given, dict) else {}
    sender_id = clean_id(params.text(_as_text(raw.get("sender_id")), "sender_id", max_chars=200, required=False))
    sender_name = params.text(raw.get("sender_name"), "sender_name", max_chars=200, required=False)
    created = normalize_time(raw.get("created_at"), "created_at") or now_iso()
    updated = normalize_time(raw.get("updated_at"), "updated_at")
    target: str | None = None
    field: ProfileField | None = None
    if kind_name == "ignore":
        kind, content, claim = CandidateKind.IGNORE, redacted_text("a credential"), REDACTED
    else:
        content = params.text(payload.get("content") if kind_name == "l2_episode" else payload.get("value"),
                              "the proposed content", max_chars=2000)
        claim = USER_STATEMENT
        if kind_name == "l2_episode":
            kind = CandidateKind.EPISODE
        else:
            kind = CandidateKind.PROFILE
            name = str(payload.get("field") or "")
            if name not in {f.value for f in ProfileField}:
                raise ValidationError(f"a candidate for the profile's {name[:20] or '(no field)'} has no "
                                      "equivalent here (only name, traits and preferences)")
            field = ProfileField(name)
            target = SESSION if payload.get("target_scope") == "session" else SPEAKER
    refuse_secrets([("the proposed content", content), ("the sender_id", sender_id),
                    ("the sender_name", sender_name), ("the candidate_id", official_id)])
    decided = status is not CandidateStatus.PENDING
    return Candidate(
        candidate_id=f"c-{official_id}", kind=kind, content=content,
        evidence="" if kind is CandidateKind.IGNORE else content, rule=OFFICIAL_RULE, origin=CandidateOrigin.RULES,
        claim_type=claim, source_ref=f"official:{official_id}",
        speaker=Speaker(chat.launcher_type, chat.launcher_id, chat.bot_uuid, sender_id, sender_name),
        created_at=created, target=target, field=field, status=status,
        decided_at=(updated or created) if decided else None, decided_by=OFFICIAL_RULE if decided else "",
    )


def _as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value
