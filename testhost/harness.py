"""Load the real plugin through the SDK's own runtime code and drive it like the host.

The steps follow docs/HOST-FACTS.md 11.1: real manifest
discovery, a real ``PluginRuntimeHandler`` on a connection that never carries
traffic, a real ``PluginRuntimeController`` lifecycle, and the handler's
registered action functions called with host-shaped payloads. Only
``handler.call_action`` is swapped for the fake host, so everything between the
host boundary and the plugin code is the SDK's.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import mimetypes
import os
import sys
import tempfile
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from langbot_plugin.api.proxies.invocation import invocation_capability
from langbot_plugin.cli.run.controller import PluginRuntimeController
from langbot_plugin.cli.run.handler import PluginRuntimeHandler
from langbot_plugin.cli.utils.page_components import (
    discover_plugin_components,
    populate_plugin_pages,
)
from langbot_plugin.entities.io.actions.enums import RuntimeToPluginAction
from langbot_plugin.entities.io.context import InstallationBinding
from langbot_plugin.entities.io.errors import ActionCallError, ConnectionClosedError
from langbot_plugin.entities.io.resp import ActionResponse
from langbot_plugin.runtime.io.connection import Connection
from langbot_plugin.utils.discover.engine import ComponentDiscoveryEngine

from .fake_host import FakeLangBotHost

R = RuntimeToPluginAction
PLUGIN_ROOT = Path(__file__).resolve().parents[1]
_FILE_STORAGE_ENV = "LANGBOT_PLUGIN_FILE_STORAGE_DIR"


class PluginActionError(AssertionError):
    """The plugin answered an action with an error response (code != 0)."""

    def __init__(self, action: str, message: str, data: Any = None) -> None:
        super().__init__(f"{action} failed: {message}")
        self.action = action
        self.message = message
        self.data = data


class _SilentConnection(Connection):
    """Connection that never carries traffic: every host call is intercepted."""

    async def send(self, message: str) -> None:
        return None

    async def receive(self) -> str:
        await asyncio.Event().wait()  # blocks forever, like an idle peer
        raise AssertionError("unreachable")

    async def close(self) -> None:
        return None


class _RecordsWarnings(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(level=logging.WARNING)
        self._sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self._sink.append(f"{record.levelname} {record.name}: {record.getMessage()}")


def make_session(launcher_type: str = "person", launcher_id: str | int = "user-1",
                 sender_id: str | int | None = None, bot_uuid: str | None = "bot-1",
                 **extra: Any) -> dict[str, Any]:
    """A Session payload like the host's ``query.session.model_dump()``."""
    return {
        "launcher_type": launcher_type,
        "launcher_id": launcher_id,
        "sender_id": launcher_id if sender_id is None else sender_id,
        "bot_uuid": bot_uuid,
        "use_prompt_name": "default",
        "using_conversation": None,
        "conversations": [],
        **extra,
    }


def _wire(value: Any, what: str) -> Any:
    # Payloads and answers cross a JSON wire in the real runtime.
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise PluginActionError(what, f"not JSON-serializable: {exc}") from exc


