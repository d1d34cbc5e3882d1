"""The console's endpoints: each declared once, next to its handler, in its feature's group.

    ROUTES = Endpoints()

    @ROUTES("/episodes", read_only=True)
    async def episodes(memory: MemoryService, body: Body) -> Result: ...

`read_only` endpoints also answer GET. Every other endpoint changes what the overview shows (a space's
counts or last change, the fences, the isolation): its answer says so (`changes_spaces`), and the page
reads the overview again after it, so the page keeps no list of its own. The page API's one table is
built from an explicit tuple of groups (`api.ROUTES`), the same idiom as the command's subcommands.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from components.common.declarations import Declarations
from components.pages.console.requests import Body, Result
from ltm import MemoryService

Handler = Callable[[MemoryService, Body], Awaitable[Result]]


@dataclass(frozen=True)
class Endpoint:
    path: str
    handler: Handler
    read_only: bool = False
    # Fields whose content the core vets item by item (a migration bundle: a record holding a credential is
    # skipped and reported, the rest imported), so the request-wide credential refusal leaves them out.
    vetted: frozenset[str] = frozenset()

    def changes_spaces(self, body: Body) -> bool:
        """Whether a success of this request changes what the overview shows: not for a read-only endpoint,
        nor for a dry run (`dry_run: true`), which changes nothing."""
        return not self.read_only and body.get("dry_run") is not True


class Endpoints(Declarations[Endpoint]):
    """One feature module's endpoints."""

    def __init__(self) -> None:
        super().__init__("console endpoint")

    def __call__(self, path: str, *, read_only: bool = False, vetted: frozenset[str] = frozenset()
                 ) -> Callable[[Handler], Handler]:
        return self.decorator((path,), lambda handler: Endpoint(path, handler, read_only, vetted))

    def add(self, path: str, handler: Handler, *, read_only: bool = False) -> None:
        """An endpoint built by a helper (`spaces.one_record`) rather than written as a function."""
        self.declare((path,), Endpoint(path, handler, read_only))
