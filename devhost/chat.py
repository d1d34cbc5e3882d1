"""Talk to a pipeline like the WebUI debug chat does, and read the model server's request log.

`DebugChat` needs the `websockets` package (a dependency of langbot-plugin, so it is in
`.venv` and `.lbvenv`); everything else in devhost is stdlib only.

Debug-chat identities (LangBot 4.11.2): every WebSocket connection of session type
`person` is a new person (`launcher_id = sender_id = websocket_<connection id>`); every
`group` connection shares `launcher_id = websocketgroup`, with
`sender_id = websocket_<connection id>`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any


class ChatError(RuntimeError):
    pass


class DebugChat:
    """One WebUI debug-chat connection (`/api/v1/pipelines/<id>/ws/connect`)."""

    def __init__(self, base_url: str, pipeline_uuid: str, token: str, workspace_uuid: str,
                 session_type: str = "person", timeout: float = 60.0):
        from websockets.sync.client import connect

        self.session_type = session_type
        self.timeout = timeout
        ws_base = "ws" + base_url.rstrip("/")[len("http"):]
        url = f"{ws_base}/api/v1/pipelines/{pipeline_uuid}/ws/connect?session_type={session_type}"
        # LangBot (Quart) rejects a WebSocket handshake without an Origin header (HTTP 400).
        # __enter__: the connection is its own context manager (websockets >= 17.1 warns otherwise).
        self._ws = connect(url, origin=base_url.rstrip("/"), open_timeout=timeout, max_size=None).__enter__()
        self._ws.send(json.dumps({"type": "authenticate", "token": token, "workspace_uuid": workspace_uuid}))
        frame = self._next(timeout)
        while frame.get("type") not in ("connected", "error"):
            frame = self._next(timeout)
        if frame.get("type") == "error":
            self.close()
            raise ChatError(f"debug chat refused: {frame}")
        self.connection_id: str = frame["connection_id"]
        self.frames: list[dict[str, Any]] = [frame]

    @property
    def sender_id(self) -> str:
        return f"websocket_{self.connection_id}"

    def _next(self, timeout: float) -> dict[str, Any]:
        raw = self._ws.recv(timeout=timeout)
        return json.loads(raw)

    def send(self, text: str, timeout: float | None = None) -> str:
        """Send one message; return the text of the final reply."""
        self._ws.send(json.dumps({"type": "message", "stream": False,
                                  "message": [{"type": "Plain", "text": text}]}))
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChatError(f"no final reply to {text!r} within {timeout or self.timeout}s")
            try:
                frame = self._next(remaining)
            except TimeoutError:
                raise ChatError(f"no final reply to {text!r} within {timeout or self.timeout}s") from None
            self.frames.append(frame)
            if frame.get("type") == "error":
                raise ChatError(f"debug chat error: {frame}")
            data = frame.get("data") or {}
            if frame.get("type") == "response" and data.get("is_final"):
                return reply_text(data)

    def close(self) -> None:
        try:
            self._ws.close()
        except Exception:  # noqa: BLE001
            pass

    def __enter__(self) -> DebugChat:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def reply_text(data: dict[str, Any]) -> str:
    """Plain text of a reply (group replies start with an At segment)."""
    chain = data.get("message_chain")
    if isinstance(chain, list) and chain:
        return "".join(str(seg.get("text") or "") for seg in chain if seg.get("type") == "Plain")
    return str(data.get("content") or "")


class ModelLog:
    """The JSONL request log of devhost/model_server.py."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out

    def mark(self) -> int:
        return len(self.records())

    def chats_since(self, mark: int) -> list[dict[str, Any]]:
        return [r for r in self.records()[mark:] if r.get("kind") == "chat"]


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return str(content or "")


def system_texts(request: dict[str, Any]) -> list[str]:
    return [message_text(m) for m in request.get("messages") or [] if m.get("role") == "system"]


def ltm_block(request: dict[str, Any]) -> str:
    """The "[LongTermMemory]" system message the plugin injected, or ""."""
    return next((t for t in system_texts(request) if t.lstrip().startswith("[LongTermMemory]")), "")


def ltm_context(request: dict[str, Any]) -> dict[str, Any] | None:
    """The `_ltm_context` value the test runner forwarded as "LTM_CONTEXT: <json>", or None."""
    for text in system_texts(request):
        if text.startswith("LTM_CONTEXT: "):
            return json.loads(text[len("LTM_CONTEXT: "):])
    return None
