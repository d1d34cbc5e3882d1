"""The scripted OneBot v11 endpoint (devhost/onebot.py) on its own, without LangBot: fast.

A `websockets` peer plays LangBot's side: it checks what the endpoint sends (event shapes, API
answers) and, as a server, what a reverse connection carries. The real adapter is exercised in
tests/e2e/test_real_onebot.py.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect
from websockets.sync.server import ServerConnection, serve

from devhost.onebot import OneBotEndpoint, OneBotError

TOKEN = "t0ken"


@pytest.fixture
def endpoint() -> Iterator[OneBotEndpoint]:
    ep = OneBotEndpoint(self_id=4242, access_token=TOKEN, heartbeat_s=60)
    ep.add_person(1, "Ann")
    ep.add_person(2, "Ben")
    ep.add_group(77, "Chess", [(1, "Ann (captain)"), (2, "")])
    yield ep
    ep.close()


def frames(ws: ClientConnection, count: int) -> list[dict[str, Any]]:
    return [json.loads(ws.recv(timeout=10)) for _ in range(count)]


def call(ws: ClientConnection, action: str, **params: Any) -> dict[str, Any]:
    ws.send(json.dumps({"action": action, "params": params, "echo": action}))
    while True:
        frame = json.loads(ws.recv(timeout=10))
        if frame.get("echo") == action:
            return frame


def test_forward_refuses_a_wrong_token_and_answers_like_a_protocol_endpoint(endpoint):
    url = endpoint.serve()
    assert url.startswith("ws://127.0.0.1:")
    with pytest.raises(InvalidStatus):
        connect(url, additional_headers={"Authorization": "Bearer wrong"}).close()
    with connect(url, additional_headers={"Authorization": f"Bearer {TOKEN}"}) as ws:
        (hello,) = frames(ws, 1)
        assert (hello["post_type"], hello["meta_event_type"], hello["sub_type"], hello["self_id"]) == \
            ("meta_event", "lifecycle", "connect", 4242)
        assert call(ws, "get_login_info")["data"] == {"user_id": 4242, "nickname": "LTM test bot"}
        member = call(ws, "get_group_member_info", group_id=77, user_id=1)["data"]
        assert (member["card"], member["nickname"], member["role"]) == ("Ann (captain)", "Ann", "member")
        unknown = call(ws, "get_group_member_info", group_id=77, user_id=9)
        assert (unknown["status"], unknown["retcode"]) == ("failed", 100)
        assert call(ws, "set_group_kick", group_id=77, user_id=2)["status"] == "failed"  # not scripted: says so

        mark = endpoint.mark()
        sent = call(ws, "send_msg", message_type="group", group_id=77,
                    message=[{"type": "at", "data": {"qq": "1"}}, {"type": "text", "data": {"text": "hi"}}])
        reply = endpoint.wait_sent(mark, timeout=5)
        assert sent["data"] == {"message_id": reply.message_id}
        assert (reply.message_type, reply.target, reply.text, reply.at) == ("group", 77, "hi", ["1"])
        stored = call(ws, "get_msg", message_id=reply.message_id)["data"]
        assert stored["group_id"] == 77 and stored["message"] == reply.segments
        assert ("send_msg", {"message_type": "group", "group_id": 77, "message": reply.segments}) in endpoint.api_calls


def test_events_have_the_onebot_v11_shapes(endpoint):
    url = endpoint.serve()
    with connect(url, additional_headers={"Authorization": f"Bearer {TOKEN}"}) as ws:
        frames(ws, 1)
        endpoint.wait_connected(5)
        message_id = endpoint.group_message(77, 1, "hello", at_bot=True)
        (event,) = frames(ws, 1)
        assert event["message"] == [{"type": "at", "data": {"qq": "4242"}}, {"type": "text", "data": {"text": " hello"}}]
        assert {k: event[k] for k in ("post_type", "message_type", "message_id", "group_id", "user_id", "self_id")} == \
            {"post_type": "message", "message_type": "group", "message_id": message_id, "group_id": 77, "user_id": 1,
             "self_id": 4242}
        assert {k: event["sender"][k] for k in ("user_id", "nickname", "card", "role")} == \
            {"user_id": 1, "nickname": "Ann", "card": "Ann (captain)", "role": "member"}

        endpoint.recall(message_id, operator_id=2)
        private_id = endpoint.private_message(2, "psst")
        endpoint.recall(private_id)
        endpoint.member_leaves(77, 2, kicked_by=1)
        recall, private, friend_recall, left = frames(ws, 4)
        assert private["message_type"] == "private" and private["sender"]["nickname"] == "Ben"
        assert {k: recall[k] for k in ("notice_type", "group_id", "user_id", "operator_id", "message_id")} == \
            {"notice_type": "group_recall", "group_id": 77, "user_id": 1, "operator_id": 2, "message_id": message_id}
        assert {k: friend_recall[k] for k in ("notice_type", "user_id", "message_id")} == \
            {"notice_type": "friend_recall", "user_id": 2, "message_id": private_id}
        assert {k: left[k] for k in ("notice_type", "sub_type", "group_id", "user_id", "operator_id")} == \
            {"notice_type": "group_decrease", "sub_type": "kick", "group_id": 77, "user_id": 2, "operator_id": 1}
        assert 2 not in endpoint.members[77]


def test_reverse_dials_with_the_universal_headers_and_dials_again_after_a_drop(endpoint):
    seen: list[dict[str, str]] = []

    def handler(ws: ServerConnection) -> None:
        seen.append({k: ws.request.headers.get(k, "") for k in ("Authorization", "X-Self-ID", "X-Client-Role")})
        ws.recv(timeout=10)  # the lifecycle event, then drop the connection (a LangBot restart)

    with serve(handler, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.socket.getsockname()[1]
        endpoint.connect(f"ws://127.0.0.1:{port}/bots/b/onebot/v11/ws")
        endpoint.wait_connected(10)
        endpoint.wait_connected(10, after=1)
        server.shutdown()
    assert len(seen) >= 2
    assert seen[0] == {"Authorization": f"Bearer {TOKEN}", "X-Self-ID": "4242", "X-Client-Role": "Universal"}


def test_only_loopback(endpoint):
    with pytest.raises(OneBotError, match="only talks to loopback"):
        endpoint.connect("ws://192.0.2.1:3001/")
