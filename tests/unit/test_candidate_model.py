"""The model path of candidate extraction (Q4) with the scripted language model of the in-memory ports.

The fake model understands nothing: each test queues the exact answer (or failure) it wants
and then checks what the plugin sent, what it kept, and that nothing else happened.
"""

from __future__ import annotations

import json

import pytest

from ltm import CandidateKind, CandidateStatus, Identity, MemoryScope, MemoryService, OutcomeUnknown
from ltm.candidates.selection import (
    MAX_INPUT_CHARS,
    MAX_OUTPUT_CHARS,
    MAX_QUOTE_CHARS,
    MAX_VALUE_CHARS,
    TIMEOUT_S,
    parse_selection,
)
from ltm.episodes.model import MAX_CONTENT_CHARS
from ltm.errors import HostError, ValidationError
from ltm.profiles.model import MAX_ITEM_CHARS, MAX_NAME_CHARS
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import memory_with_kb, stored

MODEL = "llm-candidates"
TEXT = "I'm Dana and I don't eat pork. We moved the launch to May 3."
QUEUE_PREFIX = "v2/candidates/"


def answer(*items: dict[str, str]) -> str:
    return json.dumps({"candidates": list(items)})


PORK = {"kind": "profile", "target": "speaker", "field": "preferences", "evidence_quote": "I don't eat pork"}
LAUNCH = {"kind": "episode", "evidence_quote": "We moved the launch to May 3."}


async def setup(**settings: object) -> tuple[InMemoryPorts, MemoryService, MemoryScope]:
    fake = InMemoryPorts()
    memory = await memory_with_kb(fake, candidate_extraction_enabled=True, candidate_model_uuid=MODEL,
                                  **settings)
    scope = await memory.scope_for(Identity.build(launcher_type="person", launcher_id="u1", bot_uuid="bot-1",
                                                  sender_id="u1", sender_name="Dana", query_id=55))
    fake.calls.reset()
    return fake, memory, scope


def queue_untouched(fake: InMemoryPorts) -> bool:
    return not any(k.startswith(QUEUE_PREFIX) for k in fake.store.data) and fake.calls.count("store.set") == 0


async def test_model_candidates_are_verbatim_inference_and_pending() -> None:
    fake, memory, scope = await setup()
    fake.llm.queue(answer(PORK, LAUNCH))
    run = await memory.propose_candidates(scope, TEXT)
    assert [(c.kind, c.content, c.claim_type, c.rule) for c in run.added] == [
        (CandidateKind.PROFILE, "I don't eat pork", "inference", "model"),
        (CandidateKind.EPISODE, "We moved the launch to May 3.", "inference", "model")]
    assert all(c.status is CandidateStatus.PENDING and c.source_ref == "query:55" for c in run.added)
    assert all(c.evidence == c.content and c.content in TEXT for c in run.added)
    (request,) = fake.llm.requests
    assert request.model == MODEL and request.timeout_s == TIMEOUT_S == 30
    assert request.max_output_chars == MAX_OUTPUT_CHARS == 16000
    assert [m.role for m in request.messages] == ["system", "user"]
    data = json.loads(request.messages[1].content)
    assert data["user_text"] == TEXT and data["max_candidates"] == 3 and set(data) == {
        "user_text", "processed_at", "max_candidates"}
    assert "at most 3 spans" in request.messages[0].content


async def test_auto_apply_never_applies_model_candidates() -> None:
    fake, memory, scope = await setup(candidate_auto_apply=True)
    fake.llm.queue(answer(PORK, LAUNCH))
    run = await memory.propose_candidates(scope, TEXT)
    assert run.auto_applied == [] and {c.status for c in run.added} == {CandidateStatus.PENDING}
    assert fake.calls.count("index.upsert") == 0 and stored(fake, scope) == {}
    assert (await memory.profiles(scope)).speaker.is_empty  # type: ignore[union-attr]
    accepted = await memory.accept_candidate(scope, run.added[1].candidate_id)  # a person may still accept
    (fields,) = stored(fake, scope).values()
    assert fields["claim_type"] == "inference" and fields["source_ref"] == "query:55"
    assert accepted.applied_id == fields["episode_id"]


