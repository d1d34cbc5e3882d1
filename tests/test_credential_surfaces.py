"""Every field that reaches storage or a reply goes through the one credential detector (issue 35).

A credential of every kind the detector names (`ltm/secrets/kinds.py`) is planted in every field of
every surface: the tools' parameters, the console's request bodies, the `!memory` subcommands, the
fields of L1 and L2 imports and of a KB document, the KB's creation settings and the settings
overrides. A field that stores text refuses the write ("... looks like <kind>"); a field that only
looks something up (an id, a search query, a filter) may answer. Either way the answer never shows the
credential, and afterwards nothing of it is in plugin storage, in the vector rows or in the log.

The fields of the tools, the console and the command are read from their own tables (issue 40,
`tests/surface_fields.py`): each is planted the generic way for its surface (a tool or console field
must be refused: both check every field before they parse one) unless a row below plants it another
way (a shape, a context, a text that is stored) or `NOT_PLANTED` exempts it with the reason. So a new
parameter, endpoint, body field, subcommand, form or option is planted without an edit here; the
self-tests at the end register one of each and show it planted, and a leak in it caught. The default
run plants one credential of each kind in each field on each real store of the test host.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.commands import memory as command
from components.commands.registry import Registry, Subcommands
from components.common.chat_text import Own
from components.common.i18n import Catalogue
from components.pages.console import api
from components.pages.console.requests import allowed
from components.pages.console.routes import Endpoint
from ltm.secrets import kinds, secret_kind
from testhost import PluginHarness
from tests.chat import BOT, Chat, Place, open_chat
from tests.proof_support import chat_key, console_space
from tests.surface_fields import TOOLS, command_lines, console_fields, tool_parameters

# One of issue 35's three proofs: it also runs on SeekDB and pgvector in the default run (tests/stores.py).
pytestmark = pytest.mark.stores_slice

G1 = Place("group", "g1")
G1_KEY = chat_key(G1)


@dataclass(frozen=True)
class Sample:
    kind: str
    text: str
    mark: str  # what must never be seen again: a part no id, time or word of ours contains


# One credential of each kind the detector names, each as a user would type it on one line.
SAMPLES: tuple[Sample, ...] = (
    Sample(kinds.API_KEY, "sk-proj-abc123DEF456ghi789JKL012mno", "abc123DEF456ghi789"),
    Sample(kinds.API_KEY, "sk-AbCdEfGhIjKlMnOpQrSt", "AbCdEfGhIjKlMnOpQrSt"),  # letters only (finding 8)
    Sample(kinds.ACCESS_TOKEN, "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "16C7e42F292c6912E7710c"),
    Sample(kinds.BEARER_TOKEN, "Bearer abcDEF123ghiJKL456mnoPQR789", "abcDEF123ghiJKL456"),
    Sample(kinds.PASSWORD, "my bank password is Hunter2Qz", "Hunter2Qz"),
    Sample(kinds.PRIVATE_KEY, "-----BEGIN RSA PRIVATE KEY-----MIIEowIBAAKCAQEAq7Bz", "MIIEowIBAAKCAQEAq7Bz"),
    Sample(kinds.ONE_TIME_CODE, "OTP: 771934", "OTP: 771934"),
    Sample(kinds.PIN, "card PIN: 4821", "PIN: 4821"),
    Sample(kinds.CARD_NUMBER, "4111 1111 1111 1111", "4111 1111 1111 1111"),
    Sample(kinds.CARD_CODE, "CVV 318", "CVV 318"),
    Sample(kinds.RECOVERY_PHRASE, "seed phrase: abandon ability able about above absent", "abandon ability able"),
    Sample(kinds.SOCIAL_SECURITY_NUMBER, "my ssn is 123-45-6789", "123-45-6789"),
    Sample(kinds.PASSPORT_NUMBER, "my passport number is E12345678", "E12345678"),
    Sample(kinds.RESIDENT_ID_NUMBER, "身份证：11010519491231002X", "11010519491231002X"),
)

Surface = Callable[[PluginHarness, Chat, str], Awaitable[Any]]


@dataclass(frozen=True)
class Field:
    name: str  # "<surface>:<field>", as the coverage test names it
    plant: Surface  # puts the text in the field; returns what the caller sees
    stores: bool  # True: the write must be refused as a credential; False: a lookup, may answer


def space() -> dict[str, str]:
    return console_space(G1, "session")


async def console(h: PluginHarness, endpoint: str, body: dict[str, Any]) -> Any:
    response = await h.page_api("console", endpoint, "POST", body)
    return response["error"] or response["data"]


def cmd(name: str, line: Callable[[str], str], *, stores: bool = True, label: str = "") -> Field:
    async def plant(h: PluginHarness, chat: Chat, secret: str) -> Any:
        return await chat.run(line(secret))
    return Field(f"command:{name}{label}", plant, stores)


def page(endpoint: str, field: str, body: Callable[[str], dict[str, Any]], *, stores: bool = True) -> Field:
    async def plant(h: PluginHarness, chat: Chat, secret: str) -> Any:
        return await console(h, endpoint, body(secret))
    return Field(f"console:{endpoint}.{field}", plant, stores)


def l2_import(field: str, value: Callable[[str], Any] = lambda s: s) -> Field:
    async def plant(h: PluginHarness, chat: Chat, secret: str) -> Any:
        episode = {"content": "the team meets on Fridays", field: value(secret)}
        return await chat.run("!memory import l2 " + json.dumps([episode], ensure_ascii=False))
    return Field(f"import_l2:{field}", plant, True)


def l1_import(build: Callable[[str], dict[str, Any]], field: str) -> Field:
    async def plant(h: PluginHarness, chat: Chat, secret: str) -> Any:
        return await chat.run("!memory import l1 " + json.dumps(build(secret), ensure_ascii=False))
    return Field(f"import_l1:{field}", plant, True)


def document(field: str, value: Callable[[str], Any] = lambda s: s) -> Field:
    async def plant(h: PluginHarness, chat: Chat, secret: str) -> Any:
        kb_id = next(iter(h.host.kbs))
        episode = {"content": "the team meets on Fridays", field: value(secret)}
        body = json.dumps({"scope": {"bot_uuid": BOT, "session_name": "group_g1"}, "episodes": [episode]},
                          ensure_ascii=False)
        try:
            return await h.ingest(kb_id, f"doc-{abs(hash((field, secret)))}", "memories.json", body.encode())
        except Exception as exc:  # the host shows the admin the hook's message
            return f"error: {exc}"
    return Field(f"document:{field}", plant, True)


def creation(setting: str) -> Field:
    async def plant(h: PluginHarness, chat: Chat, secret: str) -> Any:
        try:
            return await h.kb_create(config={"embedding_model_uuid": "emb-1", setting: secret})
        except Exception as exc:
            return f"error: {exc}"
    return Field(f"kb_creation:{setting}", plant, True)


ONE_SESSION = {"session_profile": {"name": "Team"}}

FIELDS: tuple[Field, ...] = (
    # `!memory` subcommands that take text
    cmd("profile", lambda s: f'!memory profile set notes "{s}"', label=" set notes"),
    cmd("profile", lambda s: f'!memory profile set traits "{s}"', label=" set traits"),
    cmd("profile", lambda s: f'!memory profile set name "{s}" --speaker u9', label=" --speaker"),
    cmd("profile", lambda s: f'!memory profile remove traits "{s}"', stores=False, label=" remove"),
    cmd("search", lambda s: f"!memory search {s}", stores=False),
    cmd("list", lambda s: f'!memory list --status "{s}"', stores=False),
    cmd("show", lambda s: f'!memory show "{s}"', stores=False),
    cmd("forget", lambda s: f'!memory forget "{s}"', stores=False),
    cmd("archive", lambda s: f'!memory archive "{s}"', stores=False),
    cmd("restore", lambda s: f'!memory restore "{s}"', stores=False),
    cmd("delete", lambda s: f'!memory delete --tag "{s}"', stores=False, label=" --tag"),
    cmd("delete", lambda s: f'!memory delete --speaker "{s}"', stores=False, label=" --speaker"),
    cmd("delete", lambda s: f'!memory delete --before "{s}"', stores=False, label=" --before"),
    cmd("export", lambda s: f'!memory export l2 --status "{s}"', stores=False),
    cmd("audit", lambda s: f'!memory audit "{s}"', stores=False),
    cmd("candidates", lambda s: f'!memory candidates "{s}"', stores=False),
    cmd("candidate", lambda s: f'!memory candidate accept "{s}"', stores=False),
    cmd("consolidate", lambda s: f'!memory consolidate preview --tag "{s}"', stores=False),
    cmd("consolidate", lambda s: f'!memory consolidate discard "{s}"', stores=False, label=" discard"),
    cmd("settings", lambda s: f'!memory settings set candidate_model_uuid "{s}"', label=" set value"),
    cmd("settings", lambda s: f'!memory settings set "{s}" 3', label=" set name"),
    cmd("settings", lambda s: f'!memory settings reset "{s}"', label=" reset name"),
    cmd("superseded", lambda s: f'!memory superseded "{s}"', stores=False),
    cmd("archived", lambda s: f'!memory archived "{s}"', stores=False),
    cmd("help", lambda s: f'!memory help "{s}"', stores=False),
    cmd("forget-me", lambda s: f'!memory forget-me "{s}"', stores=False),
    cmd("unknown", lambda s: f"!memory {s}", stores=False),
    # imports: every field of an L2 episode, of an L1 export, and of a KB document
    l2_import("content"), l2_import("tags", lambda s: [s]), l2_import("source_ref"), l2_import("sender_id"),
    l2_import("sender_name"), l2_import("id"), l2_import("supersedes", lambda s: [s]), l2_import("event_at"),
    l2_import("source"), l2_import("status"),
    l1_import(lambda s: {"scope_key": s, **ONE_SESSION}, "scope_key"),
    l1_import(lambda s: {"session_profile": {"name": s}}, "name"),
    l1_import(lambda s: {"session_profile": {"traits": [s]}}, "traits"),
    l1_import(lambda s: {"session_profile": {"preferences": [s]}}, "preferences"),
    l1_import(lambda s: {"session_profile": {"notes": s}}, "notes"),
    l1_import(lambda s: {"speaker_profiles": {s: {"name": "Ann"}}}, "speaker id"),
    l1_import(lambda s: {"session_profile": {"name": "Team", "updated_at": s}}, "updated_at"),
    # the official plugin's L1 export
    l1_import(lambda s: {"version": 1, "profiles": [{"type": "session", "scope_key": G1_KEY,
                                                     "profile": {"name": s}}]}, "official name"),
    l1_import(lambda s: {"version": 1, "profiles": [{"type": "speaker", "scope_key": G1_KEY, "sender_id": "u1",
                                                     "profile": {"freeform_traits": [s]}}]}, "official freeform"),
    l1_import(lambda s: {"version": 1, "profiles": [{"type": "speaker", "scope_key": G1_KEY, "sender_id": "u1",
                                                     "profile": {"profile_slots": {"traits": {"diet": {"value": s}}}}}]},
              "official slot value"),
    l1_import(lambda s: {"version": 1, "profiles": [{"type": "speaker", "scope_key": G1_KEY, "sender_id": s,
                                                     "profile": {"name": "Ann"}}]}, "official sender_id"),
    document("content"), document("tags", lambda s: [s]), document("source_ref"), document("sender_name"),
    # settings: the KB's creation settings and an override's value (console; the command is above)
    creation("candidate_model_uuid"), creation("consolidation_model_uuid"), creation("embedding_model_uuid"),
    creation("conversation_model_uuid"),
    creation("isolation"),
    page("/settings/set", "value", lambda s: {"name": "consolidation_model_uuid", "value": s}),
    # console bodies: a text inside a field's object (the generic plant puts it in the field itself)
    page("/profile/edit", "fields", lambda s: {"space": space(), "target": "session", "fields": {"notes": s}}),
    page("/fence/clear", "space", lambda s: {"space": {"scope_key": s, "user_key": s}}),
    page("/profiles", "space", lambda s: {"space": {"scope_key": s, "user_key": s}}),
)

# Fields of the tables that are not planted, with the reason.
NOT_PLANTED = {
    "console:/migrate.bundle": "vetted record by record by the importer, every field of the format: "
                               "tests/test_credential_foreign_formats.py",
}


def generic(name: str, fields: set[str], lines: dict[str, Callable[[str], str]],
            tools: dict[str, Callable[[str], Any]]) -> Field:
    """The plant a field of a table gets when no row plants it: the text alone in that field. A tool or
    the console checks every field before it parses one, so there it must be refused; a command may
    answer a lookup (never with the text)."""
    if name.startswith("tool:"):
        tool_name, param = name[len("tool:"):].split(".", 1)

        async def plant_tool(h: PluginHarness, chat: Chat, secret: str) -> Any:
            return await chat.tool(tool_name, {param: tools[name](secret)})
        return Field(name, plant_tool, True)
    if name.startswith("console:"):
        path, field = name[len("console:"):].rsplit(".", 1)
        takes_space = f"console:{path}.space" in fields and field != "space"
        return page(path, field, lambda s: {**({"space": space()} if takes_space else {}), field: s})
    return cmd(name[len("command:"):], lines[name], stores=False)


async def surface_fields(h: PluginHarness, registry: Registry = command.REGISTRY,
                         tools: dict[str, Callable[[str], Any]] | None = None) -> tuple[Field, ...]:
    """Every row of FIELDS, plus the generic plant of each field of the tables no row plants or exempts."""
    tools = tool_parameters() if tools is None else tools
    lines = command_lines(registry)
    fields = set(tools) | set(lines) | await console_fields(lambda path, body: console(h, path, body), api.ROUTES)
    planted = {f.name for f in FIELDS}
    stale = sorted(n for n in NOT_PLANTED if n not in fields)
    assert stale == [], f"exempt fields that no table has: {stale}"
    unplanted = sorted(n for n in fields - set(NOT_PLANTED)
                       if not any(p == n or p.startswith(n + " ") for p in planted))
    return FIELDS + tuple(generic(n, fields, lines, tools) for n in unplanted)


async def test_every_surface_field_is_covered(harness: PluginHarness) -> None:
    """Every field of the tables is planted (by a row, or the generic way) or exempt with a reason, and
    every row of a table's surface names a field the table has."""
    await harness.create_memory_kb()
    fields = await surface_fields(harness)
    names = {f.name for f in fields}
    assert all(reason for reason in NOT_PLANTED.values())
    table = set(tool_parameters()) | set(command_lines(command.REGISTRY)) | await console_fields(
        lambda path, body: console(harness, path, body), api.ROUTES)
    rows = [f.name for f in FIELDS if f.name.startswith(("tool:", "command:", "console:"))]
    # (the one row that is no table's: a word that is no subcommand)
    assert [n for n in rows if not any(n == t or n.startswith(t + " ") for t in table)] == ["command:unknown"]
    assert {"tool:remember.tags", "command:delete --status", "command:consolidate preview",
            "console:/person/erase.dry_run", "console:/review/draft/approve.space"} <= names


