"""Memory candidates proposed from a user's own chat message (SPEC section 10).

`rules.extract_candidates` is the default, rule-based extractor: pure text in,
proposals out. Storing, reviewing and applying candidates happens elsewhere.
"""

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
    "MAX_TEXT_CHARS",
    "SESSION",
    "SPEAKER",
    "CandidateKind",
    "ProfileField",
    "ProposedMemory",
    "extract_candidates",
    "redacted_text",
]
