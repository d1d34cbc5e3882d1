"""Reading a migration bundle: everything the official LongTermMemory plugin kept in one LangBot
installation, as `scripts/export_official.py` writes it (docs/OFFICIAL-PLUGIN.md, "Migration").

    {"format": "ltm-official-migration", "version": 1, "created_at": "...",
     "source": {"plugin": "langbot-team/LongTermMemory", "fingerprint": "<sha256>", "kb_id": "...",
                "bots": ["<bot uuid>", ...], "database": "sqlite", "vector_store": "chroma"},
     "settings": {<the memory KB's creation settings>, "retrieval": {"top_k": 5}},
     "chats": [{"key": "<scope key or bot:<uuid>>", "profiles": [<official L1 export entries>],
                "episodes": [<official export l2 records>], "audit": [<official audit entries>],
                "candidates": [<official candidates>]}]}

Each part of a chat is in the official plugin's own shape, so the parsers that already read those
shapes read them here (`official/profiles.py`, `episodes/transfer.py`); this module checks
the envelope only. A bundle is refused whole (nothing written) when it is not one: malformed or cut
JSON, another format or version, over `MAX_BUNDLE_BYTES`, no chats. What a chat holds that cannot
be stored is skipped and reported by the importer, never the whole bundle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import params
from ...episodes.transfer import MAX_IMPORT_BYTES, load_json
from ...errors import ValidationError
from ...guards import refuse_secrets, said_safely

BUNDLE_FORMAT = "ltm-official-migration"
BUNDLE_VERSION = 1
OFFICIAL_PLUGIN = "langbot-team/LongTermMemory"
# A bundle larger than this is refused before it is parsed: the limit of every JSON import here (a KB
# upload reads the file with the same reader). A larger installation is exported in parts (--chat).
MAX_BUNDLE_BYTES = MAX_IMPORT_BYTES
MAX_CHATS = 5000
PARTS = ("profiles", "episodes", "audit", "candidates")


@dataclass(frozen=True)
class ChatPart:
    """One memory space of the official installation: a chat's key (`<bot uuid>:group_<id>`), or in
    bot isolation the bot's episode space (`bot:<uuid>`). Each list is in the official shape."""

    index: int  # its place in "chats"
    key: str
    profiles: list[Any]
    episodes: list[Any]
    audit: list[Any]
    candidates: list[Any]


@dataclass(frozen=True)
class Bundle:
    fingerprint: str
    kb_id: str
    bots: tuple[str, ...]
    created_at: str
    settings: dict[str, Any]
    chats: list[ChatPart]
    problems: list[tuple[int, str]]  # chats that cannot be read at all: (index, reason)


def read_bundle(data: str | bytes) -> Bundle:
    """The bundle's envelope checked; ValidationError (nothing written) when it is not a bundle."""
    size = len(data.encode("utf-8") if isinstance(data, str) else data)
    if size > MAX_BUNDLE_BYTES:
        raise ValidationError(f"the bundle is {size // (1024 * 1024)} MiB; at most "
                              f"{MAX_BUNDLE_BYTES // (1024 * 1024)} MiB is read (export fewer chats with "
                              "--chat, several times); nothing was imported")
    try:
        payload = load_json(data)
    except ValidationError as exc:
        raise ValidationError(f"not a migration bundle: {exc.message}; nothing was imported") from None
    return parse_bundle(payload)


def is_bundle(payload: Any) -> bool:
    """A document meant as a migration bundle: it says so, or it has the bundle's `chats`. A bundle
    whose `format` was damaged is then refused as a bundle, saying why, not read as episodes."""
    return isinstance(payload, dict) and (payload.get("format") == BUNDLE_FORMAT or "chats" in payload)


def parse_bundle(payload: Any) -> Bundle:
    if not isinstance(payload, dict) or payload.get("format") != BUNDLE_FORMAT:
        raise ValidationError(f'not a migration bundle: expected {{"format": "{BUNDLE_FORMAT}", ...}} as '
                              "scripts/export_official.py writes it; nothing was imported")
    params.known_version(payload.get("version"), BUNDLE_VERSION, "the migration bundle")
    source = payload.get("source")
    if not isinstance(source, dict) or source.get("plugin") != OFFICIAL_PLUGIN:
        raise ValidationError(f'the bundle\'s "source" does not name the official plugin ({OFFICIAL_PLUGIN}); '
                              "nothing was imported")
    fingerprint = params.text(source.get("fingerprint"), "source.fingerprint", max_chars=128)
    kb_id = params.text(source.get("kb_id"), "source.kb_id", max_chars=255, required=False)
    bots = params.word_list(source.get("bots"), "source.bots", max_items=1000, item_chars=255)
    created_at = params.text(payload.get("created_at"), "created_at", max_chars=40, required=False)
    try:  # the envelope's ids are shown in the report and the log: never a credential
        refuse_secrets([("source.fingerprint", fingerprint), ("source.kb_id", kb_id), ("created_at", created_at),
                        *(("an item of source.bots", bot) for bot in bots)])
    except ValidationError as exc:
        raise ValidationError(f"{exc.message}; nothing was imported") from None
    settings = payload.get("settings") or {}
    if not isinstance(settings, dict):
        raise ValidationError('"settings" must be an object; nothing was imported')
    raw_chats = payload.get("chats")
    if not isinstance(raw_chats, list):
        raise ValidationError('"chats" must be a list; nothing was imported')
    if len(raw_chats) > MAX_CHATS:
        raise ValidationError(f"at most {MAX_CHATS} chats per bundle; nothing was imported")
    chats: list[ChatPart] = []
    problems: list[tuple[int, str]] = []
    for index, raw in enumerate(raw_chats):
        try:
            chats.append(_chat(index, raw))
        except ValidationError as exc:
            problems.append((index, said_safely(exc.message)))
    return Bundle(fingerprint, kb_id, tuple(bots), created_at, settings, chats, problems)


def _chat(index: int, raw: Any) -> ChatPart:
    if not isinstance(raw, dict):
        raise ValidationError("must be an object")
    key = raw.get("key")
    # As given, never stripped: "g1 " and "g1" are two chats (docs/OFFICIAL-PLUGIN.md); the importer says
    # why a key that is not one this plugin derives is skipped.
    if not isinstance(key, str) or not key.strip():
        raise ValidationError("key is required: the chat's key")
    params.text(key, "key", max_chars=512)
    lists: dict[str, list[Any]] = {}
    for part in PARTS:
        value = raw.get(part) or []
        if not isinstance(value, list):
            raise ValidationError(f"{part} must be a list")
        lists[part] = value
    return ChatPart(index, key, lists["profiles"], lists["episodes"], lists["audit"], lists["candidates"])