REJECTED_ANSWERS = {
    "malformed JSON": '{"candidates": [',
    "not an object": '["I don\'t eat pork"]',
    "extra top-level key": json.dumps({"candidates": [], "note": "x"}),
    "extra field": answer({**LAUNCH, "confidence": "0.9"}),
    "missing field": answer({"kind": "profile", "field": "traits", "evidence_quote": "I don't eat pork"}),
    "unknown classification": answer({"kind": "fact", "evidence_quote": "I don't eat pork"}),
    "unknown field": answer({**PORK, "field": "allergies"}),
    "unknown target": answer({**PORK, "target": "everyone"}),
    "non-verbatim quote": answer({**PORK, "evidence_quote": "I eat pork"}),
    "rewritten quote": answer({**LAUNCH, "evidence_quote": "We moved the launch to 3 May."}),
    "empty quote": answer({**LAUNCH, "evidence_quote": "  "}),
    "quote not a string": json.dumps({"candidates": [{"kind": "episode", "evidence_quote": 3}]}),
    "too many candidates": answer(PORK, LAUNCH, {**LAUNCH, "evidence_quote": "I'm Dana"},
                                  {**PORK, "evidence_quote": "Dana"}),
    "duplicate key": '{"candidates": [], "candidates": []}',
    "items not a list": json.dumps({"candidates": {"kind": "episode"}}),
    "prose around JSON": "Sure! " + answer(LAUNCH),
}


@pytest.mark.parametrize("reply", list(REJECTED_ANSWERS.values()), ids=list(REJECTED_ANSWERS))
async def test_an_invalid_answer_rejects_the_whole_result_without_rules(reply: str) -> None:
    fake, memory, scope = await setup()
    fake.llm.queue(reply)
    # The rules would find the name and the dislike in this text: they must not stand in.
    run = await memory.propose_candidates(scope, TEXT)
    assert run.added == [] and run.rejected
    assert TEXT not in run.rejected and "pork" not in run.rejected
    assert queue_untouched(fake) and len(fake.llm.requests) == 1


async def test_one_bad_item_rejects_the_good_ones_too() -> None:
    fake, memory, scope = await setup()
    fake.llm.queue(answer(PORK, {**LAUNCH, "evidence_quote": "We moved the launch to June."}))
    run = await memory.propose_candidates(scope, TEXT)
    assert run.added == [] and "verbatim" in run.rejected and queue_untouched(fake)


@pytest.mark.parametrize("failure", [
    OutcomeUnknown("the model did not answer within 30 s"),
    HostError("host error on model call: provider refused"),
    ValidationError(f"the model's answer is longer than {MAX_OUTPUT_CHARS} characters"),
], ids=["timeout", "refusal", "oversized-output-from-the-port"])
async def test_a_failed_model_call_proposes_nothing(failure: Exception) -> None:
    fake, memory, scope = await setup()
    fake.faults.fail("llm.complete", failure)
    run = await memory.propose_candidates(scope, TEXT)
    assert run.added == [] and run.rejected.startswith(f"{failure.code}:")  # type: ignore[attr-defined]
    assert queue_untouched(fake)


async def test_an_oversized_answer_is_rejected() -> None:
    fake, memory, scope = await setup()
    fake.llm.queue(answer(LAUNCH) + " " * MAX_OUTPUT_CHARS)  # the scripted port enforces the bound it is given
    run = await memory.propose_candidates(scope, TEXT)
    assert run.added == [] and "longer than 16000" in run.rejected and queue_untouched(fake)