def test_every_kind_the_detector_names_has_a_sample() -> None:
    named = {value for name, value in vars(kinds).items() if name.isupper() and isinstance(value, str)}
    assert {s.kind for s in SAMPLES} == named
    assert [secret_kind(s.text) for s in SAMPLES] == [s.kind for s in SAMPLES]
    assert all(s.mark in s.text for s in SAMPLES)


def seen(h: PluginHarness) -> str:
    """Everything plugin storage holds, as text (JSON escapes undone where the value is JSON)."""
    parts = []
    for value in (*h.host.storage.values(), *h.host.workspace_storage.values()):
        text = value.decode("utf-8", "replace")
        try:
            parts.append(json.dumps(json.loads(text), ensure_ascii=False))
        except ValueError:
            parts.append(text)
    return "\n".join(parts)


async def vector_rows(h: PluginHarness) -> str:
    return "\n".join([json.dumps(await h.host.dump_kb(kb_id), ensure_ascii=False, default=str)
                      for kb_id in list(h.host.kbs)])


def answer_text(answer: Any) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False, default=str)


def refused(answer: Any) -> bool:
    """Refused as a credential, or first by the field's size limit (a tag holds at most 40 characters)."""
    text = answer_text(answer)
    return ("looks like" in text and "never stored" in text) or "is longer than" in text


