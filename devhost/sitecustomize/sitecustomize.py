"""Loopback-only listeners for the local LangBot stack (devhost).

Put this folder first on PYTHONPATH of the processes devhost starts (LangBot, the
plugin runtime `lbp rt`, the model server). Python imports `sitecustomize` at start-up;
this one rewrites every wildcard bind to loopback:

- `socket.socket.bind(("0.0.0.0" | "", port))` -> 127.0.0.1, `("::", port)` -> ::1
- `loop.create_server(host=None | "" | "0.0.0.0" | "::")` -> 127.0.0.1

The plugin runtime hard-codes 0.0.0.0 for its control and debug ports with no flag to
change it; this keeps it (and anything else in those processes) off the network.
Set DEVHOST_ALLOW_WILDCARD_BIND=1 to disable the rewrite. With DEVHOST_ACTION_LOG=<dir>,
`devhost_action_probe` logs every plugin-protocol action of the process (bench/real_host.py).
"""

from __future__ import annotations

import os
import socket
import sys

_V4_WILDCARD = {"", "0.0.0.0", "0", "*"}
_V6_WILDCARD = {"::", "::0", "0:0:0:0:0:0:0:0"}


def _loopback(host):
    if host is None:
        return "127.0.0.1"
    if isinstance(host, (bytes, bytearray)):
        host = bytes(host).decode("ascii", "replace")
    if isinstance(host, str):
        if host in _V4_WILDCARD:
            return "127.0.0.1"
        if host in _V6_WILDCARD:
            return "::1"
    return host


def _install() -> None:
    if getattr(socket.socket, "_devhost_loopback", False):
        return
    original_bind = socket.socket.bind

    def bind(self, address):  # type: ignore[no-untyped-def]
        if isinstance(address, tuple) and address and self.family in (socket.AF_INET, socket.AF_INET6):
            address = (_loopback(address[0]),) + tuple(address[1:])
        return original_bind(self, address)

    socket.socket.bind = bind  # type: ignore[method-assign]
    socket.socket._devhost_loopback = True  # type: ignore[attr-defined]

    try:
        import asyncio.base_events as base_events
    except Exception:  # pragma: no cover - asyncio always exists
        return
    original_create_server = base_events.BaseEventLoop.create_server

    async def create_server(self, protocol_factory, host=None, port=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("sock") is None:
            if isinstance(host, (list, tuple)):
                host = [_loopback(h) for h in host]
            else:
                host = _loopback(host)
        return await original_create_server(self, protocol_factory, host, port, *args, **kwargs)

    base_events.BaseEventLoop.create_server = create_server  # type: ignore[method-assign]


def _chain_next_sitecustomize() -> None:
    """Run the sitecustomize this file shadows, if any (for example Debian's)."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or spec.origin == os.path.abspath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception:  # pragma: no cover - never break interpreter start-up
        pass


if os.environ.get("DEVHOST_ALLOW_WILDCARD_BIND") != "1":
    _install()
if os.environ.get("DEVHOST_ACTION_LOG"):  # bench/real_host.py: log every plugin-protocol action
    try:
        import devhost_action_probe

        devhost_action_probe.install()
    except Exception:  # pragma: no cover - never break interpreter start-up
        pass
_chain_next_sitecustomize()
