"""One local LangBot 4.11.2 stack on loopback: configuration and lifecycle (stdlib only).

`Stack.start()` locks the data dir, provisions the environments (`devhost.provision`),
then starts (`devhost.processes`), each in its own process group with stdout+stderr in
`<data>/logs/*.log`:
1. `devhost/model_server.py`: embeddings + the scripted chat model (OpenAI-compatible);
2. the plugin runtime `lbp rt --ws-control-port P1 --ws-debug-port P2 --skip-deps-check`
   (LangBot on a machine with /.dockerenv always talks to a runtime over WebSocket);
3. `langbot`, cwd `<data>/langbot` (LangBot writes `./data` relative to its cwd).
All get `devhost/sitecustomize` on PYTHONPATH, which rewrites wildcard binds to 127.0.0.1
(the runtime hard-codes 0.0.0.0). `Stack.setup()` configures LangBot over HTTP
(`devhost.langbot_setup`); `Stack.stop()` ends everything and releases the data dir.
The CLI behind `scripts/run-local.sh` is `devhost.cli`; the e2e tests use `Stack` directly.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import ipaddress
import json
import os
import time
from pathlib import Path
from typing import Any

from . import langbot_setup
from .langbot_setup import KB_NAME, PIPELINE_NAME, SetupInfo, SetupOptions
from .lbclient import LangBotClient
from .postgres import LocalPostgres
from .processes import (
    DataDirLock,
    ProcessGroup,
    choose_ports,
    descendants,
    free_port,
    http_json,
    http_ok,
    listeners,
    pid_alive,
)
from .progress import activity, log
from .provision import REPO, EmbedderChoice, choose_embedder, ensure_lbvenv, ensure_lbvenv_vdb

DEVHOST = REPO / "devhost"
SITECUSTOMIZE_DIR = DEVHOST / "sitecustomize"
READY_LINE = "Connected to instance-scoped plugin runtime."

__all__ = [
    "KB_NAME",
    "PIPELINE_NAME",
    "REPO",
    "SITECUSTOMIZE_DIR",
    "SetupInfo",
    "Stack",
    "StackConfig",
    "descendants",
    "free_port",
    "listeners",
    "pid_alive",
]


@dataclasses.dataclass
class StackConfig:
    data_dir: Path
    lbvenv: Path = REPO / ".lbvenv"
    embed_venv: Path = REPO / ".embvenv"
    webui_port: int | None = None  # None: a free loopback port
    runtime_control_port: int | None = None
    runtime_debug_port: int | None = None
    model_port: int | None = None
    embedder: str = "auto"  # auto | hashing | minilm
    model_python: str | None = None
    admin_email: str = langbot_setup.ADMIN_EMAIL
    admin_password: str = langbot_setup.ADMIN_PASSWORD
    chat_base_url: str | None = None  # a real OpenAI-compatible chat model instead of the scripted one
    chat_api_key: str | None = None
    chat_model: str | None = None
    install_consumer: bool = False
    boot_timeout: float = 180.0
    # LangBot's vector store: chroma (its default) | milvus (Milvus Lite, a file in the data dir) | seekdb
    # (embedded SeekDB, a folder in the data dir) | pgvector (a private PostgreSQL started and stopped with the stack)
    vdb: str = "chroma"
    action_log: Path | None = None  # a folder: log every plugin-protocol action (devhost/sitecustomize/devhost_action_probe.py)
    # LongTermMemory's plugin settings held on every start (scripts/run-local.sh: LOCAL_RUN_PLUGIN_SETTINGS)
    plugin_settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    # Memory KB settings overridden on every start (scripts/run-local.sh: LOCAL_RUN_KB_SETTINGS)
    kb_settings: dict[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_env(cls, data_dir: Path, **overrides: Any) -> StackConfig:
        def port(name: str) -> int | None:
            value = os.environ.get(name)
            return int(value) if value else None

        values: dict[str, Any] = dict(
            data_dir=data_dir,
            lbvenv=Path(os.environ.get("LTM_LBVENV") or REPO / ".lbvenv"),
            embed_venv=Path(os.environ.get("LTM_EMBED_VENV") or REPO / ".embvenv"),
            webui_port=port("LTM_WEBUI_PORT"),
            runtime_control_port=port("LTM_RUNTIME_PORT"),
            runtime_debug_port=port("LTM_RUNTIME_DEBUG_PORT"),
            model_port=port("LTM_MODEL_PORT"),
            embedder=os.environ.get("LTM_EMBEDDER", "auto"),
            model_python=os.environ.get("LTM_MODEL_PYTHON") or None,
            chat_base_url=os.environ.get("LTM_CHAT_BASE_URL") or None,
            chat_api_key=os.environ.get("LTM_CHAT_API_KEY") or None,
            chat_model=os.environ.get("LTM_CHAT_MODEL") or None,
            vdb=os.environ.get("LTM_VDB") or "chroma",
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


def child_env() -> dict[str, str]:
    """The environment of every started process."""
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    # uv installs no .pyc files (pip does): with PYTHONDONTWRITEBYTECODE set, as on this project's
    # machines, every start compiled LangBot's modules again (its boot took twice as long). The
    # started programs may cache bytecode in their own environments; the plugin's workers are
    # started by the runtime with PYTHONDONTWRITEBYTECODE=1 of their own.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(SITECUSTOMIZE_DIR)] + (
        [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONUNBUFFERED"] = "1"
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env["ANONYMIZED_TELEMETRY"] = "False"  # chromadb
    return env


VDBS = ("chroma", "milvus", "seekdb", "pgvector")


def vdb_env(vdb: str, home: Path, pg_uri: str | None = None) -> dict[str, str]:
    """LangBot's `vdb` config as environment overrides (docs/HOST-FACTS.md 11.2, 12)."""
    if vdb not in VDBS:
        raise ValueError(f"unknown vector store {vdb!r}: use one of {', '.join(VDBS)}")
    if vdb == "milvus":  # Milvus Lite: the Milvus client API on a local file, no server to run
        return {"VDB__USE": "milvus", "VDB__MILVUS__URI": str(home / "data" / "milvus.db")}
    if vdb == "seekdb":  # embedded SeekDB: a database in a folder, no server to run
        return {"VDB__USE": "seekdb", "VDB__SEEKDB__MODE": "embedded",
                "VDB__SEEKDB__PATH": str(home / "data" / "seekdb")}
    if vdb == "pgvector":  # the connection string of the stack's own PostgreSQL (devhost/postgres.py)
        if not pg_uri:
            raise ValueError("the pgvector store needs the stack's PostgreSQL running")
        return {"VDB__USE": "pgvector", "VDB__PGVECTOR__CONNECTION_STRING": pg_uri}
    return {"VDB__USE": "chroma"}


