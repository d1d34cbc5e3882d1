"""Helpers for driving `!memory` through the SDK's real command dispatch.

A `Chat` is one live pipeline query of one speaker in one conversation: the
host query carries the current speaker in its variables, while the Session
keeps a stale `sender_id` as the real host does in groups (contract §2.3), so
every test also checks that the command takes the speaker from the query.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

from components.commands.render import MAX_REPLY_CHARS
from testhost import PluginHarness, make_session

BOT = "bot-1"
STALE_SENDER = "first-speaker-of-the-day"
_query_ids = itertools.count(100)
_LISTED = re.compile(r"^\d+\) (\S+)", re.MULTILINE)


@dataclass
class Chat:
    harness: PluginHarness
    query_id: int
    session: dict[str, Any]
    launcher_id: str
    sender_id: str
    privilege: int = 2  # an operator: bot admin (mutating subcommands need it in groups)

    @property
    def scope_key(self) -> str:
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
        header, _, document = body.partition("\n")
        assert document, f"expected JSON after the header, got: {body}"
        return json.loads(document)

    async def tool(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        return await self.harness.call_tool(name, params, session=self.session, query_id=self.query_id)

    async def remember(self, content: str, **params: Any) -> str:
        result = await self.tool("remember", {"content": content, **params})
        assert result.get("ok"), result
        return str(result["episode_id"])

    async def audit_entries(self) -> list[dict[str, Any]]:
        return (await self.run_json("!memory audit export"))["entries"]

    async def export_l2(self, flags: str = "--include-archived --include-superseded") -> list[dict[str, Any]]:
        return (await self.run_json(f"!memory export l2 {flags}".strip()))["episodes"]


def open_chat(harness: PluginHarness, launcher_id: str = "g1", *, sender_id: str = "u1",
              sender_name: str = "Alice", pipeline_kbs: list[str] | None = None, privilege: int = 2) -> Chat:
    """A live group-chat query of `sender_id` in group `launcher_id` (bot `BOT`)."""
    query_id = next(_query_ids)
    harness.host.open_query(query_id, bot_uuid=BOT, launcher_type="group", launcher_id=launcher_id,
                            sender_id=sender_id, sender_name=sender_name, pipeline_kbs=pipeline_kbs)
    session = make_session("group", launcher_id, sender_id=STALE_SENDER, bot_uuid=BOT)
    return Chat(harness, query_id, session, launcher_id, sender_id, privilege)


async def memory_kb(harness: PluginHarness) -> str:
    return await harness.kb_create(config={"embedding_model_uuid": "emb-1"})


def listed_ids(text: str) -> list[str]:
    """Episode IDs of a list/search reply, in order (the `N) <id> · ...` lines)."""
    return [m.group(1) for m in _LISTED.finditer(text)]
