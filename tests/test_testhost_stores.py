"""The test host's vector stores are one file each (testhost/vectors/__init__.py): a module that ends
with `BACKEND = <class>` is found without a list to edit, and no store is built by subclassing another
(shared code is the helpers' functions and objects)."""

from __future__ import annotations

import pkgutil

import testhost.vectors as vectors
from testhost.vectors import BACKENDS


def test_every_store_module_is_found_by_its_name() -> None:
    modules = {m.name for m in pkgutil.iter_modules(vectors.__path__)}
    assert modules - {"base", "memory_table", "process_engine"} == {
        cls.__module__.rsplit(".", 1)[1] for cls in BACKENDS.values()}
    assert set(BACKENDS) == {"chroma", "qdrant", "milvus", "seekdb", "pgvector", "fixed", "milvus-insert", "valkey"}
    assert all(BACKENDS[name].name == name for name in BACKENDS)


def test_no_store_inherits_from_another() -> None:
    assert {name: cls.__mro__[1:] for name, cls in BACKENDS.items() if cls.__mro__[1:] != (object,)} == {}
