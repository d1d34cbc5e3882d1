"""Set a running LangBot 4.11.2 up over its HTTP API (stdlib only).

Idempotent, by name: the admin login, the local provider and models (or a remote chat
model), the built `.lbpkg` files (the test Runner, this plugin and, when asked, the test
consumer plugin, in that order), the memory KB and the pipeline with the memory KB
attached and this plugin bound.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .lbclient import CONSUMER_PLUGIN, LTM_PLUGIN, RUNNER_ID, RUNNER_PLUGIN, LangBotClient, LangBotError
from .progress import activity, log
from .provision import REPO

RUNNER_PLUGIN_DIR = REPO / "tests" / "e2e" / "runner_plugin"
PLUGIN_RELOAD_S = 20.0  # how long an installed plugin may take to be listed again after a start
CONSUMER_PLUGIN_DIR = REPO / "tests" / "e2e" / "consumer_plugin"

ADMIN_EMAIL = "admin@ltm.local"
ADMIN_PASSWORD = "ltm-local-admin"
PIPELINE_NAME = "LongTermMemory (devhost)"
KB_NAME = "Long-term memory"
LOCAL_PROVIDER = "devhost-local"
REMOTE_PROVIDER = "devhost-remote-chat"
SCRIPTED_CHAT_MODEL = "ltm-scripted-chat"
EMBEDDING_MODEL = "ltm-local-embedding"
SYSTEM_PROMPT = "You are a helpful assistant. Use the long-term memory tools when the user asks you to remember things."


@dataclasses.dataclass
class SetupOptions:
    admin_email: str = ADMIN_EMAIL
    admin_password: str = ADMIN_PASSWORD
    chat_base_url: str | None = None  # a real OpenAI-compatible chat model instead of the scripted one
    chat_api_key: str | None = None
    chat_model: str | None = None
    install_ltm: bool = True
    install_consumer: bool = False  # the test consumer of `_ltm_context` (tests/e2e/consumer_plugin)
    # Plugin settings to hold after install (only changed keys are written: a write restarts the plugin).
    plugin_settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    # Memory KB settings overridden for the installation, the way an operator does (the console's
    # /settings/set): scripts/run-local.sh turns the conversation record on with them.
    kb_settings: dict[str, Any] = dataclasses.field(default_factory=dict)


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


def build_plugin(lbp: str, source: Path, out: Path) -> Path:
    """`lbp build` of a test plugin folder (copied without caches) into `out`."""
    with tempfile.TemporaryDirectory() as stage:
        shutil.copytree(source, stage, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        done = subprocess.run([lbp, "build", "-o", str(out)], cwd=stage, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"lbp build ({source.name}) failed:\n{done.stdout}\n{done.stderr}")
    return next(out.glob("*.lbpkg"))


def sources_digest(salt: str) -> str | None:
    """Digest of every file of the repository that git does not ignore (names and contents), or None
    outside a git checkout: what the packages are built from, tests and docs included (a change
    there only costs a rebuild)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=str(REPO),
                                capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    digest = hashlib.sha256(salt.encode())
    for name in sorted(n for n in listed.split(b"\0") if n):
        path = REPO / name.decode()
        digest.update(name + b"\0")
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def cached_build(dist: Path, key: str | None, build: Callable[[], dict[str, Path]]) -> dict[str, Path]:
    """`build()`'s packages, reused from `dist` when they were built from the same sources (`key`)."""
    stamp = dist / "sources.json"
    try:
        recorded = json.loads(stamp.read_text())
        packages = {kind: Path(path) for kind, path in recorded["packages"].items()}
        if key is not None and recorded["key"] == key and all(path.is_file() for path in packages.values()):
            return packages
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    if dist.exists():
        shutil.rmtree(dist)
    dist.mkdir(parents=True)
    packages = build()
    if key is not None:
        stamp.write_text(json.dumps({"key": key, "packages": {kind: str(path) for kind, path in packages.items()}}))
    return packages


def build_packages(lbp: str, dist: Path, *, consumer: bool = False) -> dict[str, Path]:
    """The `.lbpkg` of this plugin (scripts/build.sh), the test Runner and, if asked, the consumer;
    the ones in `dist` when nothing they are built from changed (a restart builds nothing)."""

    def build() -> dict[str, Path]:
        done = subprocess.run(["bash", str(REPO / "scripts" / "build.sh"), str(dist / "ltm")], cwd=str(REPO),
                              env=dict(os.environ, LBP=lbp), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"scripts/build.sh failed:\n{done.stdout}\n{done.stderr}")
        packages = {"ltm": next((dist / "ltm").glob("*.lbpkg")),
                    "runner": build_plugin(lbp, RUNNER_PLUGIN_DIR, dist / "runner")}
        if consumer:
            packages["consumer"] = build_plugin(lbp, CONSUMER_PLUGIN_DIR, dist / "consumer")
        return packages

    return cached_build(dist, sources_digest(f"{lbp}\0consumer={consumer}"), build)