class PluginHarness:
    """Runs the plugin at ``plugin_root`` inside the SDK runtime against ``host``.

    ``installed_mode=True`` binds every inbound action to an InstallationBinding
    the way an installed (desired-state) worker is bound: config is then a
    frozen per-invocation snapshot and tasks that outlive their action lose
    Host API access (docs/HOST-FACTS.md 10). The default follows 11.1 (no binding).
    """

    def __init__(self, host: FakeLangBotHost, *, plugin_root: Path | str = PLUGIN_ROOT,
                 installed_mode: bool = False) -> None:
        self.host = host
        self.plugin_root = Path(plugin_root).resolve()
        self.installed_mode = installed_mode
        self.plugin_config: dict[str, Any] = {}
        self.discovery_warnings: list[str] = []
        self.handler: PluginRuntimeHandler | None = None
        self.controller: PluginRuntimeController | None = None
        self.last_event_emitted: bool | None = None
        self._binding: InstallationBinding | None = None
        self._file_dir: str | None = None
        self._saved_cwd: str | None = None
        self._saved_env: str | None = None
        self._tasks_before: set[asyncio.Task[Any]] = set()
        self._added_sys_path = False
        self._eid = 0

    # ------------------------------------------------------------- lifecycle

    @property
    def plugin(self) -> Any:
        """The live ``BasePlugin`` instance."""
        assert self.controller is not None, "harness not started"
        return self.controller.plugin_container.plugin_instance

    def component(self, name: str) -> Any:
        """The live component instance whose manifest name is ``name``."""
        assert self.controller is not None, "harness not started"
        for comp in self.controller.plugin_container.components:
            if comp.manifest.metadata.name == name:
                return comp.component_instance
        raise KeyError(name)

    async def start(self, plugin_config: dict[str, Any] | None = None) -> None:
        if self.controller is not None:
            raise RuntimeError("harness already started")
        self.plugin_config = dict(plugin_config or {})
        self._enter_plugin_dir()
        try:
            manifest, components = self._discover()
            handler = PluginRuntimeHandler(_SilentConnection(), self._initialize_callback)
            # Instance attributes shadow the methods: every Host API call of
            # the plugin (LangBotAPIProxy, QueryBasedAPIProxy) lands here.
            handler.call_action = self._make_call_action(handler)  # type: ignore[method-assign]
            handler.call_action_generator = self._call_action_generator  # type: ignore[method-assign]
            controller = PluginRuntimeController(manifest, components, stdio=True, ws_debug_url="")
            handler.plugin_container = controller.plugin_container
            controller.handler = handler
            self.handler, self.controller = handler, controller
            self.host.attach_plugin_handler(handler)
            self._tasks_before = set(asyncio.all_tasks())
            await self._initialize()
        except BaseException:
            await self._teardown()
            raise

    async def stop(self) -> None:
        """Stop the plugin like a process exit: pending plugin tasks are cancelled."""
        if self.controller is None:
            return
        await self._cancel_plugin_tasks()
        await self._teardown()

    async def restart(self, plugin_config: dict[str, Any] | None = None, *,
                      fresh_modules: bool = True) -> None:
        """New plugin process on the same host (same storage, same vectors).

        ``fresh_modules`` drops the plugin's modules from ``sys.modules`` so that
        module-level state does not survive, as in a real process restart.
        Test code holding references to old plugin classes keeps the old ones.
        """
        config = self.plugin_config if plugin_config is None else plugin_config
        await self.stop()
        if fresh_modules:
            self._forget_plugin_modules()
        await self.start(config)

    async def settle(self, timeout: float = 5.0) -> None:
        """Wait until tasks started since ``start()`` (e.g. plugin background work) finish.

        Tasks spawned by those tasks are awaited too; raises TimeoutError if
        work is still pending after ``timeout`` seconds.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while pending := self._plugin_tasks():
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"{len(pending)} plugin task(s) still running")
            await asyncio.wait(pending, timeout=remaining)

    # ------------------------------------------------------------ host → plugin

    async def call_tool(self, name: str, params: dict[str, Any], *, session: dict[str, Any],
                        query_id: int, query_uuid: str | None = None) -> Any:
        payload: dict[str, Any] = {"tool_name": name, "tool_parameters": params,
                                   "session": session, "query_id": query_id}
        if query_uuid is not None:
            payload["query_uuid"] = query_uuid
        return (await self._request(R.CALL_TOOL, payload))["tool_response"]

    async def emit_event(self, event_name: str, event: dict[str, Any], *, query_id: int,
                         query_uuid: str | None = None) -> dict[str, Any]:
        """Emit ``event_name``; returns the event_context after the plugin's handlers."""
        self._eid += 1
        context: dict[str, Any] = {
            "query_id": query_id,
            "eid": self._eid,
            "event_name": event_name,
            "event": {**event, "event_name": event_name},
            "is_prevent_default": False,
            "is_prevent_postorder": False,
        }
        if query_uuid is not None:
            context["query_uuid"] = query_uuid
        data = await self._request(R.EMIT_EVENT, {"event_context": context})
        self.last_event_emitted = bool(data["emitted"])
        return data["event_context"]

    async def execute_command(self, text: str, *, session: dict[str, Any], query_id: int,
                              privilege: int = 1, query_uuid: str | None = None
                              ) -> list[dict[str, Any]]:
        """Run ``!text`` (the prefix is optional; `!`, `！` or `/`, as typed) and collect every CommandReturn dict."""
        prefix = text[:1] if text[:1] in ("!", "！", "/") else "!"
        command_text = text[1:] if text[:1] in ("!", "！", "/") else text
        params = command_text.split(" ")  # the host splits on single spaces
        context: dict[str, Any] = {
            "query_id": query_id,
            "session": session,
            "command_text": command_text,
            "full_command_text": prefix + command_text,
            "command": params[0],
            "crt_command": params[0],
            "params": params,
            "crt_params": params[1:],
            "privilege": privilege,
        }
        if query_uuid is not None:
            context["query_uuid"] = query_uuid
        results = []
        async for data in self._stream(R.EXECUTE_COMMAND, {"command_context": context}):
            results.append(data["command_response"])
        return results

    async def run_processor(self, runner_name: str, event: dict[str, Any]) -> list[dict[str, Any]]:
        """One platform event (`event`: LangBot's event JSON, docs/HOST-FACTS.md 14.2, with `type` and
        `bot_uuid`) delivered to the Runner `runner_name` the way LangBot delivers it to a bound event
        processor (`botmgr._dispatch_eba_event_to_processor`): the RunnerContext it builds, through the
        SDK's RUN_RUNNER action. Returns the run's results (`run.completed`, or `run.failed` with its error)."""
        bot_uuid = str(event["bot_uuid"])
        self._eid += 1
        chat_type = event.get("chat_type") or ("group" if event.get("group") else "private")
        target = (event.get("group") or {}).get("id") if chat_type == "group" else event.get("chat_id")
        target_type = "group" if chat_type == "group" else "person"
        raw_id = (f"{event['type']}:{event['message_id']}" if event.get("message_id") is not None
                  else f"{event['type']}:{uuid.uuid4()}")
        context = {
            "run_id": f"run-{self._eid}",
            "trigger": {"type": "event", "source": "platform"},
            "event": {"event_id": f"platform:{bot_uuid}:{raw_id}", "event_type": event["type"],
                      "source": "platform", "source_event_type": event["type"], "data": event},
            "conversation": {"conversation_id": f"{target_type}_{target}", "bot_id": bot_uuid},
            "input": {},
            "delivery": {"surface": "platform", "reply_target": {"target_type": target_type, "target_id": target},
                         "supports_streaming": False},
            # What LangBot grants a Runner whose manifest asks `permissions.storage: [plugin]`.
            "resources": {"storage": {"plugin_storage": True}},
            "runtime": {"metadata": {"component_kind": "Runner"}},
        }
        return [item async for item in self._stream(R.RUN_RUNNER, {"runner_name": runner_name, "context": context})]

    async def retrieve(self, kb_id: str, query: str, *,
                       retrieval_settings: dict[str, Any] | None = None,
                       creation_settings: dict[str, Any] | None = None,
                       filters: dict[str, Any] | None = None) -> dict[str, Any]:
        """Retrieve like the host: stored settings merged with per-call settings."""
        kb = self.host.kbs.get(kb_id)
        settings = {**(kb.retrieval_settings if kb else {}), **(retrieval_settings or {})}
        popped_filters = settings.pop("filters", None)
        settings.setdefault("top_k", 5)
        if creation_settings is None:
            creation_settings = dict(kb.creation_settings) if kb else {}
        context = {
            "query": query,
            "knowledge_base_id": kb_id,
            "collection_id": kb_id,
            "retrieval_settings": settings,
            "creation_settings": creation_settings,
            "filters": filters if filters is not None else (popped_filters or {}),
        }
        return await self._request(R.RETRIEVE_KNOWLEDGE,
                                   {"retriever_name": "", "retrieval_context": context})

    async def create_memory_kb(self, **settings: Any) -> str:
        """The one way tests create the plugin's memory KB: embedding model "emb-1" plus `settings`."""
        return await self.kb_create(config={"embedding_model_uuid": "emb-1", **settings})

    async def kb_create(self, kb_id: str | None = None, config: dict[str, Any] | None = None, *,
                        name: str = "memory",
                        retrieval_settings: dict[str, Any] | None = None) -> str:
        """Create a KB row on the host, then call on_knowledge_base_create (rolled back on error)."""
        existed = kb_id is not None and kb_id in self.host.kbs
        kb_id = self.host.create_kb(kb_id, name, creation_settings=config,
                                    retrieval_settings=retrieval_settings)
        try:
            await self._request(R.ON_KB_CREATE, {"kb_id": kb_id, "config": config or {}})
        except BaseException:
            if not existed:
                self.host.remove_kb(kb_id)
            raise
        return kb_id

    async def kb_delete(self, kb_id: str) -> None:
        """on_knowledge_base_delete runs while the KB still resolves; then the row goes.

        The host logs a failing hook and deletes the row anyway; the error is
        re-raised here so tests see it. Vectors are never dropped by the host.
        """
        try:
            await self._request(R.ON_KB_DELETE, {"kb_id": kb_id})
        finally:
            self.host.remove_kb(kb_id)

    async def ingest(self, kb_id: str, document_id: str, filename: str, data: bytes,
                     creation_settings: dict[str, Any] | None = None,
                     mime_type: str | None = None) -> dict[str, Any]:
        storage_path = f"knowledge/{kb_id}/{document_id}/{filename}"
        self.host.register_file(storage_path, data)
        kb = self.host.kbs.get(kb_id)
        if creation_settings is None:
            creation_settings = dict(kb.creation_settings) if kb else {}
        context = {
            "file_object": {
                "metadata": {
                    "filename": filename,
                    "file_size": len(data),
                    "mime_type": mime_type or mimetypes.guess_type(filename)[0]
                    or "application/octet-stream",
                    "document_id": document_id,
                    "knowledge_base_id": kb_id,
                    "extra": {},
                },
                "storage_path": storage_path,
            },
            "knowledge_base_id": kb_id,
            "collection_id": kb_id,
            "creation_settings": creation_settings,
            "parsed_content": None,
        }
        return await self._request(R.INGEST_DOCUMENT, {"context": context})

    async def delete_document(self, kb_id: str, document_id: str) -> bool:
        data = await self._request(R.DELETE_DOCUMENT, {"kb_id": kb_id, "document_id": document_id})
        return bool(data["success"])

    async def page_api(self, page_id: str, endpoint: str, method: str = "POST",
                       body: Any = None) -> dict[str, Any]:
        """Returns the PageResponse dict ``{"data", "error"}``."""
        return await self._request(R.PAGE_API, {"page_id": page_id, "endpoint": endpoint,
                                                "method": method.upper(), "body": body})

    async def rag_capabilities(self) -> list[str]:
        return list((await self._request(R.GET_RAG_CAPABILITIES, {}))["capabilities"])

    # -------------------------------------------------------------- internals

    async def _request(self, action: RuntimeToPluginAction, payload: dict[str, Any]) -> dict[str, Any]:
        handler = self._require_handler()
        payload = _wire(payload, action.value)
        with self._action_scope(action):
            result = handler.actions[action.value](payload)
            if inspect.isawaitable(result):
                result = await result
        return self._unwrap(action, result)

    async def _stream(self, action: RuntimeToPluginAction,
                      payload: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        handler = self._require_handler()
        payload = _wire(payload, action.value)
        with self._action_scope(action):
            stream = handler.actions[action.value](payload)
            try:
                async for item in stream:  # type: ignore[union-attr]
                    yield self._unwrap(action, item)
            finally:
                await stream.aclose()  # type: ignore[union-attr]

    @staticmethod
    def _unwrap(action: RuntimeToPluginAction, response: ActionResponse) -> dict[str, Any]:
        if response.code != 0:
            raise PluginActionError(action.value, response.message, response.data)
        return _wire(response.data, action.value)

    @contextlib.contextmanager
    def _action_scope(self, action: RuntimeToPluginAction) -> Iterator[None]:
        if not self.installed_mode:
            yield
            return
        assert self.handler is not None
        with self.handler.action_invocation_scope(action.value, self._binding):
            yield

    def _require_handler(self) -> PluginRuntimeHandler:
        if self.handler is None:
            raise RuntimeError("harness not started")
        return self.handler

    def _make_call_action(self, handler: PluginRuntimeHandler) -> Any:
        async def call_action(action: Any, data: dict[str, Any], timeout: float | None = 15.0,
                              **kw: Any) -> dict[str, Any]:
            # Same guard as the real Handler.call_action: a task that outlived
            # its invocation raises "Plugin invocation has ended" here.
            invocation = invocation_capability(handler)
            if invocation is not None:
                invocation.require_active()
            if handler is not self.handler:
                # A stopped (or restarted) plugin's connection is gone.
                raise ConnectionClosedError("Connection closed")
            return await self.host.call_action(action, data, timeout, **kw)

        return call_action

    def _call_action_generator(self, action: Any, data: dict[str, Any], timeout: float | None = 15.0,
                               **kw: Any) -> AsyncIterator[dict[str, Any]]:
        async def unsupported() -> AsyncIterator[dict[str, Any]]:
            raise ActionCallError(f"unsupported action {getattr(action, 'value', action)}")
            yield {}  # pragma: no cover - makes this an async generator
        return unsupported()

    async def _initialize_callback(self, plugin_settings: dict[str, Any]) -> None:
        assert self.controller is not None
        await self.controller.initialize(plugin_settings)

    async def _initialize(self) -> None:
        assert self.handler is not None and self.controller is not None
        settings = {"enabled": True, "priority": 0, "plugin_config": dict(self.plugin_config)}
        if not self.installed_mode:
            await self.controller.initialize(settings)
            return
        self._binding = InstallationBinding(
            instance_uuid=self.host.instance_uuid, workspace_uuid=self.host.workspace_uuid,
            placement_generation=1, installation_uuid=str(uuid.uuid4()),
            runtime_revision=1, artifact_digest="0" * 64)
        await self._request(R.INITIALIZE_PLUGIN, {"plugin_settings": settings})

    def _discover(self) -> tuple[Any, list[Any]]:
        self.discovery_warnings = []
        capture = _RecordsWarnings(self.discovery_warnings)
        root_logger = logging.getLogger()
        root_logger.addHandler(capture)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                engine = ComponentDiscoveryEngine()
                manifest = engine.load_component_manifest("manifest.yaml", owner="builtin",
                                                          no_save=True)
                if manifest is None:
                    # The SDK only logs why; surface it in the error.
                    raise RuntimeError(f"{self.plugin_root}/manifest.yaml did not load: "
                                       + ("; ".join(self.discovery_warnings) or "not a manifest"))
                components = discover_plugin_components(manifest, engine)
                populate_plugin_pages(manifest, components)
            self.discovery_warnings.extend(f"{w.category.__name__}: {w.message}" for w in caught)
        finally:
            root_logger.removeHandler(capture)
        return manifest, components

    def _enter_plugin_dir(self) -> None:
        # The runtime runs workers with cwd = plugin root and imports component
        # modules relative to it; `python -m` also puts the root on sys.path.
        self._saved_cwd = os.getcwd()
        self._saved_env = os.environ.get(_FILE_STORAGE_ENV)
        self._file_dir = tempfile.mkdtemp(prefix="lbp-files-")
        os.environ[_FILE_STORAGE_ENV] = self._file_dir
        os.chdir(self.plugin_root)
        if str(self.plugin_root) not in sys.path:
            sys.path.insert(0, str(self.plugin_root))
            self._added_sys_path = True

    async def _teardown(self) -> None:
        if self.controller is not None:
            await self.controller.cleanup_instances()
        if self.handler is not None:
            with contextlib.suppress(Exception):
                await self.handler.close()
        self.host.attach_plugin_handler(None)
        self.handler = None
        self.controller = None
        self._binding = None
        if self._saved_cwd is not None:
            os.chdir(self._saved_cwd)
            self._saved_cwd = None
        if self._added_sys_path:
            with contextlib.suppress(ValueError):
                sys.path.remove(str(self.plugin_root))
            self._added_sys_path = False
        if self._saved_env is None:
            os.environ.pop(_FILE_STORAGE_ENV, None)
        else:
            os.environ[_FILE_STORAGE_ENV] = self._saved_env
        if self._file_dir is not None:
            import shutil

            shutil.rmtree(self._file_dir, ignore_errors=True)
            self._file_dir = None

    def _plugin_tasks(self) -> list[asyncio.Task[Any]]:
        current = asyncio.current_task()
        return [t for t in asyncio.all_tasks()
                if t is not current and t not in self._tasks_before and not t.done()]

    async def _cancel_plugin_tasks(self) -> None:
        pending = self._plugin_tasks()
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=5.0)

    def _forget_plugin_modules(self) -> None:
        root = self.plugin_root
        excluded = [root / "tests", root / ".venv"]

        def inside(module: Any) -> bool:
            try:
                locations = [getattr(module, "__file__", None),
                             *list(getattr(module, "__path__", None) or [])]
            except Exception:  # noqa: BLE001 - a namespace path whose parent is gone, etc.
                return False
            paths = [Path(p).resolve() for p in locations if p]
            return bool(paths) and all(
                p.is_relative_to(root) and not any(p.is_relative_to(e) for e in excluded)
                for p in paths)

        # Decide for every module first: namespace package paths recompute
        # lazily and fail once their parent is no longer in sys.modules.
        doomed = [name for name, module in list(sys.modules.items()) if inside(module)]
        for name in doomed:
            sys.modules.pop(name, None)

__all__ = ["PLUGIN_ROOT", "PluginActionError", "PluginHarness", "make_session"]
