"""Hostile identity fuzzing (issue 21, "Proofs to add"): host-supplied identities and texts drawn from
hostile unicode, through every entry point of the real plugin, on Chroma, Qdrant and Milvus Lite.

Each example draws one conversation as the host could hand it over (launcher type and id, bot uuid,
sender id and display name) and three texts (a memory's content, a search query, the user's message),
built from lone UTF-16 surrogates, NUL and other control characters, bidi overrides, U+2028/U+2029,
look-alikes of the key separators `:` `/` `#` `.`, the separators themselves, our own escape
character and very long runs. The same script then runs on every backend through the SDK's dispatch
(`testhost.PluginHarness`): the PromptPreProcessing listener, the four tools, the `!memory`
subcommands (reads, import, candidates, forget), the candidate listener (NormalMessageResponded), the
Memory Console's page API, and the knowledge engine's retrieve, document ingest and document delete.

After every example, on every backend:
- no fence anywhere, and no answer that reports one or an unknown outcome;
- no internal error: no `internal_error` answer, no error logged by the plugin, no failed action,
  no degraded injection;
- no reply quotes internal error text (an exception's name or a backend's message), and every reply
  is valid UTF-8 text;
- audit equals store in the conversation's spaces: every stored memory and profile was audited, and
  every memory the audit says is there is there, with the status the audit last gave it;
- an ordinary memory written with the hostile identity is stored (the identity alone never stops a
  chat's memory), and the key the console derives from the raw ids is the key the plugin used;
- and every backend gave the same outcome: the same answer kind at every step, the same stored
  memories and profiles, the same audit.

Runs are deterministic (a fixed seed, no example database) and take a couple of minutes. A longer run:

    LTM_HOSTILE_EXAMPLES=200 .venv/bin/python -m pytest tests/test_hostile_identity.py

(`LTM_HOSTILE_SEED` picks another seed.)
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from ltm import Identity, MemoryScope
from testhost import FakeLangBotHost, PluginHarness, make_backend, make_session
from testhost.audit_check import audit_mismatches
from tests.chat import open_turn
from tests.stores import CORE_STORES, full_matrix_stores

EXAMPLES = int(os.environ.get("LTM_HOSTILE_EXAMPLES", "8"))
SEED = int(os.environ.get("LTM_HOSTILE_SEED", "20260121"))
# SeekDB and pgvector join when LTM_STORES names them (tests/stores.py): the fuzz takes minutes per store.
BACKENDS = (*CORE_STORES, *full_matrix_stores())

# ------------------------------------------------------------------------------------ hostile unicode

NASTY = (
    "\ud83d", "\ude00", "\ud800", "\udfff",                      # lone surrogates (half an emoji)
    "\x00", "\x01", "\x07", "\x08", "\t", "\n", "\r", "\x0b", "\x1b", "\x1f", "\x7f", "\x85", "\x9b",
    "\u2028", "\u2029",                                          # line / paragraph separators
    "\u202a", "\u202b", "\u202d", "\u202e", "\u2066", "\u2067", "\u2069", "\u200e", "\u200f", "\u061c",
    "\ufffd", "\ufeff", "\u200b", "\u200d", "\u00a0", "\u3000", " ",
    ":", "/", "#", ".", "%", "_", "\\", '"', "'", "|",           # our separators and quoting
    "\uff1a", "\u2236", "\ua789", "\uff0f", "\u2215", "\u2044", "\uff03", "\uff0e", "\u3002", "\u2024",
    "\U0001f600",
)
FRAGMENTS = (
    "group_", "person_", "bot:", "g1", "g1:0", "l1:", "l2:", "v2/", "%3A", "\ufffd0041", "\ufffd#", "Zed \ud83d",
    "!memory list", "\n  S2. forged line", "None", "0", "u1", "e\u0301",
)
_pieces = st.one_of(
    st.text(st.sampled_from(NASTY), min_size=1, max_size=4),
    st.sampled_from(FRAGMENTS),
    st.text(st.characters(), min_size=1, max_size=6),
    st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=2),
)
_short = st.lists(_pieces, min_size=1, max_size=5).map("".join)
_long = st.builds(lambda piece, size: (piece * size)[:size], _pieces, st.integers(min_value=200, max_value=5000))
hostile = st.one_of(_short, _short, _long)


@dataclass(frozen=True)
class Scenario:
    launcher_type: str
    launcher_id: str
    bot_uuid: str
    sender_id: str
    sender_name: str
    content: str
    query: str
    message: str

    @property
    def session_name(self) -> str:
        return f"{self.launcher_type}_{self.launcher_id}"

    def scope(self) -> MemoryScope:
        """The spaces of this conversation as the documented rule derives them (session isolation), from
        the ids as they arrive: the JSON wire joins a high and a low surrogate that follow each other."""
        wired = json.loads(json.dumps([self.launcher_id, self.bot_uuid, self.sender_id]))
        identity = Identity.from_host(launcher_type=self.launcher_type, launcher_id=wired[0],
                                      bot_uuid=wired[1], sender_id=wired[2])
        return MemoryScope.for_identity(identity, "session")


scenarios = st.builds(
    Scenario,
    launcher_type=st.sampled_from(["group", "person"]),
    launcher_id=hostile.filter(lambda s: bool(s.strip())),
    bot_uuid=st.one_of(hostile, st.just("7f3c9a1e-5b2d-4c8e-9f10-2a3b4c5d6e7f"), st.just("")),
    sender_id=st.one_of(hostile, st.just("0")),
    sender_name=hostile,
    content=hostile,
    query=hostile,
    message=hostile,
)

# ------------------------------------------------------------------------------------ what must not show

# An exception's class name, a traceback, or a backend's own words in a reply is internal error text.
_INTERNAL = re.compile(
    r"\b[A-Z][A-Za-z]*(?:Error|Exception)\b|Traceback|UpdateMetadataValue|Cannot convert|codec can't"
    r"|surrogates not allowed|internal error|object has no attribute|NoneType")
_FENCE_CODES = {"fenced", "outcome_unknown", "unrecorded_change", "partial_write", "internal_error"}
_NOT_TEXT = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")  # what a console text field refuses
_ID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{1,4}[0-9a-f-]*")  # a uuid, or the start of one a reply cut short
_CANDIDATE_ID = re.compile(r"\bc-[0-9a-f]{8}\b")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?")


def _normalized(text: str) -> str:
    return _TIME.sub("<time>", _CANDIDATE_ID.sub("<cid>", _ID.sub("<id>", text)))


class _PluginErrors(logging.Handler):
    """Errors the plugin logs (`log.exception` marks every unexpected failure)."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()[:300]}")


