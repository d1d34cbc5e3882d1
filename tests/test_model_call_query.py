"""A model call made for a `!memory` command names the command's live query (issue 45, point 7).

LangBot 4.11.2 records every model call for its monitoring under the query that made it; a plugin's
call that names none gets a stand-in query without a launcher, and LangBot logs `[ERROR] Failed to
record LLM call ... 'launcher_type'` for it (ltm/langbot/port.py, `on_live_query`). So the preview's
draft request carries the command's query id, which the host resolves to the live query; a call with
no live query behind it (the console's) sends none.
"""

from __future__ import annotations

from testhost import PluginHarness
from tests.chat import Chat, open_chat
from tests.test_consolidation import ON as CONSOLIDATION
from tests.test_consolidation import one_statement


async def two_memories(harness: PluginHarness) -> Chat:
    """A chat with something to draft, and a consolidation model that answers."""
    await harness.create_memory_kb(**CONSOLIDATION)
    admin = open_chat(harness)
    await admin.remember("the demo is on Friday")
    await admin.remember("the demo is in room 4")
    harness.host.llm_script = one_statement()
    return admin


async def test_a_commands_model_call_names_its_live_query(harness: PluginHarness) -> None:
    admin = await two_memories(harness)
    drafted = await admin.run("!memory consolidate preview")
    assert "Summary draft" in drafted, drafted
    [request] = harness.host.llm_requests
    assert request["query_id"] == admin.query_id and admin.query_id in harness.host.queries, request
    assert [m["role"] for m in request["messages"]] == ["system", "user"]


async def test_the_consoles_model_call_names_no_query(harness: PluginHarness) -> None:
    admin = await two_memories(harness)
    space = {"scope_key": admin.chat_key, "user_key": admin.chat_key}
    answer = await harness.page_api("console", "/review/draft/preview", "POST", {"space": space})
    assert answer["error"] is None and answer["data"]["ok"], answer
    [request] = harness.host.llm_requests
    assert "query_id" not in request, request
