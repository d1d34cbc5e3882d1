"""Memory spaces: the unit of write serialization, fencing and audit (F1 in docs/REQUIREMENTS.md).

- `Space.l1(chat_key)`           L1 profiles, snapshots and candidates of one chat;
- `Space.l2(l2)`                 L2 episodes of one space key in one memory knowledge base: `l2` is the
                                 space as one value, `L2Space(kb_id, space_key)` (`MemoryScope.l2`), the
                                 one argument the episode store and the vector port take;
- `Space.installation()`         the installation-wide `kb_configs` record.

A module of the basics: the ports and the LangBot adapter speak `L2Space` too.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

INSTALLATION_KEY = "installation"  # the installation space's lock, fence and audit log key


# The glossary's words for the chat's key and the space's key, and the names stored data and the
# console's JSON keep for them (what earlier releases wrote and other tools read).
STORED_NAMES = {"chat_key": "scope_key", "space_key": "user_key"}


def stored_names(data: dict[str, Any]) -> dict[str, Any]:
    """A record's fields under their stored names (order kept)."""
    return {STORED_NAMES.get(key, key): value for key, value in data.items()}


class SpaceKind(str, enum.Enum):
    L1 = "l1"
    L2 = "l2"
    INSTALLATION = "installation"


@dataclass(frozen=True)
class L2Space:
    """One L2 memory space: the episodes of one space key in one memory knowledge base. One value from
    the scope (`MemoryScope.l2`) through the gate, the episode store and the vector port down to the
    adapter, which alone turns it into the host's names (`ltm/langbot/layout.py`)."""

    kb_id: str
    space_key: str

    def __post_init__(self) -> None:
        if not self.kb_id or not self.space_key:
            raise ValueError("an L2 space needs its knowledge base and its space key")


@dataclass(frozen=True)
class Space:
    kind: SpaceKind
    chat_key: str = ""
    kb_id: str = ""
    space_key: str = ""

    @classmethod
    def l1(cls, chat_key: str) -> Space:
        return cls(SpaceKind.L1, chat_key=chat_key)

    @classmethod
    def l2(cls, space: L2Space) -> Space:
        return cls(SpaceKind.L2, kb_id=space.kb_id, space_key=space.space_key)

    @classmethod
    def installation(cls) -> Space:
        return cls(SpaceKind.INSTALLATION)

    @property
    def key(self) -> str:
        """Lock and fence key."""
        if self.kind is SpaceKind.L1:
            return f"l1:{self.chat_key}"
        if self.kind is SpaceKind.L2:
            return f"l2:{self.kb_id}:{self.space_key}"
        return INSTALLATION_KEY

    @classmethod
    def from_key(cls, key: str) -> Space | None:
        """The space a stored fence key names; None for a key this version does not know."""
        if key == INSTALLATION_KEY:
            return cls.installation()
        if key.startswith("l1:") and len(key) > 3:
            return cls.l1(key[3:])
        if key.startswith("l2:"):
            kb_id, sep, space_key = key[3:].partition(":")
            if sep and kb_id and space_key:
                return cls.l2(L2Space(kb_id, space_key))
        return None

    @property
    def as_l2(self) -> L2Space:
        """The L2 space this lock unit guards, as the store addresses it (ValueError for an L1 or the
        installation space)."""
        if self.kind is not SpaceKind.L2:
            raise ValueError(f"{self.key} is not an L2 space")
        return L2Space(self.kb_id, self.space_key)

    def describe(self) -> dict[str, str]:
        data = {"kind": self.kind.value}
        if self.kind is SpaceKind.L1:
            data["scope_key"] = self.chat_key
        elif self.kind is SpaceKind.L2:
            data.update(kb_id=self.kb_id, user_key=self.space_key)
        return data
