"""JSON records in plugin storage, per-key async locks, and the storage key layout.

Plugin storage has no compare-and-set, and one plugin is one process, so a
process-local lock per memory space serializes read-modify-write (F1 in
docs/REQUIREMENTS.md). Every storage key the core writes is built here, so the
layout is described in one place (docs/ARCHITECTURE.md, "Storage layout").
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from .errors import HostError
from .ports import KeyValueStore, write_sent
from .spaces import L2Space

log = logging.getLogger("LongTermMemory")

KB_CONFIGS_KEY = "kb_configs"
LAYOUT_KEY = "storage_layout"
LAYOUT_VERSION = 2

# Every key built from host identifiers (scope keys, sender ids, KB and document ids) escapes
# each component, so distinct identifiers never share a key (a group "g1:0" and the audit
# chunk 0 of group "g1", or a group "g1:speaker:x" and a speaker of "g1", once did).
# Components are percent-encoded except letters, digits and "._-~"; parts are joined by "/".
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-~")


def escape(component: str) -> str:
    return "".join(ch if ch in _SAFE else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in component)


def unescape(component: str) -> str:
    out = bytearray()
    i = 0
    while i < len(component):
        if component[i] == "%" and i + 3 <= len(component):
            out.append(int(component[i + 1 : i + 3], 16))
            i += 3
        else:
            out.extend(component[i].encode("utf-8"))
            i += 1
    return out.decode("utf-8")


def _key(*parts: str) -> str:
    return "v2/" + "/".join(parts)


def profile_key(chat_key: str, sender_id: str = "") -> str:
    """The session profile of a scope, or one speaker's profile in it."""
    if sender_id:
        return _key("profile", escape(chat_key), "speaker", escape(sender_id))
    return _key("profile", escape(chat_key), "session")


def speaker_profile_prefix(chat_key: str) -> str:
    return _key("profile", escape(chat_key), "speaker", "")


def speaker_of_profile_key(key: str, chat_key: str) -> str:
    return unescape(key[len(speaker_profile_prefix(chat_key)):])


def audit_head_key(log_id: str) -> str:
    return _key("audit", escape(log_id), "head")


def audit_chunk_key(log_id: str, index: int) -> str:
    return _key("audit", escape(log_id), str(index))


AUDIT_PREFIX = _key("audit", "")


def audit_log_ids(keys: list[str]) -> list[str]:
    """The log ids (space keys) of every audit log among stored `keys`."""
    found = []
    for key in keys:
        if key.startswith(AUDIT_PREFIX) and key.endswith("/head"):
            found.append(unescape(key[len(AUDIT_PREFIX):-len("/head")]))
    return found


FENCE_PREFIX = _key("fence", "")


def fence_key(lock_key: str) -> str:
    return FENCE_PREFIX + escape(lock_key)


def space_of_fence_key(key: str) -> str:
    return unescape(key[len(FENCE_PREFIX):])


# A write-ahead marker: stored before a gated write's first host write, removed after its audit entry.
WRITE_MARK_PREFIX = _key("writing", "")


def write_mark_key(lock_key: str) -> str:
    return WRITE_MARK_PREFIX + escape(lock_key)


def space_of_write_mark_key(key: str) -> str:
    return unescape(key[len(WRITE_MARK_PREFIX):])


SNAPSHOT_PREFIX = _key("snapshot", "")


def snapshot_key(chat_key: str) -> str:
    return _key("snapshot", escape(chat_key))


def document_key(kb_id: str, document_id: str) -> str:
    return _key("doc", escape(kb_id), escape(document_id))


def document_prefix(kb_id: str) -> str:
    return _key("doc", escape(kb_id), "")


# ---------------------------------------------------------------- consolidation (K): drafts and lineage
# Pending review drafts: v2/draft/<kb>/<user_key>/<scope_key>/<proposal_id> (full draft, source texts included).
# Closed proposals of one scope: v2/draftlog/<kb>/<scope_key> (ids and outcomes only, never texts).
# Summary lineage of one L2 space: v2/lineage/<kb>/<user_key> ({summary_id: [source ids]}).
DRAFT_PREFIX = _key("draft", "")


def draft_key(space: L2Space, chat_key: str, proposal_id: str) -> str:
    return _key("draft", escape(space.kb_id), escape(space.space_key), escape(chat_key), escape(proposal_id))


def draft_space_prefix(space: L2Space) -> str:
    """Every pending draft over one L2 space (all the sessions that share it)."""
    return _key("draft", escape(space.kb_id), escape(space.space_key), "")


