"""Memory candidates proposed from a user's own chat message (Q1-Q4 in docs/REQUIREMENTS.md).

- `rules.extract_candidates`  the default, rule-based extractor: pure text in, proposals out;
- `selection`                 the model path: one bounded request, a strictly checked answer;
- `extraction.extract`        which path runs, after the size and credential checks;
- `records`                   a stored candidate and its review state;
- `queue`                     the bounded review queue of one scope, written through the gate;
- `review`                    what accepting a candidate writes, and as whom.

Applying an accepted candidate is the facade's job (`MemoryService.accept_candidate`): it
goes through the ordinary profile and episode writes.
"""

from ltm.candidates.queue import MAX_CANDIDATES, CandidatePage
from ltm.candidates.records import Candidate, CandidateOrigin, CandidateStatus
from ltm.candidates.review import CandidateRun
from ltm.candidates.rules import (
    MAX_TEXT_CHARS,
    SESSION,
    SPEAKER,
    CandidateKind,
    ProfileField,
    ProposedMemory,
    extract_candidates,
    redacted_text,
)

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
