"""What a store's health report says it does: each policy class states its own line (`health`), so
the report is read off the policies `choose.py` chose and cannot say what they do not do."""

from __future__ import annotations

from dataclasses import dataclass

from ...wording import Phrase, Said


@dataclass(frozen=True)
class Line:
    said: Said
    can: bool = True  # False: something the store cannot do (health lists it under "cannot")


def line(code: str, english: str, **params: str | int) -> Line:
    """A policy's line, its phrase declared here once (`ltm/wording.py`): `store.<code>`."""
    return Line(Phrase(f"store.{code}", english)(**params), can=code.startswith("can."))
