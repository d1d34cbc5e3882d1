"""The candidate review queue on the in-memory ports (Q1-Q3): propose, accept, reject, bounds, faults.

Rule path only here (the model path is in test_candidate_model.py). Each test proposes from a
user message through `MemoryService.propose_candidates`, the way the event listener does.
"""

from __future__ import annotations

import asyncio
import json

import pytest

import ltm.candidates.queue as queue_module
from ltm import (
    CandidateKind,
    CandidateStatus,
    FencedError,
    HostError,
    Identity,
    MemoryScope,
    MemoryService,
    NotFound,
    OutcomeUnknown,
    PartialWrite,
    ValidationError,
)
from ltm.candidates.candidate import Candidate, CandidateOrigin, Speaker
from ltm.candidates.kinds import ProposedMemory
from ltm.candidates.queue import make_room
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import audit_ops, memory_with_kb, stored

ON = {"candidate_extraction_enabled": True}
QUEUE_PREFIX = "v2/candidates/"


def turn(launcher_id: str = "g1", *, sender: str = "alice", query_id: int = 7) -> Identity:
    return Identity.build(launcher_type="group", launcher_id=launcher_id, bot_uuid="bot-1", sender_id=sender,
                          sender_name=sender.title(), query_id=query_id)


async def scoped(memory: MemoryService, identity: Identity) -> MemoryScope:
    return await memory.scope_for(identity)


async def service(fake: InMemoryPorts, **settings: object) -> MemoryService:
    memory = await memory_with_kb(fake, **{**ON, **settings})
    fake.calls.reset()
    return memory


def queue_bytes(fake: InMemoryPorts) -> bytes:
    return b"".join(v for k, v in fake.store.data.items() if k.startswith(QUEUE_PREFIX))


async def test_rule_candidates_are_pending_and_change_no_memory() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    run = await memory.propose_candidates(alice, "My name is Tom, and I'm allergic to peanuts.")
    assert [(c.kind, c.field.value if c.field else None, c.content) for c in run.added] == [
        (CandidateKind.PROFILE, "name", "Tom"), (CandidateKind.PROFILE, "traits", "allergic to peanuts")]
    for candidate in run.added:
        assert candidate.status is CandidateStatus.PENDING
        assert candidate.source_ref == "query:7" and candidate.claim_type == "user_statement"
        assert candidate.origin is CandidateOrigin.RULES and candidate.speaker.sender_id == "alice"
        assert candidate.evidence and candidate.evidence in "My name is Tom, and I'm allergic to peanuts."
    assert fake.calls.count("index.upsert") == 0 and fake.calls.count("embedder.embed") == 0
    profiles = await memory.profiles(alice)
    assert profiles.session.is_empty and profiles.speaker is not None and profiles.speaker.is_empty
    assert [op for op, _ in await audit_ops(memory, alice)] == ["candidate_propose", "candidate_propose"]
    listing = await memory.candidate_page(alice)
    assert [c.candidate_id for c in listing.candidates] == [c.candidate_id for c in reversed(run.added)]
    assert listing.counts == {"pending": 2, "accepted": 0, "rejected": 0}


async def test_accept_episode_writes_one_record_with_provenance_and_audit() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn(query_id=41))
    (candidate,) = (await memory.propose_candidates(alice, "Remember that the launch review moved to Friday.")).added
    assert candidate.kind is CandidateKind.EPISODE
    reviewer = await scoped(memory, turn(sender="bob", query_id=42))
    accepted = await memory.accept_candidate(reviewer, candidate.candidate_id)
    records = stored(fake, alice)
    assert len(records) == 1
    (fields,) = records.values()
    assert fields["content"] == candidate.content
    assert fields["source_ref"] == "query:41" and fields["claim_type"] == "user_statement"
    assert fields["source"] == "candidate" and fields["sender_id"] == "alice"  # the speaker, not the reviewer
    assert accepted.status is CandidateStatus.ACCEPTED and accepted.decided_by == "bob"
    assert (accepted.applied_type, accepted.applied_id) == ("episode", fields["episode_id"])
    ops = await audit_ops(memory, alice)
    assert ("remember", fields["episode_id"]) in ops and ("candidate_accept", candidate.candidate_id) in ops
    entry = next(e for e in await memory.audit_export(alice) if e["operation"] == "candidate_accept")
    assert entry["meta"]["source_ref"] == "query:41" and entry["sender_id"] == "bob"
    assert candidate.content not in json.dumps(await memory.audit_export(alice))  # audit never holds memory text


