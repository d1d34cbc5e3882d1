"""Stops a stack whose owner died without stopping it (stdlib only).

`ProcessGroup` starts one reaper per stack, in its own session: it polls the owner's PID
(the test run or `scripts/run-local.sh`'s Python) and, once that PID is gone, sends
SIGTERM and then SIGKILL to every process group listed in the stack's pgid file. A stack
stopped normally removes the file and the reaper exits with it. So a killed `pytest`
never leaves a LangBot, a plugin runtime or a model server behind.

    python reaper.py <owner pid> <pgid file>
"""

from __future__ import annotations

import os
import signal
import sys
import time

POLL_S = 1.0
GRACE_S = 5.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _groups(path: str) -> list[int]:
    try:
        with open(path) as fh:
            return [int(line) for line in fh.read().split() if line.strip().isdigit()]
    except OSError:
        return []


def _signal_all(groups: list[int], sig: int) -> None:
    for pgid in reversed(groups):  # last started first, as a normal stop does
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def main(owner: int, path: str) -> int:
    while _alive(owner):
        if not os.path.exists(path):
            return 0  # stopped normally
        time.sleep(POLL_S)
    groups = _groups(path)
    _signal_all(groups, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and any(_alive(g) for g in groups):
        time.sleep(0.2)
    _signal_all(groups, signal.SIGKILL)
    try:
        os.remove(path)
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), sys.argv[2]))
