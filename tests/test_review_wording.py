"""The review wording of issue 23 item 6, one test per finding (each failed on the main of the issue).

- `consolidate run` printed "Valid from - until -" for a draft whose sources carry no validity;
- "No draft: nothing to summarize: fewer than 2 active records that no active summary or pending draft
  covers." was one sentence of three colons;
- a pending credential ("ignore") candidate was listed under "Accept: !memory candidate accept <id>"
  although accepting it is refused, and carried claim_type `user_statement`;
- the console's `/review` always answered `"candidates": []`, even with pending candidates;
- the Review tab said "enabled in the knowledge base settings" under each of its two switches.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from testhost import PluginHarness
from tests.chat import BOT, open_chat
from tests.test_candidates import responded

pytestmark = pytest.mark.slow
LLM = "llm-1"
SPACE = {"scope_key": f"{BOT}:group_g1", "user_key": f"{BOT}:group_g1"}
CREDENTIAL = "my password is hunter2hunter2 for the shop"


@pytest.fixture
def supported_backend_name() -> str:
    return "chroma"  # wording does not depend on the store


def one_statement(messages: list[dict[str, Any]], payload: dict[str, Any]) -> str:
    body = str(messages[-1]["content"]).partition("<sources>\n")[2].partition("\n</sources>")[0]
    return json.dumps({"statements": [{"text": "The team meets weekly", "sources": [s["id"] for s in json.loads(body)]}]})


async def api(harness: PluginHarness, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await harness.page_api("console", endpoint, "POST", body)
    assert response["error"] is None, response
    data: dict[str, Any] = response["data"]
    return data


async def test_a_draft_without_validity_says_none_and_one_with_validity_says_it(harness: PluginHarness) -> None:
    harness.host.llm_script = one_statement
    await harness.create_memory_kb(consolidation_enabled=True, consolidation_model_uuid=LLM)
    chat = open_chat(harness)
    for text in ("the team meets on Mondays", "the team meets in room 4"):
        await chat.remember(text)
    preview = await chat.run("!memory consolidate preview")
    draft = re.search(r"consolidate run ([0-9a-f-]{36})", preview)
    assert draft, preview
    run = await chat.run(f"!memory consolidate run {draft.group(1)}")
    assert "Valid from" not in run and " - until" not in run and "until -" not in run, run
    assert "The team meets weekly" in run

    dated = open_chat(harness, "g2")
    for text in ("the pool is open in summer", "the pool has a lifeguard in summer"):
        await dated.remember(text, valid_from="2026-06-01T00:00:00Z", valid_until="2026-09-01T00:00:00Z")
    preview = await dated.run("!memory consolidate preview")
    draft = re.search(r"consolidate run ([0-9a-f-]{36})", preview)
    assert draft, preview
    run = await dated.run(f"!memory consolidate run {draft.group(1)}")
    assert re.search(r"Valid from 2026-06-01\S* until 2026-09-01", run), run


async def test_no_draft_note_is_two_plain_sentences(harness: PluginHarness) -> None:
    harness.host.llm_script = one_statement
    await harness.create_memory_kb(consolidation_enabled=True, consolidation_model_uuid=LLM)
    chat = open_chat(harness)
    await chat.remember("only one record")
    preview = await chat.run("!memory consolidate preview")
    line = next(ln for ln in preview.split("\n") if ln.startswith("No summary draft"))
    assert "nothing to summarize:" not in line and "fewer than 2" not in line, line
    assert line.count(":") == 1 and "at least 2 active records" in line, line


async def test_a_credential_candidate_is_not_under_the_accept_hint_and_has_its_own_claim_type(
        harness: PluginHarness) -> None:
    await harness.create_memory_kb(candidate_extraction_enabled=True)
    await responded(harness, CREDENTIAL)
    chat = open_chat(harness)
    listing = await chat.run("!memory candidates")
    assert "ignore" in listing and "Accept:" not in listing, listing
    assert "!memory candidate reject" in listing and "cannot be accepted" in listing, listing
    data = await api(harness, "/candidates", {"space": SPACE})
    [credential] = data["candidates"]
    assert credential["kind"] == "ignore" and credential["claim_type"] == "redacted", credential
    assert "hunter2" not in json.dumps(data)

    await responded(harness, "I'm vegetarian")
    listing = await chat.run("!memory candidates")
    hints = [ln for ln in listing.split("\n") if "!memory candidate" in ln]
    assert len(hints) == 2 and "Accept:" in hints[0] and "cannot be accepted" in hints[1], listing


async def test_an_empty_queue_says_so_in_plain_words(harness: PluginHarness) -> None:
    await harness.create_memory_kb(candidate_extraction_enabled=True)
    reply = await open_chat(harness).run("!memory candidates --all-statuses")
    assert reply == "No memory candidates in this chat, of any status.", reply


async def test_review_endpoint_has_no_always_empty_candidates_list(harness: PluginHarness) -> None:
    await harness.create_memory_kb(candidate_extraction_enabled=True)
    await responded(harness, "Remember that the demo is on Friday.")
    review = await api(harness, "/review", {"space": SPACE})
    assert "candidates" not in review, review  # the queue is /candidates, paged
    assert review["settings"]["candidate_extraction_enabled"] is True
    assert (await api(harness, "/candidates", {"space": SPACE}))["total"] == 1