def langbot_env(env: dict[str, str], home: Path, ports: dict[str, int], vdb: str = "chroma",
                pg_uri: str | None = None) -> dict[str, str]:
    lb_env = dict(env)
    lb_env.update(vdb_env(vdb, home, pg_uri))
    lb_env.update({
        # LangBot takes any ancestor of its own package that holds pyproject.toml + main.py for a
        # source checkout and would put its data root there: with .lbvenv inside this repo that
        # is the repo itself (./data). Pin the data root to the stack's home.
        "LANGBOT_DATA_ROOT": str(home / "data"),
        "API__HOST": "127.0.0.1",
        "API__PORT": str(ports["webui"]),
        "API__WEBHOOK_PREFIX": f"http://127.0.0.1:{ports['webui']}",
        "PLUGIN__RUNTIME_WS_URL": f"ws://127.0.0.1:{ports['runtime']}/control/ws",
        "PLUGIN__DISPLAY_PLUGIN_DEBUG_URL": f"ws://127.0.0.1:{ports['runtime_debug']}/plugin/debug/ws",
        "PLUGIN__ENABLE_MARKETPLACE": "false",
        "SPACE__DISABLE_TELEMETRY": "true",
        "SPACE__DISABLE_MODELS_SERVICE": "true",
        "BOX__ENABLED": "false",
    })
    return lb_env


