"""The same bad input gets the same answer from the tool, the `!memory` command and the console.

All three surfaces validate with `ltm.params` and the recall recipes, so each case below sends one
input to every surface that takes that parameter and checks that every surface refuses it with the
same message and writes nothing (issue 9: one parameter layer).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from testhost import PluginHarness
from tests.chat import open_chat

SPACE = {"scope_key": "bot-1:group_g1", "user_key": "bot-1:group_g1"}
Surface = Callable[[PluginHarness], Awaitable[str]]


def _tool(name: str, params: dict[str, Any]) -> Surface:
    async def call(h: PluginHarness) -> str:
        result = await open_chat(h).tool(name, params)
        assert result["ok"] is False, result
        return str(result["error"])
    return call


def _command(text: str) -> Surface:
    async def call(h: PluginHarness) -> str:
        reply = await open_chat(h).run(text)
        assert reply.startswith("Error: "), reply
        return reply.splitlines()[0].rstrip()[len("Error: "):]
    return call


def _console(endpoint: str, body: dict[str, Any]) -> Surface:
    async def call(h: PluginHarness) -> str:
        response = await h.page_api("console", endpoint, "POST", {"space": SPACE, **body})
        data = response["data"]
        assert data["ok"] is False and data["code"] == "invalid_input", data
        return str(data["error"])
    return call


CASES: dict[str, tuple[str, list[Surface]]] = {
    "top_k=0": ("top_k must be a whole number from 1 to 20", [
        _tool("recall_memory", {"query": "x", "top_k": 0}),
        _command("!memory search x --top-k 0"),
        _console("/search", {"query": "x", "top_k": 0}),
    ]),
    "top_k too large": ("top_k must be a whole number from 1 to 20", [
        _tool("recall_memory", {"query": "x", "top_k": 21}),
        _command("!memory search x --top-k 21"),
        _console("/search", {"query": "x", "top_k": "21"}),
    ]),
    "page='²'": ("page must be a whole number from 1 to 1000000", [
        _command("!memory list ²"),
        _command("!memory audit ²"),
        _console("/episodes", {"page": "²"}),
        _console("/audit", {"page": "²"}),
    ]),
    "unknown status": ("unknown status 'nope'; use one of: active, superseded, archived, deleted", [
        _command("!memory list --status nope"),
        _command("!memory export l2 --status active,nope"),
        _console("/episodes", {"status": "nope"}),
    ]),
    "importance='²'": ("importance must be a whole number from 1 to 5", [
        _tool("remember", {"content": "x", "importance": "²"}),
        _command('!memory import l2 [{"content": "x", "importance": "²"}]'),
    ]),
    "naive time": ("since has no timezone", [
        _tool("recall_memory", {"query": "x", "since": "2026-05-01T09:00:00"}),
    ]),
    "out-of-range time": ("valid_from is out of range: it falls outside years 1-9999 in UTC", [
        _tool("remember", {"content": "x", "valid_from": "9999-12-31T23:59:59-10:00"}),
        _tool("remember", {"content": "x", "valid_from": "0001-01-01T00:00:00+14:00"}),
        _command('!memory import l2 [{"content": "x", "valid_from": "9999-12-31T23:59:59-10:00"}]'),
    ]),
    "too many tags": ("tags has more than 10 items", [
        _tool("remember", {"content": "x", "tags": [f"t{i}" for i in range(30_000)]}),
        _tool("recall_memory", {"query": "x", "tags": [f"t{i}" for i in range(30_000)]}),
        _command('!memory import l2 [{"content": "x", "tags": "' + ",".join(f"t{i}" for i in range(11)) + '"}]'),
    ]),
}


def _rule(answer: str) -> str:
    """The rule's wording in an answer: an import names the record it could not store by its index."""
    # (A chat reply writes brackets full-width: components/common/chat_text.py.)
    return answer.replace("［0］", "[0]").removeprefix("no record can be stored: [0] ").removesuffix(".")


@pytest.mark.parametrize("case", list(CASES))
async def test_the_same_bad_input_gets_the_same_answer_everywhere(harness: PluginHarness, kb: str, case: str) -> None:
    expected, surfaces = CASES[case]
    harness.host.reset_counts()
    answers = [await surface(harness) for surface in surfaces]
    for answer in answers:
        assert expected in answer, (case, answers)
    # The rule's wording is identical; a surface may only add its own frame around it.
    cores = {_rule(a) for a in answers}
    assert len(cores) == 1, answers
    writes = [c for c in harness.host.calls if c[0] in ("vector_upsert", "vector_delete", "set_plugin_storage")]
    assert writes == [], writes


async def test_a_comma_list_in_supersedes_means_the_same_ids_on_every_write_path(harness: PluginHarness,
                                                                                  kb: str) -> None:
    chat = open_chat(harness)
    first, second = await chat.remember("standup at 9"), await chat.remember("standup in room A")
    fixed = await chat.tool("remember", {"content": "standup at 10 in room B", "supersedes": f"{first}, {second}"})
    assert sorted(fixed["superseded"]) == sorted([first, second])

    other = open_chat(harness, "g2")
    reply = await other.run('!memory import l2 [{"id": "a", "content": "old 1", "status": "superseded", '
                            '"superseded_by": "c"}, {"id": "b", "content": "old 2", "status": "superseded", '
                            '"superseded_by": "c"}, {"id": "c", "content": "new", "supersedes": "a,b"}]')
    assert reply.startswith("Imported 3 episodes"), reply
    [new] = [e for e in await other.export_l2() if e["original_id"] == "c"]
    assert len(new["supersedes"]) == 2
