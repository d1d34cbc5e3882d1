"""Validation happens before any write: a refused request leaves the store exactly as it was,
and oversized input is refused before any embedding or index call."""

from __future__ import annotations

from typing import Any

import pytest

from ltm import MemoryScope, MemoryService, ValidationError, parse_records
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import KB, ident, import_many, remember

# Each case: the raw episode and a piece of the message that names the reason.
BAD_EPISODES: dict[str, tuple[dict[str, Any], str]] = {
    "empty content": ({"content": "  "}, "content is required"),
    "content not a string": ({"content": 42}, "content must be a string"),
    "content too long": ({"content": "x" * 2001}, "longer than 2000"),
    "content with control character": ({"content": "bell \x07 here"}, "control characters"),
    "superscript importance": ({"content": "fact", "importance": "²"}, "importance"),
    "arabic-indic importance": ({"content": "fact", "importance": "٣"}, "importance"),
    "importance too high": ({"content": "fact", "importance": 6}, "importance"),
    "importance zero": ({"content": "fact", "importance": 0}, "importance"),
    "boolean importance": ({"content": "fact", "importance": True}, "importance"),
    "fractional importance": ({"content": "fact", "importance": 2.5}, "importance"),
    "30,000 tags as a list": ({"content": "fact", "tags": [f"t{i}" for i in range(30_000)]}, "tags has more than 10"),
    "30,000 tags as one string": ({"content": "fact", "tags": ",".join(f"t{i}" for i in range(30_000))}, "tags has more than 10"),
    "tag too long": ({"content": "fact", "tags": ["x" * 41]}, "longer than 40"),
    "tags not a list": ({"content": "fact", "tags": {"a": 1}}, "tags must be a list"),
    "naive event time": ({"content": "fact", "event_at": "2026-05-01T09:00:00"}, "no timezone"),
    "event time past year 9999 in UTC": ({"content": "fact", "event_at": "9999-12-31T23:59:59-10:00"}, "out of range"),
    "relative event time": ({"content": "fact", "event_at": "next Tuesday"}, "not an ISO-8601 time"),
    "valid_from after valid_until": ({"content": "fact", "valid_from": "2026-02-01T00:00:00Z",
                                      "valid_until": "2026-01-01T00:00:00Z"}, "earlier than"),
    "unknown claim type": ({"content": "fact", "claim_type": "rumour"}, "claim_type"),
    "lone surrogate in content": ({"content": "broken \ud800 text"}, "surrogate"),
    "lone surrogate in a tag": ({"content": "fact", "tags": ["fine", "bro\udc00ken"]}, "surrogate"),
    "lone surrogate in source_ref": ({"content": "fact", "source_ref": "page \udbff"}, "source_ref contains"),
    "password in content": ({"content": "my password: hunter22"}, "looks like a password"),
    "api key in content": ({"content": "use sk-proj-4eC39HqLyjWDarjtT1zdp7dc for the bot"}, "looks like an API key"),
    "one-time code in content": ({"content": "the verification code is 493021"}, "one-time code"),
    "private key in content": ({"content": "-----BEGIN RSA PRIVATE KEY----- abc"}, "private key"),
    "token in a tag": ({"content": "fact", "tags": ["ghp_16C7e42F292c6912E7710c838347Ae178B4a"]}, "a tag looks like"),
    # issue 21, finding 7: a 20-character OpenAI-style key (lowercased, as tags are) and a
    # low-entropy token after an explicit Authorization header
    "20-character sk- key in a tag": ({"content": "fact", "tags": ["sk-4f9a2C7e1b8D3f6a0"]},
                                      "a tag looks like an API key"),
    "bearer header with a plain token": ({"content": "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345"},
                                         "looks like a bearer token"),
    "credential in source_ref": ({"content": "fact", "source_ref": "api_key=abcdef123456"}, "source_ref looks like"),
    "too many supersedes": ({"content": "fact", "supersedes": [f"id-{i}" for i in range(21)]}, "supersedes has more than 20"),
}


@pytest.mark.parametrize(("raw", "reason"), BAD_EPISODES.values(), ids=list(BAD_EPISODES))
async def test_bad_episode_is_refused_before_any_host_write(fake: InMemoryPorts, memory: MemoryService,
                                                            alice: MemoryScope, raw: dict[str, Any],
                                                            reason: str) -> None:
    await remember(memory, alice, "an existing record")
    before = fake.state()
    fake.calls.reset()
    with pytest.raises(ValidationError, match=reason):
        await memory.remember(alice, raw)
    assert fake.state() == before
    assert fake.calls.count("embedder.embed") == 0
    assert fake.calls.count("index.*") == 0
    assert fake.calls.count("store.set") == 0


async def test_secret_refusal_names_the_field_and_never_echoes_the_secret(memory: MemoryService,
                                                                         alice: MemoryScope) -> None:
    with pytest.raises(ValidationError) as refused:
        await remember(memory, alice, "fact", source_ref="password=hunter22")
    assert "source_ref" in str(refused.value) and "hunter22" not in str(refused.value)


async def test_episode_that_is_not_an_object_is_refused(fake: InMemoryPorts, memory: MemoryService,
                                                        alice: MemoryScope) -> None:
    before = fake.state()
    with pytest.raises(ValidationError):
        await memory.remember(alice, ["not", "an", "object"])  # type: ignore[arg-type]
    assert fake.state() == before


