"""The console's endpoints: each declared once, next to its handler, in its feature's group.

    ROUTES = Endpoints()

    @ROUTES("/episodes", read_only=True)
    async def episodes(memory: MemoryService, body: Body) -> Result: ...

`read_only` endpoints also answer GET. `documents` names the body fields that carry a whole file of
records (a migration bundle): the dispatcher's credential check skips them, because the import checks
each record and skips and reports one holding a credential while the others go on. The page API's
one table is built from an explicit tuple of groups (`api.ROUTES`), the same idiom as the command's subcommands.
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
    documents: tuple[str, ...] = ()


class Endpoints(Declarations[Endpoint]):
    """One feature module's endpoints."""

    def __init__(self) -> None:
        super().__init__("console endpoint")

    def __call__(self, path: str, *, read_only: bool = False,
                 documents: tuple[str, ...] = ()) -> Callable[[Handler], Handler]:
        return self.decorator((path,), lambda handler: Endpoint(path, handler, read_only, documents))

    def add(self, path: str, handler: Handler, *, read_only: bool = False) -> None:
        """An endpoint built by a helper (`spaces.one_record`) rather than written as a function."""
        self.declare((path,), Endpoint(path, handler, read_only))