async def test_credentials_are_never_sent_to_the_model_nor_stored() -> None:
    fake, memory, scope = await setup()
    secret = "ghp_4f9aQ2xLmN8pR7tVb3cD5eF6gH7iJ8kL9mN0"
    text = f"here is my github token {secret} and I love hiking " + "x" * 1200  # past the rules' own bound
    run = await memory.propose_candidates(scope, text)
    assert fake.llm.requests == [] and fake.calls.count("llm.complete") == 0
    (candidate,) = run.added
    # An ignore candidate claims nothing: its claim type says so (it was "user_statement" before).
    assert candidate.kind is CandidateKind.IGNORE and candidate.claim_type == "redacted"
    assert all(secret.encode() not in value for value in fake.store.data.values())


@pytest.mark.parametrize("text", ["", "  ", "a" * (MAX_INPUT_CHARS + 1)], ids=["empty", "blank", "oversized"])
async def test_empty_or_oversized_input_is_skipped_without_a_request(text: str) -> None:
    fake, memory, scope = await setup()
    run = await memory.propose_candidates(scope, text)
    assert run.added == [] and run.skipped and fake.llm.requests == [] and queue_untouched(fake)


async def test_input_at_the_bound_is_sent_whole() -> None:
    fake, memory, scope = await setup()
    text = ("I love hiking. " * 600)[:MAX_INPUT_CHARS]
    fake.llm.queue(answer({"kind": "profile", "target": "speaker", "field": "preferences",
                           "evidence_quote": "I love hiking."}))
    run = await memory.propose_candidates(scope, text)
    assert len(run.added) == 1
    assert json.loads(fake.llm.requests[0].messages[1].content)["user_text"] == text


async def test_the_candidate_count_setting_bounds_the_answer() -> None:
    fake, memory, scope = await setup(candidate_max_per_turn=1)
    fake.llm.queue(answer(PORK, LAUNCH))
    run = await memory.propose_candidates(scope, TEXT)
    assert run.added == [] and "at most 1" in run.rejected
    assert json.loads(fake.llm.requests[0].messages[1].content)["max_candidates"] == 1


# ------------------------------------------------------------------------------------------- the parser
def test_quote_limits_match_the_write_paths() -> None:
    assert MAX_VALUE_CHARS["name"] == MAX_NAME_CHARS  # type: ignore[index]
    assert MAX_VALUE_CHARS["traits"] == MAX_VALUE_CHARS["preferences"] == MAX_ITEM_CHARS  # type: ignore[index]
    assert MAX_QUOTE_CHARS <= MAX_CONTENT_CHARS


def test_a_quote_too_long_for_its_field_rejects_the_answer() -> None:
    name = "N" * (MAX_NAME_CHARS + 1)
    reply = answer({"kind": "profile", "target": "speaker", "field": "name", "evidence_quote": name})
    with pytest.raises(ValidationError, match="too long for the profile name"):
        parse_selection(reply, f"call me {name}", 3)
    long_quote = "word " * 500
    with pytest.raises(ValidationError, match="longer than 2000"):
        parse_selection(answer({"kind": "episode", "evidence_quote": long_quote}), long_quote, 3)


def test_a_profile_value_must_be_one_line() -> None:
    text = "I like\ntea"
    reply = answer({"kind": "profile", "target": "speaker", "field": "preferences", "evidence_quote": text})
    with pytest.raises(ValidationError, match="spans lines"):
        parse_selection(reply, text, 3)
    (episode,) = parse_selection(answer({"kind": "episode", "evidence_quote": text}), text, 3)
    assert episode.content == text


def test_a_fenced_answer_and_an_empty_answer_are_accepted() -> None:
    assert parse_selection("```json\n" + answer(LAUNCH) + "\n```", TEXT, 3)[0].content == LAUNCH["evidence_quote"]
    assert parse_selection(answer(), TEXT, 3) == []
    assert parse_selection('{"candidates": []}', "", 3) == []


def test_content_is_the_quote_without_surrounding_space() -> None:
    (item,) = parse_selection(answer({**LAUNCH, "evidence_quote": " We moved the launch to May 3."}), TEXT, 3)
    assert item.content == "We moved the launch to May 3." and item.evidence == " We moved the launch to May 3."
