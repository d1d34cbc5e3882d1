"""Memory candidates proposed from a user's own chat message (Q1-Q4 in docs/REQUIREMENTS.md).

- `kinds`                      what a candidate can be (kind, profile field, target, a proposal);
- `engine.extract_candidates`  the default, rule-based extractor: pure text in, proposals out, with
                               `sentences` (splitting), `phrases` and `declines` (shared words) and
                               one rules module per language (`rules_en`, `rules_zh`, `rules_ja`; the
                               English one split by rule kind: `rules_en_values`, `rules_en_profile`,
                               `rules_en_sessions`, `rules_en_episodes`);
- `selection`                  the model path: one bounded request, a strictly checked answer;
- `extraction.extract`         which path runs, after the size and secret checks;
- `records`                    a stored candidate and its review state;
- `queue`                      the bounded review queue of one scope, written through the gate;
- `review`                     what accepting a candidate writes, and as whom.
"""

from ltm.candidates.candidate import Candidate, CandidateOrigin, CandidateStatus
from ltm.candidates.engine import MAX_TEXT_CHARS, extract_candidates
from ltm.candidates.kinds import SESSION, SPEAKER, CandidateKind, ProfileField, ProposedMemory, redacted_text
from ltm.candidates.queue import MAX_CANDIDATES, CandidatePage
from ltm.candidates.review import CandidateRun

__all__ = [
    "MAX_CANDIDATES",
    "MAX_TEXT_CHARS",
    "SESSION",
    "SPEAKER",
    "Candidate",
    "CandidateKind",
    "CandidateOrigin",
    "CandidatePage",
    "CandidateRun",
    "CandidateStatus",
    "ProfileField",
    "ProposedMemory",
    "extract_candidates",
    "redacted_text",
]
