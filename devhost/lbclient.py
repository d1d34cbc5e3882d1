"""A small LangBot 4.11 HTTP API client (stdlib only), shared by devhost and the e2e tests.

Every call returns the `data` of LangBot's `{code, data, msg}` envelope and raises
`LangBotError` when `code != 0` or the HTTP status is an error.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

LTM_PLUGIN = ("langbot-ltm", "LongTermMemory")
RUNNER_PLUGIN = ("ltm-test", "E2ERunner")
RUNNER_ID = "plugin:ltm-test/E2ERunner/default"
CONSUMER_PLUGIN = ("ltm-test", "ContextConsumer")


class LangBotError(RuntimeError):
    def __init__(self, message: str, status: int | None = None, body: Any = None):
        super().__init__(message)
        self.status = status
        self.body = body


class LangBotClient:
    def __init__(self, base_url: str, token: str | None = None, timeout: float = 60.0):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.workspace_uuid: str | None = None

    # ------------------------------------------------------------------ transport
    def _request(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
                 content_type: str | None = None, timeout: float | None = None, envelope: bool = True) -> Any:
        url = self.base_url + "/api/v1" + path
        headers = {"Accept": "application/json"}
        data = None
        if raw is not None:
            data = raw
            headers["Content-Type"] = content_type or "application/octet-stream"
        elif body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout or self.timeout) as response:
                payload = response.read()
                status = response.status
        except urllib.error.HTTPError as exc:
            payload = exc.read()
            try:
                parsed = json.loads(payload or b"null")
            except ValueError:
                parsed = payload.decode("utf-8", "replace")
            raise LangBotError(f"{method} {path} -> HTTP {exc.code}: {str(parsed)[:500]}", exc.code, parsed) from None
        try:
            parsed = json.loads(payload or b"null")
        except ValueError:
            raise LangBotError(f"{method} {path} -> non-JSON response: {payload[:200]!r}", status) from None
        if not envelope:
            return parsed
        if not isinstance(parsed, dict) or parsed.get("code") != 0:
            raise LangBotError(f"{method} {path} -> {str(parsed)[:500]}", status, parsed)
        return parsed.get("data")

    def get(self, path: str, **kw: Any) -> Any:
        return self._request("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self._request("POST", path, {} if body is None else body, **kw)

    def put(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self._request("PUT", path, {} if body is None else body, **kw)

    def delete(self, path: str, **kw: Any) -> Any:
        return self._request("DELETE", path, **kw)

    # ------------------------------------------------------------------ account
    def is_initialized(self) -> bool:
        return bool(self.get("/user/init").get("initialized"))

    def init_admin(self, email: str, password: str) -> None:
        if not self.is_initialized():
            self.post("/user/init", {"user": email, "password": password})

    def login(self, email: str, password: str) -> str:
        self.token = self.post("/user/auth", {"user": email, "password": password})["token"]
        self.workspace_uuid = self.get("/workspaces/current")["membership"]["workspace_uuid"]
        return self.token

    def skip_wizard(self) -> None:
        try:
            self.post("/system/wizard/completed", {"status": "skipped"})
        except LangBotError:
            pass

    # ------------------------------------------------------------------ plugins
    def install_local_plugin(self, lbpkg_path: str, timeout: float = 240.0) -> dict[str, Any]:
        boundary = "----devhost" + uuid.uuid4().hex
        filename = os.path.basename(lbpkg_path)
        with open(lbpkg_path, "rb") as fh:
            content = fh.read()
        body = (
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n"
        ).encode() + content + f"\r\n--{boundary}--\r\n".encode()
        data = self._request("POST", "/plugins/install/local", raw=body,
                             content_type=f"multipart/form-data; boundary={boundary}")
        return self.wait_task(data["task_id"], timeout=timeout)

    def wait_task(self, task_id: Any, timeout: float = 240.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            last = self.get(f"/system/tasks/{task_id}")
            runtime = (last or {}).get("runtime") or {}
            if runtime.get("done"):
                if runtime.get("exception"):
                    raise LangBotError(f"task {task_id} failed: {runtime.get('exception')}", body=last)
                return last
            time.sleep(0.5)
        raise LangBotError(f"task {task_id} not done after {timeout}s: {last}", body=last)

    def plugins(self) -> list[dict[str, Any]]:
        data = self.get("/plugins")
        return data.get("plugins", data) if isinstance(data, dict) else data

    def plugin(self, author: str, name: str) -> dict[str, Any] | None:
        for item in self.plugins():
            manifest = ((item.get("manifest") or {}).get("manifest") or item.get("manifest") or {})
            meta = manifest.get("metadata") or {}
            if meta.get("author") == author and meta.get("name") == name:
                return item
        return None

    def wait_plugin(self, author: str, name: str, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        item = None
        while time.monotonic() < deadline:
            item = self.plugin(author, name)
            if item is not None and item.get("status") in (None, "initialized", "running", "ready"):
                return item
            time.sleep(0.5)
        raise LangBotError(f"plugin {author}/{name} not ready after {timeout}s: {item}")

    def plugin_config(self, author: str, name: str) -> dict[str, Any]:
        data = self.get(f"/plugins/{author}/{name}/config")
        config = data.get("config") if isinstance(data, dict) else None
        return dict(config) if isinstance(config, dict) else {}

    def set_plugin_config(self, author: str, name: str, config: dict[str, Any]) -> None:
        """The plugin's settings form (Extensions -> the plugin): LangBot restarts the plugin with them."""
        self.put(f"/plugins/{author}/{name}/config", config)

    # ------------------------------------------------------------------ models
    def create_provider(self, name: str, base_url: str, api_key: str = "local",
                        requester: str = "openai-chat-completions") -> str:
        data = self.post("/provider/providers", {"name": name, "requester": requester, "base_url": base_url,
                                                 "api_keys": [api_key]})
        return data["uuid"]

    def create_llm_model(self, name: str, provider_uuid: str, context_length: int = 32768) -> str:
        data = self.post("/provider/models/llm", {
            "name": name, "provider_uuid": provider_uuid, "abilities": ["func_call"],
            "context_length": context_length, "extra_args": {}, "prefered_ranking": 0,
        })
        return data["uuid"]

    def create_embedding_model(self, name: str, provider_uuid: str) -> str:
        data = self.post("/provider/models/embedding", {"name": name, "provider_uuid": provider_uuid,
                                                        "extra_args": {}, "prefered_ranking": 0})
        return data["uuid"]

    def test_llm_model(self, model_uuid: str) -> Any:
        return self.post(f"/provider/models/llm/{model_uuid}/test", {"extra_args": {}}, timeout=120)

    # ------------------------------------------------------------------ knowledge
    def knowledge_engines(self) -> list[dict[str, Any]]:
        data = self.get("/knowledge/engines")
        return data.get("engines", data) if isinstance(data, dict) else data

    def create_memory_kb(self, name: str, embedding_model_uuid: str, plugin_id: str = "langbot-ltm/LongTermMemory",
                         extra_settings: dict[str, Any] | None = None) -> str:
        """Like the WebUI form: every creation/retrieval field with a default gets it (the host
        itself applies no defaults), then `embedding_model_uuid` and `extra_settings`."""
        creation: dict[str, Any] = {}
        retrieval: dict[str, Any] = {}
        for engine in self.knowledge_engines():
            if engine.get("plugin_id") == plugin_id:
                for target, key in ((creation, "creation_schema"), (retrieval, "retrieval_schema")):
                    schema = engine.get(key) or []
                    if isinstance(schema, dict):
                        schema = schema.get("schema") or []
                    for item in schema:
                        if isinstance(item, dict) and item.get("name") and item.get("default") is not None:
                            target[item["name"]] = item["default"]
        creation.update({"embedding_model_uuid": embedding_model_uuid, **(extra_settings or {})})
        data = self.post("/knowledge/bases", {
            "name": name, "description": "LongTermMemory memory knowledge base (devhost)",
            "knowledge_engine_plugin_id": plugin_id,
            "creation_settings": creation,
            "retrieval_settings": retrieval,
        }, timeout=120)
        return data["uuid"]

    def page_api(self, endpoint: str, body: dict[str, Any] | None = None, *, page_id: str = "console",
                 plugin: tuple[str, str] = LTM_PLUGIN) -> dict[str, Any]:
        """One call of a plugin page's API, the way the WebUI's page bridge makes it; the plugin's own
        answer (`{"ok": ...}` for LongTermMemory's console)."""
        data = self.post(f"/plugins/{plugin[0]}/{plugin[1]}/page-api",
                         {"page_id": page_id, "endpoint": endpoint, "method": "POST", "body": body or {}},
                         timeout=60)
        if not isinstance(data, dict):
            raise LangBotError(f"page-api {endpoint} -> {str(data)[:200]}", 200, data)
        return data

    # ------------------------------------------------------------------ pipelines
    def create_pipeline(self, name: str, description: str = "", emoji: str = "🧠") -> str:
        return self.post("/pipelines", {"name": name, "description": description, "emoji": emoji})["uuid"]

    def pipeline(self, pipeline_uuid: str) -> dict[str, Any]:
        data = self.get(f"/pipelines/{pipeline_uuid}")
        return data.get("pipeline", data)

    def configure_pipeline(self, pipeline_uuid: str, *, runner_id: str, runner_config: dict[str, Any],
                           group_respond_all: bool = True) -> dict[str, Any]:
        current = self.pipeline(pipeline_uuid)
        config = json.loads(json.dumps(current.get("config") or {}))
        ai = config.setdefault("ai", {})
        ai.setdefault("runner", {})["id"] = runner_id
        ai.setdefault("runner_config", {})[runner_id] = runner_config
        if group_respond_all:
            rules = config.setdefault("trigger", {}).setdefault("group-respond-rules", {})
            rules["at"] = True
            rules["random"] = 1.0  # every group message gets an answer (and reaches PromptPreProcessing)
        # Tests and local runs chat faster than a person; the default is 60 messages a minute.
        config.setdefault("safety", {}).setdefault("rate-limit", {})["limitation"] = 100000
        if config == current.get("config"):
            return config  # a restart finds it set up: LangBot reloads a pipeline on every write, so none is made
        self.put(f"/pipelines/{pipeline_uuid}", {
            "name": current.get("name"), "description": current.get("description", ""),
            "emoji": current.get("emoji", "🧠"), "config": config,
        })
        return config

    def bind_plugins(self, pipeline_uuid: str, plugins: list[tuple[str, str]]) -> None:
        self.put(f"/pipelines/{pipeline_uuid}/extensions", {
            "enable_all_plugins": False,
            "bound_plugins": [{"author": a, "name": n} for a, n in plugins],
            "enable_all_mcp_servers": False, "bound_mcp_servers": [],
            "enable_all_skills": False, "bound_skills": [],
        })

    def run_pipeline(self, pipeline_uuid: str, message: str, timeout: float = 120.0) -> dict[str, Any]:
        return self.post(f"/pipelines/{pipeline_uuid}/run", {"message": message}, timeout=timeout)


    # ------------------------------------------------------------------ bots (platform adapters)
    def create_bot(self, name: str, adapter: str, adapter_config: dict[str, Any], *,
                   event_bindings: list[dict[str, Any]] | None = None) -> str:
        """A bot, enabled; without `event_bindings` LangBot gives it its default routes (docs/HOST-FACTS.md 14)."""
        body: dict[str, Any] = {"name": name, "description": "", "adapter": adapter,
                                "adapter_config": adapter_config, "enable": True}
        if event_bindings is not None:
            body["event_bindings"] = event_bindings
        return self.post("/platform/bots", body)["uuid"]

    def bot(self, bot_uuid: str) -> dict[str, Any]:
        return self.get(f"/platform/bots/{bot_uuid}")["bot"]

    def update_bot(self, bot_uuid: str, fields: dict[str, Any]) -> None:
        """Only the given fields change; a change of routes, processors or adapter settings reloads the bot."""
        self.put(f"/platform/bots/{bot_uuid}", fields)

    def delete_bot(self, bot_uuid: str) -> None:
        self.delete(f"/platform/bots/{bot_uuid}")

    def bot_admins(self, bot_uuid: str) -> list[dict[str, Any]]:
        return self.get(f"/platform/bots/{bot_uuid}/admins")["admins"]

    def add_bot_admin(self, bot_uuid: str, launcher_type: str, launcher_id: str | int) -> int:
        """LangBot's per-bot admin list (WebUI: the bot -> Manage Admins): `person` or `group` and its id."""
        return self.post(f"/platform/bots/{bot_uuid}/admins",
                         {"launcher_type": launcher_type, "launcher_id": str(launcher_id)})["id"]

    def bot_logs(self, bot_uuid: str, max_count: int = 200) -> list[dict[str, Any]]:
        """The bot's event log (WebUI: the bot -> Logs), newest last."""
        return self.post(f"/platform/bots/{bot_uuid}/logs", {"from_index": -1, "max_count": max_count})["logs"]

    # ------------------------------------------------------------------ event processors
    def create_event_processor(self, name: str, runner_id: str, parameters: dict[str, Any] | None = None) -> str:
        """An agent of kind `event_processor` on an installed Runner that declares `usages: [event]`.

        `parameters` must be sent (even `{}`): without it LangBot saves a draft that subscribes to nothing."""
        return self.post("/agents", {"kind": "event_processor", "name": name, "component_ref": runner_id,
                                     "parameters": parameters or {}})["uuid"]

    def processor_runs(self, processor_uuid: str) -> dict[str, Any]:
        return self.get(f"/agents/{processor_uuid}/runs")
