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
from ...errors import ValidationError, quoted
from ...guards import refuse_secrets
from ...identity import Identity, MemoryScope, clean_id
from ...secrets import secret_kind
from ...timefields import normalize_time, now_iso
from ...wording import Phrase
from .reading import OFFICIAL_PLUGIN

MIGRATED_ENTRY = Phrase("audit.migrated_entry", "migrated from the official plugin: {summary}")
MAX_CARRIED_SUMMARY = 160
# This plugin keeps its own audit ids and names short; an entry carried from the official log keeps each
# field as it was up to this length, and a longer one shortened with its whole value in `meta.full_values`.
MAX_CARRIED_FIELD = 2000
CARRIED_FIELDS = ("audit_id", "operation", "target_type", "target_id", "sender_id", "sender_name")
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
    """(official audit id, the entry for this chat's log); ValidationError with the reason otherwise.

    Every field and the whole summary are checked for credentials as given, before anything is cut. No
    entry is dropped for its length: a field over `MAX_CARRIED_FIELD` is shortened and kept whole in
    `meta.full_values`, as is a summary longer than the carried `MAX_CARRIED_SUMMARY`."""
    if not isinstance(raw, dict):
        raise ValidationError("must be an object")
    given = {name: _carried_text(raw, name) for name in CARRIED_FIELDS}
    given["summary"] = " ".join(_carried_text(raw, "summary", multiline=True).split())
    for name, value in given.items():
        kind = secret_kind(value) if value else None
        if kind:
            raise ValidationError(f"its {name} looks like a credential ({kind}); secrets are never stored")
    audit_id = given.pop("audit_id")
    if not audit_id:
        raise ValidationError("audit_id is required")
    if not given["operation"]:
        raise ValidationError("operation is required")
    time = normalize_time(raw.get("timestamp"), "timestamp")
    if time is None:
        raise ValidationError("timestamp is required")
    full = {name: value for name, value in given.items()
            if len(value) > (MAX_CARRIED_SUMMARY if name == "summary" else MAX_CARRIED_FIELD)}
    kept = {name: _shortened(value, MAX_CARRIED_SUMMARY if name == "summary" else MAX_CARRIED_FIELD)
            for name, value in given.items()}
    query_id = raw.get("query_id")
    meta: dict[str, Any] = {"migrated_from": OFFICIAL_PLUGIN, "official_audit_id": audit_id}
    if full:
        meta["full_values"] = full
    entry = AuditEntry(
        operation=ForeignOperation(kept["operation"]), target_type=kept["target_type"], target_id=kept["target_id"],
        chat_key=scope.chat_key, space_key=scope.space_key, sender_id=clean_id(kept["sender_id"]),
        sender_name=kept["sender_name"],
        query_id=query_id if isinstance(query_id, int) and not isinstance(query_id, bool) else None,
        summary=MIGRATED_ENTRY(summary=kept["summary"]), meta=meta, time=time)
    return audit_id, entry


def _carried_text(raw: dict[str, Any], name: str, *, multiline: bool = False) -> str:
    """One field of an official audit entry as given (a number id as its digits); no length limit here."""
    value = _as_text(raw.get(name))
    if isinstance(value, str) and value:
        return params.text(value, name, max_chars=len(value), required=False, multiline=multiline)
    return params.text(value, name, max_chars=1, required=False)


def _shortened(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[:limit - 1] + "…"


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
                raise ValidationError(f"a candidate for the profile's {quoted(name) if name else '(no field)'} "
                                      "has no equivalent here (only name, traits and preferences)")
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