def draft_scope_prefix(space: L2Space, chat_key: str) -> str:
    return _key("draft", escape(space.kb_id), escape(space.space_key), escape(chat_key), "")


def draft_kb_prefix(kb_id: str) -> str:
    return _key("draft", escape(kb_id), "")


def parse_draft_key(key: str) -> tuple[str, str, str, str] | None:
    """(kb_id, user_key, scope_key, proposal_id) of a pending-draft key, or None."""
    if not key.startswith(DRAFT_PREFIX):
        return None
    parts = key[len(DRAFT_PREFIX):].split("/")
    if len(parts) != 4 or not all(parts):
        return None
    kb_id, space_key, chat_key, proposal_id = (unescape(p) for p in parts)
    return kb_id, space_key, chat_key, proposal_id


def draft_log_key(kb_id: str, chat_key: str) -> str:
    return _key("draftlog", escape(kb_id), escape(chat_key))


def draft_log_kb_prefix(kb_id: str) -> str:
    return _key("draftlog", escape(kb_id), "")


def lineage_key(space: L2Space) -> str:
    return _key("lineage", escape(space.kb_id), escape(space.space_key))


def lineage_kb_prefix(kb_id: str) -> str:
    return _key("lineage", escape(kb_id), "")


def scope_marker_key(chat_key: str) -> str:
    """A small record saying this session scope has written memory (the list of known scopes)."""
    return _key("scope", escape(chat_key))


def chat_label_key(chat_key: str) -> str:
    """The names a chat and its latest speaker go by on the platform (labels, never keys)."""
    return _key("label", escape(chat_key))


def console_view_key() -> str:
    """The space an operator last opened in the Memory Console (one for the installation)."""
    return _key("console", "last_space")


def platform_event_key(bot_uuid: str) -> str:
    """The last platform event a bot's event processor delivered (`!memory health`: is it bound?)."""
    return _key("platform", escape(bot_uuid))


# ---- migrations: a KB whose vector records are all in record layout 2 is never scanned again
def layout_marker_key(kb_id: str) -> str:
    return _key("migration", escape(kb_id), "layout2")


def legacy_layout_marker_key(kb_id: str) -> str:
    """The same marker as release 0.2 first wrote it (read only, so those KBs are not scanned again)."""
    return f"migration:{kb_id}:layout2"


# ---- candidate extraction (Q): the review queue of one session scope
CANDIDATES_PREFIX = _key("candidates", "")


def candidates_key(chat_key: str) -> str:
    """Every memory candidate of one session scope, with its review state, in one bounded record."""
    return _key("candidates", escape(chat_key))


# ---- the conversation record of one chat (ltm/conversation/): its recent turns and its rolling summary
CONVERSATION_PREFIX = _key("conversation", "")


def conversation_key(chat_key: str) -> str:
    """One chat's recorded turns and summary, in one record (so a fold is one write)."""
    return _key("conversation", escape(chat_key))


# ---- the saved word index of one L2 space (episodes/index_pages.py): a head and numbered pages
def word_index_head_key(space: L2Space) -> str:
    return _key("wordindex", escape(space.kb_id), escape(space.space_key), "head")


def word_index_page_key(space: L2Space, generation: int, page: int) -> str:
    return _key("wordindex", escape(space.kb_id), escape(space.space_key), str(generation), str(page))


def word_index_kb_prefix(kb_id: str) -> str:
    return _key("wordindex", escape(kb_id), "")


def word_index_space_prefix(space: L2Space) -> str:
    return _key("wordindex", escape(space.kb_id), escape(space.space_key), "")


def scope_of_key(key: str) -> str | None:
    """The session scope a stored profile, L1 audit log or snapshot key belongs to (the list of known scopes)."""
    parts = key.split("/")
    if len(parts) < 3 or parts[0] != "v2":
        return None
    kind, owner = parts[1], unescape(parts[2])
    if kind in ("profile", "snapshot", "scope", "candidates", "conversation"):
        return owner
    if kind == "audit" and owner.startswith("l1:"):
        return owner[3:]
    if kind == "audit" and owner.startswith("l2:"):
        # In session isolation the L2 key is the session key itself; a bot-wide key names no chat.
        space_key = owner[3:].partition(":")[2]
        return None if space_key.startswith("bot:") else space_key or None
    return None


Prepare = Callable[[], Awaitable[None]]


