"""Write policy checks shared by every write path (docs/REQUIREMENTS.md, "Two layers")."""

from __future__ import annotations

from collections.abc import Iterable

from .errors import ValidationError
from .secrets import secret_kind


def refuse_secrets(fields: Iterable[tuple[str, str]]) -> None:
    """Refuse a write when any stored text field looks like a credential; nothing is written.
    `fields` are (field name, text) pairs; the message names the field, never the text."""
    for name, text in fields:
        kind = secret_kind(text) if text else None
        if kind:
            raise ValidationError(f"refused: {name} looks like {kind}; secrets are never stored")


def said_safely(message: str) -> str:
    """A reason shown, reported or audited about a foreign record: never one that quotes a credential."""
    return message if not secret_kind(message) else "a field looks like a credential; secrets are never stored"
