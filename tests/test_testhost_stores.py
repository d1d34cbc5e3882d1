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


def test_each_store_says_whether_it_is_a_stand_in_and_a_real_one_joins_the_store_slice() -> None:
    from tests.stores import CORE_STORES, SLICE_STORES, STAND_INS

    assert {name: type(cls.__dict__.get("stand_in")) for name, cls in BACKENDS.items()} == {
        name: bool for name in BACKENDS}  # declared in the store's own class, so a new file must say it
    assert set(STAND_INS) == {"fixed", "milvus-insert", "valkey"}
    assert set(SLICE_STORES) == set(BACKENDS) - set(CORE_STORES) - set(STAND_INS) == {"seekdb", "pgvector"}
