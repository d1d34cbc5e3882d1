"""A record an import did not store: where it was and why (one type for every import).

An episode import (a JSON array, a knowledge-base document, a bundle's part) names a skipped record by
its 0-based index in the array as given; a profile import, whose skipped items sit inside a record (a
trait of one profile), names it by a JSON Pointer. The reason names the field and the rule, never the
record's text, so it can be shown, logged and audited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

Position = TypeVar("Position", int, str)


@dataclass(frozen=True)
class SkippedRecord(Generic[Position]):
    position: Position  # int: index in the array; str: JSON Pointer, e.g. /profiles/2/profile/traits/4
    reason: str
