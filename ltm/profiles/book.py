"""L1 profile operations: read, update through the write gate, list and export (P1-P3, S7)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import params
from .._gate import WriteGate
from .._storage import JsonStore, profile_key, sender_of_profile_key, speaker_profile_prefix
from ..errors import ValidationError
from ..guards import refuse_secrets
from ..identity import MemoryScope
from ..spaces import Space
from .model import Profile, ProfileChange, ProfileLimits, ProfileTarget

log = logging.getLogger("LongTermMemory")


@dataclass(frozen=True)
class Profiles:
    session: Profile
    speaker: Profile | None


def parse_target(value: Any) -> ProfileTarget:
    return ProfileTarget(params.choice(value, "scope", [t.value for t in ProfileTarget]))


class ProfileBook:
    def __init__(self, gate: WriteGate, store: JsonStore, limits: Callable[[], ProfileLimits]) -> None:
        self._gate = gate
        self._store = store
        self._limits = limits

    async def current(self, scope: MemoryScope) -> Profiles:
        session = Profile.from_dict(await self._store.get(profile_key(scope.scope_key)))
        speaker = None
        if scope.sender_id:
            speaker = Profile.from_dict(await self._store.get(profile_key(scope.scope_key, scope.sender_id)))
        return Profiles(session, speaker)

    async def speakers(self, scope: MemoryScope) -> dict[str, Profile]:
        """Every speaker profile of one session (export, and an admin looking at the session)."""
        prefix = speaker_profile_prefix(scope.scope_key)
        result: dict[str, Profile] = {}
        for key in await self._store.keys(prefix):
            result[sender_of_profile_key(key, scope.scope_key)] = Profile.from_dict(await self._store.get(key))
        return result

    async def update(self, scope: MemoryScope, target: Any, raw_change: dict[str, Any]) -> Profile:
        which = parse_target(target)
        if which is ProfileTarget.SPEAKER and not scope.sender_id:
            raise ValidationError("speaker profiles need a known sender; this turn has none")
        change = ProfileChange.parse(raw_change)
        refuse_secrets([("the profile name", change.name or ""), ("the profile notes", change.notes or ""),
                        *(("a trait", t) for t in change.traits or []),
                        *(("a preference", p) for p in change.preferences or [])])
        key = profile_key(scope.scope_key, scope.sender_id if which is ProfileTarget.SPEAKER else "")
        fields = [f for f in ("name", "traits", "preferences", "notes") if getattr(change, f) is not None]
        async with self._gate.write(scope, Space.l1(scope.scope_key), "update_profile") as tx:
            updated = change.apply(Profile.from_dict(await self._store.get(key)), self._limits())
            await tx.call("storage write", lambda: self._store.set(key, updated.to_dict()))
            tx.applied("update_profile", f"{which.value}_profile",
                       scope.sender_id if which is ProfileTarget.SPEAKER else "session",
                       f"{change.mode.value} {', '.join(fields)}", fields=fields, mode=change.mode.value)
        log.info("[LongTermMemory] profile updated scope=%s target=%s fields=%s", scope.scope_key, which.value, fields)
        return updated

    async def export(self, scope: MemoryScope) -> dict[str, Any]:
        """L1 of exactly this session_key (S7)."""
        session = Profile.from_dict(await self._store.get(profile_key(scope.scope_key)))
        speakers = await self.speakers(scope)
        return {
            "scope_key": scope.scope_key,
            "session_profile": session.to_dict(),
            "speaker_profiles": {sid: p.to_dict() for sid, p in sorted(speakers.items())},
        }