def install_plugin(client: LangBotClient, package: Path, plugin: tuple[str, str], state_dir: Path) -> bool:
    """Install a `.lbpkg` unless exactly this package is already installed; True if installed.

    Installing over an installed plugin makes the host delete the old copy first, which the
    runtime logs as `delete_plugin failed with ValueError` while that copy is still running.
    An unchanged plugin (the usual second local run) is therefore left as it is; the digest
    of the last installed package is kept in `state_dir` (the data dir)."""
    marker = state_dir / f"installed-{plugin[0]}-{plugin[1]}.sha256"
    digest = package_digest(package)
    if marker.is_file() and marker.read_text() == digest:
        # Installed before from this very package: right after a start the runtime may still be
        # loading it (not listed yet), which is no reason to install it again.
        try:
            client.wait_plugin(*plugin, timeout=PLUGIN_RELOAD_S)
            return False
        except LangBotError:
            pass  # gone (deleted in the WebUI, or another data dir's LangBot): install it
    started = time.monotonic()
    log(f"installing plugin {plugin[0]}/{plugin[1]} ({package.name}; the runtime sets it up) ...")
    with activity(f"installing plugin {plugin[0]}/{plugin[1]}"):
        client.install_local_plugin(str(package))
        client.wait_plugin(*plugin)
    log(f"installing plugin {plugin[0]}/{plugin[1]}: done in {time.monotonic() - started:.0f}s")
    marker.write_text(digest)
    return True


def hold_plugin_settings(client: LangBotClient, plugin: tuple[str, str], wanted: dict[str, Any]) -> bool:
    """Make the plugin's settings hold `wanted`, keeping every other key; True if they were written.

    Written only when a value differs: LangBot restarts the plugin on every settings write, which a
    second start should not wait for."""
    current = client.plugin_config(*plugin)
    if all(current.get(key) == value for key, value in wanted.items()):
        return False
    log(f"plugin {plugin[0]}/{plugin[1]}: setting {', '.join(f'{k}={v!r}' for k, v in wanted.items())}")
    client.set_plugin_config(*plugin, {**current, **wanted})
    client.wait_plugin(*plugin)
    return True


def package_digest(package: Path) -> str:
    """Digest of a package's file names and contents (not of zip timestamps)."""
    digest = hashlib.sha256()
    with zipfile.ZipFile(package) as zf:
        for name in sorted(zf.namelist()):
            digest.update(name.encode())
            digest.update(zf.read(name))
    return digest.hexdigest()


def _items(data: Any, key: str) -> list[dict[str, Any]]:
    if isinstance(data, dict):
        data = data.get(key, [])
    return [item for item in data or [] if isinstance(item, dict)]


def find_named(data: Any, key: str, name: str) -> dict[str, Any] | None:
    return next((item for item in _items(data, key) if item.get("name") == name), None)


def _update_provider(client: LangBotClient, provider: dict[str, Any], base_url: str, api_key: str | None = None) -> None:
    body = {"name": provider["name"], "requester": provider.get("requester") or "openai-chat-completions",
            "base_url": base_url, "api_keys": [api_key] if api_key else provider.get("api_keys") or ["local"]}
    try:
        client.put(f"/provider/providers/{provider['uuid']}", body)
    except LangBotError as exc:
        log(f"could not update provider {provider['name']}: {exc}")


def ensure_pipeline(client: LangBotClient, name: str, *, llm_uuid: str, kb_uuids: list[str],
                    plugins: list[tuple[str, str]], description: str = "", group_respond_all: bool = True) -> str:
    """A pipeline (found by name or created) on the test Runner with these KBs and plugins; it answers
    every group message it gets unless `group_respond_all` is False (LangBot's own group rules then)."""
    pipeline = find_named(client.get("/pipelines"), "pipelines", name)
    pipeline_uuid = pipeline["uuid"] if pipeline else client.create_pipeline(name, description)
    client.configure_pipeline(pipeline_uuid, runner_id=RUNNER_ID, runner_config={
        "model": {"primary": llm_uuid, "fallbacks": []},
        "prompt": [{"role": "system", "content": SYSTEM_PROMPT}],
        # Attached like an admin attaches it to LocalAgent. The test Runner declares knowledge
        # retrieval, so the host grants it these KBs and lists them in `_knowledge_base_uuids`.
        "knowledge-bases": list(kb_uuids),
    }, group_respond_all=group_respond_all)
    client.bind_plugins(pipeline_uuid, plugins)
    return pipeline_uuid


