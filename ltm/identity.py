"""Identity of a turn and the memory scopes derived from it (S1-S4 in docs/REQUIREMENTS.md).

`Identity` is what a component learns from the host. `MemoryScope` is what the
service uses: the chat's key `chat_key` (its L1 space; LangBot's session key, stored as
`scope_key`) and the L2 space's key `space_key` (stored as `user_key`).

Decisions (also in docs/ARCHITECTURE.md):
- An empty `bot_uuid` gives `chat_key = session_name` (S3).
- In `bot` isolation without a bot uuid there is no bot to share with, so the
  L2 space falls back to the chat's own space: `space_key = chat_key`.
  This never widens sharing beyond one conversation.
- A sender id of None, 0, "0" or "" means "unknown speaker": no speaker profile,
  and episodes carry `sender_id = ""`.
- Host values enter through `Identity.from_host`, which applies the boundary rule of
  `ltm/host_values.py` (ids escaped, names cleaned). `Identity.build` takes values the plugin
  already holds (a stored speaker, a test's plain ids) and refuses any that skipped that rule.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any, Required, TypedDict, Unpack

from .errors import NoKnowledgeBase, ValidationError, quoted
from .host_values import clean_name, escape_bot_uuid, escape_id, has_stray_characters, id_problem, name_problem
from .provenance import MessageRef, message_id_problem
from .spaces import L2Space
from .wording import Phrase

LAUNCHER_TYPES = ("group", "person")


class Isolation(str, enum.Enum):
    SESSION = "session"
    BOT = "bot"


ISOLATION = {i: Phrase(f"isolation.{i.value}", i.value) for i in Isolation}


def clean_id(value: Any) -> str:
    """Host ids arrive as int, str or None; 0/None/'' mean 'unknown'."""
    if value is None:
        return ""
    text = str(value)
    # Whitespace is part of an id: "g1" and "g1 " are different chats (only blank means unknown).
    return "" if text.strip() in ("", "0", "None") else text


class IdentityValues(TypedDict, total=False):
    """What `Identity.build` / `Identity.from_host` take: the chat (required), the bot, the speaker and
    the query, each as the host or the caller has it (an enum, an int, None: unknown)."""

    launcher_type: Required[Any]
    launcher_id: Required[Any]
    bot_uuid: Any
    sender_id: Any
    sender_name: Any
    query_id: int | None
    message_id: Any  # the platform message the turn answers (docs/HOST-FACTS.md 14.7); None: none known


@dataclass(frozen=True)
class Identity:
    """Who is talking, where (S1). Built from host data by `ltm/langbot/identity.py`, never by a component."""

    launcher_type: str
    launcher_id: str
    bot_uuid: str = ""
    sender_id: str = ""
    sender_name: str = ""
    query_id: int | None = None
    message_id: str = ""  # the platform message this turn answers ("" when the host names none)

    def __post_init__(self) -> None:
        if self.launcher_type not in LAUNCHER_TYPES:
            raise ValidationError(f"launcher_type must be 'group' or 'person', got {quoted(self.launcher_type)}")
        if not str(self.launcher_id).strip():
            raise ValidationError("launcher_id is required")
        problem = (id_problem(self.launcher_id, "launcher_id") or id_problem(self.sender_id, "sender_id")
                   or id_problem(self.bot_uuid, "bot_uuid", bot=True) or name_problem(self.sender_name)
                   or message_id_problem(self.message_id))
        if problem:
            raise ValidationError(problem)

    @classmethod
    def build(cls, **values: Unpack[IdentityValues]) -> Identity:
        """An identity of values the plugin already holds (a stored speaker, a test's plain ids)."""
        return cls._made(values, from_host=False)

    @classmethod
    def from_host(cls, **values: Unpack[IdentityValues]) -> Identity:
        """The identity of raw host values (or ids an admin typed as the host shows them)."""
        return cls._made(values, from_host=True)

    @classmethod
    def _made(cls, values: IdentityValues, *, from_host: bool) -> Identity:
        """The one path of both: normalized (type lower-cased, unknown ids blank), and for host values
        escaped first, so `__post_init__` refuses only plugin-held values that skipped that rule."""
        raw_type = values["launcher_type"]
        launcher_type = str(getattr(raw_type, "value", raw_type) or "")
        raw_launcher = values["launcher_id"]
        launcher_id = str(raw_launcher if raw_launcher is not None else "")
        bot_uuid, sender_id = clean_id(values.get("bot_uuid")), clean_id(values.get("sender_id"))
        message_id = clean_id(values.get("message_id"))
        sender_name = values.get("sender_name")
        if from_host:
            if not launcher_id.strip():
                raise ValidationError("launcher_id is required")
            launcher_type, launcher_id = launcher_type[:40], escape_id(launcher_id)
            bot_uuid, sender_id = clean_id(escape_bot_uuid(bot_uuid)), clean_id(escape_id(sender_id))
            sender_name = clean_name(sender_name)
            escaped = escape_id(message_id)  # an id too long to keep is no provenance, never a refused turn
            message_id = "" if message_id_problem(escaped) else escaped
        return cls(
            launcher_type=launcher_type.strip().lower(),
            launcher_id=launcher_id,
            bot_uuid=bot_uuid,
            sender_id=sender_id,
            sender_name=str(sender_name or "").strip(),
            query_id=values.get("query_id"),
            message_id=message_id,
        )

    @property
    def message(self) -> MessageRef | None:
        """The platform message this turn answers, in its chat (None when the host named none)."""
        return MessageRef(self.message_id, self.chat_key) if self.message_id else None

    @property
    def session_name(self) -> str:
        return f"{self.launcher_type}_{self.launcher_id}"

    @property
    def chat_key(self) -> str:
        return f"{self.bot_uuid}:{self.session_name}" if self.bot_uuid else self.session_name


def space_key_for(identity: Identity, isolation: Isolation | str) -> str:
    """The L2 isolation key (S4)."""
    mode = Isolation(isolation)
    if mode is Isolation.BOT and identity.bot_uuid:
        return f"bot:{identity.bot_uuid}"
    return identity.chat_key


def split_chat_key(chat_key: str) -> tuple[str, str]:
    """`bot:group_1` -> ("bot", "group_1"); a key without a bot uuid is just the session name (S3)."""
    if chat_key.startswith(("group_", "person_")):
        return "", chat_key
    head, sep, tail = chat_key.partition(":")
    return (head, tail) if sep else ("", chat_key)


def names_a_chat(chat_key: str) -> bool:
    """Whether a key is a chat's session key (`[<bot>:]group_<id>` / `person_<id>`), not, say, the key of
    a bot-wide L2 space (`bot:<uuid>`)."""
    return split_chat_key(chat_key)[1].startswith(("group_", "person_"))


def space_key_for_chat_key(chat_key: str, isolation: Isolation | str) -> str:
    """The L2 key this plugin derives for a stored session key (used where only keys are known)."""
    bot_uuid, _ = split_chat_key(chat_key)
    if Isolation(isolation) is Isolation.BOT and bot_uuid:
        return f"bot:{bot_uuid}"
    return chat_key


def chat_of_key(chat_key: str) -> Identity | None:
    """The chat a session key names, when it is a key this plugin derives: `<bot uuid>:group_<id>`,
    `<bot uuid>:person_<id>` or the session name alone, every id in the kept form (None otherwise)."""
    bot_uuid, session_name = split_chat_key(chat_key)
    launcher_type, sep, launcher_id = session_name.partition("_")
    if not sep or launcher_type not in LAUNCHER_TYPES or not launcher_id:
        return None
    try:
        chat = Identity.build(launcher_type=launcher_type, launcher_id=launcher_id, bot_uuid=bot_uuid)
    except ValidationError:
        return None
    return chat if chat.chat_key == chat_key else None


def scope_of_space_key(space_key: str, kb_id: str, isolation: Isolation | str) -> MemoryScope | None:
    """The memory space an L2 key names, when it is one a KB of this isolation derives (None otherwise):
    in `session` isolation a chat's key (`<bot uuid>:group_<id>`, `<bot uuid>:person_<id>`, or the
    session name alone), in `bot` isolation `bot:<bot uuid>`. A bot's space names no chat: its scope
    key is the space's own key."""
    mode = Isolation(isolation)
    if mode is Isolation.BOT:
        bot_uuid = space_key[len("bot:"):] if space_key.startswith("bot:") else ""
        if not bot_uuid or id_problem(bot_uuid, "bot_uuid", bot=True):
            return None
        return MemoryScope(chat_key=space_key, space_key=space_key, kb_id=kb_id, isolation=mode)
    chat = chat_of_key(space_key)
    if chat is None:
        return None
    scope = MemoryScope.for_identity(chat, mode, kb_id)
    return scope if scope.space_key == space_key else None


def derived_pair_problem(chat_key: str, space_key: str, isolation: Isolation | str) -> str | None:
    """Why `(scope_key, user_key)` is not a pair this plugin derives for one chat (None when it is).
    A surface that takes raw keys (an admin page) checks this before it builds a `MemoryScope`, so
    no pair of keys can read one chat's records and write them into another's space."""
    chat = chat_of_key(chat_key)
    if chat is None:
        return ("scope_key is not a chat's key this plugin derives: <bot uuid>:group_<id>, "
                "<bot uuid>:person_<id>, or group_<id> / person_<id> without a bot")
    expected = space_key_for(chat, isolation)
    if space_key != expected:
        return (f"user_key {space_key} is not the key this plugin derives for scope_key {chat_key} "
                f"in {Isolation(isolation).value} isolation ({expected})")
    return None


@dataclass(frozen=True)
class MemoryScope:
    """Everything the service needs to keep one call inside its own memory.

    Built from a turn's identity (`for_identity`) or, by an admin surface, from raw keys
    an admin selected (then there is no speaker).
    """

    chat_key: str
    space_key: str
    kb_id: str = ""
    isolation: Isolation = Isolation.SESSION
    identity: Identity | None = None

    def __post_init__(self) -> None:
        if not self.chat_key or not self.space_key:
            raise ValidationError("scope_key and user_key are required")
        for name, key in (("scope_key", self.chat_key), ("user_key", self.space_key)):
            if has_stray_characters(key):
                raise ValidationError(f"{name} contains a control, bidi or unpaired surrogate character; "
                                      "no memory space key does")

    @classmethod
    def for_identity(cls, identity: Identity, isolation: Isolation | str, kb_id: str = "") -> MemoryScope:
        mode = Isolation(isolation)
        return cls(
            chat_key=identity.chat_key,
            space_key=space_key_for(identity, mode),
            kb_id=kb_id,
            isolation=mode,
            identity=identity,
        )

    @classmethod
    def of_chat_key(cls, chat_key: str, kb_id: str, isolation: Isolation | str) -> MemoryScope:
        """The scope of a chat by the session key the plugin noted for it, its L2 key derived in this
        isolation (no speaker, no live turn)."""
        mode = Isolation(isolation)
        return cls(chat_key=chat_key, space_key=space_key_for_chat_key(chat_key, mode), kb_id=kb_id,
                   isolation=mode)

    @classmethod
    def selected(cls, chat_key: str, space_key: str, kb_id: str, isolation: Isolation | str) -> MemoryScope:
        """The scope of a chat an operator selected by its two keys: only a pair this plugin derives for
        one chat (`derived_pair_problem`, else `ValidationError`)."""
        problem = derived_pair_problem(chat_key, space_key, isolation)
        if problem:
            raise ValidationError(problem)
        return cls(chat_key=chat_key, space_key=space_key, kb_id=kb_id, isolation=Isolation(isolation))

    @classmethod
    def stored(cls, chat_key: str, space_key: str, kb_id: str, isolation: Isolation | str) -> MemoryScope:
        """A scope rebuilt from keys the plugin stored earlier (no speaker, no live turn)."""
        try:
            mode = Isolation(isolation)
        except ValueError:
            mode = Isolation.SESSION
        return cls(chat_key=chat_key, space_key=space_key, kb_id=kb_id, isolation=mode)

    @property
    def shared(self) -> bool:
        """Whether this chat's memory is shared with other people: a group's is shared by its members,
        and in bot isolation every chat of the bot (private chats too) shares one episode space."""
        launcher = self.identity.launcher_type if self.identity else ""
        return launcher == "group" or (self.isolation is Isolation.BOT and self.space_key != self.chat_key)

    @property
    def l2(self) -> L2Space:
        """The chat's L2 space (its memory KB and space key) as one value: what the episode store and the
        vector port take, and what the gate locks (`WriteGate.write_l2`). NoKnowledgeBase without a KB."""
        if not self.kb_id:
            raise NoKnowledgeBase()
        return L2Space(self.kb_id, self.space_key)

    def with_kb(self, kb_id: str) -> MemoryScope:
        return replace(self, kb_id=kb_id)

    @property
    def sender_id(self) -> str:
        return self.identity.sender_id if self.identity else ""

    @property
    def sender_name(self) -> str:
        return self.identity.sender_name if self.identity else ""

    @property
    def query_id(self) -> int | None:
        return self.identity.query_id if self.identity else None
