"""Reading an L1 import: exactly what `ProfileBook.export` writes, validated whole before any write.

    {"scope_key": "...", "session_profile": {name, traits, preferences, notes, updated_at, facts?},
     "speaker_profiles": {"<sender_id>": {...}, ...}}

Every profile goes through the update path's own validation (`ProfileChange`), the plugin's
limits (a list longer than `max_profile_traits` is refused rather than cut: an import restores,
it does not drop what it cannot fit) and the secret check. The first bad profile fails the whole
import with its place; a profile without content is skipped (an import never erases).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .. import params
from ..errors import ValidationError, quoted
from ..guards import refuse_secrets
from ..identity import clean_id
from ..skipped import SkippedRecord
from ..timefields import normalize_time
from .facts import parse_facts
from .model import Profile, ProfileChange, ProfileLimits, ProfileTarget
from .sources import parse_sources

IMPORT_FIELDS = ("scope_key", "session_profile", "speaker_profiles")
PROFILE_FIELDS = ("name", "traits", "preferences", "notes", "updated_at", "facts", "sources")
MAX_IMPORT_PROFILES = 1000
MAX_SENDER_ID_CHARS = 200


@dataclass(frozen=True)
class ProfileImport:
    chat_key: str  # the session the file came from, as it names it ("" when it does not)
    profiles: list[tuple[ProfileTarget, str, Profile]]  # (target, sender id or "", profile), with content
    skipped_empty: int = 0
    skipped: tuple[SkippedRecord[str], ...] = ()  # what an official export held that this plugin cannot store
    unchanged: tuple[tuple[ProfileTarget, str, Profile], ...] = ()  # stored exactly so already

    @property
    def speakers(self) -> list[str]:
        return [speaker for target, speaker, _ in self.profiles if target is ProfileTarget.SPEAKER]

    @property
    def session(self) -> bool:
        return any(target is ProfileTarget.SESSION for target, _, _ in self.profiles)


def parse_import(payload: Any, limits: ProfileLimits) -> ProfileImport:
    if not isinstance(payload, dict) or not ({"session_profile", "speaker_profiles"} & set(payload)):
        raise ValidationError('expected an L1 export: {"scope_key": ..., "session_profile": {...}, '
                              '"speaker_profiles": {...}}; nothing was imported')
    params.reject_unknown(payload, IMPORT_FIELDS)
    chat_key = _named_chat_key(payload)
    found: list[tuple[ProfileTarget, str, Profile]] = []
    if payload.get("session_profile") is not None:
        found.append((ProfileTarget.SESSION, "", _profile(payload["session_profile"], limits, "session_profile")))
    speakers = payload.get("speaker_profiles")
    if speakers is not None:
        if not isinstance(speakers, dict):
            raise ValidationError("speaker_profiles must be an object {sender_id: profile}; nothing was imported")
        if len(speakers) > MAX_IMPORT_PROFILES:
            raise ValidationError(f"at most {MAX_IMPORT_PROFILES} speaker profiles per import")
        for raw_id, raw in speakers.items():
            where = f"speaker profile {quoted(raw_id)}"
            speaker = clean_id(params.text(raw_id, f"the sender id of {where}", max_chars=MAX_SENDER_ID_CHARS,
                                          required=False))
            if not speaker:
                raise ValidationError(f"{where}: a speaker profile needs a sender id; nothing was imported")
            found.append((ProfileTarget.SPEAKER, speaker, _profile(raw, limits, where)))
    kept = [item for item in found if not item[2].is_empty]
    refuse_secrets([*(("a sender id", speaker) for _, speaker, _ in kept),
                    *((f"the {field}", text) for _, _, p in kept for field, text in _texts(p))])
    return ProfileImport(chat_key, kept, len(found) - len(kept))


def _named_chat_key(payload: dict[str, Any]) -> str:
    """The session the file says it came from: kept in the audit and quoted in the reply, so one that
    holds a credential refuses the import like any other field of it (dropping it silently would hide
    that the file carries a secret)."""
    chat_key = params.text(payload.get("scope_key"), "scope_key", max_chars=512, required=False)
    refuse_secrets([("the scope_key", chat_key)])
    return chat_key


def _profile(raw: Any, limits: ProfileLimits, where: str) -> Profile:
    try:
        if not isinstance(raw, dict):
            raise ValidationError("must be an object")
        params.reject_unknown(raw, PROFILE_FIELDS)
        change = ProfileChange.parse({"name": raw.get("name") or "", "traits": raw.get("traits") or [],
                                      "preferences": raw.get("preferences") or [], "notes": raw.get("notes") or "",
                                      "mode": "replace"})
        for field, items, limit, setting in (
                ("traits", change.traits or [], limits.max_traits, "max_profile_traits"),
                ("preferences", change.preferences or [], limits.max_preferences, "max_profile_preferences")):
            if len(items) > limit:
                raise ValidationError(f"{field} has {len(items)} items, more than {setting} ({limit})")
        updated_at = normalize_time(raw.get("updated_at"), "updated_at")
        facts = parse_facts(raw.get("facts"), "facts")
        profile = change.apply(Profile(facts=facts), limits)  # de-duplicated like any update; notes checked
        profile.sources = parse_sources(raw.get("sources"), "sources")  # the messages it came from (X1)
        refuse_secrets([*profile.fact_texts(), *(("a source", t) for s in profile.sources for t in s.texts())])
    except ValidationError as exc:
        raise ValidationError(f"{where}: {exc.message}; nothing was imported") from None
    return replace(profile, updated_at=updated_at or profile.updated_at)


def _texts(profile: Profile) -> list[tuple[str, str]]:
    return [("profile name", profile.name), ("profile notes", profile.notes),
            *(("trait", t) for t in profile.traits), *(("preference", p) for p in profile.preferences)]