@dataclass
class Run:
    """One scenario on one backend: the answer kind of every step, and what went wrong."""

    backend: str
    steps: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    final: dict[str, Any] = field(default_factory=dict)

    def reply(self, step: str, text: str) -> str:
        if not isinstance(text, str):
            self.problems.append(f"{step}: reply is not text: {text!r:.200}")
            return ""
        found = _INTERNAL.search(text)
        if found:
            self.problems.append(f"{step}: reply quotes internal error text {found.group(0)!r}: {text[:300]!r}")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            self.problems.append(f"{step}: reply is not valid UTF-8 text (a lone surrogate): {text[:200]!r}")
        return text

    def answer(self, step: str, data: Any) -> dict[str, Any]:
        """A JSON answer (tool, console): checked, and its kind recorded."""
        if not isinstance(data, dict):
            self.problems.append(f"{step}: answer is not an object: {data!r:.200}")
            return {}
        self.reply(step, json.dumps(data, ensure_ascii=False))
        if data.get("ok") is False:
            code = str(data.get("code"))
            if code in _FENCE_CODES:
                self.problems.append(f"{step}: {code}: {data.get('error')!r:.300}")
            self.steps.append((step, _normalized(f"{code}: {data.get('error')}")))
        else:
            self.steps.append((step, "ok"))
        return data


