"""The command line behind `scripts/run-local.sh` (stdlib only).

    python3.11 -m devhost.cli run [--data-dir .localrun] [--webui-port 5300] [--embedder auto]
    python3.11 -m devhost.cli ensure-lbvenv [--path .lbvenv]
    python3.11 -m devhost.cli ensure-embedding-env [--path .embvenv]
    python3.11 -m devhost.cli install --venv .venv -r requirements.txt   (uv when it can be had, else pip)

`run` starts the stack, sets it up, prints the banner on stdout (everything else goes to
stderr) and waits; Ctrl-C or SIGTERM stops every process it started. A second `run` on a
data dir that is in use is refused with the owner's PID.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from .installer import InstallError
from .langbot_setup import KB_NAME, PIPELINE_NAME
from .processes import DataDirInUse, pid_alive
from .provision import REPO, ensure_embedding_env, ensure_lbvenv, install_packages, log
from .stack import Stack, StackConfig

# The WebUI debug chat's bot (`websocket-proxy-bot`) exists only in memory, and LangBot 4.11.2 keeps bot
# admins in a table whose rows must name a bot of its database, so no chat of the debug chat can be
# made a bot admin (docs/HOST-FACTS.md 4.1, 11.3). The local run therefore lets every member of the
# debug Group Chat change its shared memory, and the banner and README say so.
LOCAL_RUN_PLUGIN_SETTINGS: dict[str, Any] = {"command_admin_only_in_groups": False}
# The conversation record is on in the local run, so a person can see a chat carry on across a LangBot
# restart (README, "Conversation continuity"); it stores what people say, and the banner says so. The
# test Runner shows the model no history of its own, so the record's context pack leaves no turn out.
LOCAL_RUN_KB_SETTINGS: dict[str, Any] = {"conversation_enabled": True, "conversation_host_window": 0}


def banner(stack: Stack) -> str:
    info = stack.setup_info
    assert info is not None
    lines = [
        "",
        "=" * 78,
        " LongTermMemory on a local LangBot 4.11.2 (loopback only)",
        "=" * 78,
        f" WebUI:      {stack.base_url}/",
        f" Login:      {info.admin_email} / {info.admin_password}",
        f" Processor:  {PIPELINE_NAME} ({info.pipeline_uuid})",
        f" Chat:       sidebar Processors -> {PIPELINE_NAME} -> Configure & debug: the Debug Chat panel,",
        "             Session Type: Group Chat (click Skip on LangBot's user guides and collapse its",
        "             Workspace assistant with its ⌄: both cover the chat box)",
        "             the debug chat's user is a new person on every visit, tab switch and LangBot restart",
        "             (LangBot names it after the connection): the Group Chat's memory stays, a speaker",
        "             profile stays with the visit that made it, and a Private Chat starts empty each time",
        "             command_admin_only_in_groups is off here: LangBot cannot make the debug chat a bot",
        "             admin, so every Group Chat member may forget, import, delete and consolidate",
        f" Memory KB:  {KB_NAME} ({info.kb_uuid}) on langbot-ltm/LongTermMemory, attached to the processor;",
        "             candidate extraction on, consolidation on (an override) with the chat model",
        " Conversation: recorded here (conversation_enabled is on): what every chat says is stored in plugin",
        "             storage and given back to the model, also after a LangBot restart; the test Runner shows",
        "             no history itself (conversation_host_window 0). !memory conversation shows it, clear empties it",
        f" Console:    {stack.base_url}/home/plugin-pages?id=langbot-ltm%2FLongTermMemory%2Fconsole",
        f" Chat model: {info.chat_label}",
    ]
    if stack.config.chat_base_url is None:
        lines.append("             every reply of the scripted local model starts with \"[scripted local model]\";")
        lines.append("             set LTM_CHAT_BASE_URL, LTM_CHAT_API_KEY, LTM_CHAT_MODEL for a real model")
    lines += [
        f" Embeddings: {info.embedder_label}",
        f" Vectors:    LangBot's {stack.config.vdb} store" + (" (Milvus Lite, a file in the data dir)"
                                                            if stack.config.vdb == "milvus" else "")
        + " (LTM_VDB=chroma|milvus|seekdb|pgvector)",
        f" Data dir:   {stack.data_dir} (kept between runs); logs in {stack.logs}",
        f" Model log:  {stack.request_log}",
        " Ctrl-C stops everything this script started.",
        "=" * 78,
        "",
    ]
    return "\n".join(lines)


class _Stop(Exception):
    pass


def _raise_stop(signum: int, _frame: Any) -> None:
    raise _Stop(signal.Signals(signum).name)


def cmd_run(args: argparse.Namespace) -> int:
    data_dir = Path(args.data_dir).resolve()
    config = StackConfig.from_env(data_dir, webui_port=args.webui_port, embedder=args.embedder,
                                  plugin_settings=dict(LOCAL_RUN_PLUGIN_SETTINGS),
                                  kb_settings=dict(LOCAL_RUN_KB_SETTINGS))
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
        # One write: the banner never shares a line with anything else on the terminal.
        sys.stdout.write(banner(stack) + "\n")
        sys.stdout.flush()
        while True:
            dead = stack.group.dead()
            if dead is not None:
                raise RuntimeError(f"{dead.name} exited with {dead.popen.returncode}; log tail:\n{dead.tail()}")
            time.sleep(1)
    except _Stop as stop:
        log(f"{stop}: stopping")
    except DataDirInUse as exc:
        log(f"refused: {exc}")
        return 2  # nothing was started, nothing to stop
    except Exception as exc:  # noqa: BLE001
        log(f"error: {exc}")
        if stack.procs:
            print(stack.log_tails(40), file=sys.stderr)
        code = 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if stack.lock.held or stack.procs:
            pids = stack.stop()
            left = sorted(p for p in pids if pid_alive(p))
            log(f"stopped {len(pids)} processes" + (f"; still alive: {left}" if left else ""))
            log(f"data kept in {data_dir}")
    return code


def cmd_install(venv: Path, requirement_files: list[str]) -> int:
    """What scripts/test.sh installs its test dependencies with; the output goes to `<venv>/install.log`."""
    venv = venv.resolve()
    log_path = venv / "install.log"
    log_path.write_text("")
    files = [arg for path in requirement_files for arg in ("-r", str(Path(path).resolve()))]
    what = f"{venv.name}: installing {', '.join(requirement_files)}"
    try:
        install_packages(what, venv, [], log_path, files, python=sys.executable)
    except InstallError as exc:
        log(str(exc))
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devhost.cli", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="start everything, set it up, wait for Ctrl-C")
    run.add_argument("--data-dir", default=os.environ.get("LTM_LOCALRUN_DIR") or str(REPO / ".localrun"))
    run.add_argument("--webui-port", type=int, default=None, help="default: $LTM_WEBUI_PORT or 5300")
    run.add_argument("--embedder", choices=["auto", "hashing", "minilm"], default=None)
    venv = sub.add_parser("ensure-lbvenv", help="create .lbvenv with LangBot 4.11.2 if missing")
    venv.add_argument("--path", default=os.environ.get("LTM_LBVENV") or str(REPO / ".lbvenv"))
    emb = sub.add_parser("ensure-embedding-env", help="create .embvenv with CPU torch and all-MiniLM-L6-v2 if missing")
    emb.add_argument("--path", default=os.environ.get("LTM_EMBED_VENV") or str(REPO / ".embvenv"))
    inst = sub.add_parser("install", help="install requirement files into an existing venv, with progress lines")
    inst.add_argument("--venv", required=True)
    inst.add_argument("-r", "--requirement", action="append", required=True)
    args = parser.parse_args(argv)
    if args.command == "install":
        return cmd_install(Path(args.venv), args.requirement)
    if args.command == "ensure-lbvenv":
        print(ensure_lbvenv(Path(args.path)))
        return 0
    if args.command == "ensure-embedding-env":
        print(ensure_embedding_env(Path(args.path)))
        return 0
    return cmd_run(args)


if __name__ == "__main__":
    sys.exit(main())