async def test_accepted_profile_candidate_goes_to_the_speakers_profile() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    run = await memory.propose_candidates(alice, "I'm a vegetarian.")
    (candidate,) = run.added
    bob = await scoped(memory, turn(sender="bob", query_id=8))
    accepted = await memory.accept_candidate(bob, candidate.candidate_id)
    assert (accepted.applied_type, accepted.applied_id) == ("speaker_profile", "alice")
    assert (await memory.profiles(alice)).speaker.traits == ["vegetarian"]  # type: ignore[union-attr]
    assert (await memory.profiles(bob)).speaker.is_empty  # type: ignore[union-attr]
    assert fake.calls.count("index.upsert") == 0
    ops = [op for op, _ in await audit_ops(memory, alice)]
    assert ops.count("update_profile") == 1 and ops.count("candidate_accept") == 1


async def test_session_candidate_updates_the_session_profile() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    (candidate,) = (await memory.propose_candidates(alice, "以后我们群里都用中文交流")).added
    assert candidate.target == "session"
    accepted = await memory.accept_candidate(alice, candidate.candidate_id)
    assert (accepted.applied_type, accepted.applied_id) == ("session_profile", "session")
    assert (await memory.profiles(alice)).session.preferences == [candidate.content]


async def test_reject_writes_no_memory_and_stays_inspectable() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    (candidate,) = (await memory.propose_candidates(alice, "remember that the demo is on Friday")).added
    before = fake.state().index
    rejected = await memory.reject_candidate(alice, candidate.candidate_id)
    assert rejected.status is CandidateStatus.REJECTED and rejected.applied_type is None
    assert fake.state().index == before and fake.calls.count("index.upsert") == 0
    assert (await memory.candidate_page(alice)).total == 0
    everything = await memory.candidate_page(alice, all_statuses=True)
    assert [(c.candidate_id, c.status) for c in everything.candidates] == [
        (candidate.candidate_id, CandidateStatus.REJECTED)]
    assert everything.candidates[0].content == candidate.content
    assert ("candidate_reject", candidate.candidate_id) in await audit_ops(memory, alice)


async def test_a_decided_candidate_is_not_decided_again() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    first, second = (await memory.propose_candidates(alice, "My name is Tom. I love hiking.")).added
    await memory.accept_candidate(alice, first.candidate_id)
    await memory.reject_candidate(alice, second.candidate_id)
    for action in (memory.accept_candidate, memory.reject_candidate):
        for candidate, status in ((first, "accepted"), (second, "rejected")):
            with pytest.raises(ValidationError, match=f"already {status}"):
                await action(alice, candidate.candidate_id)
    assert fake.calls.count("index.upsert") == 0
    assert (await memory.profiles(alice)).speaker.preferences == []  # type: ignore[union-attr]


async def test_concurrent_accepts_apply_once() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    (candidate,) = (await memory.propose_candidates(alice, "remember that the demo is on Friday")).added
    results = await asyncio.gather(memory.accept_candidate(alice, candidate.candidate_id),
                                   memory.accept_candidate(alice, candidate.candidate_id), return_exceptions=True)
    assert sorted(type(r).__name__ for r in results) == ["Candidate", "ValidationError"]
    assert len(stored(fake, alice)) == 1


async def test_candidates_of_another_scope_are_not_found() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    (candidate,) = (await memory.propose_candidates(alice, "remember that the demo is on Friday")).added
    stranger = await scoped(memory, turn("g2", sender="carol"))
    same_chat_other_bot = await scoped(memory, Identity.build(launcher_type="group", launcher_id="g1",
                                                              bot_uuid="bot-2", sender_id="alice", query_id=9))
    for other in (stranger, same_chat_other_bot):
        for action in (memory.accept_candidate, memory.reject_candidate, memory.get_candidate):
            with pytest.raises(NotFound) as found:
                await action(other, candidate.candidate_id)
            with pytest.raises(NotFound) as unknown:
                await action(other, "c-00000000")
            assert str(found.value).replace(candidate.candidate_id, "X") == str(unknown.value).replace(
                "c-00000000", "X")
        assert (await memory.candidate_page(other, all_statuses=True)).total == 0
    assert (await memory.get_candidate(alice, candidate.candidate_id)).is_pending
    assert stored(fake, alice) == {}


