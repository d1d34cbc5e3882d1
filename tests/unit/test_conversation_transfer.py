"""The conversation record's operator side on the in-memory ports (V4): the summary edited, the record
exported and imported into another chat, and a person's erasure reaching it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ltm import MemoryService, StateError, SummarySource, ValidationError
from ltm.conversation.model import WITHHELD
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import audit_ops, ident
from tests.unit.test_conversation_record import ON, SMALL, chat, said, service, stored_bytes


async def spoken(memory: MemoryService, turns: int, **more: Any) -> None:
    alice = await chat(memory)
    for n in range(turns):
        await memory.record_turn(alice, said(f"message {n}", f"answer {n}", **more))


async def test_an_operator_edits_the_summary_and_an_erasure_still_rebuilds_it() -> None:
    fake = InMemoryPorts()
    memory = await service(fake, **SMALL)
    ann, bo = await chat(memory, "ann"), await chat(memory, "bo")
    for n in range(3):
        await memory.record_turn(ann, said(f"ann says {n}", sender="ann"))
        await memory.record_turn(bo, said(f"bo says {n}", sender="bo"))
    before = await memory.conversation(ann)
    assert before.summary.source is SummarySource.FALLBACK and {"ann", "bo"} <= set(before.summary.speakers)

    after = await memory.edit_conversation_summary(ann, "Ann and Bo\nplanned the harbour picnic.")
    assert after.summary.text == "Ann and Bo\nplanned the harbour picnic." and after.summary.source.value == "edited"
    assert after.summary.digest == before.summary.digest and after.turns == before.turns
    assert after.revision == before.revision + 1  # a fold planned before the edit does not land over it
    assert ("conversation_edit", "summary") in await audit_ops(memory, ann)
    # The edited text mixes speakers like a model's: Bo's erasure rebuilds it from the others' digest lines.
    await memory.erase_conversation_speaker(ann, "bo")
    rebuilt = (await memory.conversation(ann)).summary
    assert rebuilt.source is SummarySource.FALLBACK and "picnic" not in rebuilt.text and "bo says" not in rebuilt.text


async def test_an_edit_is_checked_like_a_models_summary() -> None:
    fake = InMemoryPorts()
    memory = await service(fake, **SMALL)
    alice = await chat(memory)
    await memory.record_turn(alice, said("hello"))
    with pytest.raises(ValidationError, match="longer than 600"):
        await memory.edit_conversation_summary(alice, "x" * 601)
    with pytest.raises(ValidationError):
        await memory.edit_conversation_summary(alice, "the key is sk_live_51HqLyjWDarjtT1zdp7dc")
    assert b"sk_live" not in stored_bytes(fake) and (await memory.conversation(alice)).summary.empty


async def test_an_export_imports_into_another_chat_whole() -> None:
    fake = InMemoryPorts()
    memory = await service(fake, **SMALL)
    await spoken(memory, 6)
    source = await memory.conversation(await chat(memory))
    document = await memory.export_conversation(await chat(memory))
    assert document["format"] == "longterm-memory-conversation" and document["version"] == 1
    assert [t["seq"] for t in document["turns"]] == [t.seq for t in source.turns]

    other = await memory.scope_for(ident("g2", sender="alice"))
    copied = await memory.import_conversation(other, json.loads(json.dumps(document)))
    assert [(t.user_text, t.reply_text, t.sender_id) for t in copied.turns] == [
        (t.user_text, t.reply_text, t.sender_id) for t in source.turns]
    assert copied.summary.text == source.summary.text and copied.summary.digest[0].text == source.summary.digest[0].text
    assert [t.seq for t in copied.turns] == list(range(copied.summary.covers_to + 1, copied.next_seq))
    assert ("conversation_import", "record") in await audit_ops(memory, other)
    # A chat that has a record is never mixed with another's: clear it first.
    with pytest.raises(StateError, match="clear it first"):
        await memory.import_conversation(other, document)


async def test_an_import_is_cleaned_bounded_and_refused_whole_when_malformed() -> None:
    fake = InMemoryPorts()
    memory = await service(fake, **SMALL)
    alice = await chat(memory)
    turns = [{"seq": 99, "at": "2026-05-01T10:00:00Z", "sender_id": "ann", "user_text": f"line {n}",
              "reply_text": "ok"} for n in range(9)]
    turns[0]["user_text"] = "my password is hunter2-Quartz"
    turns[1]["reply_text"] = "\ud800 half " + "y" * 9_000
    document = {"format": "longterm-memory-conversation", "version": 1, "turns": turns, "summary": {}}
    with pytest.raises(ValidationError, match="unknown field"):
        await memory.import_conversation(alice, {**document, "extra": 1})
    with pytest.raises(ValidationError, match="conversation export"):
        await memory.import_conversation(alice, {"turns": turns})
    assert (await memory.conversation(alice)).empty

    record = await memory.import_conversation(alice, document)
    # Nine turns on a budget of four: the oldest were folded by the digest in the same write, none lost.
    assert len(record.turns) <= 4 and record.summary.folded + len(record.turns) == 9
    assert b"hunter2" not in stored_bytes(fake) and b"\\ud800" not in stored_bytes(fake)
    assert WITHHELD in record.summary.text or any(t.user_text == WITHHELD for t in record.turns)
    assert all(len(t.reply_text) <= 3_000 for t in record.turns)


async def test_a_persons_erasure_removes_their_turns_from_every_chat() -> None:
    fake = InMemoryPorts()
    memory = await service(fake, **ON)
    for place in ("g1", "g2"):
        for who in ("ann", "bo", "cy"):
            scope = await memory.scope_for(ident(place, sender=who))
            await memory.record_turn(scope, said(f"{who} talks in {place}", sender=who))
    found = await memory.find_person("bo")
    assert found.counts()["conversation_turns"] == 2
    erased = await memory.erase_person("bo", dry_run=False)
    assert erased.counts()["conversation_turns"] == 2
    for place in ("g1", "g2"):
        record = await memory.conversation(await memory.scope_for(ident(place, sender="ann")))
        assert [t.sender_id for t in record.turns] == ["ann", "cy"]
    assert b"bo talks" not in stored_bytes(fake)
    assert (await memory.find_person("bo")).counts()["conversation_turns"] == 0


async def test_the_setting_off_keeps_the_record_readable_and_erasable() -> None:
    fake = InMemoryPorts()
    memory = await service(fake, **ON)
    alice = await chat(memory)
    await memory.record_turn(alice, said("remember me"))
    await memory.set_setting("conversation_enabled", False)
    assert (await memory.conversation_pack(alice, [])).empty  # nothing is added to a prompt while off
    assert len((await memory.conversation(alice)).turns) == 1
    assert await memory.erase_conversation_speaker(alice, "alice") == 1
