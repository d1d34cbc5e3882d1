"""Process management for the local stack (stdlib only).

Starts commands in their own session/process group with stdout+stderr in a log file,
waits for readiness, stops them by process group (then any descendant still alive by
PID), picks loopback ports, lists listening sockets, and holds the data-dir lock that
keeps a second run off a data dir that is in use.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .progress import HEARTBEAT_S, activity, log


# --------------------------------------------------------------------------- pids
def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    return children


def descendants(pid: int) -> list[int]:
    children = _children_map()
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def catches_signal(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler installed for `signum` (SigCgt of /proc/<pid>/status).

    Python removes its handlers once the program has returned and its atexit functions ran,
    before the interpreter frees its objects (CPython's Py_FinalizeEx); a Python server that
    caught SIGTERM and no longer does has finished its own shutdown."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"  # a zombie has ended


# --------------------------------------------------------------------------- ports and sockets
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is fine, LISTEN is not
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def choose_ports(wanted: dict[str, int | None]) -> dict[str, int]:
    """A distinct loopback port per name: the wanted one, else a free one. Raises when a
    wanted port is taken."""
    ports: dict[str, int] = {}
    for name, port in wanted.items():
        chosen = port or free_port()
        while chosen in ports.values():
            chosen = free_port()
        ports[name] = chosen
    for name, port in ports.items():
        if not port_free(port):
            raise RuntimeError(f"port {port} ({name}) is already in use on 127.0.0.1")
    return ports


def listeners() -> list[tuple[str, int, int | None]]:
    """(local address, port, pid) of every listening TCP socket, from `ss -ltnpH`."""
    try:
        out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    result = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        addr, _, port = parts[3].rpartition(":")
        pids = [int(p) for p in re.findall(r"pid=(\d+)", line)] or [None]
        for pid in pids:
            result.append((addr.strip("[]"), int(port) if port.isdigit() else -1, pid))
    return result


def http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=3) as response:
        return 200 <= response.status < 500


def http_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=3) as response:
        return json.loads(response.read() or b"{}")


# --------------------------------------------------------------------------- processes
@dataclasses.dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    log_path: Path
    seen_pids: set[int] = dataclasses.field(default_factory=set)
    # True for a Python program whose SIGTERM handler stays installed until it has returned (LangBot):
    # once the handler is gone only the interpreter's teardown is left, and stop() cuts it short.
    cut_teardown: bool = False

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def track(self) -> None:
        if self.alive():
            self.seen_pids.add(self.pid)
            self.seen_pids.update(descendants(self.pid))

    def tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
        return "\n".join(text.splitlines()[-lines:])


class ProcessGroup:
    """The processes of one stack, started in order and stopped in reverse order."""

    def __init__(self, logs: Path):
        self.logs = logs
        self.procs: list[Proc] = []
        self.pgid_file = logs / "process-groups"
        self._reaper: subprocess.Popen[bytes] | None = None

    def spawn(self, name: str, argv: list[str], cwd: Path, env: dict[str, str], *, cut_teardown: bool = False) -> Proc:
        self.logs.mkdir(parents=True, exist_ok=True)
        self._start_reaper()
        log_path = self.logs / f"{name}.log"
        with open(log_path, "ab") as out:
            popen = subprocess.Popen(argv, cwd=str(cwd), env=env, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        with open(self.pgid_file, "a") as fh:  # its own session: pgid == pid
            fh.write(f"{popen.pid}\n")
        proc = Proc(name, popen, log_path, cut_teardown=cut_teardown)
        proc.seen_pids.add(popen.pid)
        self.procs.append(proc)
        return proc

    def _start_reaper(self) -> None:
        """One watcher per stack that stops it if this process dies without stopping it (devhost/reaper.py)."""
        if self._reaper is not None:
            return
        self.pgid_file.write_text("")
        self._reaper = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("reaper.py")), str(os.getpid()), str(self.pgid_file)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    @staticmethod
    def _stop_one(proc: Proc, timeout: float) -> set[int]:
        """SIGTERM, then SIGKILL once the process has exited or (`cut_teardown`) has finished its shutdown.

        LangBot 4.11.2 handles SIGTERM (its boot sets a shutdown event and awaits the application's
        shutdown) and is done within a second or two; then CPython tears down its interpreter, whose
        garbage-collector passes over LangBot's million objects take 8-20 s on two busy cores. That
        teardown holds nothing that needs saving, so it is cut short when the handler is gone. (Not
        so for the plugin runtime: it removes its handler before its own shutdown, so it is waited for.)"""
        pids = {proc.pid} | proc.seen_pids | set(descendants(proc.pid))
        started = time.monotonic()
        handled = proc.cut_teardown and catches_signal(proc.pid, signal.SIGTERM)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        how = "exited"
        deadline = started + timeout
        while proc.popen.poll() is None:
            if handled and not catches_signal(proc.pid, signal.SIGTERM):
                how = "finished its shutdown"
                break
            if time.monotonic() > deadline:
                how = f"did not stop within {timeout:.0f}s of SIGTERM"
                break
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in pids | set(descendants(proc.pid)):
            if pid_alive(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.popen.wait(timeout=5)
        log(f"{proc.name} {how}; stopped in {time.monotonic() - started:.1f}s")
        return pids

    @staticmethod
    def wait(what: str, proc: Proc, check: Callable[[], bool], timeout: float,
             heartbeat_s: float = HEARTBEAT_S) -> None:
        with activity(f"waiting for {what}", heartbeat_s=heartbeat_s):
            ProcessGroup._wait(what, proc, check, timeout)

    @staticmethod
    def _wait(what: str, proc: Proc, check: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not proc.alive():
                raise RuntimeError(f"{what} exited with {proc.popen.returncode}; log tail:\n{proc.tail()}")
            try:
                if check():
                    proc.track()
                    return
            except Exception:  # noqa: BLE001 - not up yet
                pass
            time.sleep(0.3)
        raise TimeoutError(f"{what} not ready after {timeout:.0f}s; log tail:\n{proc.tail()}")

    def stop_one(self, proc: Proc, timeout: float = 20.0) -> set[int]:
        """Stop one process (a restart) and forget it; returns its PIDs (all gone afterwards)."""
        pids = self._stop_one(proc, timeout)
        self.procs.remove(proc)
        # Its group leaves the reaper's list: once gone, that number may be another process's group.
        self.pgid_file.write_text("".join(f"{p.pid}\n" for p in self.procs))
        return pids

    def pids(self) -> set[int]:
        for proc in self.procs:
            proc.track()
        return set().union(*(p.seen_pids for p in self.procs)) if self.procs else set()

    def dead(self) -> Proc | None:
        return next((p for p in self.procs if not p.alive()), None)

    def log_tails(self, lines: int = 60) -> str:
        return "\n".join(f"----- {p.name} ({p.log_path}) -----\n{p.tail(lines)}" for p in self.procs)

    def stop(self, timeout: float = 20.0) -> set[int]:
        """Stop each process (last started first) the way it expects: SIGTERM to its process group,
        then wait until it has exited or has finished its own shutdown (`_stop_one`); then SIGKILL
        the group and any descendant still alive. Returns every PID seen (all gone afterwards)."""
        all_pids = self.pids()
        for proc in reversed(self.procs):
            all_pids |= self._stop_one(proc, timeout)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(pid_alive(p) for p in all_pids):
            time.sleep(0.2)
        with contextlib.suppress(OSError):
            self.pgid_file.unlink()  # nothing left for the reaper to stop
        if self._reaper is not None:
            # Ended by its PID at once: it would notice the file gone only at its next poll (up to
            # reaper.POLL_S later), a second added to every Ctrl-C (devhost/README.md, "First run").
            self._reaper.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._reaper.wait(timeout=5)
            if self._reaper.poll() is None:
                self._reaper.kill()
            self._reaper = None
        return all_pids


# --------------------------------------------------------------------------- data-dir lock
class DataDirInUse(RuntimeError):
    def __init__(self, data_dir: Path, owner: dict[str, Any]):
        pid = owner.get("pid", "?")
        port = owner.get("webui_port")
        where = f" (WebUI on http://127.0.0.1:{port}/)" if port else ""
        super().__init__(
            f"the data dir {data_dir} is in use by another local run, PID {pid}{where}. Two stacks on one "
            f"data dir break each other. Stop that run (Ctrl-C in its terminal, or kill {pid}), or give this "
            f"one its own dir: LTM_LOCALRUN_DIR=<another dir> scripts/run-local.sh")
        self.owner = owner


class DataDirLock:
    """An exclusive lock on `<data dir>/devhost.lock`, held while a stack uses the dir.

    flock: the kernel drops it when the owner exits, however it exits, so a crashed run
    never leaves a stale lock. The file records the owner's PID (and WebUI port once
    known) for the message a second run prints."""

    def __init__(self, data_dir: Path):
        self.data_dir = data_dir
        self.path = data_dir / "devhost.lock"
        self._fh: Any = None

    def acquire(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+")  # noqa: SIM115 - held open for the whole run: the lock lives as long as it
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            try:
                owner = json.loads(fh.read() or "{}")
            except ValueError:
                owner = {}
            fh.close()
            raise DataDirInUse(self.data_dir, owner) from None
        self._fh = fh
        self.record()

    def record(self, **extra: Any) -> None:
        if self._fh is None:
            return
        self._fh.seek(0)
        self._fh.truncate()
        self._fh.write(json.dumps({"pid": os.getpid(), "started": time.time(), **extra}))
        self._fh.flush()

    def release(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None

    @property
    def held(self) -> bool:
        return self._fh is not None
