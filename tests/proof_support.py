"""Shared pieces of the reliability proofs (issue 11): hostile places and speakers, one way to reach every
surface of the real plugin, and a pure-Python model of what memory must hold.

- `PLACES` / `SENDERS`: conversations and speakers with identifiers that look like separators, other
  keys, unicode, zero-width characters and very long ids. Every place is one L1 space (its session key);
  in session isolation it is also its own L2 space, in bot isolation it shares the bot's L2 space.
- `Surfaces`: the plugin as the host reaches it: tools (`call_tool`), `!memory` (`execute_command`),
  the Memory Console (`page_api`), host RAG retrieval and the PromptPreProcessing injection. Each call
  opens its own live query and closes it afterwards.
- `MemoryModel`: what every space must contain (episodes with status, L1 profiles, audit entries),
  updated by the tests from what each operation is documented to do. `check_*` functions compare one
  surface's answer with it and name any record of another space as a LEAK.

Only public surfaces are used, so the proofs survive changes to the core's internals.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from components.common.chat_text import quote
from ltm import Identity, space_key_for
from testhost import FakeLangBotHost, PluginHarness, make_backend, make_session
from tests.chat import Place, prompt_turn

# --------------------------------------------------------------------------- places and speakers

BOT_1 = "bot-1"
BOT_2 = "bot-2"
BOT_3 = "7f3c9a1e-5b2d-4c8e-9f10-2a3b4c5d6e7f"

LONG_ID = "a" * 300
PLACES: tuple[Place, ...] = (
    Place("group", "g1", BOT_1),
    Place("group", "g1:0", BOT_1),             # once shared a key with g1's first audit chunk
    Place("group", "g1:speaker:x", BOT_1),     # once listed as a speaker of g1
    Place("group", "g1/x", BOT_1),
    Place("group", "g1%3A0", BOT_1),           # the escaped form of "g1:0"
    Place("group", "g1|x", BOT_1),             # with sender "y", packs like g1 with sender "x|y"
    Place("group", "g1#x", BOT_1),
    Place("group", "群:聊", BOT_1),
    Place("group", LONG_ID, BOT_1),
    Place("group", "g1\u200b", BOT_1),          # zero-width space
    Place("group", "Ｇ1", BOT_1),               # full-width look-alike of g1
    Place("group", "bot:bot-2", BOT_1),        # looks like bot-2's shared key in bot isolation
    Place("group", "g1_group_g1", BOT_1),
    Place("person", "alice", BOT_1),
    Place("person", "g1", BOT_1),              # a private chat with a group's id
    Place("group", "g1", BOT_2),
    Place("group", "g1:0", BOT_2),
    Place("person", "alice", BOT_2),
    Place("group", "g1", BOT_3),
    Place("person", "u:1", BOT_3),
    Place("group", "%", BOT_3),
)

UNKNOWN_SENDER = "0"  # the host's "no sender": no speaker profile, episodes carry sender_id ""
SENDERS: tuple[str, ...] = ("u1", "x|y", "y", "u:1", "ü/2", "%41", "u#1", "z\u200b", "s" * 300, UNKNOWN_SENDER)
STALE_SENDER = "first-speaker"


def sender_key(sender: str) -> str:
    """The sender id the plugin keeps for a host sender id ("" for an unknown speaker; an id longer
    than the kept bound is shortened by a hash, docs/GUARANTEES.md "Host identity")."""
    return Identity.from_host(launcher_type="person", launcher_id="x", sender_id=sender).sender_id


def _identity(place: Place) -> Identity:
    return Identity.from_host(launcher_type=place.launcher_type, launcher_id=place.launcher_id,
                              bot_uuid=place.bot_uuid)


def chat_key(place: Place) -> str:
    return _identity(place).chat_key


def space_key(place: Place, isolation: str) -> str:
    return space_key_for(_identity(place), isolation)


def console_space(place: Place, isolation: str) -> dict[str, str]:
    return {"scope_key": chat_key(place), "user_key": space_key(place, isolation)}


def label(place: Place) -> str:
    """A short printable name of a place for assertion messages."""
    return repr(f"{place.bot_uuid[:8]}/{place.launcher_type}/{place.launcher_id[:24]}")


async def new_host(backend: str) -> FakeLangBotHost:
    host = FakeLangBotHost(make_backend(backend))
    host.add_embedding_model("emb-1")
    return host


# --------------------------------------------------------------------------- surfaces

_NEW_ID = re.compile(r"^new: (\S+)\s*$", re.MULTILINE)
_LISTED = re.compile(r"^\[\d+\] (\S+)", re.MULTILINE)


def imported_ids(reply: str) -> list[str]:
    """New episode ids of an `!memory import l2` reply (it names the first five)."""
    return _NEW_ID.findall(reply)


def listed_ids(reply: str) -> list[str]:
    return _LISTED.findall(reply)


class Surfaces:
    """Every way the host reaches the plugin, one live query per call."""

    def __init__(self, harness: PluginHarness) -> None:
        self.harness = harness

    @property
    def host(self) -> FakeLangBotHost:
        return self.harness.host

    def _open(self, place: Place, sender: str, text: str = "turn") -> int:
        query_id = self.host.next_query_id()
        self.host.open_query(query_id, bot_uuid=place.bot_uuid, launcher_type=place.launcher_type,
                             launcher_id=place.launcher_id, sender_id=sender, sender_name=f"name of {sender}",
                             message_text=text, pipeline_kbs=list(self.host.kbs))
        return query_id

    def _session(self, place: Place, sender: str) -> dict[str, Any]:
        # In a group the host's cached Session names whoever spoke first; the query names the speaker.
        first = STALE_SENDER if place.launcher_type == "group" else sender
        return make_session(place.launcher_type, place.launcher_id, sender_id=first, bot_uuid=place.bot_uuid)

    async def tool(self, place: Place, sender: str, name: str, params: dict[str, Any]) -> dict[str, Any]:
        query_id = self._open(place, sender)
        try:
            result = await self.harness.call_tool(name, params, session=self._session(place, sender),
                                                  query_id=query_id)
        finally:
            self.host.close_query(query_id)
        assert isinstance(result, dict) and isinstance(result.get("ok", True), bool), result
        return result

    async def command(self, place: Place, sender: str, text: str, *, privilege: int = 2) -> str:
        query_id = self._open(place, sender)
        try:
            replies = await self.harness.execute_command(text, session=self._session(place, sender),
                                                         query_id=query_id, privilege=privilege)
        finally:
            self.host.close_query(query_id)
        assert len(replies) == 1, replies
        body = replies[0].get("text")
        assert replies[0].get("error") is None and isinstance(body, str) and body.strip(), replies
        return body

    async def console(self, endpoint: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.harness.page_api("console", endpoint, "POST", body or {})
        assert response["error"] is None, response
        data = response["data"]
        assert isinstance(data, dict) and isinstance(data.get("ok"), bool), data
        return data

    async def console_ok(self, endpoint: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = await self.console(endpoint, body)
        assert data["ok"] is True, (endpoint, data)
        return data

    async def retrieve(self, kb_id: str, place: Place, sender: str, query: str, top_k: int = 20) -> list[dict[str, Any]]:
        """Host RAG asking the memory KB inside a conversation (the local agent passes these settings)."""
        data = await self.harness.retrieve(kb_id, query, retrieval_settings={
            "top_k": top_k, "session_name": place.session_name, "bot_uuid": place.bot_uuid, "sender_id": sender})
        return list(data.get("results") or [])

    async def inject(self, place: Place, sender: str, text: str) -> dict[str, Any]:
        """One PromptPreProcessing turn; returns `_ltm_context`."""
        turn = await prompt_turn(self.harness, place, sender, f"name of {sender}", text)
        try:
            return turn.context
        finally:
            self.host.close_query(turn.query_id)


# --------------------------------------------------------------------------- the model

ACTIVE, SUPERSEDED, ARCHIVED = "active", "superseded", "archived"
MAX_LIST = 20  # default max_profile_traits / max_profile_preferences


@dataclass
class ModelEpisode:
    id: str
    content: str
    status: str
    sender: str
    tags: tuple[str, ...] = ()
    superseded_by: str | None = None

    def view(self) -> tuple[Any, ...]:
        return (self.id, self.content, self.status, self.sender, self.tags, self.superseded_by)


@dataclass
class ModelProfile:
    name: str = ""
    traits: list[str] = field(default_factory=list)
    preferences: list[str] = field(default_factory=list)
    notes: str = ""

    def view(self) -> dict[str, Any]:
        return {"name": self.name, "traits": list(self.traits), "preferences": list(self.preferences),
                "notes": self.notes}

    @property
    def is_empty(self) -> bool:
        return not (self.name or self.traits or self.preferences or self.notes)

    def chat_lines(self) -> list[str]:
        """The lines `!memory profile` shows: each stored value in quotation marks, made inert."""
        lines = []
        if self.name:
            lines.append(f"Name: {quote(self.name, 100)}")
        if self.traits:
            lines.append("Traits: " + "; ".join(quote(t, 200) for t in self.traits))
        if self.preferences:
            lines.append("Preferences: " + "; ".join(quote(p, 200) for p in self.preferences))
        if self.notes:
            lines.append(f"Notes: {quote(self.notes, None)}")
        return lines

    def text(self) -> str:
        """The documented compact text (P3) the tools and the prompt show."""
        lines = []
        if self.name:
            lines.append(f"Name: {self.name}")
        if self.traits:
            lines.append("Traits: " + "; ".join(self.traits))
        if self.preferences:
            lines.append("Preferences: " + "; ".join(self.preferences))
        if self.notes:
            lines.append(f"Notes: {self.notes}")
        return "\n".join(lines)

    def apply(self, mode: str, change: dict[str, Any]) -> None:
        """update_profile as documented: merge adds list items once (a re-stated item moves to the end),
        replace replaces what is given, remove drops list items (case-insensitively) and clears text."""
        def merged(old: list[str], new: list[str], fresh: bool) -> list[str]:
            base = [] if fresh else list(old)
            for item in new:
                base = [x for x in base if x.casefold() != item.casefold()]
                base.append(item)
            return base

        if mode == "remove":
            if "name" in change:
                self.name = ""
            if "notes" in change:
                self.notes = ""
            for key in ("traits", "preferences"):
                if change.get(key):
                    gone = {x.casefold() for x in change[key]}
                    setattr(self, key, [x for x in getattr(self, key) if x.casefold() not in gone])
        else:
            if "name" in change:
                self.name = change["name"]
            if "notes" in change:
                self.notes = change["notes"]
            for key in ("traits", "preferences"):
                if key in change:
                    setattr(self, key, merged(getattr(self, key), change[key], mode == "replace"))
        self.traits = self.traits[-MAX_LIST:]
        self.preferences = self.preferences[-MAX_LIST:]


Audit = list[tuple[str, str]]


class MemoryModel:
    """Expected contents of every space of one installation (one memory KB, one isolation mode)."""

    def __init__(self, isolation: str, places: tuple[Place, ...] = PLACES) -> None:
        self.isolation = isolation
        self.places = places
        self.episodes: dict[str, dict[str, ModelEpisode]] = {}
        self.profiles: dict[str, dict[str, ModelProfile]] = {}  # scope_key -> "" (session) or sender -> profile
        self.audit: dict[str, Audit] = {}  # log ("l1:<scope_key>" / "l2:<user_key>") -> (operation, target)
        self.owner: dict[str, str] = {}  # episode id -> user_key
        self.content_owner: dict[str, str] = {}  # content -> user_key (contents are unique)

    # -- keys
    def space_key(self, place: Place) -> str:
        return space_key(place, self.isolation)

    def space(self, place: Place) -> dict[str, ModelEpisode]:
        return self.episodes.setdefault(self.space_key(place), {})

    def l1(self, place: Place) -> dict[str, ModelProfile]:
        return self.profiles.setdefault(chat_key(place), {})

    def logs(self, place: Place) -> list[str]:
        return [f"l1:{chat_key(place)}", f"l2:{self.space_key(place)}"]

    def l2_spaces(self) -> list[str]:
        return sorted({self.space_key(p) for p in self.places})

    # -- changes (each one also records the audit entries the plugin must write)
    def audited(self, log: str, operation: str, target: str) -> None:
        self.audit.setdefault(log, []).append((operation, target))

    def add_episode(self, place: Place, episode: ModelEpisode, operation: str) -> None:
        key = self.space_key(place)
        assert episode.id not in self.owner, f"episode id {episode.id} handed out twice"
        self.space(place)[episode.id] = episode
        self.owner[episode.id] = key
        self.content_owner[episode.content] = key
        self.audited(f"l2:{key}", operation, episode.id)

    def set_status(self, place: Place, episode_id: str, status: str, operation: str, **changes: Any) -> None:
        episode = self.space(place)[episode_id]
        episode.status = status
        for name, value in changes.items():
            setattr(episode, name, value)
        self.audited(f"l2:{self.space_key(place)}", operation, episode_id)

    def delete(self, place: Place, episode_id: str, operation: str) -> None:
        del self.space(place)[episode_id]
        self.audited(f"l2:{self.space_key(place)}", operation, episode_id)

    def update_profile(self, place: Place, target_sender: str, mode: str, change: dict[str, Any]) -> None:
        profile = self.l1(place).setdefault(target_sender, ModelProfile())
        profile.apply(mode, change)
        self.audited(f"l1:{chat_key(place)}", "update_profile", target_sender or "session")

    # -- expectations
    def l2_view(self, place: Place, statuses: tuple[str, ...] = (ACTIVE, SUPERSEDED, ARCHIVED)) -> set[tuple[Any, ...]]:
        return {e.view() for e in self.space(place).values() if e.status in statuses}

    def ids(self, place: Place, statuses: tuple[str, ...] = (ACTIVE, SUPERSEDED, ARCHIVED)) -> set[str]:
        return {e.id for e in self.space(place).values() if e.status in statuses}

    def profile(self, place: Place, sender: str) -> ModelProfile:
        return self.l1(place).get(sender, ModelProfile())

    def speaker_profiles(self, place: Place) -> dict[str, dict[str, Any]]:
        return {s: p.view() for s, p in self.l1(place).items() if s}

    def audit_of(self, place: Place) -> Counter[tuple[str, str]]:
        return Counter(entry for log in self.logs(place) for entry in self.audit.get(log, []))

    # -- leak detection
    def foreign(self, place: Place, ids: Iterable[str] = (), contents: Iterable[str] = ()) -> list[str]:
        """Records of another space in one read of `place`."""
        own = self.space_key(place)
        leaks = [f"id {i} of {self.owner[i]!r}" for i in ids if self.owner.get(i, own) != own]
        leaks += [f"content {c!r} of {self.content_owner[c]!r}" for c in contents
                  if self.content_owner.get(c, own) != own]
        return leaks


def public_view(item: dict[str, Any]) -> tuple[Any, ...]:
    """An episode as the console and exports show it, in the model's terms."""
    return (item["id"], item["content"], item["status"], item.get("sender_id", ""), tuple(item.get("tags") or ()),
            item.get("superseded_by"))


