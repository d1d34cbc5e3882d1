"""Installing packages into the devhost environments: uv when it can be had, else pip (stdlib only).

uv resolves and installs in parallel: `.lbvenv` (247 packages) takes about half a minute with it
against several minutes with pip on a 2-core machine (devhost/README.md, "First run"). uv comes
from PyPI into its own small environment, `.uvvenv` next to the others, or from `uv` on PATH;
when neither works the install uses pip, which is always there. `LTM_INSTALLER=pip` (or `uv`)
chooses one.

uv does not read pip's configuration, so the sources and limits configured for pip (its config
files and `PIP_*` variables: find-links, index URLs, constraints, certificate) are passed to it:
on a machine whose CPU torch wheel lies in a find-links folder, uv takes that wheel, as pip does.

Every step runs with its output in a log file and says what it does on stderr: a line when it
starts, one after every `HEARTBEAT_S` seconds of silence while it runs (elapsed time and the
log's last line; devhost.progress), and one when it ends.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from .progress import activity, log

UV_REQUIREMENTS = ["uv==0.13.9"]
MARKER = ".devhost-complete"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class InstallError(RuntimeError):
    """An install step failed; `log_path` holds its output."""

    def __init__(self, message: str, log_path: Path):
        super().__init__(message)
        self.log_path = log_path


# --------------------------------------------------------------------------- steps with progress
def _last_line(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - 4096))
            tail = fh.read().decode(errors="replace")
    except OSError:
        return ""
    lines = [_ANSI.sub("", line).strip() for line in tail.replace("\r", "\n").splitlines()]
    lines = [line for line in lines if line and not line.startswith("$ ")]
    return lines[-1][:120] if lines else ""


def run_step(what: str, argv: Sequence[str], log_path: Path, *, env: Mapping[str, str] | None = None,
             heartbeat_s: float | None = None) -> float:
    """Run `argv` with stdout+stderr appended to `log_path`, reporting progress; returns seconds.

    Raises InstallError (with the log's tail) when the command fails or cannot start."""
    started = time.monotonic()
    log(f"{what} ...")
    with open(log_path, "a") as out:
        out.write("$ " + " ".join(argv) + "\n")
        out.flush()
        try:
            proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=dict(env) if env is not None else None)
        except OSError as exc:
            raise InstallError(f"{what} failed to start: {exc}", log_path) from None
        with activity(what, lambda: _last_line(log_path), heartbeat_s):
            try:
                code = proc.wait()
            except BaseException:  # Ctrl-C: the install must not outlive the run
                proc.kill()
                proc.wait()
                raise
    seconds = time.monotonic() - started
    if code != 0:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-30:])
        raise InstallError(f"{what} failed (exit code {code}) after {seconds:.0f}s; log: {log_path}\n{tail}",
                           log_path)
    log(f"{what}: done in {seconds:.0f}s")
    return seconds


# --------------------------------------------------------------------------- pip's configuration, for uv
def pip_settings(python: str) -> dict[str, list[str]]:
    """pip's effective configuration (`pip config list`: files and PIP_* variables), key -> values."""
    try:
        out = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    settings: dict[str, list[str]] = {}
    for line in out.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        name = key.rsplit(".", 1)[-1]  # global.find-links, install.constraint, :env:.find-links
        values = value.strip().strip("'\"").split()
        settings.setdefault(name, [])
        settings[name] += [v for v in values if v not in settings[name]]
    return settings


def uv_args_from_pip(settings: Mapping[str, Sequence[str]]) -> tuple[list[str], dict[str, str]]:
    """The uv arguments and environment that give uv the sources and limits pip is configured with."""
    args: list[str] = []
    env: dict[str, str] = {}
    for link in settings.get("find-links", []):
        args += ["--find-links", link]
    for constraint in settings.get("constraint", []):
        args += ["--constraint", constraint]
    if settings.get("index-url"):
        args += ["--index-url", settings["index-url"][0]]
    extra = list(settings.get("extra-index-url", []))
    for url in extra:
        args += ["--extra-index-url", url]
    if extra:  # pip takes the best version across all indexes; uv's default is the first index that has it
        args += ["--index-strategy", "unsafe-best-match"]
    if settings.get("no-index", ["false"])[0].lower() in ("1", "true", "yes", "on"):
        args.append("--no-index")
    if settings.get("cert"):
        env["SSL_CERT_FILE"] = settings["cert"][0]
    return args, env


