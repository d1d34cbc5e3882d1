"""Opt-in action log for the LangBot plugin protocol (used by bench/real_host.py).

Imported by this folder's `sitecustomize` only when `DEVHOST_ACTION_LOG` names a directory.
When the process imports `langbot_plugin.runtime.io.handler` (LangBot and the plugin runtime
both do; plugin processes do not get our environment), `Handler` is wrapped so that every
action leaves one JSON line in `<dir>/<program>-<pid>.jsonl`:

    {"t": <wall clock at start>, "ms": <duration>, "dir": "in" | "out",
     "handler": <handler class>, "peer": "<author>/<name>" | "", "action": <action name>, "ok": bool}

- "in": the peer asked this process (`Handler._handle_action`); in the runtime, "in" on a
  `PluginConnectionHandler` is an SDK action a plugin made (peer = that plugin) and "in" on
  the control handler is LangBot asking the runtime.
- "out": this process asked the peer (`call_action` / `call_action_generator`); in the
  runtime, "out" on a `PluginConnectionHandler` is the runtime calling into that plugin
  (events, tools, knowledge engine).
Protocol-internal actions (names starting with "__") are not logged. Nothing is changed in
what the handler does; a failure of the log itself is swallowed.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
import threading
import time
from typing import Any

TARGET = "langbot_plugin.runtime.io.handler"
_lock = threading.Lock()
_fd: int | None = None


def _out() -> int | None:
    global _fd
    if _fd is None:
        folder = os.environ.get("DEVHOST_ACTION_LOG") or ""
        if not folder:
            return None
        os.makedirs(folder, exist_ok=True)
        program = os.path.basename(sys.argv[0] if sys.argv and sys.argv[0] else "python") or "python"
        path = os.path.join(folder, f"{program}-{os.getpid()}.jsonl")
        _fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    return _fd


def _peer(handler: Any) -> str:
    """`author/name` of the plugin behind a runtime PluginConnectionHandler, else ""."""
    cached = getattr(handler, "_devhost_peer", None)
    if cached:
        return str(cached)
    try:
        manager = handler.context.plugin_mgr
        containers = list(manager.plugins)  # the OSS bridge; managed installations live in _installations
        containers += [getattr(rt, "plugin_container", None) for rt in getattr(manager, "_installations", {}).values()]
        owned = [c for c in containers if c is not None and getattr(c, "_runtime_plugin_handler", None) is handler]
    except Exception:  # noqa: BLE001 - not a plugin connection, or not registered yet
        return ""
    if not owned:
        return ""
    meta = owned[0].manifest.metadata
    name = f"{meta.author}/{meta.name}"
    handler._devhost_peer = name
    return name


def _record(handler: Any, direction: str, action: Any, started: float, seconds: float, ok: bool) -> None:
    try:
        name = str(getattr(action, "value", action) or "")
        if not name or name.startswith("__"):
            return
        line = json.dumps({"t": started, "ms": round(seconds * 1000.0, 3), "dir": direction,
                           "handler": type(handler).__name__, "peer": _peer(handler), "action": name,
                           "ok": ok}) + "\n"
        fd = _out()
        if fd is not None:
            with _lock:
                os.write(fd, line.encode())
    except Exception:  # noqa: BLE001 - never disturb the host
        pass


def _patch(module: Any) -> None:
    handler_cls = module.Handler
    if getattr(handler_cls, "_devhost_probe", False):
        return
    handle_action = handler_cls._handle_action
    call_action = handler_cls.call_action
    call_action_generator = handler_cls.call_action_generator

    async def _handle_action(self: Any, req_data: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        started, clock, ok = time.time(), time.perf_counter(), False
        try:
            result = await handle_action(self, req_data, *args, **kwargs)
            ok = True
            return result
        finally:
            action = req_data.get("action") if isinstance(req_data, dict) else None
            _record(self, "in", action, started, time.perf_counter() - clock, ok)

    async def _call_action(self: Any, action: Any, data: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        started, clock, ok = time.time(), time.perf_counter(), False
        try:
            result = await call_action(self, action, data, *args, **kwargs)
            ok = True
            return result
        finally:
            _record(self, "out", action, started, time.perf_counter() - clock, ok)

    def _call_action_generator(self: Any, action: Any, data: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        inner = call_action_generator(self, action, data, *args, **kwargs)

        async def wrapped() -> Any:
            started, clock, ok = time.time(), time.perf_counter(), False
            try:
                async for item in inner:
                    yield item
                ok = True
            finally:
                _record(self, "out", action, started, time.perf_counter() - clock, ok)

        return wrapped()

    handler_cls._handle_action = _handle_action
    handler_cls.call_action = _call_action
    handler_cls.call_action_generator = _call_action_generator
    handler_cls._devhost_probe = True


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.inner.exec_module(module)
        try:
            _patch(module)
        except Exception:  # noqa: BLE001 - an SDK that changed shape: log nothing rather than fail
            pass


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
