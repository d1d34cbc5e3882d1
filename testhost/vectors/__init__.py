"""Vector-store backends of the fake host, reproducing LangBot 4.11.2's translation, one file per store.

The host forwards the plugin's vector calls to one of several stores, and each store treats
filters, metadata and distances differently (docs/HOST-FACTS.md 6 and 12). These classes
reproduce those differences on purpose, including the unfriendly ones, so that plugin tests fail
here the same way they would fail on a real host:

- `chroma`        real `chromadb`: `where` verbatim, squared-L2 distance, full-text and hybrid;
- `qdrant`        real `qdrant_client` in memory: filters rebuilt, UUID ids, 1 - cosine;
- `milvus`        real Milvus Lite through the host's expression translation (fixed fields);
- `seekdb`        real embedded SeekDB (`pyseekdb`): `where` verbatim, cosine distance, full-text and hybrid;
- `pgvector`      real PostgreSQL + pgvector: fixed (text, file_id, chunk_uuid) columns, other filter keys
                  dropped, a dimension fixed by the first write;
- `fixed`         pgvector's fixed schema in memory (a fast stand-in for `pgvector`);
- `milvus-insert` a Milvus cluster's insert-only rows and raw similarity (what Milvus Lite hides);
- `valkey`        Valkey Search: per-field hash writes, `file_id` the only filter, every-word text match.

All backends receive the physical collection name (`lb_<kb uuid>`); the `FakeLangBotHost`
resolves knowledge bases and adds the `_langbot_*` keys. A store is one module here that ends with
`BACKEND = <its class>` (the class has a `name`); `BACKENDS` finds it. The modules without `BACKEND`
are the small helpers the stores share as functions and objects, never as base classes: `base.py`
(the interface and the host's filter translation), `memory_table.py` (fixed-schema rows in memory),
`process_engine.py` (an engine started once per test process).
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from .base import VectorBackend


def _stores() -> dict[str, type[VectorBackend]]:
    found: dict[str, type[VectorBackend]] = {}
    for module in pkgutil.iter_modules(__path__):
        backend = getattr(importlib.import_module(f"{__name__}.{module.name}"), "BACKEND", None)
        if backend is not None:
            if backend.name in found:
                raise RuntimeError(f"two test-host stores are called {backend.name!r}")
            found[backend.name] = backend
    return found


# name -> class, every store module of this folder.
BACKENDS: dict[str, type[VectorBackend]] = _stores()
BACKEND_NAMES = tuple(BACKENDS)


def make_backend(name: str, tmp_path: Path | str | None = None) -> VectorBackend:
    """A fresh, isolated backend by name (one of `BACKEND_NAMES`).

    `tmp_path` is accepted for symmetry with persistent setups; every backend is isolated per
    instance (Milvus Lite, SeekDB and PostgreSQL run once per process, each instance in collections or a
    workspace of its own).
    """
    del tmp_path
    backend = BACKENDS.get(name)
    if backend is None:
        raise ValueError(f"unknown backend {name!r}; expected one of {BACKEND_NAMES}")
    return backend()


__all__ = ["BACKENDS", "BACKEND_NAMES", "VectorBackend", "make_backend"]
