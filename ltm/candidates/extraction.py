"""What one user message proposes: the rule path or the model path, after the same checks (Q1, Q3, Q4).

In order, for the user's own message text (never the assistant's reply):
1. empty (or only whitespace) or longer than `MAX_INPUT_CHARS`: skipped, nothing proposed;
2. credential-like text: exactly one redacted `ignore` proposal, and the text goes nowhere
   else (no rule scan, no model request), whatever its length;
3. with a candidate model: one bounded request (`selection.py`); a failed request or an
   answer that does not validate proposes nothing (the reason is returned, never the text),
   and the rules are not used as a substitute;
4. otherwise the rules (`engine.py`), which scan at most their own `MAX_TEXT_CHARS`;
5. whichever path proposed it, every proposal's content (a profile value is its content) and
   quoted words go through the same secret detector before anything is queued: a proposal that
   holds a secret becomes the redacted `ignore` proposal. A key glued to a word ("acctsk_live_…")
   passes the whole-message check of step 2, while the model's quote of the key alone does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import LTMError
from ..ports import LanguageModel
from ..secrets import secret_kind
from ..timefields import now_iso
from .candidate import CandidateOrigin
from .engine import extract_candidates
from .kinds import ProposedMemory, ignore_candidate
from .selection import MAX_INPUT_CHARS, MAX_OUTPUT_CHARS, TIMEOUT_S, parse_selection, request_messages


@dataclass(frozen=True)
class Extraction:
    origin: CandidateOrigin
    proposals: list[ProposedMemory] = field(default_factory=list)
    skipped: str = ""  # why the text was not looked at
    rejected: str = ""  # why the model's result was discarded (never contains user text)


async def extract(user_text: str, *, max_candidates: int, model_uuid: str, llm: LanguageModel) -> Extraction:
    origin = CandidateOrigin.MODEL if model_uuid else CandidateOrigin.RULES
    if not user_text or not user_text.strip():
        return Extraction(origin, skipped="the message has no text")
    if len(user_text) > MAX_INPUT_CHARS:
        return Extraction(origin, skipped=f"the message is longer than {MAX_INPUT_CHARS} characters")
    kind = secret_kind(user_text)
    if kind is not None:
        # Kept only as a redacted note (a rule's finding); with a model configured the text is never sent.
        return Extraction(CandidateOrigin.RULES, [ignore_candidate(kind)])
    if not model_uuid:
        return Extraction(origin, without_secrets(extract_candidates(user_text, max_candidates=max_candidates)))
    try:
        reply = await llm.complete(model_uuid, request_messages(user_text, max_candidates, now_iso()),
                                   timeout_s=TIMEOUT_S, max_output_chars=MAX_OUTPUT_CHARS)
        return Extraction(origin, without_secrets(parse_selection(reply, user_text, max_candidates)))
    except LTMError as exc:
        # A refusal, no answer within the timeout, an oversized or invalid answer: nothing is proposed.
        return Extraction(origin, rejected=f"{exc.code}: {exc.message}")


def without_secrets(proposals: list[ProposedMemory]) -> list[ProposedMemory]:
    """Step 5: a proposal whose content or quoted words look like a secret keeps nothing of them."""
    checked: list[ProposedMemory] = []
    for proposal in proposals:
        kind = secret_kind(proposal.content) or (secret_kind(proposal.evidence) if proposal.evidence else None)
        checked.append(ignore_candidate(kind) if kind is not None else proposal)
    return checked