def setup_langbot(client: LangBotClient, options: SetupOptions, *, packages: dict[str, Path],
                  model_base_url: str, embedder_label: str, state_dir: Path) -> SetupInfo:
    """Idempotent: reuses the admin, providers, models, KB and pipeline found by name."""
    client.init_admin(options.admin_email, options.admin_password)
    client.login(options.admin_email, options.admin_password)
    client.skip_wizard()

    # Order matters for the consumer: the runtime dispatches events to plugins in the order
    # they registered, and `_ltm_context` must be set before a consumer reads it.
    order = [("runner", RUNNER_PLUGIN, True), ("ltm", LTM_PLUGIN, options.install_ltm),
             ("consumer", CONSUMER_PLUGIN, options.install_consumer)]
    for kind, plugin, wanted in order:
        if wanted:
            install_plugin(client, packages[kind], plugin, state_dir)
    if options.install_ltm and options.plugin_settings:
        hold_plugin_settings(client, LTM_PLUGIN, options.plugin_settings)

    local = find_named(client.get("/provider/providers"), "providers", LOCAL_PROVIDER)
    local_uuid = local["uuid"] if local else client.create_provider(LOCAL_PROVIDER, model_base_url)
    if local and local.get("base_url") != model_base_url:
        _update_provider(client, local, model_base_url)
    embedding = find_named(client.get("/provider/models/embedding"), "models", EMBEDDING_MODEL)
    embedding_uuid = embedding["uuid"] if embedding else client.create_embedding_model(EMBEDDING_MODEL, local_uuid)
    if options.chat_base_url:
        remote = find_named(client.get("/provider/providers"), "providers", REMOTE_PROVIDER)
        if remote:
            _update_provider(client, remote, options.chat_base_url, options.chat_api_key)
            remote_uuid = remote["uuid"]
        else:
            remote_uuid = client.create_provider(REMOTE_PROVIDER, options.chat_base_url, options.chat_api_key or "none")
        chat_name = options.chat_model or "gpt-4o-mini"
        llm = next((m for m in _items(client.get("/provider/models/llm"), "models")
                    if m.get("name") == chat_name and m.get("provider_uuid") == remote_uuid), None)
        llm_uuid = llm["uuid"] if llm else client.create_llm_model(chat_name, remote_uuid)
        chat_label = f"{chat_name} at {options.chat_base_url} (LTM_CHAT_BASE_URL)"
        try:
            client.test_llm_model(llm_uuid)
        except LangBotError as exc:
            log(f"WARNING: the chat model {chat_name} at {options.chat_base_url} failed LangBot's model test: {exc}")
    else:
        llm = next((m for m in _items(client.get("/provider/models/llm"), "models")
                    if m.get("name") == SCRIPTED_CHAT_MODEL and m.get("provider_uuid") == local_uuid), None)
        llm_uuid = llm["uuid"] if llm else client.create_llm_model(SCRIPTED_CHAT_MODEL, local_uuid)
        chat_label = f"[scripted local model] {SCRIPTED_CHAT_MODEL} at {model_base_url}"

    kb_uuid = ""
    if options.install_ltm:
        kb = find_named(client.get("/knowledge/bases"), "bases", KB_NAME)
        # Consolidation (with the chat model as its model) and candidate extraction are on in the local
        # run, so a person can try the review flows. The KB is created without consolidation and it is
        # switched on the way an operator does on such a KB: an override of the creation setting, through
        # the Memory Console's page API (`!memory settings` shows it; tests/e2e relies on both).
        kb_uuid = kb["uuid"] if kb else client.create_memory_kb(KB_NAME, embedding_uuid, extra_settings={
            "consolidation_model_uuid": llm_uuid, "candidate_extraction_enabled": True})
        for name, value in {"consolidation_enabled": True, **options.kb_settings}.items():
            switched = client.page_api("/settings/set", {"name": name, "value": value})
            if switched.get("ok") is not True:
                raise LangBotError(f"{name} could not be set to {value!r}: {switched}", 200, switched)

    pipeline_uuid = ensure_pipeline(
        client, PIPELINE_NAME, llm_uuid=llm_uuid, kb_uuids=[kb_uuid] if kb_uuid else [],
        plugins=[LTM_PLUGIN] if options.install_ltm else [],
        description="LongTermMemory on a local LangBot: test runner, memory tools, answers every group message")

    return SetupInfo(
        base_url=client.base_url, token=client.token or "", workspace_uuid=client.workspace_uuid or "",
        admin_email=options.admin_email, admin_password=options.admin_password, pipeline_uuid=pipeline_uuid,
        kb_uuid=kb_uuid, llm_model_uuid=llm_uuid, embedding_model_uuid=embedding_uuid,
        chat_label=chat_label, embedder_label=embedder_label,
    )