# --------------------------------------------------------------------------- the installer
@dataclasses.dataclass
class Installer:
    """How packages get into a venv: `uv pip install --python <venv>` or `<venv>/bin/python -m pip install`."""

    name: str  # "uv" | "pip"
    uv: str | None = None
    uv_args: list[str] = dataclasses.field(default_factory=list)
    uv_env: dict[str, str] = dataclasses.field(default_factory=dict)

    def install_argv(self, venv: Path, requirements: Sequence[str], extra: Sequence[str] = ()) -> list[str]:
        if self.name == "uv":
            assert self.uv is not None
            # No --compile-bytecode: compiling all 247 packages of .lbvenv took over 2 minutes on two busy
            # cores; the started processes write .pyc for what they import instead (devhost.stack.child_env).
            return [self.uv, "pip", "install", "--python", str(venv / "bin" / "python"), *self.uv_args, *extra,
                    *requirements]
        return [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
                "--retries", "2", "--timeout", "60", *extra, *requirements]

    def venv_argv(self, venv: Path, python: str) -> list[str]:
        """Creating `venv` with pip in it (LangBot's runtime installs plugin requirements with pip):
        `uv venv --seed` takes seconds where `python -m venv` took 10-16 s on two busy cores."""
        if self.name == "uv":
            assert self.uv is not None
            sources: list[str] = []
            args = iter(self.uv_args)
            for arg in args:  # `uv venv` knows the index options, not constraints
                if arg == "--constraint":
                    next(args)
                else:
                    sources.append(arg)
            return [self.uv, "venv", "--seed", "--python", python, *sources, str(venv)]
        return [python, "-m", "venv", str(venv)]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.name == "uv":
            env.update(self.uv_env)
            env.setdefault("UV_HTTP_TIMEOUT", "60")
            env["UV_NO_PROGRESS"] = "1"  # progress bars are for terminals; the log gets plain lines
        return env

    def install(self, what: str, venv: Path, requirements: Sequence[str], log_path: Path,
                extra: Sequence[str] = ()) -> float:
        return run_step(f"{what} with {self.name}", self.install_argv(venv, requirements, extra), log_path,
                        env=self.env())


PIP = Installer("pip")


def _uv_works(uv: str) -> bool:
    try:
        return subprocess.run([uv, "--version"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def ensure_uv(tools_venv: Path, python: str, log_path: Path) -> str | None:
    """`uv` next to this Python (a venv that has it, like the test `.venv`) or on PATH, else from
    `tools_venv` (created with pip on first use); None when none of them works."""
    for found in (Path(sys.executable).parent / "uv", shutil.which("uv")):
        if found and Path(found).is_file() and _uv_works(str(found)):
            return str(found)
    uv = tools_venv / "bin" / "uv"
    marker = tools_venv / MARKER
    try:
        if json.loads(marker.read_text()).get("requirements") == UV_REQUIREMENTS and _uv_works(str(uv)):
            return str(uv)
    except (OSError, ValueError):
        pass
    try:
        if tools_venv.exists():
            shutil.rmtree(tools_venv)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text("")
        run_step(f"{tools_venv.name}: creating it for the uv installer", [python, "-m", "venv", str(tools_venv)],
                 log_path)
        run_step(f"{tools_venv.name}: installing {' '.join(UV_REQUIREMENTS)} with pip",
                 [str(tools_venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
                  "--retries", "2", "--timeout", "60", *UV_REQUIREMENTS], log_path)
    except InstallError as exc:
        log(f"uv is not available ({str(exc).splitlines()[0]}); installing with pip")
        return None
    if not _uv_works(str(uv)):
        log(f"uv from {tools_venv} does not run; installing with pip")
        return None
    marker.write_text(json.dumps({"requirements": UV_REQUIREMENTS, "created": time.time()}))
    return str(uv)


def choose_installer(tools_venv: Path, python: str, log_path: Path, wanted: str | None = None) -> Installer:
    """uv (with pip's sources and limits) unless `LTM_INSTALLER=pip` or uv cannot be had."""
    wanted = (wanted or os.environ.get("LTM_INSTALLER") or "auto").lower()
    if wanted not in ("auto", "uv", "pip"):
        raise ValueError(f"LTM_INSTALLER={wanted!r}: use auto, uv or pip")
    if wanted == "pip":
        return PIP
    uv = ensure_uv(tools_venv, python, log_path)
    if uv is None:
        if wanted == "uv":
            raise InstallError(f"LTM_INSTALLER=uv but uv cannot be installed (see {log_path})", log_path)
        return PIP
    args, env = uv_args_from_pip(pip_settings(python))
    return Installer("uv", uv, args, env)

