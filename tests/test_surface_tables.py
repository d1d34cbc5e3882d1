"""The command's subcommands and the console's endpoints are wired by one explicit table each.

Nothing registers by being imported: a feature module declares its group (`Subcommands`,
`Endpoints`) and the surface lists the groups (`components/commands/memory.py: REGISTRY`,
`components/pages/console/api.py: ROUTES`). These tests fail when a module declares a group that
the table does not list, so a new subcommand or endpoint module cannot silently go unwired.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import types
from pathlib import Path
from typing import Any

import pytest

import components.commands
import components.pages.console
from components.commands import memory as command
from components.commands.registry import Subcommands
from components.common.declarations import Declarations
from components.common.i18n import LANGUAGES, speaking
from components.pages.console import api
from components.pages.console.routes import Endpoints
from testhost import make_session

ROOT = Path(__file__).resolve().parents[1]


def modules_of(package: types.ModuleType) -> list[types.ModuleType]:
    return [importlib.import_module(f"{package.__name__}.{info.name}") for info in pkgutil.iter_modules(package.__path__)]


def groups_in(modules: list[types.ModuleType], kind: type[Declarations[Any]]) -> dict[str, Declarations[Any]]:
    """module.attribute -> every group of `kind` the modules declare."""
    return {f"{m.__name__}.{name}": value for m in modules for name, value in vars(m).items()
            if isinstance(value, kind)}


def unlisted(modules: list[types.ModuleType], kind: type[Declarations[Any]], listed: list[Any]) -> list[str]:
    return sorted(where for where, group in groups_in(modules, kind).items() if not any(group is g for g in listed))


def test_every_subcommand_module_is_in_the_command_registry() -> None:
    modules = modules_of(components.commands)
    assert unlisted(modules, Subcommands, list(command.REGISTRY.groups)) == []
    # ... and the registry has no group the package does not hold.
    assert len(command.REGISTRY.groups) == len(groups_in(modules, Subcommands))


def test_every_endpoint_module_is_in_the_console_routes() -> None:
    modules = modules_of(components.pages.console)
    groups = groups_in(modules, Endpoints)
    listed = [g for g in groups.values() if all(api.ROUTES.get(path) is entry for path, entry in g.entries.items())]
    assert unlisted(modules, Endpoints, listed) == []
    assert sum(len(g.entries) for g in groups.values()) == len(api.ROUTES)


def test_an_unlisted_group_is_found() -> None:
    stray = types.ModuleType("components.commands.stray")
    stray.SUBCOMMANDS = Subcommands()  # type: ignore[attr-defined]  # a module built here, to be caught
    modules = [*modules_of(components.commands), stray]
    assert unlisted(modules, Subcommands, list(command.REGISTRY.groups)) == ["components.commands.stray.SUBCOMMANDS"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_help_lists_every_group_once_in_table_order_and_names_each_subcommand(language: str) -> None:
    """`!memory help` is one line per group, in the table's order, and each line names every subcommand of
    its group (so a new subcommand cannot go missing from the overview); `help <group>` has their usages."""
    registry = command.REGISTRY
    with speaking(language):
        overview = registry.help_text().split("\n")
        group_lines = overview[1:1 + len(registry.by_group)]
        for line, (word, group) in zip(group_lines, registry.by_group.items()):
            assert line.startswith(word), (word, line)
            for name in dict.fromkeys(e.name for e in group.entries.values()):
                if name not in ("overview", "help"):
                    assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", line), (name, line)
            details = registry.help_on(word)
            for entry in dict.fromkeys(group.entries.values()):
                usage = registry.usage_of(entry.name)  # in the language spoken, overlays included
                assert usage.splitlines()[0] in details, (word, entry.name)
    assert next(iter(registry.by_group)) == "view"  # views first, as before


def test_a_name_declared_twice_is_refused() -> None:
    group = Subcommands()

    async def handler(call: Any) -> str:
        return ""

    group("x", "!memory x")(handler)
    with pytest.raises(RuntimeError, match="declared twice"):
        group("x", "!memory x again")(handler)
    with pytest.raises(RuntimeError, match="declared twice"):
        Subcommands.table([command.REGISTRY.groups[0], command.REGISTRY.groups[0]])


# ----------------------------------------------------------------------------- what the page reads of the table
async def test_a_change_tells_the_page_to_read_the_overview_again(harness: Any) -> None:
    """Issue 40, point 3: the page kept a regex of the endpoints that change the space list, restating the
    routes' `read_only`. Now an answer says so itself, read from the route table, and the page reads it."""
    await harness.create_memory_kb()
    out = await harness.call_tool("remember", {"content": "the team meets on Fridays"},
                                  session=make_session("group", "g1", sender_id="u1"), query_id=1)
    space = {"scope_key": "bot-1:group_g1", "user_key": "bot-1:group_g1"}

    async def answer(endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        data = (await harness.page_api("console", endpoint, "POST", body))["data"]
        assert data["ok"] is True, data
        assert api.ROUTES[endpoint].read_only is ("changes_spaces" not in data) or body.get("dry_run") is True
        return data

    for endpoint, body in (("/overview", {}), ("/episodes", {"space": space}), ("/settings", {})):
        assert "changes_spaces" not in await answer(endpoint, body)
    for endpoint, body in (("/episode/archive", {"space": space, "episode_id": out["episode_id"]}),
                           ("/settings/set", {"name": "candidate_extraction_enabled", "value": True}),
                           ("/fence/clear", {"space": space})):
        assert (await answer(endpoint, body))["changes_spaces"] is True
    assert "changes_spaces" not in await answer("/person/erase", {"sender_id": "u1", "dry_run": True})
    assert (await answer("/person/erase", {"sender_id": "u1", "dry_run": False}))["changes_spaces"] is True
    # The page names no endpoint that changes the list: it reads the answer.
    page = (ROOT / "pages" / "console" / "api.js").read_text(encoding="utf-8")
    assert "data.changes_spaces === true" in page and not re.search(r"candidate\\/|episode\\/", page)