class JsonStore:
    """JSON values over the key-value port, read only. A damaged record reads as missing and is logged.

    Its writes are `ltm._bookkeeping.Bookkeeping`'s: a module that holds a `JsonStore` can read plugin
    storage but cannot change it (mypy); memory changes go through a gated write (`WriteTx.set/delete`).

    The plugin is the only writer of its own storage (one runtime process per installation,
    docs/ARCHITECTURE.md "Decisions"), so the store keeps what it knows: the set of existing
    keys (one listing, on first use) and recently used values (bounded by bytes). A read of a
    key that does not exist costs no host call (LangBot answers such a read with an error that
    it also logs), and hot records (profiles, audit heads) are read once. A write whose outcome
    is unknown makes that key uncertain again: the next read asks the host.

    `before_first_use(prepare)` runs `prepare` once, before the first access of this store
    (used for the storage-layout migration); if it fails, the next access tries again."""

    CACHE_BYTES = 8 * 1024 * 1024

    def __init__(self, port: KeyValueStore, *, cache: bool = True) -> None:
        self._port = port
        self._prepare: Prepare | None = None
        self._ready = True
        self._ready_lock = asyncio.Lock()
        self._cache = cache
        self._known: set[str] | None = None  # keys that exist (None: not listed yet)
        self._uncertain: set[str] = set()  # keys whose last write has an unknown outcome
        self._values: OrderedDict[str, bytes] = OrderedDict()
        self._cached_bytes = 0

    def before_first_use(self, prepare: Prepare) -> None:
        self._prepare = prepare
        self._ready = False

    async def _ensure_ready(self) -> None:
        if self._ready and (self._known is not None or not self._cache):
            return
        async with self._ready_lock:
            if not self._ready and self._prepare is not None:
                await self._prepare()
            self._ready = True
            if self._cache and self._known is None:
                self._known = set(await self._port.keys(""))

    def _remember(self, key: str, raw: bytes, keep: bool = True) -> None:
        self._forget(key)
        if not keep or len(raw) > self.CACHE_BYTES // 8:
            return
        self._values[key] = raw
        self._cached_bytes += len(raw)
        while self._cached_bytes > self.CACHE_BYTES:
            _, dropped = self._values.popitem(last=False)
            self._cached_bytes -= len(dropped)

    def _forget(self, key: str) -> None:
        old = self._values.pop(key, None)
        if old is not None:
            self._cached_bytes -= len(old)

    async def _read(self, key: str, keep: bool = True) -> bytes | None:
        if not self._cache or self._known is None:
            return await self._port.get(key)
        if key not in self._known and key not in self._uncertain:
            return None
        cached = self._values.get(key)
        if cached is not None:
            self._values.move_to_end(key)
            return cached
        raw = await self._port.get(key)
        self._uncertain.discard(key)
        if raw is None:
            self._known.discard(key)
        else:
            self._known.add(key)
            self._remember(key, raw, keep)
        return raw

    async def get(self, key: str, default: Any = None, *, keep: bool = True) -> Any:
        """`keep=False`: a big value read once (saved index pages) does not push hot records out of the cache."""
        await self._ensure_ready()
        raw = await self._read(key, keep)
        if raw is None:
            return default
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            # A damaged record must not take the whole plugin down; keep it, report it.
            log.warning("[LongTermMemory] storage record %s is not valid JSON; treated as empty", key)
            return default

    async def _changed(self, key: str, write: Awaitable[None], after: Callable[[], None]) -> None:
        """Run a host write and keep the cache true to its outcome. While the write is with the host
        (possibly for ever, if its caller was cancelled) the key is uncertain: readers ask the host."""
        write_sent()
        previous, was_uncertain = self._values.get(key), key in self._uncertain
        self._forget(key)
        self._uncertain.add(key)
        try:
            await write  # a lost answer or a cancellation leaves the key uncertain: the next read asks
        except HostError:
            # Authoritative: nothing changed, what we knew still holds.
            if not was_uncertain:
                self._uncertain.discard(key)
            if previous is not None:
                self._remember(key, previous)
            raise
        self._forget(key)
        self._uncertain.discard(key)
        after()

    async def keys(self, prefix: str = "") -> list[str]:
        await self._ensure_ready()
        if self._cache and self._known is not None:
            if self._uncertain:
                # Settle the uncertain keys with one listing before answering.
                listed = set(await self._port.keys(""))
                for key in self._uncertain:
                    (self._known.add if key in listed else self._known.discard)(key)
                self._uncertain.clear()
            return sorted(k for k in self._known if k.startswith(prefix))
        return [k for k in await self._port.keys(prefix) if k.startswith(prefix)]
