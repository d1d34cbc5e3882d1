"""L1 profile operations: read, update through the write gate, an operator's edits, list, export and
import (P1-P3, S7).

`update` is the tool's and a turn's path: the session profile or the current speaker's own. An
operator names the profile (`ProfileRef`: the session's, or any speaker's of the session) for
`edit`, `clear` and `import_profiles`; who may do that is the surface's rule. Every write goes
through the gate on the session's L1 space and is audited there."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .. import params
from .._gate import WriteGate, WriteTx
from .._storage import JsonStore, profile_key, speaker_of_profile_key, speaker_profile_prefix
from ..errors import ValidationError
from ..guards import refuse_secrets
from ..identity import MemoryScope, clean_id
from ..operations import Operation
from .field_action import names_field_action, parse_field_action, profile_target
from .model import (
    FIELD_LABEL,
    MODE_LABEL,
    PROFILE_CLEARED,
    PROFILE_IMPORTED,
    PROFILE_UPDATED,
    SPEAKER_PROFILE_ERASED,
    TARGET_LABEL,
    Profile,
    ProfileChange,
    ProfileLimits,
    ProfileTarget,
    UpdateMode,
)
from .sources import MAX_SOURCES, ProfileSource, changes_between
from .transfer import ProfileImport

log = logging.getLogger("LongTermMemory")


@dataclass(frozen=True)
class Profiles:
    session: Profile
    speaker: Profile | None


def parse_target(value: Any) -> ProfileTarget:
    return ProfileTarget(params.choice(value, "scope", [t.value for t in ProfileTarget]))


@dataclass(frozen=True)
class ProfileRef:
    """One profile of a session: its session profile, or the speaker profile of `sender_id`."""

    target: ProfileTarget
    sender_id: str = ""

    @classmethod
    def parse(cls, target: Any, sender_id: Any = None) -> ProfileRef:
        which = ProfileTarget(params.choice(target, "target", [t.value for t in ProfileTarget]))
        if which is ProfileTarget.SESSION:
            return cls(which)
        speaker = clean_id(params.text(sender_id, "sender_id", max_chars=200, required=False))
        if not speaker:
            raise ValidationError("sender_id is required for a speaker profile")
        return cls(which, speaker)

    def key(self, chat_key: str) -> str:
        return profile_key(chat_key, self.sender_id if self.target is ProfileTarget.SPEAKER else "")

    @property
    def target_type(self) -> str:
        return f"{self.target.value}_profile"

    @property
    def target_id(self) -> str:
        return self.sender_id if self.target is ProfileTarget.SPEAKER else "session"


class ProfileBook:
    def __init__(self, gate: WriteGate, store: JsonStore, limits: Callable[[], ProfileLimits],
                 read_import: Callable[[Any, ProfileLimits], ProfileImport]) -> None:
        self._gate = gate
        self._store = store
        self._limits = limits
        # An import file may be the official plugin's export, whose reader lives in ltm/official/ (above
        # this layer): parts.py hands it in, so profiles know this plugin's records only.
        self._read_import = read_import

    async def current(self, scope: MemoryScope) -> Profiles:
        session = Profile.from_dict(await self._store.get(profile_key(scope.chat_key)))
        speaker = None
        if scope.sender_id:
            speaker = Profile.from_dict(await self._store.get(profile_key(scope.chat_key, scope.sender_id)))
        return Profiles(session, speaker)

    async def speakers(self, scope: MemoryScope) -> dict[str, Profile]:
        """Every speaker profile of one session (export, and an admin looking at the session)."""
        prefix = speaker_profile_prefix(scope.chat_key)
        result: dict[str, Profile] = {}
        for key in await self._store.keys(prefix):
            result[speaker_of_profile_key(key, scope.chat_key)] = Profile.from_dict(await self._store.get(key))
        return result

    async def update(self, scope: MemoryScope, target: Any, raw_change: dict[str, Any]) -> Profile:
        """The session profile, or the current speaker's own (T3). `raw_change` is the list form
        (name, traits, preferences, notes, mode) or the field/action form (`field_action.py`), which
        may leave the scope out."""
        change = parse_field_action(raw_change) if names_field_action(raw_change) else ProfileChange.parse(raw_change)
        which = profile_target(target, raw_change)
        if which is ProfileTarget.SPEAKER and not scope.sender_id:
            raise ValidationError("speaker profiles need a known sender; this turn has none")
        return await self._write(scope, ProfileRef(which, scope.sender_id if which is ProfileTarget.SPEAKER else ""),
                                 change, Operation.UPDATE_PROFILE)

    async def edit(self, scope: MemoryScope, ref: ProfileRef, raw_change: dict[str, Any], *,
                   operation: Operation = Operation.PROFILE_EDIT) -> Profile:
        """Change one profile of the session: the same validation, limits and secret check as every update.
        A removal that would remove nothing is refused (nothing is written)."""
        return await self._write(scope, ref, ProfileChange.parse(raw_change), operation)

    async def _write(self, scope: MemoryScope, ref: ProfileRef, change: ProfileChange, operation: Operation) -> Profile:
        refuse_secrets([("the profile name", change.name or ""), ("the profile notes", change.notes or ""),
                        *(("a trait", t) for t in change.traits or []),
                        *(("a preference", p) for p in change.preferences or []),
                        ("the fact_key", change.fact_key or ""), ("the previous_value", change.previous_value or "")])
        key = ref.key(scope.chat_key)
        fields = [f for f in ("name", "traits", "preferences", "notes") if getattr(change, f) is not None]
        fact = {"fact_key": change.fact_key} if change.fact_key else {}
        async with self._gate.write_l1(scope, operation) as tx:
            before = Profile.from_dict(await self._store.get(key))
            updated = change.apply(before, self._limits())
            if change.mode is UpdateMode.REMOVE and updated.texts() == before.texts():
                raise ValidationError(f"the {ref.target.value} profile has nothing of that to remove; nothing changed")
            message = scope.identity.message if scope.identity and operation is Operation.UPDATE_PROFILE else None
            if message is not None:  # a turn's change keeps the message it came from (X1)
                stated = {f: list(getattr(change, f) or []) for f in ("traits", "preferences")}
                diff = changes_between(before.to_dict(), updated.to_dict(), stated)
                source = ProfileSource(message, scope.sender_id, updated.updated_at or "", diff)
                updated.sources = [*updated.sources, source][-MAX_SOURCES:]
            await tx.set(key, updated.to_dict())
            tx.applied(operation, ref.target_type, ref.target_id,
                       PROFILE_UPDATED(mode=MODE_LABEL[change.mode](), fields=[FIELD_LABEL[f]() for f in fields]),
                       fields=fields, mode=change.mode.value, **fact)
        log.info("[LongTermMemory] profile updated scope=%s target=%s fields=%s", scope.chat_key, ref.target.value,
                 fields)
        return updated

    async def clear(self, scope: MemoryScope, ref: ProfileRef) -> bool:
        """Delete one profile of the session; False (nothing written) when none is stored."""
        key = ref.key(scope.chat_key)
        async with self._gate.write_l1(scope, Operation.PROFILE_CLEAR) as tx:
            if await self._store.get(key) is None:
                return False
            await tx.delete(key)
            tx.applied(Operation.PROFILE_CLEAR, ref.target_type, ref.target_id,
                       PROFILE_CLEARED(target=TARGET_LABEL[ref.target]()))
        return True

    async def erase_speaker(self, tx: WriteTx, chat_key: str, sender_id: str) -> bool:
        """Inside an L1 write of `scope_key`: delete `sender_id`'s speaker profile, if one is stored."""
        ref = ProfileRef(ProfileTarget.SPEAKER, sender_id)
        key = ref.key(chat_key)
        if await self._store.get(key) is None:
            return False
        await tx.delete(key)
        tx.applied(tx.operation, ref.target_type, ref.target_id, SPEAKER_PROFILE_ERASED())
        return True

    async def speaker_profile(self, chat_key: str, sender_id: str) -> Profile | None:
        """One speaker's stored profile in a session, or None."""
        raw = await self._store.get(ProfileRef(ProfileTarget.SPEAKER, sender_id).key(chat_key))
        return None if raw is None else Profile.from_dict(raw)

    async def import_profiles(self, scope: MemoryScope, payload: Any, *, dry_run: bool = False) -> ProfileImport:
        """What `export` produced (or the official plugin's L1 export, `ltm/official/profiles.py`), checked
        before any write; each profile it carries with content replaces that profile of this session
        (empty ones are left alone: an import never erases). A profile already stored exactly so is not
        written again, so importing one file twice changes nothing the second time. `dry_run`: what would
        be written and what is unchanged, and nothing is written."""
        limits = self._limits()
        found = self._read_import(payload, limits)
        written: list[tuple[ProfileTarget, str, Profile]] = []
        unchanged: list[tuple[ProfileTarget, str, Profile]] = []
        if dry_run:
            for ref_target, sender_id, profile in found.profiles:
                stored = await self._store.get(ProfileRef(ref_target, sender_id).key(scope.chat_key))
                same = Profile.from_dict(stored).to_dict() == profile.to_dict()
                (unchanged if same else written).append((ref_target, sender_id, profile))
            return replace(found, profiles=written, unchanged=tuple(unchanged))
        async with self._gate.write_l1(scope, Operation.PROFILE_IMPORT) as tx:
            for ref_target, sender_id, profile in found.profiles:
                ref = ProfileRef(ref_target, sender_id)
                key = ref.key(scope.chat_key)
                if Profile.from_dict(await self._store.get(key)).to_dict() == profile.to_dict():
                    unchanged.append((ref_target, sender_id, profile))
                    continue
                await tx.set(key, profile.to_dict())
                tx.applied(Operation.PROFILE_IMPORT, ref.target_type, ref.target_id,
                           PROFILE_IMPORTED(target=TARGET_LABEL[ref_target]()),
                           from_scope_key=found.chat_key)
                written.append((ref_target, sender_id, profile))
        log.info("[LongTermMemory] profiles imported scope=%s profiles=%d unchanged=%d", scope.chat_key,
                 len(written), len(unchanged))
        return replace(found, profiles=written, unchanged=tuple(unchanged))

    async def export(self, scope: MemoryScope) -> dict[str, Any]:
        """L1 of exactly this session_key (S7)."""
        session = Profile.from_dict(await self._store.get(profile_key(scope.chat_key)))
        speakers = await self.speakers(scope)
        return {
            "scope_key": scope.chat_key,
            "session_profile": session.to_dict(),
            "speaker_profiles": {sid: p.to_dict() for sid, p in sorted(speakers.items())},
        }
