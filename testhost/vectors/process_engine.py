"""A store engine that runs once per test process: Milvus Lite, embedded SeekDB and PostgreSQL take
seconds to start, so every backend instance shares one and keeps to collections (or a workspace) of
its own. The engine starts at its first use in a private temporary folder; at exit it is stopped and
the folder removed."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class ProcessEngine(Generic[T]):
    def __init__(self, prefix: str, start: Callable[[str], T], stop: Callable[[T], object] | None = None) -> None:
        self._prefix = prefix
        self._start = start
        self._stop = stop
        self._engine: T | None = None

    def get(self) -> T:
        if self._engine is None:
            folder = tempfile.mkdtemp(prefix=self._prefix)
            engine = self._start(folder)
            atexit.register(self._close, engine, folder)
            self._engine = engine
        return self._engine

    def _close(self, engine: T, folder: str) -> None:
        try:
            if self._stop is not None:
                self._stop(engine)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
