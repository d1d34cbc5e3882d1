"""Identity numbers are secrets on every path: `remember`, import, profile update and candidates.

One detector (`ltm/secrets/`) decides for every stored field and for candidates, so a social
security, passport or Chinese resident identity number is refused the same way everywhere:
nothing is written, and a candidate is only a redacted `ignore` note (docs/GUARANTEES.md).
"""

from __future__ import annotations

import pytest

from ltm import CandidateKind, Identity, MemoryScope, MemoryService, ValidationError, parse_records
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import from_the_message, memory_with_kb, stored

SENTENCES = [
    ("my ssn is 123-45-6789", "123-45-6789"),
    ("我的身份证号是110101199003071234", "110101199003071234"),
    ("my passport number is E12345678", "E12345678"),
]
IDS = ["ssn", "resident-id", "passport"]


async def setup(**settings: object) -> tuple[InMemoryPorts, MemoryService, MemoryScope]:
    fake = InMemoryPorts()
    memory = await memory_with_kb(fake, candidate_extraction_enabled=True, candidate_auto_apply=True, **settings)
    scope = await memory.scope_for(Identity.build(launcher_type="group", launcher_id="g1", bot_uuid="bot-1",
                                                  sender_id="alice", sender_name="Alice", query_id=7))
    fake.calls.reset()
    return fake, memory, scope


def nothing_written(fake: InMemoryPorts, scope: MemoryScope) -> bool:
    return stored(fake, scope) == {} and fake.calls.count("index.upsert") == 0 and fake.calls.count("store.set") == 0


@pytest.mark.parametrize(("text", "number"), SENTENCES, ids=IDS)
async def test_remember_refuses_an_identity_number(text: str, number: str) -> None:
    fake, memory, scope = await setup()
    with pytest.raises(ValidationError, match="content looks like a"):
        await memory.remember(scope, {"content": text})
    with pytest.raises(ValidationError, match="a tag looks like a"):
        await memory.remember(scope, {"content": "a trip to Lisbon", "tags": [text]})
    with pytest.raises(ValidationError, match="source_ref looks like a"):
        await memory.remember(scope, {"content": "a trip to Lisbon", "source_ref": text})
    assert nothing_written(fake, scope)


@pytest.mark.parametrize(("text", "number"), SENTENCES, ids=IDS)
async def test_an_import_with_an_identity_number_is_refused_whole(text: str, number: str) -> None:
    fake, memory, scope = await setup()
    # The batch is parsed whole before anything is written (`!memory import l2` and JSON documents alike).
    with pytest.raises(ValidationError, match="episode #2: refused: the content looks like a .* nothing was imported"):
        parse_records([{"content": "a trip to Lisbon"}, {"content": text}], source="import")
    with pytest.raises(ValidationError, match="episode #1: refused: .*sender.* looks like a"):
        parse_records([{"content": "a trip to Lisbon", "sender_name": text}], source="import")
    assert nothing_written(fake, scope)


@pytest.mark.parametrize(("text", "number"), SENTENCES, ids=IDS)
async def test_a_profile_update_with_an_identity_number_is_refused(text: str, number: str) -> None:
    fake, memory, scope = await setup()
    for target in ("speaker", "session"):
        with pytest.raises(ValidationError, match="looks like a"):
            await memory.update_profile(scope, target, {"traits": [text]})
        with pytest.raises(ValidationError, match="looks like a"):
            await memory.update_profile(scope, target, {"notes": text})
    assert fake.calls.count("store.set") == 0
    profiles = await memory.profiles(scope)
    assert profiles.session.is_empty and (profiles.speaker is None or profiles.speaker.is_empty)


@pytest.mark.parametrize(("text", "number"), SENTENCES, ids=IDS)
async def test_a_candidate_of_an_identity_number_is_only_a_redacted_note(text: str, number: str) -> None:
    fake, memory, scope = await setup()
    run = await memory.propose_candidates(scope, text)
    (candidate,) = run.added
    assert candidate.kind is CandidateKind.IGNORE and run.auto_applied == []
    assert candidate.content.startswith("[redacted: looks like a ") and candidate.evidence == ""
    kept = from_the_message(candidate)
    assert number not in repr(candidate.to_dict()) and number[-4:] not in kept
    assert stored(fake, scope) == {} and fake.calls.count("index.upsert") == 0


@pytest.mark.parametrize(("text", "number"), SENTENCES, ids=IDS)
async def test_an_identity_number_never_reaches_the_candidate_model(text: str, number: str) -> None:
    fake, memory, scope = await setup(candidate_model_uuid="llm-candidates")
    run = await memory.propose_candidates(scope, text)
    assert [c.kind for c in run.added] == [CandidateKind.IGNORE]
    assert fake.llm.requests == [] and fake.calls.count("llm.complete") == 0
