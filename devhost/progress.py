"""What devhost tells the person at the terminal while it works (stdlib only).

Every line goes to stderr with a `[devhost]` prefix. `activity()` keeps a long step talking: while
it runs, a line with the step's elapsed time (and, when given, a detail such as the last line of an
installer's log) whenever nothing was printed for `HEARTBEAT_S` seconds, so no wait is silent for
longer than that, however the steps follow each other.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator

HEARTBEAT_S = 10.0
_last_line_at = time.monotonic()
_lock = threading.Lock()


def log(msg: str) -> None:
    global _last_line_at
    with _lock:
        print(f"[devhost] {msg}", file=sys.stderr, flush=True)
        _last_line_at = time.monotonic()


def quiet_for() -> float:
    """Seconds since devhost last printed a line."""
    return time.monotonic() - _last_line_at


@contextlib.contextmanager
def activity(what: str, detail: Callable[[], str] | None = None,
             heartbeat_s: float | None = None) -> Iterator[None]:
    """While the block runs: `<what>: <N>s (<detail>)` after every `heartbeat_s` of silence."""
    interval = HEARTBEAT_S if heartbeat_s is None else heartbeat_s
    started = time.monotonic()
    done = threading.Event()

    def beat() -> None:
        while not done.wait(min(1.0, interval / 4)):
            if quiet_for() >= interval:
                extra = detail() if detail else ""
                log(f"{what}: {time.monotonic() - started:.0f}s" + (f" ({extra})" if extra else ""))

    thread = threading.Thread(target=beat, name="devhost-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
