"""Drive chat turns through the SDK's real dispatch the way LangBot does: one helper for every test.

- `Place`: where a conversation happens (launcher type/id, bot). `prompt_turn` sends one
  PromptPreProcessing event for a user message there; `tool` calls a tool the way the host does
  (inside a live query, or, with `live=False`, the agent-runner path with no pipeline query).
- `Chat`: one live query of one speaker in a group, for `!memory` commands and tools. The host
  query carries the current speaker in its variables, while the Session keeps a stale `sender_id`
  as the real host does in groups (docs/HOST-FACTS.md, 2.2), so every command test also checks
  that the speaker comes from the query.

Query ids come from the fake host (`next_query_id`), so helpers never collide.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from components.commands.text import MAX_REPLY_CHARS
from testhost import PluginHarness, make_session

SYSTEM_PROMPT = "You are a helpful bot."
BOT = "bot-1"
STALE_SENDER = "first-speaker-of-the-day"
_LISTED = re.compile(r"^\[\d+\] (\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Place:
    """One conversation: where it happens."""

    launcher_type: str = "group"
    launcher_id: str = "g1"
    bot_uuid: str = BOT

    @property
    def session_name(self) -> str:
        return f"{self.launcher_type}_{self.launcher_id}"

    def session(self, first_sender: str) -> dict[str, Any]:
        # The host caches one Session per launcher: its sender is whoever spoke FIRST.
        return make_session(self.launcher_type, self.launcher_id, sender_id=first_sender, bot_uuid=self.bot_uuid)


@dataclass
class Turn:
    query_id: int
    variables: dict[str, Any]
    event: dict[str, Any]

    @property
    def system_texts(self) -> list[str]:
        return [m["content"] for m in self.event["default_prompt"] if m["role"] == "system"]

    @property
    def memory_text(self) -> str:
        return "\n".join(t for t in self.system_texts if t.startswith("[LongTermMemory]"))

    @property
    def context(self) -> dict[str, Any]:
        value = self.variables["_ltm_context"]
        assert isinstance(value, dict), f"_ltm_context must be a dict, got {type(value).__name__}"
        return value


def open_turn(harness: PluginHarness, place: Place, sender: str, name: str, text: str,
              pipeline_kbs: list[str] | None = None, message_id: str | int | None = None) -> tuple[int, dict[str, Any]]:
    """A live query; by default its pipeline has every knowledge base of the host attached
    (injection needs the memory KB attached, I4). `message_id`: the platform message it answers."""
    if pipeline_kbs is None:
        pipeline_kbs = list(harness.host.kbs)
    query_id = harness.host.next_query_id()
    variables = harness.host.open_query(
        query_id, bot_uuid=place.bot_uuid, launcher_type=place.launcher_type, launcher_id=place.launcher_id,
        sender_id=sender, sender_name=name, message_text=text, pipeline_kbs=pipeline_kbs, message_id=message_id,
    )
    return query_id, variables


async def prompt_turn(harness: PluginHarness, place: Place, sender: str, name: str, text: str,
                      pipeline_kbs: list[str] | None = None, message_id: str | int | None = None) -> Turn:
    """One PromptPreProcessing event for a user message; the query stays live."""
    query_id, variables = open_turn(harness, place, sender, name, text, pipeline_kbs, message_id)
    event = await harness.emit_event(
        "PromptPreProcessing",
        {"session_name": place.session_name,
         "default_prompt": [{"role": "system", "content": SYSTEM_PROMPT}],
         "prompt": [{"role": "user", "content": "earlier message"}]},
        query_id=query_id,
    )
    return Turn(query_id, variables, event["event"])


async def tool(harness: PluginHarness, place: Place, name: str, params: dict[str, Any], *, sender: str,
               sender_name: str = "", first_sender: str = "first-speaker", live: bool = True) -> Any:
    """A tool call as the host makes it; `live=False` is the agent-runner path with no pipeline query."""
    if live:
        query_id, _ = open_turn(harness, place, sender, sender_name or sender.title(), "tool turn")
        session = place.session(first_sender)
    else:
        query_id = 987_654  # not a live query: query APIs answer "not found"
        session = place.session(sender)
    return await harness.call_tool(name, params, session=session, query_id=query_id)


@dataclass
class Chat:
    """One live group-chat query of one speaker, for commands (and tools in the same turn)."""

    harness: PluginHarness
    query_id: int
    session: dict[str, Any]
    launcher_id: str
    sender_id: str
    privilege: int = 2  # an operator: bot admin (mutating subcommands need it in shared spaces)

    @property
    def chat_key(self) -> str:
        return f"{BOT}:group_{self.launcher_id}"

    async def run(self, text: str) -> str:
        """One `!memory ...` command; asserts the SDK delivered exactly one chat-sized text reply."""
        replies = await self.harness.execute_command(text, session=self.session, query_id=self.query_id,
                                                     privilege=self.privilege)
        assert len(replies) == 1, replies
        reply = replies[0]
        assert reply.get("error") is None, reply
        body = reply.get("text")
        assert isinstance(body, str) and body.strip(), reply
        assert len(body) <= MAX_REPLY_CHARS, f"reply of {len(body)} chars does not fit a chat message"
        return body

    async def run_json(self, text: str) -> Any:
        """A command whose reply is a header line followed by the whole JSON document."""
        body = await self.run(text)
        _, _, document = body.partition("\n")
        assert document, f"expected JSON after the header, got: {body}"
        return json.loads(document)

    async def tool(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self.harness.call_tool(name, params, session=self.session,
                                                              query_id=self.query_id)
        return result

    async def remember(self, content: str, **params: Any) -> str:
        result = await self.tool("remember", {"content": content, **params})
        assert result.get("ok"), result
        return str(result["episode_id"])

    async def audit_entries(self) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = (await self.run_json("!memory audit export"))["entries"]
        return entries

    async def export_l2(self, flags: str = "--include-archived --include-superseded") -> list[dict[str, Any]]:
        episodes: list[dict[str, Any]] = (await self.run_json(f"!memory export l2 {flags}".strip()))["episodes"]
        return episodes


def open_chat(harness: PluginHarness, launcher_id: str = "g1", *, sender_id: str = "u1",
              sender_name: str = "Alice", pipeline_kbs: list[str] | None = None, privilege: int = 2,
              launcher_type: str = "group", message_id: str | int | None = None) -> Chat:
    """A live query of `sender_id` in `launcher_type` chat `launcher_id` (bot `BOT`); `message_id`: the
    platform message it answers (none: a query without one, like the WebUI debug chat's)."""
    query_id = harness.host.next_query_id()
    harness.host.open_query(query_id, bot_uuid=BOT, launcher_type=launcher_type, launcher_id=launcher_id,
                            sender_id=sender_id, sender_name=sender_name, pipeline_kbs=pipeline_kbs,
                            message_id=message_id)
    stale = STALE_SENDER if launcher_type == "group" else sender_id
    session = make_session(launcher_type, launcher_id, sender_id=stale, bot_uuid=BOT)
    return Chat(harness, query_id, session, launcher_id, sender_id, privilege)


def listed_ids(text: str) -> list[str]:
    """Episode IDs of a list/search reply, in order (the `N) <id> · ...` lines)."""
    return [m.group(1) for m in _LISTED.finditer(text)]
