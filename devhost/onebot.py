"""A scripted OneBot v11 protocol endpoint for tests: a stand-in for NapCat or Lagrange (needs `websockets`).

A real QQ bot runs behind a protocol endpoint (NapCat, Lagrange) that speaks OneBot v11 to
LangBot's adapter: it pushes events (messages, notices, meta events) and answers API calls
(`send_group_msg`, `get_group_member_info`, ...) over one WebSocket. This class plays that
endpoint, and only that: there is no QQ account, no QQ server and no message rendering. The
groups, people, cards and roles are what a test declares; every message the bot sends is
recorded (`sent`) so a test reads the bot's replies; every API call is recorded (`api_calls`).
LangBot, its adapter and the plugins stay real.

Both connection modes of LangBot's `onebot-v11` adapter (`pkg/platform/adapters/aiocqhttp/`):
- forward WebSocket: `serve()` listens on 127.0.0.1 and LangBot connects to it (the adapter's
  `ws_url`), sending `Authorization: Bearer <token>`;
- reverse WebSocket: `connect(url)` dials LangBot's `/bots/<bot uuid>/onebot/v11/ws` with the
  token, `X-Self-ID` and `X-Client-Role: Universal`, and dials again whenever the connection
  drops (a LangBot restart), as NapCat does.
One connection at a time (LangBot refuses a second one). Event and API shapes follow the
OneBot v11 standard; `message` is always an array of segments (what NapCat sends by default).
The endpoint runs its own event loop in a daemon thread; every public method is synchronous.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import itertools
import json
import random
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

# OneBot message ids are 32-bit integers; a random start keeps two runs on one data dir apart.
_MESSAGE_IDS = itertools.count(random.SystemRandom().randrange(1 << 20, 1 << 30))


class OneBotError(RuntimeError):
    pass


@dataclasses.dataclass
class Member:
    user_id: int
    nickname: str
    card: str = ""
    role: str = "member"  # owner | admin | member


@dataclasses.dataclass
class Sent:
    """One message the bot sent through the endpoint (`send_msg`, `send_group_msg`, `send_private_msg`)."""

    message_id: int
    message_type: str  # group | private
    target: int  # group_id or user_id
    segments: list[dict[str, Any]]

    @property
    def text(self) -> str:
        return "".join(str(s["data"].get("text", "")) for s in self.segments if s.get("type") == "text")

    @property
    def at(self) -> list[str]:
        return [str(s["data"].get("qq")) for s in self.segments if s.get("type") == "at"]


def _segments(message: Any) -> list[dict[str, Any]]:
    """The segment array of an API call's `message` (a string is taken as plain text: no CQ codes)."""
    if isinstance(message, str):
        return [{"type": "text", "data": {"text": message}}]
    if isinstance(message, dict):
        message = [message]
    return [{"type": str(s.get("type")), "data": dict(s.get("data") or {})} for s in message or []]


def _loopback_only(url: str) -> None:
    host = urlsplit(url).hostname or ""
    if host != "localhost" and not ipaddress.ip_address(host).is_loopback:
        raise OneBotError(f"the scripted endpoint only talks to loopback, not {host}")