def profile_view(raw: dict[str, Any] | None) -> dict[str, Any]:
    raw = raw or {}
    return {"name": raw.get("name", ""), "traits": list(raw.get("traits") or []),
            "preferences": list(raw.get("preferences") or []), "notes": raw.get("notes", "")}


def no_leak(model: MemoryModel, place: Place, what: str, ids: Iterable[str] = (), contents: Iterable[str] = ()) -> None:
    leaks = model.foreign(place, list(ids), list(contents))
    assert not leaks, f"LEAK: {what} of {label(place)} shows another space's records: {leaks}"


def summary_counts(line_prefix: str, reply: str) -> Counter[str]:
    """`By status: 3 active, 1 archived` -> Counter({"active": 3, "archived": 1})."""
    for line in reply.splitlines():
        if line.startswith(line_prefix):
            rest = line[len(line_prefix):].strip()
            if rest == "none":
                return Counter()
            counts: Counter[str] = Counter()
            for part in rest.split(", "):
                number, _, name = part.partition(" ")
                counts[name] = int(number)
            return counts
    raise AssertionError(f"no {line_prefix!r} line in: {reply[:300]}")


def json_reply(reply: str) -> Any | None:
    """The JSON document of a `!memory export`-style reply, or None when it was summarized."""
    header, _, body = reply.partition("\n")
    if "too long for chat" in header:
        return None
    return json.loads(body)


__all__ = [
    "ACTIVE",
    "ARCHIVED",
    "BOT_1",
    "BOT_2",
    "BOT_3",
    "PLACES",
    "SENDERS",
    "SUPERSEDED",
    "UNKNOWN_SENDER",
    "MemoryModel",
    "ModelEpisode",
    "ModelProfile",
    "Surfaces",
    "chat_key",
    "console_space",
    "imported_ids",
    "json_reply",
    "label",
    "listed_ids",
    "new_host",
    "no_leak",
    "profile_view",
    "public_view",
    "sender_key",
    "space_key",
    "summary_counts",
]
