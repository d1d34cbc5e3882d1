"""Errors the memory service raises; every message is safe to show to a user or model."""

from __future__ import annotations


class LTMError(Exception):
    """Base class. `str(err)` is a short, specific message without internals."""

    code = "memory_error"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ValidationError(LTMError):
    """Bad input from a caller; nothing was written."""

    code = "invalid_input"


class NotFound(LTMError):
    """The record does not exist in the caller's scope (it may exist elsewhere)."""

    code = "not_found"


class NoKnowledgeBase(LTMError):
    code = "no_knowledge_base"

    def __init__(self, message: str = "no memory knowledge base configured"):
        super().__init__(message)


class FencedError(LTMError):
    """Writes to this memory space are refused until an admin clears the fence."""

    code = "fenced"


class HostError(LTMError):
    """The host answered a call with an error (an authoritative answer)."""

    code = "host_error"


class OutcomeUnknown(LTMError):
    """A host write was dispatched but its outcome is unknown (timeout, lost link)."""

    code = "outcome_unknown"
