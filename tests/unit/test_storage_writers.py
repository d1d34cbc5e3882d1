"""Plugin storage is written only through the write gate and the named bookkeeping writer, vector records only
through the gate (issue 32, point 2).

`JsonStore`, the storage every module receives, has no write method, so a write through it fails type
checking; the writer (`ltm._bookkeeping.Bookkeeping`) may be imported only by the modules the
`only_importers` contract in pyproject.toml lists. These tests run that contract on the real import graph
and on one with an extra importer, and check that nothing reaches the port's write methods another way.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Any

import grimp
import pytest

from ltm._bookkeeping import Bookkeeping
from ltm._storage import JsonStore
from scripts.import_contracts import OnlyImportersContract

ROOT = Path(__file__).resolve().parents[2]


def _contract() -> OnlyImportersContract:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    options: dict[str, Any] = next(c for c in config["tool"]["importlinter"]["contracts"]
                                   if c.get("type") == "only_importers" and "ltm._bookkeeping" in c["modules"])
    return OnlyImportersContract(options["name"], {}, {k: v for k, v in options.items() if k in ("modules", "importers")})


@pytest.fixture(scope="module")
def graph() -> Any:
    return grimp.build_graph("ltm", "components", cache_dir=None)


def test_the_storage_every_module_receives_cannot_write() -> None:
    assert not {"set", "delete"} & set(dir(JsonStore))
    assert {"set", "delete"} <= set(dir(Bookkeeping))


def test_only_the_listed_modules_import_the_storage_writer(graph: Any) -> None:
    assert _contract().check(graph, verbose=False).kept


@pytest.mark.parametrize("importer", ["ltm.profiles.book", "ltm.service", "components.commands.memory"])
def test_another_importer_of_the_storage_writer_breaks_the_contract(graph: Any, importer: str) -> None:
    graph.add_import(importer=importer, imported="ltm._bookkeeping", line_number=1, line_contents="import")
    try:
        check = _contract().check(graph, verbose=False)
        assert not check.kept
        assert [f["importer"] for f in check.metadata["found"]] == [importer]
    finally:
        graph.remove_import(importer=importer, imported="ltm._bookkeeping")


# The private path around the writer: another object's write step (`JsonStore._changed`), or the
# key-value port's writes (`JsonStore._port`, `HostPorts.store`).
_MAY_WRITE_THE_PORT = {"ltm/_storage.py", "ltm/_bookkeeping.py", "ltm/langbot/port.py"}


def _name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _direct_writes(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name, owner = node.func.attr, node.func.value
        step = name == "_changed" and _name(owner) != "self"
        port = name in ("set", "delete") and (_name(owner) == "_port" or (
            _name(owner) == "store" and isinstance(owner, ast.Attribute) and _name(owner.value).endswith("ports")))
        if step or port:
            found.append(f"{_name(owner)}.{name} (line {node.lineno})")
    return found


def test_the_scan_finds_a_direct_port_write() -> None:
    assert _direct_writes("async def f(ports):\n    await ports.store.set('k', b'v')\n") == ["store.set (line 2)"]
    assert _direct_writes("async def f(s):\n    await s._port.delete('k')\n") == ["_port.delete (line 2)"]
    assert _direct_writes("async def f(s):\n    await s._changed('k', w, a)\n") == ["s._changed (line 2)"]
    assert _direct_writes("async def f(self, store):\n    await self._changed(1)\n    await store.set('k', 1)\n") == []


def test_no_module_writes_the_storage_port_around_the_writer() -> None:
    offenders = {}
    for path in sorted([*(ROOT / "ltm").rglob("*.py"), *(ROOT / "components").rglob("*.py")]):
        relative = path.relative_to(ROOT).as_posix()
        if relative not in _MAY_WRITE_THE_PORT and (found := _direct_writes(path.read_text(encoding="utf-8"))):
            offenders[relative] = found
    assert not offenders


# --------------------------------------------------------------------------- vector writes
# The vector store's write side (`VectorWrites`, ltm/ports.py) is held by the gate alone and handed only to
# a step of a gated write (`WriteTx.index_write`); every other module receives the store typed as the
# read-only `VectorIndex`, so mypy rejects a vector write anywhere else. What types cannot see is a module
# taking the write side from its one holder (`gate._vectors`) or from the host ports (`ports.index`, the
# full store, split by the assembly): the scan below finds both.
_MAY_HOLD_THE_WRITE_SIDE = {"ltm/_gate.py": "_vectors", "ltm/parts.py": "index"}


def _write_side_reads(source: str, allowed: str = "") -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute) or node.attr == allowed:
            continue
        owner = _name(node.value)
        if (node.attr == "_vectors" and owner != "self") or (node.attr == "index" and owner.endswith("ports")):
            found.append(f"{owner}.{node.attr} (line {node.lineno})")
    return found


def test_the_scan_finds_a_module_taking_the_write_side() -> None:
    assert _write_side_reads("async def f(gate):\n    await gate._vectors.delete('kb', 's', ['x'])\n") == [
        "gate._vectors (line 2)"]
    assert _write_side_reads("def f(self):\n    return self._ports.index\n") == ["_ports.index (line 2)"]
    assert _write_side_reads("def f(self, hit):\n    return self._vectors, hit.index, self.index\n") == []


def test_the_vector_index_every_module_receives_cannot_write() -> None:
    from ltm.ports import VectorIndex, VectorWrites

    writes = {"upsert", "delete", "drop_kb"}
    assert writes <= set(dir(VectorWrites))
    assert not writes & set(dir(VectorIndex))


def test_no_module_takes_the_vector_write_side_around_the_gate() -> None:
    offenders = {}
    for path in sorted([*(ROOT / "ltm").rglob("*.py"), *(ROOT / "components").rglob("*.py")]):
        relative = path.relative_to(ROOT).as_posix()
        found = _write_side_reads(path.read_text(encoding="utf-8"), _MAY_HOLD_THE_WRITE_SIDE.get(relative, ""))
        if found:
            offenders[relative] = found
    assert not offenders