async def plant_everywhere(h: PluginHarness, chat: Chat, fields: tuple[Field, ...]) -> list[str]:
    """Plants every sample in every field; what went wrong, one line each."""
    problems = []
    for field in fields:
        for sample in SAMPLES:
            answer = answer_text(await field.plant(h, chat, sample.text))
            where = f"{field.name} <- {sample.kind}"
            if sample.mark in answer or sample.text in answer:
                problems.append(f"{where}: echoed: {answer[:200]}")
            elif field.stores and not refused(answer):
                problems.append(f"{where}: not refused as a credential: {answer[:200]}")
            if sample.mark in seen(h):
                problems.append(f"{where}: kept in plugin storage")
    return problems


async def test_a_credential_in_any_field_is_never_kept_nor_shown(
        harness: PluginHarness, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="LongTermMemory")
    first = tuple(f for f in FIELDS if f.name.startswith("kb_creation:"))  # before the memory KB exists
    problems = await plant_everywhere(harness, open_chat(harness, "g1", sender_id="u1"), first)
    await harness.create_memory_kb()
    chat = open_chat(harness, "g1", sender_id="u1")
    await chat.remember("the team meets on Fridays", tags=["team"])
    problems += await plant_everywhere(harness, chat, tuple(f for f in await surface_fields(harness) if f not in first))
    rows = await vector_rows(harness)
    for sample in SAMPLES:
        if sample.mark in rows:
            problems.append(f"{sample.kind}: kept in a vector row")
        if sample.mark in caplog.text:
            problems.append(f"{sample.kind}: written to the log")
    assert problems == [], "\n".join(problems)