@pytest.mark.parametrize("target", ["missing", "archived", "other speaker", "already superseded"])
async def test_supersede_target_that_does_not_qualify_refuses_the_whole_call(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope, bob: MemoryScope, target: str) -> None:
    good = await remember(memory, alice, "a valid target")
    if target == "missing":
        bad_id = "00000000-0000-4000-8000-000000000000"
    elif target == "archived":
        bad_id = (await memory.archive(alice, (await remember(memory, alice, "archived fact")).episode_id)).episode_id
    elif target == "other speaker":
        bad_id = (await remember(memory, bob, "bob's own fact")).episode_id
    else:
        bad_id = (await remember(memory, alice, "first version")).episode_id
        await remember(memory, alice, "second version", supersedes=[bad_id])
    before = fake.state()
    fake.calls.reset()
    with pytest.raises(ValidationError) as refused:
        await remember(memory, alice, "the correction", supersedes=[good.episode_id, bad_id])
    assert "nothing was written" in str(refused.value).lower()
    assert fake.state() == before
    assert fake.calls.count("embedder.embed") == 0 and fake.calls.count("index.upsert") == 0
    assert (await memory.get_episode(alice, good.episode_id)).is_active


BAD_PROFILE_CHANGES: dict[str, tuple[dict[str, Any], str]] = {
    "no field": ({}, "give at least one"),
    "unknown mode": ({"name": "x", "mode": "append"}, "mode must be"),
    "lone surrogate in name": ({"name": "Al\ud800ice"}, "surrogate"),
    "lone surrogate in a trait": ({"traits": ["kind", "br\udc00ave"]}, "surrogate"),
    "lone surrogate in notes": ({"notes": "note \udfff"}, "surrogate"),
    "lone surrogate in a preference": ({"preferences": ["tea \ud801"]}, "surrogate"),
    "password in notes": ({"notes": "wifi password: hunter22"}, "notes looks like"),
    "api key in name": ({"name": "sk-proj-4eC39HqLyjWDarjtT1zdp7dc"}, "name looks like"),
    "token in a trait": ({"traits": ["Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"]}, "trait looks like"),
    "code in a preference": ({"preferences": ["OTP 123456"]}, "preference looks like"),
    "notes over the limit": ({"notes": "n" * 1001}, "longer than 1000"),
    "too many traits": ({"traits": [f"trait {i}" for i in range(201)]}, "more than 200"),
    "traits not a list": ({"traits": {"kind": True}}, "must be a list"),
    "multi-line name": ({"name": "first\nsecond"}, "single line"),
}


@pytest.mark.parametrize(("change", "reason"), BAD_PROFILE_CHANGES.values(), ids=list(BAD_PROFILE_CHANGES))
async def test_bad_profile_change_is_refused_and_stores_nothing(fake: InMemoryPorts, memory: MemoryService,
                                                                alice: MemoryScope, change: dict[str, Any],
                                                                reason: str) -> None:
    await memory.update_profile(alice, "speaker", {"name": "Alice", "traits": ["kind"]})
    before = fake.state()
    for target in ("session", "speaker"):
        with pytest.raises(ValidationError, match=reason):
            await memory.update_profile(alice, target, change)
    assert fake.state() == before


async def test_speaker_profile_needs_a_known_sender(fake: InMemoryPorts, memory: MemoryService) -> None:
    anonymous = await memory.scope_for(ident("g1", sender="0"))
    before = fake.state()
    with pytest.raises(ValidationError):
        await memory.update_profile(anonymous, "speaker", {"name": "Nobody"})
    with pytest.raises(ValidationError):
        await memory.update_profile(anonymous, "everyone", {"name": "Nobody"})
    assert fake.state() == before


BAD_IMPORT_SENDERS: dict[str, dict[str, Any]] = {
    "password as sender name": {"sender_name": "password: hunter22"},
    "api key as sender id": {"sender_id": "sk-proj-4eC39HqLyjWDarjtT1zdp7dc"},
    "lone surrogate in sender name": {"sender_name": "Bo\ud800b"},
    "sender name too long": {"sender_name": "b" * 201},
    "naive timestamp": {"timestamp": "2026-01-01T10:00:00"},
    "deleted status": {"status": "deleted"},
}


@pytest.mark.parametrize("bad", BAD_IMPORT_SENDERS.values(), ids=list(BAD_IMPORT_SENDERS))
async def test_import_with_one_bad_record_imports_nothing_and_names_its_position(
        fake: InMemoryPorts, memory: MemoryService, alice: MemoryScope, bad: dict[str, Any]) -> None:
    items: list[dict[str, Any]] = [{"content": "first"}, {"content": "second"}, {"content": "third", **bad}]
    before = fake.state()
    with pytest.raises(ValidationError) as refused:
        await import_many(memory, alice, items)
    assert str(refused.value).startswith("episode #3:")
    assert fake.state() == before


async def test_import_refuses_duplicate_ids_and_empty_batches(fake: InMemoryPorts, memory: MemoryService,
                                                              alice: MemoryScope) -> None:
    before = fake.state()
    with pytest.raises(ValidationError):
        parse_records([{"id": "a", "content": "one"}, {"id": "a", "content": "two"}])
    with pytest.raises(ValidationError):
        parse_records({"episodes": []})
    with pytest.raises(ValidationError):
        await memory.import_episodes(alice, [])
    assert fake.state() == before


@pytest.mark.parametrize("settings", [
    {}, {"embedding_model_uuid": ""}, {"embedding_model_uuid": "emb-1", "auto_recall_top_k": 21},
    {"embedding_model_uuid": "emb-1", "isolation": "global"},
    {"embedding_model_uuid": "emb-1", "recency_half_life_days": "nan"},
], ids=["missing model", "empty model", "top_k too high", "unknown isolation", "NaN half life"])
async def test_bad_kb_settings_are_refused_and_store_nothing(fake: InMemoryPorts, memory: MemoryService,
                                                             settings: dict[str, Any]) -> None:
    before = fake.state()
    with pytest.raises(ValidationError):
        await memory.register_kb(KB, settings)
    assert fake.state() == before