async def test_credentials_become_one_redacted_ignore_candidate() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    secret = "hunter2-Zq9x"
    (candidate,) = (await memory.propose_candidates(alice, f"my password is {secret}, remember it")).added
    assert candidate.kind is CandidateKind.IGNORE and candidate.evidence == ""
    assert candidate.content.startswith("[redacted: looks like")
    assert secret.encode() not in queue_bytes(fake)
    assert all(secret.encode() not in value for value in fake.store.data.values())
    with pytest.raises(ValidationError, match="nothing to apply"):
        await memory.accept_candidate(alice, candidate.candidate_id)
    assert (await memory.reject_candidate(alice, candidate.candidate_id)).status is CandidateStatus.REJECTED


async def test_credential_in_a_long_message_is_still_an_ignore_candidate() -> None:
    # The rules scan at most 1,000 characters; the credential check covers every accepted message.
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    text = "notes " * 300 + "api_key = sk-live-4f9aQ2xLmN8pR7tV"
    (candidate,) = (await memory.propose_candidates(alice, text)).added
    assert candidate.kind is CandidateKind.IGNORE
    assert b"sk-live" not in queue_bytes(fake)


@pytest.mark.parametrize("text", ["", "   \n ", "I like tea. " * 700])
async def test_empty_or_oversized_text_proposes_nothing(text: str) -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    run = await memory.propose_candidates(alice, text)
    assert run.added == [] and run.skipped
    assert not queue_bytes(fake) and fake.calls.count("store.set") == 0


async def test_extraction_off_touches_nothing() -> None:
    fake = InMemoryPorts()
    memory = await service(fake, candidate_extraction_enabled=False)
    alice = await scoped(memory, turn())
    run = await memory.propose_candidates(alice, "My name is Tom.")
    assert run.added == [] and "off" in run.skipped
    assert fake.calls.count("store.set") == 0 and fake.calls.count("llm.complete") == 0


async def test_speaker_candidates_need_a_known_speaker() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    nobody = await scoped(memory, turn(sender=""))
    run = await memory.propose_candidates(nobody, "My name is Tom. Remember that the demo is on Friday.")
    assert [c.kind for c in run.added] == [CandidateKind.EPISODE] and run.without_speaker == 1


async def test_the_same_pending_proposal_is_queued_once() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn(query_id=1))
    assert len((await memory.propose_candidates(alice, "My name is Tom.")).added) == 1
    again = await memory.propose_candidates(await scoped(memory, turn(query_id=2)), "my name is tom")
    assert again.added == [] and again.duplicates == 1
    bob = await scoped(memory, turn(sender="bob", query_id=3))
    assert len((await memory.propose_candidates(bob, "My name is Tom.")).added) == 1  # another speaker
    assert (await memory.candidate_page(alice)).total == 2


async def test_auto_apply_accepts_rule_candidates_with_audit() -> None:
    fake = InMemoryPorts()
    memory = await service(fake, candidate_auto_apply=True)
    alice = await scoped(memory, turn())
    run = await memory.propose_candidates(alice, "My name is Tom. Remember that the demo is on Friday.")
    assert len(run.auto_applied) == 2
    assert {c.status for c in run.auto_applied} == {CandidateStatus.ACCEPTED}
    assert {c.decided_by for c in run.auto_applied} == {"auto"}
    assert (await memory.profiles(alice)).speaker.name == "Tom"  # type: ignore[union-attr]
    assert len(stored(fake, alice)) == 1
    ops = [op for op, _ in await audit_ops(memory, alice)]
    assert ops.count("candidate_auto_apply") == 2 and "remember" in ops and "update_profile" in ops
    assert (await memory.candidate_page(alice)).total == 0


async def test_auto_apply_leaves_ignore_candidates_pending() -> None:
    fake = InMemoryPorts()
    memory = await service(fake, candidate_auto_apply=True)
    alice = await scoped(memory, turn())
    run = await memory.propose_candidates(alice, "my password is hunter2-Zq9x")
    assert run.auto_applied == [] and [c.kind for c in run.added] == [CandidateKind.IGNORE]
    assert (await memory.candidate_page(alice)).total == 1


# ------------------------------------------------------------------------------------------- the bound
def _candidate(number: int, status: CandidateStatus) -> Candidate:
    item = ProposedMemory(CandidateKind.EPISODE, f"fact {number}", f"fact {number}", "en.remember")
    made = Candidate.proposed(item, origin=CandidateOrigin.RULES, speaker=Speaker("group", "g1"), query_id=number,
                              candidate_id=f"c-{number:08x}")
    return made if status is CandidateStatus.PENDING else made.decided(status, "bob")


