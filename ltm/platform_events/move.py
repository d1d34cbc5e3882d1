"""Moving a bot's memory to a re-created bot (issue 41, point 5): never automatic, an admin's decision.

Memory spaces are keyed by the bot's uuid (`<bot uuid>:group_<id>` chats; `bot:<bot uuid>` episode
spaces in bot isolation), and a bot deleted and created again in LangBot has a new uuid (docs/HOST-FACTS.md
14.8): its groups' memory stays under the old one. `BotMover` copies what the installation noted of the old
bot into the same chats of the new bot, through the ordinary imports (validated, de-duplicated, audited in
each new space as `import` / `profile_import`):
- every episode of each old chat's episode space, all statuses, with its speaker, time, status, links
  and provenance (a copy already made is recognised by its original id: running it again adds nothing);
- the session profile and every speaker profile of each old chat.
Not moved: review candidates and the conversation record (both tied to the old chat's turns). The old
bot's memory is left as it was; an operator forgets it from the Memory Console once the copy is checked.
A dry run says per chat what would be copied and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import Diagnostics
from ..episodes.model import LISTED_STATUSES
from ..episodes.store import EpisodeStore
from ..episodes.transfer import EpisodeTransfer, parse_items
from ..errors import ValidationError
from ..host_values import escape_bot_uuid, id_problem
from ..identity import Isolation, MemoryScope, split_chat_key
from ..kb_registry import KnowledgeBaseRegistry
from ..ports import HostDirectory
from ..profiles.book import ProfileBook
from ..profiles.model import Profile
from ..spaces import L2Space


@dataclass(frozen=True)
class ChatMove:
    """One chat: its old and new key, its episodes (found, or written by a run) and those already in the
    new space, and its profiles with content (found, or written)."""

    old_chat: str
    new_chat: str
    episodes: int = 0
    already: int = 0
    profiles: int = 0


@dataclass(frozen=True)
class BotMove:
    old_bot: str
    new_bot: str
    dry_run: bool
    chats: tuple[ChatMove, ...]
    old_bot_listed: bool  # LangBot still lists the old bot (then it is not a re-created one: say so)


class BotMover:
    def __init__(self, kbs: KnowledgeBaseRegistry, diagnostics: Diagnostics, episodes: EpisodeStore,
                 transfer: EpisodeTransfer, profiles: ProfileBook, directory: HostDirectory) -> None:
        self._kbs = kbs
        self._diagnostics = diagnostics
        self._episodes = episodes
        self._transfer = transfer
        self._profiles = profiles
        self._directory = directory

    async def move(self, old_bot: object, new_scope: MemoryScope, *, dry_run: bool) -> BotMove:
        """Copy the old bot's chats into the same chats of `new_scope`'s bot (the chat the admin asked from)."""
        new_bot = new_scope.identity.bot_uuid if new_scope.identity else ""
        old = escape_bot_uuid(str(old_bot or "").strip()) if isinstance(old_bot, str) else ""
        if not old or id_problem(old, "bot uuid", bot=True):
            raise ValidationError("give the old bot's uuid (LangBot shows it on the bot's page)")
        if not new_bot:
            raise ValidationError("run it from a chat of the new bot: this chat names no bot")
        if old == new_bot:
            raise ValidationError("that is this chat's own bot; give the uuid of the bot it replaces")
        chats = [k for k in await self._diagnostics.known_scopes() if split_chat_key(k)[0] == old]
        if not chats:
            raise ValidationError(f"no memory of bot {old} is noted in this installation; nothing to move")
        found = await self._kbs.memory_kb()
        kb_id, isolation = (found[0], found[1].isolation) if found else ("", Isolation.SESSION)
        settings = await self._kbs.open_kb(kb_id) if kb_id else None
        moved: list[ChatMove] = []
        done_spaces: set[str] = set()
        for old_chat in sorted(chats):
            new_chat = f"{new_bot}:{split_chat_key(old_chat)[1]}"
            source = MemoryScope.of_chat_key(old_chat, kb_id, isolation)
            target = MemoryScope.of_chat_key(new_chat, kb_id, isolation)
            episodes = already = 0
            if settings is not None and source.space_key not in done_spaces:
                done_spaces.add(source.space_key)
                listing = await self._episodes.enumerate(L2Space(kb_id, source.space_key))
                items = [e.to_public() for e in listing.episodes if e.status in LISTED_STATUSES]
                episodes = len(items)
                if items and not dry_run:
                    batch = parse_items(items, source="import")
                    result = await self._transfer.import_episodes(target, settings, batch.records,
                                                                  skipped=batch.skipped, keep_speakers=True)
                    episodes, already = len(result.episodes), len(result.duplicates)
            exported = await self._profiles.export(source)
            profiles = sum(1 for p in [exported["session_profile"], *exported["speaker_profiles"].values()]
                           if not Profile.from_dict(p).is_empty)
            if profiles and not dry_run:
                profiles = len((await self._profiles.import_profiles(target, exported)).profiles)
            moved.append(ChatMove(old_chat, new_chat, episodes, already, profiles))
        listed = {escape_bot_uuid(b) for b in await self._directory.bot_ids() or []}
        return BotMove(old, new_bot, dry_run, tuple(moved), old in listed)
