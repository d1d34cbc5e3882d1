"""Drive chat turns through the SDK dispatch the way LangBot does (issue 3 tests)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from testhost import PluginHarness, make_session

SYSTEM_PROMPT = "You are a helpful bot."
_query_ids = itertools.count(100)


@dataclass(frozen=True)
class Chat:
    """One conversation: where it happens and who speaks."""

    launcher_type: str = "group"
    launcher_id: str = "g1"
    bot_uuid: str = "bot-1"

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


def open_turn(harness: PluginHarness, chat: Chat, sender: str, name: str, text: str,
              pipeline_kbs: list[str] | None = None) -> tuple[int, dict[str, Any]]:
    """A live query; by default its pipeline has every knowledge base of the host attached
    (injection needs the memory KB attached, I4)."""
    if pipeline_kbs is None:
        pipeline_kbs = list(harness.host.kbs)
    query_id = next(_query_ids)
    variables = harness.host.open_query(
        query_id, bot_uuid=chat.bot_uuid, launcher_type=chat.launcher_type, launcher_id=chat.launcher_id,
        sender_id=sender, sender_name=name, message_text=text, pipeline_kbs=pipeline_kbs,
    )
    return query_id, variables


async def prompt_turn(harness: PluginHarness, chat: Chat, sender: str, name: str, text: str,
                      pipeline_kbs: list[str] | None = None) -> Turn:
    """One PromptPreProcessing event for a user message; the query stays live."""
    query_id, variables = open_turn(harness, chat, sender, name, text, pipeline_kbs)
    event = await harness.emit_event(
        "PromptPreProcessing",
        {"session_name": chat.session_name,
         "default_prompt": [{"role": "system", "content": SYSTEM_PROMPT}],
         "prompt": [{"role": "user", "content": "earlier message"}]},
        query_id=query_id,
    )
    return Turn(query_id, variables, event["event"])


async def tool(harness: PluginHarness, chat: Chat, name: str, params: dict[str, Any], *, sender: str,
               sender_name: str = "", first_sender: str = "first-speaker", live: bool = True) -> Any:
    """A tool call as the host makes it; `live=False` is the agent-runner path with no pipeline query."""
    if live:
        query_id, _ = open_turn(harness, chat, sender, sender_name or sender.title(), "tool turn")
        session = chat.session(first_sender)
    else:
        query_id = 987_654  # not a live query: query APIs answer "not found"
        session = chat.session(sender)
    return await harness.call_tool(name, params, session=session, query_id=query_id)
