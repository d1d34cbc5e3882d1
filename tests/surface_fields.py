"""Every field of every surface, read from the surfaces' own tables (for tests/test_credential_surfaces.py).

- a tool's parameters: its YAML (`components/tools/*.yaml`, `spec.parameters.properties`) and the ones
  its class accepts besides (`allowed_params`);
- a console endpoint's body fields: the route table (`components/pages/console/api.py`, `ROUTES`), each
  endpoint asked by the running plugin with one field too many ("unknown field(s): ...; allowed: a, b");
- a `!memory` subcommand: the command registry (`components/commands/memory.py`, `REGISTRY`), with the
  forms (`profile set`) and the options that take a value (`--tag T`) its usage lines name.

Each field comes with the one way to put a text in it that needs nothing else of the field (the generic
plant), so a new tool parameter, endpoint, body field, subcommand, form or option is planted without a
row of its own; a test's row only replaces the generic plant where a field needs a shape (a profile
field inside `fields`) or a context (a value after a setting's name).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from components.commands.registry import Registry

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "components" / "tools"
NOT_A_FIELD = "zz_not_a_field"

_USAGE_SPLIT = re.compile(r"\s+[·/]\s+|\n")
_FORM_WORD = re.compile(r"[a-z][a-z0-9-]*")
# An option that takes a value: `--tag T`, `--speaker SENDER_ID`, `--status pending|accepted|rejected`.
_VALUE_OPTION = re.compile(r"--([a-z][a-z-]*) (?:[A-Z][A-Z_]*\b|[a-z]+(?:\|[a-z]+)+)")


def tool_parameters(folder: Path = TOOLS) -> dict[str, Callable[[str], Any]]:
    """`tool:<name>.<parameter>` -> how a text is given to it (inside a list for an array parameter), for
    every parameter the YAML declares and every one the tool accepts besides (`allowed_params`: the
    official plugin's names, kept for old prompts)."""
    found: dict[str, Callable[[str], Any]] = {}
    for path in sorted(folder.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        name, properties = spec["metadata"]["name"], spec["spec"]["parameters"].get("properties", {})
        python = spec["execution"]["python"]
        tool = getattr(importlib.import_module(f"components.tools.{Path(python['path']).stem}"), python["attr"])
        for param in sorted({*properties, *tool.allowed_params}):
            array = properties.get(param, {}).get("type") == "array"
            found[f"tool:{name}.{param}"] = (lambda s: [s]) if array else (lambda s: s)
    return found


def command_lines(registry: Registry) -> dict[str, Callable[[str], str]]:
    """`command:<name>`, `command:<name> <form>` and `command:<name> --<option>` -> the command line that
    puts a text there, for every subcommand of the registry and what its usage lines name."""
    found: dict[str, Callable[[str], str]] = {}

    def add(name: str, words: str) -> None:
        found.setdefault(name, lambda s: f'!memory {words} "{s}"')

    for entry in registry.subcommands():
        add(f"command:{entry.name}", entry.name)
        for usage in _USAGE_SPLIT.split(entry.usage[0]):
            words = usage.split(" — ")[0].split()
            if words[:2] != ["!memory", entry.name]:
                continue  # the overview (`!memory` alone) or a line that explains the one above
            form = []
            for word in words[2:]:
                if not _FORM_WORD.fullmatch(word):
                    break
                form.append(word)
            head = " ".join([entry.name, *form])
            if form:
                add(f"command:{head}", head)
            for option in _VALUE_OPTION.findall(" ".join(words)):
                add(f"command:{entry.name} --{option}", f"{head} --{option}")
    return found


async def console_fields(ask: Callable[[str, dict[str, Any]], Any], routes: Iterable[str]) -> set[str]:
    """`console:<path>.<field>` for every body field of every endpoint, as the running plugin names them."""
    found = set()
    for path in routes:
        answer = await ask(path, {NOT_A_FIELD: 1})
        allowed = re.search(r"allowed: (.*)$", str(answer.get("error", "")))
        assert allowed, f"{path} did not name its fields: {answer}"
        found |= {f"console:{path}.{f}" for f in allowed.group(1).split(", ") if f != "none"}
    return found
