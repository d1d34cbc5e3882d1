"""Console endpoints about one person across every chat of the installation: what is kept about a
sender id, its export, and its erasure (a dry run first), space by space."""

from __future__ import annotations

from components.pages.console.requests import Body, Result, allowed
from components.pages.console.routes import Endpoints
from ltm import MemoryService, params

ROUTES = Endpoints()


@ROUTES("/person/find", read_only=True)
async def find(memory: MemoryService, body: Body) -> Result:
    """Per space, how much of the person is kept (no memory text)."""
    allowed(body, {"sender_id"})
    return (await memory.find_person(body.get("sender_id"))).summary()


@ROUTES("/person/export", read_only=True)
async def export(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"sender_id"})
    return {"export": (await memory.find_person(body.get("sender_id"))).export()}


@ROUTES("/person/erase")
async def erase(memory: MemoryService, body: Body) -> Result:
    """`dry_run` (the default) says what would be erased; `dry_run: false` erases it."""
    allowed(body, {"sender_id", "dry_run"})
    dry_run = params.flag(body.get("dry_run"), "dry_run", default=True)
    return (await memory.erase_person(body.get("sender_id"), dry_run=dry_run)).to_dict()
