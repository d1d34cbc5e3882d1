"""Which real vector stores a test run covers (tests/conftest.py, tests/test_hostile_identity.py).

Every test runs on CORE_STORES. SLICE_STORES (SeekDB, pgvector) run the tests marked `stores_slice`
by default, and every test when LTM_STORES names them: the whole matrix on five stores would take the
README test command past its time budget (README, "Tests").
"""

from __future__ import annotations

import os

import pytest

CORE_STORES = ("chroma", "qdrant", "milvus")
SLICE_STORES = ("seekdb", "pgvector")


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
