"""The errors the memory core raises, grouped so that callers catch a category.

    LTMError
    ├── InputError          the caller's input is wrong; nothing was written
    │   ├── ValidationError
    │   ├── NotFound        no such record in the caller's space (it may exist elsewhere)
    │   └── NotPermitted    the record is there, but this caller may not change it
    ├── HostFailure         the host did not do what was asked
    │   ├── HostError       the host answered with an error (authoritative: not applied)
    │   └── OutcomeUnknown  no answer (timeout, lost link): it may or may not have been applied
    └── StateError          the request is fine but memory is not in a state to serve it
        ├── NoKnowledgeBase
        ├── FencedError     writes to this space are paused until an admin clears the fence
        ├── PartialWrite    a multi-step write stopped after some steps were applied
        ├── UnrecordedChange  a change was applied but its audit entry could not be written
        ├── ConsolidationDisabled  consolidation is off in the memory KB's settings
        ├── ProposalRejected  a reviewed consolidation proposal can no longer be run
        └── MessageRecalled  the platform message this turn answers was recalled: it makes no memory

Every message is short, specific and safe to show to a user or a model; it never
names a user interface. Each error also carries a stable `code` and structured
`details` so that each surface can word its own hint.
"""

from __future__ import annotations

import json
from typing import Any


class LTMError(Exception):
    """Base class. `str(err)` is a short, specific message without internals."""

    code = "memory_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details

    def __str__(self) -> str:
        return self.message


class InputError(LTMError):
    code = "invalid_input"


class ValidationError(InputError):
    """Bad input from a caller; nothing was written."""

    code = "invalid_input"


class NotFound(InputError):
    """The record does not exist in the caller's space (it may exist in another one)."""

    code = "not_found"


class NotPermitted(InputError):
    """The record exists in the caller's space, but this caller may not change it (e.g. another speaker's
    episode in a shared chat). details: what it is about (`episode_id`, ...)."""

    code = "not_permitted"


class HostFailure(LTMError):
    code = "host_failure"


class HostError(HostFailure):
    """The host answered a call with an error: an authoritative answer, nothing applied."""

    code = "host_error"


class OutcomeUnknown(HostFailure):
    """A host write was dispatched but its outcome is unknown (timeout, lost link)."""

    code = "outcome_unknown"


class StateError(LTMError):
    code = "state_error"


class NoKnowledgeBase(StateError):
    code = "no_knowledge_base"

    def __init__(self, message: str = "no memory knowledge base configured", **details: Any) -> None:
        super().__init__(message, **details)


class FencedError(StateError):
    """Writes to this memory space are refused until an admin clears the fence.

    details: `space` (the fenced space's label), `since`, `operation`."""

    code = "fenced"


class PartialWrite(StateError):
    """A multi-step write stopped after some of its steps were applied.

    details: `applied` (ids of records changed and audited), `not_applied` (what did not happen)."""

    code = "partial_write"


class UnrecordedChange(StateError):
    """The change was applied, but its audit entry could not be written; the space is fenced."""

    code = "unrecorded_change"


class ConsolidationDisabled(StateError):
    """Consolidation is switched off in the memory knowledge base's settings."""

    code = "consolidation_disabled"


class ProposalRejected(StateError):
    """`run <proposal_id>` refused. details: `reason` (used, cross_kb, stale, inactive, validity,
    over_budget, not_verified) and `proposal_id`. An id this chat has no draft of (unknown, or
    another chat's) is `NotFound` instead, the same words either way."""

    code = "proposal_rejected"


class MessageRecalled(StateError):
    """The platform message the turn answers was recalled meanwhile: what the turn would remember from it
    is not written (ltm/recalls.py). details: `message_id`."""

    code = "message_recalled"


MAX_QUOTED = 24


def quoted(value: Any) -> str:
    """A bad value as a message may show it: whole when short, else only its size. A message never holds
    part of a long value (a cut credential would no longer look like one, and pass the detector)."""
    # A text as Python writes it ('x', unprintable characters escaped), anything else as JSON.
    shown = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=True, default=str)
    if len(shown) <= MAX_QUOTED + 2:
        return shown
    if isinstance(value, (list, dict)):
        return f"a value of {len(value)} items"
    return f"a value of {len(value) if isinstance(value, str) else len(shown)} characters"
