"""The official plugin's `!memory` habits (issue 34): its aliases and its status flags work here.

Aliases (`h p s l ls f del e`) answer exactly as the subcommand they stand for, including its usage
errors and the admin rule. `--include-deleted` and `--all-statuses` are accepted wherever the official
plugin took them (search, list, export l2); this store keeps no deleted records (forget and delete
remove the record), so a request for them says so instead of answering with a silent empty list.
`candidates --status pending|accepted|rejected` narrows the review queue.
"""

from __future__ import annotations

import json

import pytest

from testhost import PluginHarness
from tests.chat import Chat, listed_ids, open_chat
from tests.test_candidates import ON, listed_candidate_ids, responded

NOT_KEPT = "deleted episodes are not kept here"


async def chat_with_history(harness: PluginHarness) -> tuple[Chat, dict[str, str]]:
    """One chat with an active, a superseded, an archived and a forgotten episode."""
    await harness.create_memory_kb()
    chat = open_chat(harness)
    old = await chat.remember("Meeting room is B2")
    new = await chat.remember("Meeting room moved to C4", supersedes=[old])
    hidden = await chat.remember("Parking is free on weekends")
    await chat.run(f"!memory archive {hidden}")
    gone = await chat.remember("The wifi password hint is the office plant")
    await chat.run(f"!memory forget {gone}")
    return chat, {"old": old, "new": new, "hidden": hidden, "gone": gone}


# --------------------------------------------------------------------------- aliases

@pytest.mark.parametrize(("alias", "name", "rest"), [
    ("h", "health", ""), ("p", "profile", ""), ("s", "search", "meeting room"), ("l", "list", ""),
    ("ls", "list", "--include-archived"), ("e", "export", ""), ("e", "export", "l2"),
])
async def test_a_read_alias_answers_as_its_subcommand(harness: PluginHarness, alias: str, name: str,
                                                      rest: str) -> None:
    chat, ids = await chat_with_history(harness)
    await chat.tool("update_profile", {"scope": "session", "name": "Ops team"})
    full = await chat.run(f"!memory {name} {rest}".strip())
    assert not full.startswith(("Unknown subcommand", "Error:")), full
    assert await chat.run(f"!memory {alias} {rest}".strip()) == full
    if name == "list":
        assert ids["new"] in listed_ids(full)


@pytest.mark.parametrize("alias", ["f", "del"])
async def test_a_forget_alias_deletes_and_follows_forgets_usage_and_admin_rule(harness: PluginHarness,
                                                                              alias: str) -> None:
    chat, ids = await chat_with_history(harness)
    member = open_chat(harness, sender_id="u2", sender_name="Bea", privilege=1)
    refused = await member.run(f"!memory {alias} {ids['new']}")
    assert refused.startswith("!memory forget needs a bot admin"), refused
    assert ids["new"] in listed_ids(await chat.run("!memory list"))
    assert await chat.run(f"!memory {alias}") == await chat.run("!memory forget")
    assert (await chat.run(f"!memory {alias}")).startswith("Error: an episode id is required.  \nUsage: !memory forget")
    assert (await chat.run(f"!memory {alias} {ids['new']}")).startswith(f"Deleted episode {ids['new']} (active)")
    assert ids["new"] not in listed_ids(await chat.run("!memory list"))


async def test_aliases_are_case_insensitive_like_subcommands(harness: PluginHarness) -> None:
    chat, _ = await chat_with_history(harness)
    assert await chat.run("!memory LS") == await chat.run("!memory list")


# --------------------------------------------------------------------------- episode status flags

async def test_include_deleted_on_list_says_deleted_episodes_are_not_kept(harness: PluginHarness) -> None:
    chat, ids = await chat_with_history(harness)
    plain = await chat.run("!memory list")
    assert NOT_KEPT not in plain
    text = await chat.run("!memory list --include-deleted")
    assert listed_ids(text) == [ids["new"]] and "(active+deleted)" in text
    assert NOT_KEPT in text and "!memory audit" in text
    only = await chat.run("!memory list --status deleted")
    assert only.startswith("No deleted episodes in this chat's memory.") and NOT_KEPT in only
    # What the note points to is there: the audit log names the forgotten id.
    assert ids["gone"] in json.dumps(await chat.audit_entries())


