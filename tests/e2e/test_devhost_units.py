"""Fast checks of the devhost pieces the real-host tests rely on (no LangBot needed)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.request
from http.server import ThreadingHTTPServer

from devhost import model_server
from devhost.stack import SITECUSTOMIZE_DIR

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
        "update_profile", {"scope": "speaker", "name": "Ada Lovelace"})
    assert call_of(ask([{"role": "user", "content": "call me Bob"}])) == (
        "update_profile", {"scope": "speaker", "name": "Bob"})
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
    assert reply["content"] == '[scripted local model] done: remember -> {"ok": true, "episode_id": "e1"}'


def test_scripted_model_reports_memory_context():
    block = ("[LongTermMemory] header\n<memory-data>\ncurrent_speaker: \"Ada\"\nsession_profile: \"(empty)\"\n"
             "speaker_profile: \"name: Ada\"\nmemory 1 (stored t): \"likes tea\"\n"
             "memory 2 (stored t): \"launch friday\"\n</memory-data>")
    reply = ask([{"role": "system", "content": "You are helpful."}, {"role": "system", "content": block},
                 {"role": "system", "content": 'LTM_CONTEXT: {"episodes": []}'},
                 {"role": "user", "content": [{"type": "text", "text": "hello"}]}])
    text = reply["content"]
    assert text.startswith("[scripted local model] I see 2 memory lines")
    assert "[LongTermMemory] context: yes" in text and "_ltm_context: yes" in text
    assert '"likes tea"' in text and "name: Ada" in text
    assert ask([{"role": "user", "content": "hello"}])["content"] == (
        "[scripted local model] I see 0 memory lines; [LongTermMemory] context: no; _ltm_context: no")


def test_hashing_embedder_is_deterministic_and_normalized():
    embedder = model_server.HashingEmbedder()
    a, b, c = embedder.encode(["the launch is on friday", "when is the launch?", "我喜欢喝茶"])
    assert a == embedder.encode(["the launch is on friday"])[0]
    assert len(a) == 384 and abs(sum(x * x for x in a) - 1) < 1e-9 and any(c)
    related = sum(x * y for x, y in zip(a, b))
    unrelated = sum(x * y for x, y in zip(a, embedder.encode(["purple elephants dance"])[0]))
    assert related > unrelated


def test_model_server_http_and_request_log(tmp_path):
    log_path = tmp_path / "requests.jsonl"
    state = model_server.State(model_server.HashingEmbedder(), str(log_path))
    state.ready.set()
    handler = type("H", (model_server.Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"

    def post(path, body):
        request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.read().decode()

    try:
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
    finally:
        server.shutdown()
        server.server_close()
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
