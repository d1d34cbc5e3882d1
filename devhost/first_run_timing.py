"""Times `scripts/run-local.sh` as a new user meets it: to the banner, and Ctrl-C until all is gone.

    git clone -b <branch> <repo> /tmp/ltm-fresh
    UV_CACHE_DIR=$(mktemp -d) python3.11 /tmp/ltm-fresh/devhost/first_run_timing.py --runs 2

Each run starts the script in its own process group (as a terminal does) with a data dir
under the clone, reads its output with a timestamp per line, waits for the banner, then sends
SIGINT to the group (Ctrl-C) and waits until the script and every process it started are
gone. It prints one JSON line per run: seconds to the banner, the CPU seconds the run used by
then (user + system of the script and everything it started; compares runs on a machine that
others share), the longest silence before it, seconds from Ctrl-C to the last process gone,
and what was left running (must be []).
The first run of a fresh clone creates `.uvvenv`, `.lbvenv` and `.embvenv`; the second is
a plain restart. Figures are machine-dependent (devhost/README.md, "First run").
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from devhost.processes import descendants, free_port, pid_alive  # noqa: E402 - after the sys.path line above

BANNER_END = "Ctrl-C stops everything"
_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: set[int]) -> float:
    """CPU time (user + system) of `pids` and of their children that have ended and were waited for.

    Less dependent on what else the machine runs than wall time: the figure to compare runs by."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / _TICK


def own_cpu_seconds(pid: int) -> float | None:
    """User + system seconds of `pid` itself (not of its children), None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


def program_label(pid: int) -> str:
    """What a started process is, for the CPU breakdown: model-server, plugin-runtime, langbot,
    plugin-worker:<plugin dir>, or the basename of its program."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return "?"
    joined = " ".join(argv)
    if "model_server.py" in joined:
        return "model-server"
    if "langbot_plugin.cli" in joined and " run" in joined:
        return f"plugin-worker:{Path(cwd).name}"
    if any(Path(a).name == "lbp" for a in argv) and " rt " in f"{joined} ":
        return "plugin-runtime"
    if any(Path(a).name == "langbot" for a in argv):
        return "langbot"
    if "devhost.cli" in joined:
        return "devhost"
    program = next((Path(a).name for a in argv if a and not Path(a).name.startswith("python")), argv[0])
    return Path(program).name or "?"


class CpuByProgram:
    """Samples the CPU seconds of every descendant of a process while it runs, by `program_label`:
    where a start's CPU goes (processes that live shorter than a sample count only in the total)."""

    def __init__(self) -> None:
        self.seconds: dict[int, float] = {}
        self.labels: dict[int, str] = {}

    def sample(self, pids: set[int]) -> None:
        for pid in pids:
            used = own_cpu_seconds(pid)
            if used is None:
                continue
            if pid not in self.labels:
                self.labels[pid] = program_label(pid)
            self.seconds[pid] = used

    def by_program(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for pid, used in self.seconds.items():
            totals[self.labels[pid]] = totals.get(self.labels[pid], 0.0) + used
        return {label: round(used, 1) for label, used in sorted(totals.items(), key=lambda kv: -kv[1])}


def one_run(repo: Path, data_dir: Path, timeout: float, extra_env: dict[str, str],
            after_banner: float = 0.0) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LTM_")}
    env.update(extra_env, LTM_LOCALRUN_DIR=str(data_dir), LTM_WEBUI_PORT=str(free_port()))
    started = time.monotonic()
    proc = subprocess.Popen(["bash", str(repo / "scripts" / "run-local.sh")], cwd=str(repo), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    lines: list[tuple[float, str]] = []
    banner = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.monotonic() - started, line.rstrip("\n")))
            print(f"{lines[-1][0]:7.1f}  {lines[-1][1]}", file=sys.stderr, flush=True)
            if BANNER_END in line:
                banner.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    seen: set[int] = {proc.pid}
    cpu = CpuByProgram()
    while not banner.wait(0.5):
        seen |= set(descendants(proc.pid))
        cpu.sample(seen)
        if proc.poll() is not None or time.monotonic() - started > timeout:
            break
    to_banner = time.monotonic() - started if banner.is_set() else None
    seen |= set(descendants(proc.pid))
    cpu_to_banner = cpu_seconds(seen)
    cpu.sample(seen)
    stamps = [0.0] + [t for t, _ in lines if to_banner is None or t <= to_banner]
    longest_silence = max((b - a for a, b in zip(stamps, stamps[1:])), default=0.0)
    time.sleep(after_banner)  # a person reads the banner before pressing Ctrl-C
    seen |= set(descendants(proc.pid))
    labels = {pid: program_label(pid) for pid in seen}
    ctrl_c = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    gone: dict[str, float] = {}  # per program: seconds from Ctrl-C until its last process was gone
    while any(pid_alive(p) for p in seen) and time.monotonic() - ctrl_c < 120:
        for pid in seen:
            if not pid_alive(pid):
                gone.setdefault(f"{labels[pid]}:{pid}", round(time.monotonic() - ctrl_c, 2))
        proc.poll()
        time.sleep(0.05)
    stop_seconds = time.monotonic() - ctrl_c
    left = sorted(p for p in seen if pid_alive(p))
    for pid in left:  # never leave anything behind, even when the run did
        os.kill(pid, signal.SIGKILL)
    reader.join(timeout=5)
    return {"banner_s": None if to_banner is None else round(to_banner, 1),
            "cpu_s_to_banner": round(cpu_to_banner, 1), "cpu_s_by_program": cpu.by_program(), "longest_silence_before_banner_s": round(longest_silence, 1),
            "ctrl_c_to_all_gone_s": round(stop_seconds, 1), "gone_s_by_process": _latest(gone),
            "after_banner_s": after_banner, "exit_code": proc.returncode, "left_running": left,
            "processes_seen": len(seen)}


def _latest(gone: dict[str, float]) -> dict[str, float]:
    """Per program, when its last process was gone (the label without the pid)."""
    out: dict[str, float] = {}
    for key, seconds in gone.items():
        label = key.rsplit(":", 1)[0]
        out[label] = max(out.get(label, 0.0), seconds)
    return dict(sorted(out.items(), key=lambda kv: kv[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=str(HERE.parent), help="the clone to run (default: this one)")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--after-banner", type=float, default=0.0, metavar="S",
                        help="seconds to wait after the banner before Ctrl-C (a person reads it first)")
    parser.add_argument("--env", action="append", default=[], metavar="LTM_X=V",
                        help="a variable for run-local (other LTM_* variables of this shell are not passed)")
    args = parser.parse_args()
    extra_env = dict(item.split("=", 1) for item in args.env)
    repo = Path(args.repo).resolve()
    data_dir = repo / ".localrun-timing"
    for number in range(1, args.runs + 1):
        load = os.getloadavg()
        result = one_run(repo, data_dir, args.timeout, extra_env, args.after_banner)
        result.update(run=number, env=extra_env, load_before=[round(x, 2) for x in load],
                      load_after=[round(x, 2) for x in os.getloadavg()], cpus=os.cpu_count())
        print(json.dumps(result), flush=True)
        if result["banner_s"] is None:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