def test_make_room_drops_oldest_rejected_then_oldest_accepted_never_pending() -> None:
    items = [_candidate(1, CandidateStatus.ACCEPTED), _candidate(2, CandidateStatus.REJECTED),
             _candidate(3, CandidateStatus.PENDING), _candidate(4, CandidateStatus.REJECTED),
             _candidate(5, CandidateStatus.ACCEPTED)]
    kept, dropped, fits = make_room(items, 1, limit=5)
    assert (dropped, fits) == (1, 1) and [c.query_id for c in kept] == [1, 3, 4, 5]
    kept, dropped, fits = make_room(items, 3, limit=5)
    assert (dropped, fits) == (3, 3) and [c.query_id for c in kept] == [3, 5]
    kept, dropped, fits = make_room(items, 9, limit=5)
    assert (dropped, fits) == (4, 4) and [c.query_id for c in kept] == [3]
    pending = [_candidate(n, CandidateStatus.PENDING) for n in range(5)]
    assert make_room(pending, 2, limit=5) == (pending, 0, 0)
    assert make_room(items[:2], 2, limit=5) == (items[:2], 0, 2)


async def test_a_full_queue_refuses_new_candidates_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(queue_module, "MAX_CANDIDATES", 3)
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    first = await memory.propose_candidates(alice, "My name is Tom. I love hiking. I'm a vegetarian.")
    assert len(first.added) == 3
    await memory.reject_candidate(alice, first.added[1].candidate_id)
    second = await memory.propose_candidates(alice, "Remember that the demo is on Friday.")
    assert len(second.added) == 1 and second.refused == 0
    listing = await memory.candidate_page(alice, all_statuses=True)
    assert first.added[1].candidate_id not in [c.candidate_id for c in listing.candidates]  # rejected dropped
    third = await memory.propose_candidates(alice, "Remember that the retro is on Monday.")
    assert third.added == [] and third.refused == 1
    listing = await memory.candidate_page(alice)
    assert listing.total == 3 and listing.refused == 1 and listing.last_refused_at
    assert {c.candidate_id for c in listing.candidates} == {first.added[0].candidate_id,
                                                            first.added[2].candidate_id,
                                                            second.added[0].candidate_id}


# ------------------------------------------------------------------------------------------- faults
async def test_a_queue_that_cannot_take_the_mark_reports_a_partial_write() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    (candidate,) = (await memory.propose_candidates(alice, "remember that the demo is on Friday")).added
    fake.faults.fail("store.set", HostError("storage refused"), where=lambda c: c.args["key"].startswith(QUEUE_PREFIX))
    with pytest.raises(PartialWrite) as caught:
        await memory.accept_candidate(alice, candidate.candidate_id)
    (episode_id,) = stored(fake, alice)
    assert caught.value.details["applied"] == [f"episode:{episode_id}"]
    assert "reject it" in str(caught.value)
    assert (await memory.get_candidate(alice, candidate.candidate_id)).is_pending


async def test_a_fenced_queue_refuses_accept_before_any_memory_write() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    first, second = (await memory.propose_candidates(
        alice, "Remember that the demo is on Friday. Remember that the retro is on Monday.")).added
    fake.faults.fail("store.set", OutcomeUnknown("no answer"), where=lambda c: c.args["key"].startswith(QUEUE_PREFIX))
    with pytest.raises(OutcomeUnknown):
        await memory.reject_candidate(alice, first.candidate_id)
    with pytest.raises(FencedError):
        await memory.accept_candidate(alice, second.candidate_id)
    assert fake.calls.count("index.upsert") == 0 and fake.calls.count("embedder.embed") == 0


async def test_proposals_on_a_fenced_scope_are_refused_without_writing() -> None:
    fake = InMemoryPorts()
    memory = await service(fake)
    alice = await scoped(memory, turn())
    fake.faults.fail("store.set", OutcomeUnknown("no answer"), where=lambda c: c.args["key"].startswith(QUEUE_PREFIX))
    with pytest.raises(OutcomeUnknown):
        await memory.propose_candidates(alice, "My name is Tom.")
    before = fake.state().kv
    with pytest.raises(FencedError):
        await memory.propose_candidates(alice, "I love hiking.")
    assert {k: v for k, v in fake.state().kv.items() if k.startswith(QUEUE_PREFIX)} == {
        k: v for k, v in before.items() if k.startswith(QUEUE_PREFIX)}