async def test_an_l1_import_whose_scope_key_holds_a_credential_is_refused(harness: PluginHarness) -> None:
    """Issue 35, finding 6: the named scope key was kept in the audit (`from_scope_key`) and quoted in the
    reply. Refused like any other field of the file: nothing imported, audited or shown."""
    await harness.create_memory_kb()
    chat = open_chat(harness, "g1", sender_id="u1")
    key = "sk-proj-abc123DEF456ghi789JKL012mno"
    reply = await chat.run("!memory import l1 " + json.dumps({"scope_key": key, **ONE_SESSION}))
    assert "refused: the scope_key looks like an API key" in reply and "abc123" not in reply, reply
    assert "abc123" not in seen(harness)
    assert "Team" not in await chat.run("!memory profile")


# ----------------------------------------------------------------------------- the tables' self-tests
def _fake_group(handler: Callable[[Any], Awaitable[Own]], monkeypatch: pytest.MonkeyPatch) -> Registry:
    monkeypatch.setattr(Catalogue, "ALL", dict(Catalogue.ALL))  # its usage line, known to this test only
    group = Subcommands()
    group("zz", ("!memory zz <text> [--note N] [--dry-run] · !memory zz add <text>", "!memory zz <text>"))(handler)
    return Registry((("view", group),), aliases={})