class OneBotEndpoint:
    def __init__(self, self_id: int = 10000, access_token: str = "ltm-onebot-token", *,
                 nickname: str = "LTM test bot", heartbeat_s: float = 5.0):
        self.self_id = self_id
        self.access_token = access_token
        self.nickname = nickname
        self.heartbeat_s = heartbeat_s
        self.people: dict[int, str] = {}
        self.groups: dict[int, str] = {}
        self.members: dict[int, dict[int, Member]] = {}
        self.messages: dict[int, dict[str, Any]] = {}  # every message id the endpoint knows: get_msg, recalls
        self.sent: list[Sent] = []
        self.api_calls: list[tuple[str, dict[str, Any]]] = []
        self.connections = 0  # connections accepted so far (a reconnect after a LangBot restart adds one)
        self.last_error = ""  # why the last reverse dial failed
        self._cond = threading.Condition()
        self._ws: Any = None
        self._closing = False
        self._server: Any = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="onebot-endpoint", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ the chat's people and groups
    def add_person(self, user_id: int, nickname: str) -> None:
        self.people[user_id] = nickname

    def add_group(self, group_id: int, name: str, members: list[tuple[int, str]] | None = None) -> None:
        """A group with members `(user_id, card)`; each must be a known person."""
        self.groups[group_id] = name
        self.members.setdefault(group_id, {})
        for user_id, card in members or []:
            self.join(group_id, user_id, card)

    def join(self, group_id: int, user_id: int, card: str = "", role: str = "member") -> None:
        self.members[group_id][user_id] = Member(user_id, self.people[user_id], card, role)

    def set_card(self, group_id: int, user_id: int, card: str) -> None:
        self.members[group_id][user_id].card = card

    # ------------------------------------------------------------------ connections
    def _run(self, coro: Any, timeout: float = 30.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def serve(self, port: int = 0) -> str:
        """Forward WebSocket: listen on 127.0.0.1; returns the URL for the adapter's `ws_url`."""
        async def start() -> int:
            self._server = await serve(self._session, "127.0.0.1", port, process_request=self._check_token)
            return int(self._server.sockets[0].getsockname()[1])

        return f"ws://127.0.0.1:{self._run(start())}/"

    def _check_token(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Authorization") != f"Bearer {self.access_token}":
            return connection.respond(401, "access token required\n")
        return None

    def connect(self, url: str) -> None:
        """Reverse WebSocket: dial LangBot's endpoint, and again after every drop, until `close()`."""
        _loopback_only(url)
        self._loop.call_soon_threadsafe(lambda: self._tasks.append(self._loop.create_task(self._dial(url))))

    async def _dial(self, url: str) -> None:
        headers = {"Authorization": f"Bearer {self.access_token}", "X-Self-ID": str(self.self_id),
                   "X-Client-Role": "Universal"}
        while not self._closing:
            try:
                async with connect(url, additional_headers=headers, proxy=None, open_timeout=5) as ws:
                    await self._session(ws)
            except Exception as exc:  # noqa: BLE001 - refused (404 before the bot is loaded), reset, timeout: dial again
                self.last_error = repr(exc)
            await asyncio.sleep(0.5)

    async def _session(self, ws: Any) -> None:
        if self._ws is not None:  # like LangBot: one protocol connection at a time
            await ws.close(1008, "already connected")
            return
        self._ws = ws
        with self._cond:
            self.connections += 1
            self._cond.notify_all()
        heartbeat = asyncio.create_task(self._heartbeat(ws))
        try:
            await ws.send(json.dumps(self._meta("lifecycle", sub_type="connect")))
            async for raw in ws:
                await self._on_frame(ws, raw)
        except ConnectionClosed:
            pass
        finally:
            heartbeat.cancel()
            if self._ws is ws:
                self._ws = None
            with self._cond:
                self._cond.notify_all()

    async def _heartbeat(self, ws: Any) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s)
            await ws.send(json.dumps(self._meta("heartbeat", status={"online": True, "good": True},
                                                interval=int(self.heartbeat_s * 1000))))

    @property
    def connected(self) -> bool:
        return self._ws is not None

    def wait_connected(self, timeout: float = 60.0, *, after: int = 0) -> None:
        """Until a connection is up that is the `after`-th + 1 or later (`after=self.connections` waits for a new one)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self.connected and self.connections > after, timeout):
                raise OneBotError(f"LangBot did not connect within {timeout:.0f}s (last dial error: {self.last_error})")

    def close(self) -> None:
        async def stop() -> None:
            self._closing = True
            for task in self._tasks:
                task.cancel()
            if self._ws is not None:
                await self._ws.close()
            if self._server is not None:
                self._server.close()
                await self._server.wait_closed()

        try:
            self._run(stop(), timeout=15)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    # ------------------------------------------------------------------ API calls from LangBot
    async def _on_frame(self, ws: Any, raw: str | bytes) -> None:
        frame = json.loads(raw)
        if not isinstance(frame, dict) or "action" not in frame:
            return
        action, params = str(frame["action"]), dict(frame.get("params") or {})
        with self._cond:
            self.api_calls.append((action, params))
        try:
            data = self._answer(action, params)
            reply = {"status": "ok", "retcode": 0, "data": data}
        except OneBotError as exc:
            reply = {"status": "failed", "retcode": 100, "data": None, "message": str(exc), "wording": str(exc)}
        if "echo" in frame:
            reply["echo"] = frame["echo"]
        await ws.send(json.dumps(reply))

    def _member_info(self, group_id: int, user_id: int) -> dict[str, Any]:
        member = self.members.get(group_id, {}).get(user_id)
        if member is None:
            raise OneBotError(f"user {user_id} is not in group {group_id}")
        return {"group_id": group_id, "user_id": user_id, "nickname": member.nickname, "card": member.card,
                "role": member.role, "title": "", "sex": "unknown", "age": 0, "area": "", "level": "1",
                "join_time": 0, "last_sent_time": 0, "unfriendly": False, "card_changeable": True}

    def _group_info(self, group_id: int) -> dict[str, Any]:
        if group_id not in self.groups:
            raise OneBotError(f"group {group_id} not found")
        return {"group_id": group_id, "group_name": self.groups[group_id],
                "member_count": len(self.members[group_id]), "max_member_count": 200}

    def _answer(self, action: str, p: dict[str, Any]) -> Any:
        if action in ("send_msg", "send_group_msg", "send_private_msg"):
            kind = p.get("message_type") or ("group" if action == "send_group_msg" or "group_id" in p else "private")
            target = int(p["group_id"] if kind == "group" else p["user_id"])
            sent = Sent(next(_MESSAGE_IDS), kind, target, _segments(p.get("message")))
            with self._cond:
                self.sent.append(sent)
                self.messages[sent.message_id] = {"message_type": kind, "target": target, "user_id": self.self_id,
                                                  "segments": sent.segments, "time": int(time.time())}
                self._cond.notify_all()
            return {"message_id": sent.message_id}
        if action == "get_login_info":
            return {"user_id": self.self_id, "nickname": self.nickname}
        if action == "get_group_info":
            return self._group_info(int(p["group_id"]))
        if action == "get_group_list":
            return [self._group_info(g) for g in self.groups]
        if action == "get_group_member_info":
            return self._member_info(int(p["group_id"]), int(p["user_id"]))
        if action == "get_group_member_list":
            return [self._member_info(int(p["group_id"]), u) for u in self.members.get(int(p["group_id"]), {})]
        if action == "get_stranger_info":
            user_id = int(p["user_id"])
            return {"user_id": user_id, "nickname": self.people.get(user_id, ""), "sex": "unknown", "age": 0}
        if action == "get_friend_list":
            return [{"user_id": u, "nickname": n, "remark": ""} for u, n in self.people.items()]
        if action == "get_msg":
            return self._stored(int(p["message_id"]))
        if action == "delete_msg":
            self._stored(int(p["message_id"]))
            return None
        if action in ("get_status", "get_version_info"):
            return {"online": True, "good": True, "app_name": "ltm-scripted-onebot", "protocol_version": "v11"}
        if action in ("can_send_image", "can_send_record"):
            return {"yes": False}
        raise OneBotError(f"{action} is not supported by the scripted endpoint")

    def _stored(self, message_id: int) -> dict[str, Any]:
        stored = self.messages.get(message_id)
        if stored is None:
            raise OneBotError(f"message {message_id} not found")
        sender = {"user_id": stored["user_id"], "nickname": self.people.get(stored["user_id"], self.nickname)}
        return {"message_id": message_id, "real_id": message_id, "time": stored["time"],
                "message_type": stored["message_type"], "sender": sender, "message": stored["segments"],
                **({"group_id": stored["target"]} if stored["message_type"] == "group" else {})}

    # ------------------------------------------------------------------ events to LangBot
    def _meta(self, kind: str, **extra: Any) -> dict[str, Any]:
        return {"time": int(time.time()), "self_id": self.self_id, "post_type": "meta_event",
                "meta_event_type": kind, **extra}

    def post(self, event: dict[str, Any]) -> None:
        """Push one event (`time` and `self_id` are added) to the connected LangBot."""
        self.wait_connected(timeout=30)
        payload = {"time": int(time.time()), "self_id": self.self_id, **event}
        self._run(self._ws.send(json.dumps(payload)))

    def group_message(self, group_id: int, user_id: int, text: str, *, at_bot: bool = False) -> int:
        """A member says `text` in a group (after an @ of the bot when `at_bot`); returns its message id."""
        member = self.members[group_id][user_id]
        segments: list[dict[str, Any]] = [{"type": "at", "data": {"qq": str(self.self_id)}}] if at_bot else []
        segments.append({"type": "text", "data": {"text": f" {text}" if at_bot else text}})
        message_id = self._remember(segments, "group", group_id, user_id)
        raw = (f"[CQ:at,qq={self.self_id}] " if at_bot else "") + text
        self.post({"post_type": "message", "message_type": "group", "sub_type": "normal", "message_id": message_id,
                   "group_id": group_id, "user_id": user_id, "anonymous": None, "message": segments,
                   "raw_message": raw, "font": 0,
                   "sender": {"user_id": user_id, "nickname": member.nickname, "card": member.card, "sex": "unknown",
                              "age": 0, "area": "", "level": "1", "role": member.role, "title": ""}})
        return message_id

    def private_message(self, user_id: int, text: str) -> int:
        segments = [{"type": "text", "data": {"text": text}}]
        message_id = self._remember(segments, "private", user_id, user_id)
        self.post({"post_type": "message", "message_type": "private", "sub_type": "friend", "message_id": message_id,
                   "user_id": user_id, "message": segments, "raw_message": text, "font": 0,
                   "sender": {"user_id": user_id, "nickname": self.people[user_id], "sex": "unknown", "age": 0}})
        return message_id

    def _remember(self, segments: list[dict[str, Any]], kind: str, target: int, user_id: int) -> int:
        message_id = next(_MESSAGE_IDS)
        with self._cond:
            self.messages[message_id] = {"message_type": kind, "target": target, "user_id": user_id,
                                         "segments": segments, "time": int(time.time())}
        return message_id

    def recall(self, message_id: int, operator_id: int | None = None) -> None:
        """The message is withdrawn: `group_recall` (by its author, or `operator_id`, a group admin) or `friend_recall`."""
        stored = self.messages[message_id]
        if stored["message_type"] == "group":
            self.post({"post_type": "notice", "notice_type": "group_recall", "group_id": stored["target"],
                       "user_id": stored["user_id"], "operator_id": operator_id or stored["user_id"],
                       "message_id": message_id})
        else:
            self.post({"post_type": "notice", "notice_type": "friend_recall", "user_id": stored["user_id"],
                       "message_id": message_id})

    def member_leaves(self, group_id: int, user_id: int, *, kicked_by: int | None = None) -> None:
        """`group_decrease`: the member left (`sub_type: leave`) or was removed by `kicked_by` (`kick`)."""
        self.members[group_id].pop(user_id, None)
        self.post({"post_type": "notice", "notice_type": "group_decrease",
                   "sub_type": "kick" if kicked_by else "leave", "group_id": group_id,
                   "operator_id": kicked_by or user_id, "user_id": user_id})

    # ------------------------------------------------------------------ the bot's replies
    def mark(self) -> int:
        with self._cond:
            return len(self.sent)

    def wait_sent(self, mark: int, *, timeout: float = 90.0, where: Callable[[Sent], bool] | None = None) -> Sent:
        """The first message the bot sent after `mark` (that satisfies `where`)."""
        def found() -> Sent | None:
            return next((s for s in self.sent[mark:] if where is None or where(s)), None)

        with self._cond:
            if not self._cond.wait_for(lambda: found() is not None, timeout):
                raise OneBotError(f"the bot sent nothing matching within {timeout:.0f}s; sent since: {self.sent[mark:]}")
            result = found()
            assert result is not None
            return result

    def ask_group(self, group_id: int, user_id: int, text: str, *, at_bot: bool = True,
                  timeout: float = 90.0) -> tuple[int, Sent]:
        """Say `text` in a group and wait for the bot's next message there: (the message's id, the reply)."""
        mark = self.mark()
        message_id = self.group_message(group_id, user_id, text, at_bot=at_bot)
        return message_id, self.wait_sent(mark, timeout=timeout,
                                          where=lambda s: s.message_type == "group" and s.target == group_id)

    def ask_private(self, user_id: int, text: str, *, timeout: float = 90.0) -> tuple[int, Sent]:
        mark = self.mark()
        message_id = self.private_message(user_id, text)
        return message_id, self.wait_sent(mark, timeout=timeout,
                                          where=lambda s: s.message_type == "private" and s.target == user_id)

    def sent_since(self, mark: int) -> list[Sent]:
        with self._cond:
            return list(self.sent[mark:])
