"""Entries declared next to their handlers, collected into one table by an explicit list.

The command's subcommands and the console's endpoints use the same idiom: a feature module holds
a `Declarations` group and decorates each handler with it; the surface builds its one table from
a tuple of those groups (`Declarations.table`), so a module that is not listed there is not
wired, and a test says so (`tests/test_surface_tables.py`). Nothing registers by being imported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

E = TypeVar("E")
H = TypeVar("H")


class Declarations(Generic[E]):
    """One feature module's entries (subcommands, endpoints), in declaration order."""

    def __init__(self, what: str) -> None:
        self.what = what  # "subcommand", "endpoint": for the duplicate message
        self.entries: dict[str, E] = {}

    def declare(self, names: Iterable[str], entry: E) -> None:
        for name in names:
            if name in self.entries:
                raise RuntimeError(f"{self.what} {name!r} is declared twice")
            self.entries[name] = entry

    def decorator(self, names: Iterable[str], make: Callable[[H], E]) -> Callable[[H], H]:
        """`@group.decorator([...], lambda handler: Entry(..., handler))`: declares, returns the handler."""
        def declare(handler: H) -> H:
            self.declare(names, make(handler))
            return handler

        return declare

    @staticmethod
    def table(groups: Iterable[Declarations[E]]) -> dict[str, E]:
        """Every group's entries in the order of `groups`; a name in two groups is an error."""
        merged: dict[str, E] = {}
        for group in groups:
            for name, entry in group.entries.items():
                if name in merged:
                    raise RuntimeError(f"{group.what} {name!r} is declared twice")
                merged[name] = entry
        return merged
