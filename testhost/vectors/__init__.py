"""Vector-store backends of the fake host, reproducing LangBot 4.11.2's translation, one per module.

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
resolves knowledge bases and adds the `_langbot_*` keys. A new backend is one module here and
one line in `BACKENDS`.
"""

from __future__ import annotations

from pathlib import Path

from .base import VectorBackend, normalize_filter
from .chroma import ChromaBackend
from .fixed_schema import FixedSchemaBackend
from .insert_only import InsertOnlyBackend
from .milvus_lite import MilvusLiteBackend
from .pgvector import PgVectorBackend
from .qdrant import QdrantBackend, build_qdrant_filter
from .seekdb import SeekDBBackend
from .valkey_like import ValkeyLikeBackend

# name -> class; the order is the order the backend-parametrized tests run in.
BACKENDS: dict[str, type[VectorBackend]] = {
    "chroma": ChromaBackend,
    "qdrant": QdrantBackend,
    "milvus": MilvusLiteBackend,
    "seekdb": SeekDBBackend,
    "pgvector": PgVectorBackend,
    "fixed": FixedSchemaBackend,
    "milvus-insert": InsertOnlyBackend,
    "valkey": ValkeyLikeBackend,
}
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


__all__ = [
    "BACKENDS",
    "BACKEND_NAMES",
    "ChromaBackend",
    "FixedSchemaBackend",
    "InsertOnlyBackend",
    "MilvusLiteBackend",
    "PgVectorBackend",
    "QdrantBackend",
    "SeekDBBackend",
    "ValkeyLikeBackend",
    "VectorBackend",
    "build_qdrant_filter",
    "make_backend",
    "normalize_filter",
]