async def _echo_rest(call: Any) -> Own:
    return Own(call.rest)  # a subcommand that shows what it was given


def test_a_new_parameter_subcommand_form_and_option_are_read_from_their_tables(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = command_lines(_fake_group(_echo_rest, monkeypatch))
    assert {name: line("S") for name, line in lines.items()} == {
        "command:zz": '!memory zz "S"', "command:zz --note": '!memory zz --note "S"', "command:zz add": '!memory zz add "S"'}
    spec = yaml.safe_load((TOOLS / "forget.yaml").read_text(encoding="utf-8"))
    spec["metadata"]["name"] = "zz"
    spec["spec"]["parameters"]["properties"]["notes"] = {"type": "array", "items": {"type": "string"}}
    (tmp_path / "zz.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    tools = tool_parameters(tmp_path)
    assert set(tools) == {"tool:zz.episode_id", "tool:zz.notes"} and tools["tool:zz.notes"]("S") == ["S"]


async def test_a_new_endpoint_and_subcommand_without_a_row_are_planted_and_a_leak_is_caught(
        harness: PluginHarness, monkeypatch: pytest.MonkeyPatch) -> None:
    await harness.create_memory_kb()

    async def echo(memory: Any, body: dict[str, Any]) -> dict[str, Any]:
        allowed(body, {"note"})
        return {"note": body.get("note")}  # a vetted field whose endpoint forgot to vet it

    monkeypatch.setitem(api.ROUTES, "/zz/echo", Endpoint("/zz/echo", echo, vetted=frozenset({"note"})))
    registry = _fake_group(_echo_rest, monkeypatch)
    monkeypatch.setattr(command, "REGISTRY", registry)
    new = tuple(f for f in await surface_fields(harness, registry) if "zz" in f.name)
    assert sorted(f.name for f in new) == ["command:zz", "command:zz --note", "command:zz add", "console:/zz/echo.note"]
    problems = await plant_everywhere(harness, open_chat(harness, "g1", sender_id="u1"), new)
    for name in ("command:zz", "console:/zz/echo.note"):
        assert any(p.startswith(f"{name} <- ") and ": echoed: " in p for p in problems), (name, problems)
