"""Which real vector stores a test run covers (tests/conftest.py, tests/test_hostile_identity.py).

Every test runs on CORE_STORES and the STAND_INS (the stores a test-host file marks `stand_in`). Every
other real store of `testhost/vectors/` is a slice store (today SeekDB and pgvector): it runs the tests
marked `stores_slice` by default, and every test when LTM_STORES names it: the whole matrix on five
stores would take the README test command past its time budget (README, "Tests"). So a new store's one
file in `testhost/vectors/` puts it in the slice; naming it in CORE_STORES is a choice about CI time.
"""

from __future__ import annotations

import os

import pytest

from testhost.vectors import BACKENDS

CORE_STORES = ("chroma", "qdrant", "milvus")
STAND_INS = tuple(name for name, backend in BACKENDS.items() if backend.stand_in)
SLICE_STORES = tuple(name for name in BACKENDS if name not in CORE_STORES and name not in STAND_INS)


def full_matrix_stores() -> tuple[str, ...]:
    """The slice stores LTM_STORES asks every test to run on ("all": both), in SLICE_STORES order."""
    raw = os.environ.get("LTM_STORES", "").strip()
    if raw == "all":
        return SLICE_STORES
    names = {name.strip() for name in raw.split(",") if name.strip()}
    unknown = names - set(SLICE_STORES)
    if unknown:
        raise pytest.UsageError(f"LTM_STORES: unknown store(s) {sorted(unknown)}; use all, "
                                f"{', '.join(SLICE_STORES)} or a comma-separated list of them")
    return tuple(name for name in SLICE_STORES if name in names)
