"""What operators see of chats beside their memory (M1): the names a chat and its latest speaker go by
on the platform, kept as labels, and the space last opened in the Memory Console.

LangBot gives every turn the group's name and the speaker's display name (query variables `group_name`
and `sender_name`; a private chat has no group name, its speaker names it). An operator tells chats apart
by them, so the console's space list and `!memory` show the latest ones. They are labels only: never a
key, never part of an identity, never sent to a model. Cleaned like every name from the host
(`host_values.clean_name`: one line, bounded), and a name that looks like a credential is not kept.

One record per chat, written only when a name changed and after the turn (`set_later`): the names each
chat had last are remembered in this process (bounded), and plugin storage answers a read of a known key
from its cache, so a turn whose names did not change makes no host call. The speaker's id is kept
beside their name, so erasing a person
(`ltm/person/finder.py`) removes their name from every chat's label.

LangBot's WebUI reloads the whole page when its language is switched, and the console's sandboxed frame
has no storage of its own, so the space an operator opened is kept here (one record for the installation)
and the console opens it again on start.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import Any

from ._bookkeeping import Bookkeeping
from ._storage import chat_label_key, console_view_key
from .errors import LTMError
from .host_values import clean_name
from .identity import MemoryScope, split_chat_key
from .secrets import secret_kind

log = logging.getLogger("LongTermMemory")
REMEMBERED_CHATS = 4096  # chats whose last names this process remembers (a miss costs one cached read)


@dataclass(frozen=True)
class ChatLabel:
    chat_name: str = ""  # the group's name ("" for a private chat, which its speaker names)
    sender_name: str = ""  # the latest speaker's display name
    sender_id: str = ""  # whose name `sender_name` is

    @classmethod
    def of(cls, raw: Any) -> ChatLabel:
        values = raw if isinstance(raw, dict) else {}
        return cls(*(str(values.get(name) or "") for name in ("chat_name", "sender_name", "sender_id")))

    @property
    def empty(self) -> bool:
        return not (self.chat_name or self.sender_name)


def _label(value: Any) -> str:
    name = clean_name(value)
    return "" if secret_kind(name) else name


class ChatLabels:
    def __init__(self, store: Bookkeeping) -> None:
        self._store = store
        self._last: OrderedDict[str, ChatLabel] = OrderedDict()

    async def note(self, scope: MemoryScope, chat_name: Any) -> None:
        """The names this turn came with; never raises (a label must not cost the turn anything)."""
        label = ChatLabel(_label(chat_name), _label(scope.sender_name), scope.sender_id if scope.sender_name else "")
        if label.empty:
            return
        try:
            if (self._last.get(scope.chat_key) or await self.get(scope.chat_key)) != label:
                # After the turn, like the injection snapshot: the reply never waits for a label.
                self._store.set_later(chat_label_key(scope.chat_key), asdict(label))
        except LTMError as exc:
            log.warning("[LongTermMemory] chat label not kept scope=%s: %s", scope.chat_key, exc.code)
            return
        self._remember(scope.chat_key, label)

    async def get(self, chat_key: str) -> ChatLabel:
        return ChatLabel.of(await self._store.get(chat_label_key(chat_key)))

    async def forget_speaker(self, chat_key: str, sender_id: str) -> bool:
        """A person's erasure: their name leaves this chat's label (a private chat's whole label, which
        names them). True when something was removed."""
        label = await self.get(chat_key)
        private = split_chat_key(chat_key)[1] == f"person_{sender_id}"
        if label.empty or not (private or label.sender_id == sender_id):
            return False
        kept = ChatLabel() if private else ChatLabel(label.chat_name)
        if kept.empty:
            await self._store.delete(chat_label_key(chat_key))
        else:
            await self._store.set(chat_label_key(chat_key), asdict(kept))
        self._last.pop(chat_key, None)
        return True

    def _remember(self, chat_key: str, label: ChatLabel) -> None:
        self._last[chat_key] = label
        self._last.move_to_end(chat_key)
        while len(self._last) > REMEMBERED_CHATS:
            self._last.popitem(last=False)


class LastOpened:
    """The (chat key, space key) last opened in the Memory Console; the console checks the pair again."""

    def __init__(self, store: Bookkeeping) -> None:
        self._store = store

    async def get(self) -> tuple[str, str] | None:
        raw = await self._store.get(console_view_key())
        if not isinstance(raw, dict) or not raw.get("scope_key") or not raw.get("user_key"):
            return None
        return str(raw["scope_key"]), str(raw["user_key"])

    async def set(self, scope: MemoryScope) -> None:
        if await self.get() != (scope.chat_key, scope.space_key):
            await self._store.set(console_view_key(), {"scope_key": scope.chat_key, "user_key": scope.space_key})