def is_loopback(addr: str) -> bool:
    """127.0.0.0/8, ::1, or an IPv4-mapped loopback (`::ffff:127.0.0.1`, where Milvus Lite listens)."""
    if addr == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(addr.split("%")[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


class Stack:
    def __init__(self, config: StackConfig):
        self.config = config
        self.data_dir = config.data_dir.resolve()
        self.logs = self.data_dir / "logs"
        self.home = self.data_dir / "langbot"  # LangBot's cwd: it creates ./data here
        self.request_log = self.data_dir / "model-requests.jsonl"
        self.group = ProcessGroup(self.logs)
        self.lock = DataDirLock(self.data_dir)
        self.ports: dict[str, int] = {}
        self.embedder: EmbedderChoice | None = None
        self.embedder_label = ""
        self.setup_info: SetupInfo | None = None
        self._builder = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="devhost-build")
        self._packages: concurrent.futures.Future[dict[str, Path]] | None = None
        self._stopped = False
        self._langbot_argv: tuple[list[str], dict[str, str]] = ([], {})
        self.postgres: LocalPostgres | None = None  # the pgvector store's server, when vdb is pgvector

    # ------------------------------------------------------------------ urls
    @property
    def procs(self):
        return self.group.procs

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['webui']}"

    @property
    def model_base_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['model']}/v1"

    def client(self) -> LangBotClient:
        return LangBotClient(self.base_url)

    # ------------------------------------------------------------------ start
    def start(self) -> None:
        cfg = self.config
        self.lock.acquire()  # raises DataDirInUse before anything else is touched
        self.home.mkdir(parents=True, exist_ok=True)
        venv = ensure_lbvenv(cfg.lbvenv)
        ensure_lbvenv_vdb(venv, cfg.vdb)
        self.embedder = choose_embedder(cfg.embedder, cfg.embed_venv, explicit_python=cfg.model_python,
                                        fallback_python=str(venv / "bin" / "python"))
        self.ports = choose_ports({"webui": cfg.webui_port, "runtime": cfg.runtime_control_port,
                                   "runtime_debug": cfg.runtime_debug_port, "model": cfg.model_port})
        self.lock.record(webui_port=self.ports["webui"])
        env = child_env()
        if cfg.action_log is not None:
            env["DEVHOST_ACTION_LOG"] = str(cfg.action_log)
        started = time.monotonic()
        pg_uri = None
        if cfg.vdb == "pgvector":
            self.postgres = LocalPostgres(self.home / "postgres")
            pg_uri = self.postgres.start()
        model = self.group.spawn("model-server", [
            self.embedder.python, str(DEVHOST / "model_server.py"), "--port", str(self.ports["model"]),
            "--request-log", str(self.request_log), "--embedder", self.embedder.embedder,
        ], self.data_dir, env)
        runtime = self.group.spawn("plugin-runtime", [
            str(venv / "bin" / "lbp"), "rt", "--ws-control-port", str(self.ports["runtime"]),
            "--ws-debug-port", str(self.ports["runtime_debug"]), "--skip-deps-check",
        ], self.home, env)
        # LangBot starts at once too: it spends its first seconds importing, and it retries the runtime
        # connection until the runtime (up in a few seconds) answers.
        self._langbot_argv = ([str(venv / "bin" / "langbot")], langbot_env(env, self.home, self.ports, cfg.vdb, pg_uri))
        langbot = self.group.spawn("langbot", self._langbot_argv[0], self.home, self._langbot_argv[1],
                                   cut_teardown=True)
        log(f"started the model server ({self.embedder.embedder}), the plugin runtime and LangBot; logs in {self.logs}")
        self._start_package_build()  # in the background while LangBot boots; setup() takes the result
        self.group.wait("model server", model, lambda: http_ok(f"http://127.0.0.1:{self.ports['model']}/healthz"), 60)
        self.group.wait("plugin runtime", runtime,
                        lambda: http_ok(f"http://127.0.0.1:{self.ports['runtime']}/healthz"), 60)
        self.group.wait("LangBot", langbot, lambda: self._langbot_ready(langbot.log_path)
                        and http_ok(self.base_url + "/api/v1/user/init"), cfg.boot_timeout)
        healthz = f"http://127.0.0.1:{self.ports['model']}/healthz"
        self.group.wait("model server embedder", model, lambda: http_json(healthz).get("ready") is True, 120)
        health = http_json(healthz)
        # The label comes from the server's own answer, never from its log (where another
        # thread's stderr line can land in the middle of a line).
        self.embedder_label = str(health.get("description") or health.get("embedder") or "?")
        if self.embedder.fallback_reason:
            self.embedder_label += f" [fallback: {self.embedder.fallback_reason}]"
        self.group.pids()
        log(f"stack up in {time.monotonic() - started:.1f}s: LangBot {self.base_url}, runtime :{self.ports['runtime']}, "
            f"model server {self.model_base_url} ({health.get('embedder')}), vector store {cfg.vdb}")

    def _start_package_build(self) -> None:
        """Build the plugin packages in a thread (scripts/build.sh and `lbp build`: mostly waiting on
        subprocesses), so a start does not wait for them after LangBot is up."""
        cfg = self.config
        lbp = str(cfg.lbvenv.resolve() / "bin" / "lbp")
        self._packages = self._builder.submit(langbot_setup.build_packages, lbp, self.data_dir / "dist",
                                              consumer=cfg.install_consumer)

    def _langbot_logs(self, stdout_log: Path) -> list[Path]:
        return [stdout_log, *sorted((self.home / "data" / "logs").glob("langbot-*.log"))]

    def _langbot_ready(self, stdout_log: Path, since: dict[Path, int] | None = None) -> bool:
        """The runtime-connected line, in LangBot's stdout or in its own log files (past the sizes in
        `since`, for a restart): with the Milvus vector store, LangBot's console output stops once
        pymilvus has started Milvus Lite."""
        since = since or {}
        for path in self._langbot_logs(stdout_log):
            if path.is_file():
                with open(path, "rb") as fh:
                    fh.seek(since.get(path, 0))
                    if READY_LINE.encode() in fh.read():
                        return True
        return False

    def restart_langbot(self) -> None:
        """Stop LangBot and start it again on the same data dir and ports, as an operator restarts its
        container; the model server and the plugin runtime keep running (their own containers)."""
        old = next(p for p in self.procs if p.name == "langbot")
        stopped = self.group.stop_one(old)
        log(f"LangBot stopped for a restart (pids {sorted(stopped)})")
        since = {path: path.stat().st_size for path in self._langbot_logs(old.log_path) if path.is_file()}
        argv, env = self._langbot_argv
        langbot = self.group.spawn("langbot", argv, self.home, env, cut_teardown=True)
        self.group.wait("LangBot (restart)", langbot, lambda: self._langbot_ready(langbot.log_path, since)
                        and http_ok(self.base_url + "/api/v1/user/init"), self.config.boot_timeout)

    # ------------------------------------------------------------------ checks
    def pids(self) -> set[int]:
        return self.group.pids()

    def wildcard_listeners(self) -> list[tuple[str, int, int | None]]:
        """Listening sockets of our processes that are not on loopback."""
        ours = self.pids()
        return [(addr, port, pid) for addr, port, pid in listeners() if pid in ours and not is_loopback(addr)]

    def our_listeners(self) -> list[tuple[str, int, int | None]]:
        ours = self.pids()
        return [item for item in listeners() if item[2] in ours]

    def log_tails(self, lines: int = 60) -> str:
        return self.group.log_tails(lines)

    # ------------------------------------------------------------------ stop
    def stop(self, timeout: float = 20.0) -> set[int]:
        """Stop every started process; returns every PID seen (all gone afterwards)."""
        if self._stopped:
            return self.pids()
        self._builder.shutdown(wait=False, cancel_futures=True)
        try:
            return self.group.stop(timeout)
        finally:
            self._stopped = True
            try:
                if self.postgres is not None:  # after LangBot, its only client
                    self.postgres.stop()
            finally:
                self.lock.release()

    # ------------------------------------------------------------------ setup
    def setup(self, *, install_ltm: bool = True) -> SetupInfo:
        """Build and install the plugins, then set LangBot up (idempotent, see langbot_setup)."""
        cfg = self.config
        if self._packages is None:
            self._start_package_build()
        assert self._packages is not None
        with activity("building the plugin packages"):
            packages = self._packages.result()
        options = SetupOptions(admin_email=cfg.admin_email, admin_password=cfg.admin_password,
                               chat_base_url=cfg.chat_base_url, chat_api_key=cfg.chat_api_key,
                               chat_model=cfg.chat_model, install_ltm=install_ltm,
                               install_consumer=cfg.install_consumer and install_ltm,
                               plugin_settings=dict(cfg.plugin_settings), kb_settings=dict(cfg.kb_settings))
        with activity("setting LangBot up (admin, models, plugins, memory KB, pipeline)"):
            self.setup_info = langbot_setup.setup_langbot(
                self.client(), options, packages=packages, model_base_url=self.model_base_url,
                embedder_label=self.embedder_label, state_dir=self.data_dir)
        self._record_state()
        return self.setup_info

    def _record_state(self) -> None:
        """`<data>/devhost.json`: what this run set up; warns when the embedder changed."""
        info = self.setup_info
        assert info is not None
        previous = self.data_dir / "devhost.json"
        try:
            before = json.loads(previous.read_text()).get("embedder") if previous.exists() else None
        except (ValueError, OSError):
            before = None
        now = self.embedder.embedder if self.embedder else None
        if before and now and before != now:
            log(f"WARNING: this data dir's memories were embedded by {before!r}, now {now!r}: recall of older "
                "memories will be poor (keep LTM_EMBEDDER stable or use a fresh data dir)")
        previous.write_text(json.dumps(
            dict(dataclasses.asdict(info), token="<see login>", embedder=now, ports=self.ports,
                 pids={p.name: p.pid for p in self.procs}, request_log=str(self.request_log)), indent=2))

