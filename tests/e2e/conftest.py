"""Real-host end-to-end fixtures: one LangBot 4.11.2 stack per test session.

The stack (devhost.stack): the local model server, the plugin runtime and LangBot, all
on free loopback ports, with a temporary data dir that is removed afterwards (set
LTM_E2E_KEEP_DATA=1 to keep it). The session fixture builds and installs the `.lbpkg`
files (the test Runner, this plugin, then the test `_ltm_context` consumer) through the
HTTP API and creates the admin, models, memory KB and pipeline. `.lbvenv` (LangBot
itself) is created on first use and reused afterwards.

Environment:
- LTM_SKIP_E2E=1            skip the real-host tests (test_real_langbot.py, test_run_local.py,
                            test_real_candidates.py, test_real_consolidation.py, test_real_host_bench.py,
                            test_real_operator.py, test_crash_safety.py, test_real_erasure.py,
                            test_real_official_migration.py, test_real_host_history.py,
                            test_real_onebot.py, test_real_conversation.py)
- LTM_E2E_EMBEDDER          hashing (default: deterministic) | auto | minilm
- LTM_E2E_VDB               LangBot's vector store: chroma (default) | milvus (Milvus Lite in the data dir;
                            `milvus-lite` is added to .lbvenv on first use) | seekdb (embedded SeekDB in
                            the data dir; LangBot's seekdb extra pins added on first use) | pgvector (a
                            private PostgreSQL + pgvector on a unix socket, started and stopped with the
                            stack, ended by its PID; psycopg added on first use)
- LTM_E2E_KEEP_DATA=1       keep the temp data dir (LangBot db, logs, model request log)
When an e2e test fails, the tails of the LangBot, runtime (plugin logs) and model
server logs are attached to its report.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devhost.chat import DebugChat, ModelLog
from devhost.lbclient import LangBotClient
from devhost.processes import pid_alive
from devhost.stack import SetupInfo, Stack, StackConfig

_ACTIVE: list[Stack] = []


REAL_HOST_MODULES = {"test_real_langbot.py", "test_run_local.py", "test_real_candidates.py",
                     "test_real_consolidation.py", "test_real_host_bench.py",
                     "test_real_operator.py", "test_crash_safety.py",
                     "test_real_erasure.py", "test_real_official_migration.py",
                     "test_real_host_history.py", "test_real_onebot.py", "test_real_conversation.py"}  # start LangBot


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    skip = os.environ.get("LTM_SKIP_E2E") == "1"
    for item in items:
        path = Path(str(item.fspath))
        if path.parent == here and path.name in REAL_HOST_MODULES:
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.slow)
            if skip:
                item.add_marker(pytest.mark.skip(reason="LTM_SKIP_E2E=1"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: real LangBot end-to-end test (tests/e2e; slow, starts processes)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed and _ACTIVE and "e2e" in item.keywords:
        for stack in _ACTIVE:
            report.sections.append((f"LangBot stack logs ({stack.data_dir})", stack.log_tails(80)))


@dataclasses.dataclass
class E2E:
    stack: Stack
    info: SetupInfo

    @property
    def client(self) -> LangBotClient:
        client = LangBotClient(self.info.base_url, token=self.info.token)
        client.workspace_uuid = self.info.workspace_uuid
        return client

    @property
    def model_log(self) -> ModelLog:
        return ModelLog(self.stack.request_log)

    def chat(self, session_type: str = "person", pipeline_uuid: str | None = None) -> DebugChat:
        return DebugChat(self.info.base_url, pipeline_uuid or self.info.pipeline_uuid, self.info.token,
                         self.info.workspace_uuid, session_type=session_type)


@pytest.fixture(scope="session")
def e2e() -> Iterator[E2E]:
    data_dir = Path(tempfile.mkdtemp(prefix="ltm-e2e-"))
    config = StackConfig.from_env(data_dir, embedder=os.environ.get("LTM_E2E_EMBEDDER", "hashing"),
                                  vdb=os.environ.get("LTM_E2E_VDB", "chroma"))
    # The tests script the model: a real chat model from the environment must not be used.
    config.chat_base_url = config.chat_api_key = config.chat_model = None
    config.webui_port = config.runtime_control_port = config.runtime_debug_port = config.model_port = None
    config.install_consumer = True
    config.action_log = data_dir / "actions"  # read by bench/real_host.py's smoke test
    stack = Stack(config)
    _ACTIVE.append(stack)
    try:
        try:
            stack.start()
            info = stack.setup()
        except BaseException as exc:
            raise RuntimeError(f"starting the LangBot stack failed: {exc}\n{stack.log_tails(80)}") from exc
        yield E2E(stack, info)
    finally:
        pids = stack.stop()
        _ACTIVE.remove(stack)
        alive = sorted(p for p in pids if pid_alive(p))
        if os.environ.get("LTM_E2E_KEEP_DATA") == "1":
            print(f"\n[e2e] data kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
        assert not alive, f"processes still running after stop: {alive}"