class Rig:
    """One started plugin with its memory KB (candidate extraction on) per backend, on one event loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.hosts: dict[str, FakeLangBotHost] = {}
        self.harnesses: dict[str, PluginHarness] = {}
        self.kbs: dict[str, str] = {}
        self.errors = _PluginErrors()
        self.serial = 0

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def start(self) -> None:
        logging.getLogger("LongTermMemory").addHandler(self.errors)
        for backend in BACKENDS:
            host = FakeLangBotHost(make_backend(backend))
            host.add_embedding_model("emb-1")
            harness = PluginHarness(host)
            self.hosts[backend], self.harnesses[backend] = host, harness
            self.run(harness.start())
            self.kbs[backend] = self.run(harness.create_memory_kb(candidate_extraction_enabled=True))

    def stop(self) -> None:
        logging.getLogger("LongTermMemory").removeHandler(self.errors)
        for backend, harness in self.harnesses.items():
            self.run(harness.stop())
            self.run(self.hosts[backend].close())
        self.loop.close()


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    instance = Rig()
    try:
        instance.start()
        yield instance
    finally:
        instance.stop()


# ------------------------------------------------------------------------------------ one scenario


class Driver:
    """Every entry point, called with the scenario's raw identity the way the host calls it."""

    def __init__(self, rig: Rig, backend: str, sc: Scenario, serial: int) -> None:
        self.harness = rig.harnesses[backend]
        self.host = rig.hosts[backend]
        self.kb = rig.kbs[backend]
        self.sc = sc
        self.serial = serial
        self.run = Run(backend)
        self.space = {"scope_key": sc.scope().chat_key, "user_key": sc.scope().space_key}

    def _session(self) -> dict[str, Any]:
        return make_session(self.sc.launcher_type, self.sc.launcher_id, sender_id=self.sc.sender_id,
                            bot_uuid=self.sc.bot_uuid)

    def _open(self, text: str = "turn") -> int:
        query_id = self.host.next_query_id()
        self.host.open_query(query_id, bot_uuid=self.sc.bot_uuid, launcher_type=self.sc.launcher_type,
                             launcher_id=self.sc.launcher_id, sender_id=self.sc.sender_id,
                             sender_name=self.sc.sender_name, message_text=text, pipeline_kbs=[self.kb])
        return query_id

    async def tool(self, step: str, name: str, params: dict[str, Any]) -> dict[str, Any]:
        query_id = self._open()
        try:
            result = await self.harness.call_tool(name, params, session=self._session(), query_id=query_id)
        finally:
            self.host.close_query(query_id)
        return self.run.answer(step, result)

    async def command(self, step: str, text: str, *, compare: bool = True) -> str:
        query_id = self._open()
        try:
            replies = await self.harness.execute_command(text, session=self._session(), query_id=query_id,
                                                         privilege=2)
        finally:
            self.host.close_query(query_id)
        if len(replies) != 1 or replies[0].get("error") is not None:
            self.run.problems.append(f"{step}: command answered {replies!r:.300}")
            return ""
        body = self.run.reply(step, replies[0].get("text"))
        self.run.steps.append((step, _normalized(body) if compare else body.partition("\n")[0][:40]))
        return body

    async def console(self, step: str, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        response = await self.harness.page_api("console", endpoint, "POST", body)
        if response.get("error") is not None:
            self.run.problems.append(f"{step}: page error {response!r:.300}")
            return {}
        return self.run.answer(step, response.get("data"))

    async def all_steps(self) -> None:
        sc, n = self.sc, self.serial
        await self.inject()
        plain = await self.tool("remember plain", "remember", {"content": f"plain note {n}"})
        if not plain.get("ok"):
            self.run.problems.append(f"an ordinary memory was refused for this identity: {plain!r:.300}")
        plain_id = str(plain.get("episode_id", "none"))
        await self.tool("remember hostile", "remember", {"content": sc.content, "tags": [sc.query[:40]]})
        await self.tool("recall hostile", "recall_memory", {"query": sc.query})
        await self.tool("recall plain", "recall_memory", {"query": f"plain note {n}"})
        await self.tool("profile speaker", "update_profile", {"scope": "speaker", "traits": [sc.content[:200]]})
        await self.tool("profile session", "update_profile", {"scope": "session", "name": sc.sender_name[:100]})
        for step, text in (("overview", "!memory"), ("list", "!memory list"), ("profile", "!memory profile"),
                           ("show", f"!memory show {plain_id}"), ("audit", "!memory audit"),
                           ("export l1", "!memory export"), ("export l2", "!memory export l2")):
            await self.command(f"!{step}", text)
        await self.command("!search", f"!memory search {sc.query}", compare=False)
        await self.command("!health", "!memory health", compare=False)
        imported = [{"content": f"imported {n}", "sender_id": sc.sender_id[:200], "sender_name": sc.sender_name[:200]},
                    {"content": f"imported plain {n}"}]
        await self.command("!import hostile", "!memory import l2 " + json.dumps(imported[:1]))
        await self.command("!import plain", "!memory import l2 " + json.dumps(imported[1:]))
        await self.candidates()
        await self.console_steps(plain_id)
        await self.engine()
        await self.tool("forget", "forget", {"episode_id": plain_id})

    async def inject(self) -> None:
        query_id, _ = open_turn(self.harness, _Place(self.sc), self.sc.sender_id, self.sc.sender_name,
                                self.sc.message, [self.kb])
        try:
            event = await self.harness.emit_event(
                "PromptPreProcessing",
                {"session_name": self.sc.session_name, "default_prompt": [{"role": "system", "content": "bot"}],
                 "prompt": [{"role": "user", "content": "earlier"}]}, query_id=query_id)
            context = self.host.queries[query_id].variables.get("_ltm_context")
        finally:
            self.host.close_query(query_id)
        for message in event["event"]["default_prompt"]:
            self.run.reply("injection", message["content"])
        self.run.steps.append(("injection", "context" if isinstance(context, dict) else repr(context)))

    async def candidates(self) -> None:
        text = f"Remember that {self.sc.message}"
        query_id = self._open(text)
        event = {"launcher_type": self.sc.launcher_type, "launcher_id": self.sc.launcher_id,
                 "sender_id": self.sc.sender_id, "session": self._session(), "prefix": "",
                 "response_text": "Sure.", "finish_reason": "stop", "funcs_called": [], "reply_message_chain": None}
        try:
            await self.harness.emit_event("NormalMessageResponded", event, query_id=query_id)
            await self.harness.settle()
        finally:
            self.host.close_query(query_id)
        listing = await self.command("!candidates", "!memory candidates")
        found = _CANDIDATE_ID.findall(listing)
        if found:
            await self.command("!candidate accept", f"!memory candidate accept {found[0]}")

    async def console_steps(self, plain_id: str) -> None:
        sc, space = self.sc, self.space
        overview = await self.console("console overview", "/overview", {})
        if space["scope_key"] not in {s.get("scope_key") for s in overview.get("scopes", [])}:
            self.run.problems.append(f"the console does not list the conversation's space {space['scope_key']!r:.200}")
        derived = await self.console("console derive", "/derive", {"bot_uuid": sc.bot_uuid[:200],
                                                                   "session_name": sc.session_name[:300]})
        # A form field the console takes as text (no C0 control, no lone surrogate once on the wire, nothing
        # to strip, within its limit) must derive exactly the key the plugin uses for that chat.
        bot, session = json.loads(json.dumps([sc.bot_uuid, sc.session_name]))
        typeable = all(not _NOT_TEXT.search(v) and v == v.strip() for v in (bot, session)) and (
            len(bot) <= 200 and len(session) <= 300)
        if typeable:
            got = {"scope_key": derived.get("scope_key"), "user_key": derived.get("user_key")}
            if got != space:
                self.run.problems.append(f"console derive gave {got!r:.300} ({derived.get('error')!r:.200}), "
                                         f"the plugin uses {space!r:.300}")
        for step, endpoint, body in (
                ("console episodes", "/episodes", {"space": space, "status": "all"}),
                ("console search", "/search", {"space": space, "query": sc.query[:500]}),
                ("console profiles", "/profiles", {"space": space}),
                ("console audit", "/audit", {"space": space}),
                ("console candidates", "/candidates", {"space": space}),
                ("console review", "/review", {"space": space}),
                ("console health", "/health", {"space": space}),
                ("console archive", "/episode/archive", {"space": space, "episode_id": plain_id}),
                ("console restore", "/episode/restore", {"space": space, "episode_id": plain_id})):
            data = await self.console(step, endpoint, body)
            if data.get("ok") and data.get("space", {}).get("scope_key", space["scope_key"]) != space["scope_key"]:
                self.run.problems.append(f"{step} answered for another space: {data.get('space')!r:.300}")
        snapshot = (await self.console("console injection", "/injection", {"space": space})).get("snapshot") or {}
        if snapshot.get("errors"):
            self.run.problems.append(f"the injection degraded: {snapshot['errors']!r:.300}")

    async def engine(self) -> None:
        sc = self.sc
        answer = await self.harness.retrieve(self.kb, sc.query, retrieval_settings={
            "top_k": 5, "session_name": sc.session_name, "bot_uuid": sc.bot_uuid, "sender_id": sc.sender_id})
        error = (answer.get("metadata") or {}).get("error")
        self.run.reply("engine retrieve", json.dumps(answer, ensure_ascii=False))
        self.run.steps.append(("engine retrieve", f"error: {error}" if error else f"{len(answer.get('results') or [])}"))
        scope = {"bot_uuid": sc.bot_uuid, "session_name": sc.session_name}
        # The scope is host identity (raw ids, as LangBot shows them); the episodes are the document's text.
        for name, episodes in (("plain", [{"content": f"document note {self.serial}"}]),
                               ("hostile", [{"content": sc.content, "tags": [sc.query[:40]],
                                             "sender_id": sc.sender_id[:200], "sender_name": sc.sender_name[:200]}])):
            document_id = f"doc-{self.serial}-{name}"
            data = json.dumps({"scope": scope, "episodes": episodes}).encode("ascii")
            result = await self.harness.ingest(self.kb, document_id, f"{name}.json", data)
            status = str(result.get("status"))
            message = str(result.get("error_message") or "")
            self.run.reply(f"ingest {name}", message)
            self.run.steps.append((f"ingest {name}", _normalized(f"{status} {message}")))
            if name == "plain":
                if "completed" not in status.lower():
                    self.run.problems.append(f"an ordinary document was refused for this identity: {result!r:.300}")
                removed = await self.harness.delete_document(self.kb, document_id)
                self.run.steps.append(("delete document", str(removed)))

    async def final_state(self) -> None:
        """Audit equals store in the conversation's spaces, and nothing is fenced anywhere."""
        overview = await self.console("final overview", "/overview", {})
        if overview.get("fences"):
            self.run.problems.append(f"fenced: {overview['fences']!r:.400}")
        export = (await self.console("final export", "/export", {"space": self.space})).get("export") or {}
        entries = ((await self.console("final audit", "/audit/export", {"space": self.space}))
                   .get("export") or {}).get("entries") or []
        episodes = ((export.get("l2") or {}).get("episodes")) or []
        l1 = export.get("l1") or {}
        self.run.problems += audit_mismatches(entries, episodes, l1)
        self.run.final = {
            "episodes": sorted((e["content"], e["status"], e.get("sender_id", ""), e.get("sender_name", ""),
                                tuple(e.get("tags") or ()), e.get("source", "")) for e in episodes),
            "profiles": json.dumps({"session": _profile(l1.get("session_profile")),
                                    "speakers": {k: _profile(v) for k, v in (l1.get("speaker_profiles") or {}).items()}},
                                   sort_keys=True),
            "audit": sorted(Counter(e["operation"] for e in entries).items()),
        }


@dataclass(frozen=True)
class _Place:
    """What `tests.chat.open_turn` needs of a conversation."""

    sc: Scenario

    @property
    def launcher_type(self) -> str:
        return self.sc.launcher_type

    @property
    def launcher_id(self) -> str:
        return self.sc.launcher_id

    @property
    def bot_uuid(self) -> str:
        return self.sc.bot_uuid


def _profile(raw: dict[str, Any] | None) -> dict[str, Any]:
    raw = raw or {}
    return {k: raw.get(k) for k in ("name", "traits", "preferences", "notes")}


async def drive(rig: Rig, backend: str, sc: Scenario, serial: int) -> Run:
    driver = Driver(rig, backend, sc, serial)
    before = len(rig.errors.records)
    try:
        await driver.all_steps()
        await driver.final_state()
    except Exception as exc:  # a failed action is a finding, reported with the others
        driver.run.problems.append(f"an action failed: {type(exc).__name__}: {str(exc)[:300]}")
    driver.run.problems += [f"plugin logged an error: {r}" for r in rig.errors.records[before:]]
    return driver.run


def _describe(sc: Scenario) -> str:
    return ", ".join(f"{k}={v[:60]!r}{'…' if len(v) > 60 else ''}" for k, v in vars(sc).items())


@pytest.mark.slow
@seed(SEED)
@settings(max_examples=EXAMPLES, database=None, deadline=None, print_blob=False,
          phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(sc=scenarios)
def test_hostile_host_identities_never_stop_memory_or_leak_internals(rig: Rig, sc: Scenario) -> None:
    rig.serial += 1
    runs = [rig.run(drive(rig, backend, sc, rig.serial)) for backend in BACKENDS]
    problems = [f"[{r.backend}] {p}" for r in runs for p in r.problems]
    assert not problems, f"scenario {_describe(sc)}:\n" + "\n".join(problems)
    reference = runs[0]
    for other in runs[1:]:
        differing = [(a, b) for a, b in zip(reference.steps, other.steps, strict=False) if a != b]
        assert len(reference.steps) == len(other.steps) and not differing, (
            f"scenario {_describe(sc)}: {reference.backend} and {other.backend} answered differently: "
            f"{differing[:3]!r:.1500}")
        assert reference.final == other.final, (
            f"scenario {_describe(sc)}: {reference.backend} and {other.backend} stored differently:\n"
            f"{reference.final!r:.1500}\n{other.final!r:.1500}")
