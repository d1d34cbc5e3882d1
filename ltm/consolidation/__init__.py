"""Consolidation (K1-K8 in docs/REQUIREMENTS.md): conservative archival of superseded records, and
human-reviewed summaries with lineage. See `consolidator.py` for the two paths and `records.py`
for the drafts, the lineage index and the K5 cascade."""

from ..errors import ConsolidationDisabled, ProposalRejected
from .consolidator import Consolidator, clean_proposal_id
from .drafts import DraftBook
from .model import (
    MAX_INPUT_CHARS,
    MAX_OUTPUT_CHARS,
    MAX_PENDING_DRAFTS,
    MODEL_TIMEOUT_S,
    SUMMARY_SOURCE,
    SUMMARY_TAG,
    Archivable,
    ConsolidationPreview,
    ConsolidationRun,
    Draft,
    DraftSource,
    ProfileUpdate,
    Statement,
)

__all__ = [
    "MAX_INPUT_CHARS",
    "MAX_OUTPUT_CHARS",
    "MAX_PENDING_DRAFTS",
    "MODEL_TIMEOUT_S",
    "SUMMARY_SOURCE",
    "SUMMARY_TAG",
    "Archivable",
    "ConsolidationDisabled",
    "ConsolidationPreview",
    "ConsolidationRun",
    "Consolidator",
    "Draft",
    "DraftBook",
    "DraftSource",
    "ProfileUpdate",
    "ProposalRejected",
    "Statement",
    "clean_proposal_id",
]