async def test_all_statuses_on_list_shows_every_kept_status(harness: PluginHarness) -> None:
    chat, ids = await chat_with_history(harness)
    text = await chat.run("!memory list --all-statuses")
    assert listed_ids(text) == [ids["hidden"], ids["new"], ids["old"]]
    assert "(active+superseded+archived+deleted)" in text and NOT_KEPT in text
    assert listed_ids(await chat.run("!memory ls --all-statuses --include-archived")) == listed_ids(text)
    clash = await chat.run("!memory list --all-statuses --status active")
    assert clash.startswith("Error: give --status or --all-statuses, not both.  \nUsage: !memory list"), clash


async def test_search_takes_include_deleted_and_all_statuses(harness: PluginHarness) -> None:
    chat, ids = await chat_with_history(harness)
    assert ids["hidden"] not in await chat.run("!memory search parking weekends")
    everything = await chat.run("!memory search parking weekends --all-statuses")
    assert ids["hidden"] in listed_ids(everything) and NOT_KEPT in everything
    deleted = await chat.run("!memory s wifi password --include-deleted")
    assert ids["gone"] not in deleted and NOT_KEPT in deleted
    assert "Error: give --status or --all-statuses" in await chat.run("!memory search x --all-statuses --status active")


async def test_export_l2_takes_include_deleted_and_all_statuses(harness: PluginHarness) -> None:
    chat, ids = await chat_with_history(harness)
    header, _, document = (await chat.run("!memory export l2 --all-statuses")).partition("\n")
    assert NOT_KEPT in header
    exported = {e["id"]: e["status"] for e in json.loads(document)["episodes"]}
    assert exported == {ids["old"]: "superseded", ids["new"]: "active", ids["hidden"]: "archived"}
    header, _, document = (await chat.run("!memory e l2 --status active --include-deleted")).partition("\n")
    assert NOT_KEPT in header and [e["id"] for e in json.loads(document)["episodes"]] == [ids["new"]]
    assert NOT_KEPT not in (await chat.run("!memory export l2")).partition("\n")[0]


# --------------------------------------------------------------------------- candidates --status

async def test_candidates_status_narrows_the_queue(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    for text in ("Remember that the demo is on Friday.", "Remember that the retro is on Monday.",
                 "Remember that the launch is in May."):
        await responded(harness, text)
    chat = open_chat(harness)
    pending = listed_candidate_ids(await chat.run("!memory candidates"))
    assert len(pending) == 3
    await chat.run(f"!memory candidate accept {pending[0]}")
    await chat.run(f"!memory candidate reject {pending[1]}")

    accepted = await chat.run("!memory candidates --status accepted")
    assert listed_candidate_ids(accepted) == [pending[0]] and "(accepted)" in accepted
    assert listed_candidate_ids(await chat.run("!memory candidates --status rejected")) == [pending[1]]
    assert listed_candidate_ids(await chat.run("!memory candidates --status pending")) == [pending[2]]
    both = await chat.run("!memory candidates --status accepted,rejected")
    assert sorted(listed_candidate_ids(both)) == sorted(pending[:2])
    assert sorted(listed_candidate_ids(await chat.run("!memory candidates --all-statuses"))) == sorted(pending)

    bad = await chat.run("!memory candidates --status maybe")
    assert bad.startswith("Error: unknown candidate status “maybe”; use pending, accepted or rejected."), bad
    assert "Usage: !memory candidates" in bad
    clash = await chat.run("!memory candidates --status pending --all-statuses")
    assert clash.startswith("Error: give --status or --all-statuses, not both."), clash


async def test_candidates_status_with_none_of_that_status_says_so(harness: PluginHarness) -> None:
    await harness.create_memory_kb(**ON)
    await responded(harness, "Remember that the demo is on Friday.")
    reply = await open_chat(harness).run("!memory candidates --status rejected")
    assert reply.startswith("No rejected memory candidates in this chat. (1 pending)"), reply


async def test_the_next_page_hint_keeps_the_listings_statuses(harness: PluginHarness) -> None:
    await harness.create_memory_kb()
    chat = open_chat(harness)
    ids = [await chat.remember(f"Weekly note number {i}") for i in range(11)]
    await chat.run(f"!memory archive {ids[0]}")
    first = await chat.run("!memory ls --all-statuses")
    assert "page 1/2 · 11 total" in first
    hint = "Next: !memory list 2 --status active,superseded,archived,deleted"
    assert hint in first, first
    second = await chat.run(hint.removeprefix("Next: "))
    assert listed_ids(second) == [ids[0]] and "page 2/2 · 11 total" in second
    assert "Next: !memory list 2 --status active,archived" in await chat.run("!memory list --include-archived")
