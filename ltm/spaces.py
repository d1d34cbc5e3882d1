"""Memory spaces: the unit of write serialization, fencing and audit (F1 in docs/REQUIREMENTS.md).

- `Space.l1(scope_key)`          L1 profiles, snapshots and candidates of one session;
- `Space.l2(kb_id, user_key)`    L2 episodes of one isolation key in one memory knowledge base;
- `Space.installation()`         the installation-wide `kb_configs` record.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

INSTALLATION_KEY = "installation"  # the installation space's lock, fence and audit log key


class SpaceKind(str, enum.Enum):
    L1 = "l1"
    L2 = "l2"
    INSTALLATION = "installation"


@dataclass(frozen=True)
class Space:
    kind: SpaceKind
    scope_key: str = ""
    kb_id: str = ""
    user_key: str = ""

    @classmethod
    def l1(cls, scope_key: str) -> Space:
        return cls(SpaceKind.L1, scope_key=scope_key)

    @classmethod
    def l2(cls, kb_id: str, user_key: str) -> Space:
        return cls(SpaceKind.L2, kb_id=kb_id, user_key=user_key)

    @classmethod
    def installation(cls) -> Space:
        return cls(SpaceKind.INSTALLATION)

    @property
    def key(self) -> str:
        """Lock and fence key."""
        if self.kind is SpaceKind.L1:
            return f"l1:{self.scope_key}"
        if self.kind is SpaceKind.L2:
            return f"l2:{self.kb_id}:{self.user_key}"
        return INSTALLATION_KEY

    @classmethod
    def from_key(cls, key: str) -> Space | None:
        """The space a stored fence key names; None for a key this version does not know."""
        if key == INSTALLATION_KEY:
            return cls.installation()
        if key.startswith("l1:") and len(key) > 3:
            return cls.l1(key[3:])
        if key.startswith("l2:"):
            kb_id, sep, user_key = key[3:].partition(":")
            if sep and kb_id and user_key:
                return cls.l2(kb_id, user_key)
        return None

    def describe(self) -> dict[str, str]:
        data = {"kind": self.kind.value}
        if self.kind is SpaceKind.L1:
            data["scope_key"] = self.scope_key
        elif self.kind is SpaceKind.L2:
            data.update(kb_id=self.kb_id, user_key=self.user_key)
        return data
