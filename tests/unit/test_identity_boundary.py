"""A turn's identity is built in one module, and no component builds a memory scope (issue 32, point 3).

Components receive an `Identity` from `ltm.langbot` (the one module that reads the host's shapes) and a
`MemoryScope` from the facade (`scope_for`, `selected_scope`); they use both as values. The type cannot be
kept out of their reach (every tool and command handler is typed with it), so an import contract cannot
say this: the scan below parses every `components/**/*.py` and fails on a call that builds either one.
The second half checks what that module answers for the surfaces: the command test, the attached KB,
and the fallbacks from query variables to the event.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

import ltm.identity
from ltm import Identity, Isolation, MemoryScope, ValidationError
from ltm.langbot import (
    attached_kbs,
    identity_from_event,
    identity_from_session_name,
    is_memory_command,
    memory_kb_attached,
    read_turn,
    user_text,
)

ROOT = Path(__file__).resolve().parents[2]

# The classes whose construction (a call, or a call of one of their class methods) belongs to the core and
# the adapter.
_BUILT_ONLY_BELOW = frozenset({MemoryScope.__name__, Identity.__name__})
_FROM = ("ltm", "ltm.identity")


def _returns_one(function: Callable[..., object]) -> bool:
    """Whether a function's return annotation names one of the classes built only below."""
    returned = str(inspect.signature(function).return_annotation)  # a string here: postponed annotations
    return any(re.search(rf"\b{name}\b", returned) for name in _BUILT_ONLY_BELOW)


def builders_of(module: object) -> frozenset[str]:
    """The module's functions, and its classes' instance methods, that return an Identity or a MemoryScope
    (`chat_of_key`, `scope_of_space_key`, `with_kb`), read from the code, so a builder renamed or added
    there is in the scan without an edit here. A class method is covered by its class's name."""
    found = {name for name, value in vars(module).items()
             if inspect.isfunction(value) and value.__module__ == getattr(module, "__name__", "") and _returns_one(value)}
    for cls in (Identity, MemoryScope):
        found |= {name for name, value in vars(cls).items() if inspect.isfunction(value) and _returns_one(value)}
    return frozenset(found)


_BUILDERS = builders_of(ltm.identity)


def _names(tree: ast.AST) -> dict[str, str]:
    """Local name -> the core's name, for names imported from `ltm` or `ltm.identity` (aliases too)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in _FROM:
            for alias in node.names:
                names[alias.asname or alias.name] = alias.name
    return names


def _built(call: ast.Call, names: dict[str, str]) -> str | None:
    """What the call builds: `MemoryScope(...)`, `Identity.from_host(...)`, `ltm.MemoryScope.stored(...)`,
    `scope.with_kb(...)`, `chat_of_session_key(...)`; None for any other call."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _BUILDERS:
        return func.attr
    if isinstance(func, ast.Attribute) and isinstance(func.value, (ast.Name, ast.Attribute)):
        func = func.value if _core_name(func.value, names) in _BUILT_ONLY_BELOW else func
    name = _core_name(func, names)
    return name if name in _BUILT_ONLY_BELOW | _BUILDERS else None


def _core_name(node: ast.expr, names: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ltm":
        return node.attr
    if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "ltm.identity":
        return node.attr
    return None


def scope_builders(source: str, path: str = "<source>") -> list[str]:
    tree = ast.parse(source, filename=path)
    names = _names(tree)
    return [f"{path}:{node.lineno} builds {found}" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and (found := _built(node, names)) is not None]


def test_no_component_builds_an_identity_or_a_scope() -> None:
    files = sorted((ROOT / "components").rglob("*.py"))
    assert len(files) > 40  # the scan reads the real tree
    found = [hit for file in files
             for hit in scope_builders(file.read_text(encoding="utf-8"), str(file.relative_to(ROOT)))]
    assert found == []


@pytest.mark.parametrize("source", [
    # the console's own scope before it asked the facade
    "from ltm import MemoryScope\n"
    "def f(a, b, k, i):\n    return MemoryScope(scope_key=a, user_key=b, kb_id=k, isolation=i)\n",
    # the listeners' own identities before ltm.langbot built them
    "from ltm import Identity\ndef f(v):\n    return Identity.from_host(launcher_type='group', launcher_id=v)\n",
    "from ltm.identity import MemoryScope as Scope\ndef f(a, b):\n    return Scope.stored(a, b, '', 'session')\n",
    "import ltm\ndef f(a, b):\n    return ltm.MemoryScope.selected(a, b, '', 'session')\n",
    "import ltm.identity\ndef f(i):\n    return ltm.identity.MemoryScope.for_identity(i, 'bot')\n",
    "from ltm.identity import scope_of_space_key\ndef f(k):\n    return scope_of_space_key(k, 'kb', 'bot')\n",
    "from ltm.identity import chat_of_key as chat\ndef f(k):\n    return chat(k)\n",
    "import ltm.identity\ndef f(k):\n    return ltm.identity.chat_of_key(k)\n",
    "def f(scope):\n    return scope.with_kb('other')\n",
])
def test_the_scan_finds_a_scope_or_identity_built_in_a_component(source: str) -> None:
    assert len(scope_builders(source)) == 1


def test_the_builders_are_read_from_the_code_by_todays_names() -> None:
    # Issue 40, point 4: the list named the builders by their names before the glossary rename, so a
    # component calling today's `chat_of_key` passed. Each builder the code has is rejected in a component.
    assert {"chat_of_key", "scope_of_space_key", "with_kb"} <= _BUILDERS
    assert not {"chat_of_session_key", "scope_of_user_key"} & _BUILDERS
    for name in sorted(_BUILDERS - {"with_kb"}):
        source = f"from ltm.identity import {name}\ndef f(*a):\n    return {name}(*a)\n"
        assert scope_builders(source) == [f"<source>:3 builds {name}"], name


def test_a_builder_added_to_the_core_joins_the_scan() -> None:
    added = type(ltm.identity)("ltm.identity")
    exec("from ltm.identity import MemoryScope\n"  # a module built here, to be read
         "def scope_of_anything(x) -> MemoryScope | None:\n    return None\n"
         "def not_a_builder(x) -> str:\n    return x\n", vars(added))
    assert {"scope_of_anything"} <= builders_of(added) and "not_a_builder" not in builders_of(added)


def test_the_scan_lets_components_use_the_types() -> None:
    source = ("from ltm import Identity, MemoryScope, MemoryService\n"
              "async def f(memory: MemoryService, identity: Identity) -> MemoryScope:\n"
              "    scope = await memory.scope_for(identity)\n"
              "    assert isinstance(scope, MemoryScope)\n"
              "    return scope\n")
    assert scope_builders(source) == []


# ----------------------------------------------------------------------------- what the one module answers
@pytest.mark.parametrize(("text", "command"), [
    ("!memory list", True), ("！memory list", True), ("  !MEMORY", True), ("！memory", True),
    ("!memories", False), ("memory list", False), ("!help memory", False), ("", False), ("！", False),
])
def test_a_memory_command_is_recognized_with_either_prefix(text: str, command: bool) -> None:
    assert is_memory_command(text) is command


def test_the_memory_kb_is_attached_only_when_the_pipeline_lists_it() -> None:
    assert memory_kb_attached({"_knowledge_base_uuids": ["kb-0", "kb-1"]}, "kb-1")
    assert not memory_kb_attached({"_knowledge_base_uuids": ["kb-0"]}, "kb-1")
    assert not memory_kb_attached({"_knowledge_base_uuids": "kb-1"}, "kb-1")  # not a list: not attached
    assert not memory_kb_attached({}, "kb-1")
    assert not memory_kb_attached(None, "kb-1")
    assert attached_kbs({"_knowledge_base_uuids": ["kb-0"]}) == ["kb-0"]
    assert attached_kbs({"_knowledge_base_uuids": None}) is None


def test_the_user_text_is_the_variable_cleaned() -> None:
    assert user_text({"user_message_text": "hi\u2028there\x00"}) == "hi\nthere"
    assert user_text({"user_message_text": 42}) == ""
    assert user_text(None) == ""


def _responded(bot_uuid: str = "bot-session") -> SimpleNamespace:
    """The fields `NormalMessageResponded` carries about the chat."""
    return SimpleNamespace(launcher_type="group", launcher_id="g-event", sender_id="s-event",
                           session=SimpleNamespace(bot_uuid=bot_uuid))


def test_an_event_identity_takes_the_query_variables_first() -> None:
    variables = {"launcher_type": "person", "launcher_id": "p1", "sender_id": "s1", "sender_name": " Ann\x00 "}
    identity = identity_from_event(_responded(), variables, bot_uuid="bot-1", query_id=7)
    assert (identity.chat_key, identity.sender_id, identity.sender_name, identity.query_id) == (
        "bot-1:person_p1", "s1", "Ann", 7)


def test_an_event_identity_falls_back_to_the_event() -> None:
    # A blank launcher id and an absent sender come from the event; an unread bot from its session.
    identity = identity_from_event(_responded(), {"launcher_id": ""}, bot_uuid=None, query_id=1)
    assert (identity.chat_key, identity.sender_id) == ("bot-session:group_g-event", "s-event")
    # A bot the query named (even "none") is not replaced by the session's.
    assert identity_from_event(_responded(), {}, bot_uuid="", query_id=1).chat_key == "group_g-event"


def test_a_prompt_event_identity_reads_its_session_name() -> None:
    prompt = SimpleNamespace(session_name="group_g_1")  # `PromptPreProcessing` has no launcher fields
    identity = identity_from_event(prompt, {"sender_id": "s1"}, bot_uuid="bot-1", query_id=1)
    assert (identity.launcher_type, identity.launcher_id, identity.chat_key) == ("group", "g_1", "bot-1:group_g_1")
    with pytest.raises(ValidationError):
        identity_from_event(SimpleNamespace(session_name="nonsense"), {}, bot_uuid="bot-1", query_id=1)


def test_an_event_identity_escapes_host_ids() -> None:
    identity = identity_from_event(_responded(), {"launcher_id": "g\u202e1", "sender_id": "s\x001"},
                                   bot_uuid="b:1", query_id=1)
    assert "\u202e" not in identity.chat_key and "\x00" not in identity.sender_id
    assert identity.bot_uuid != "b:1"  # a bot uuid's ":" is escaped: the session key reads back one way


def test_a_session_name_names_a_chat_or_nothing() -> None:
    identity = identity_from_session_name("person_u1", "bot-1")
    assert identity is not None and identity.chat_key == "bot-1:person_u1"
    assert identity_from_session_name("channel_1") is None
    assert identity_from_session_name(None) is None


class _Event:
    """An `EventContext` as the listeners see it: the query's variables and bot, each read counted."""

    def __init__(self, variables: dict[str, object], bot_uuid: str | Exception = "bot-1") -> None:
        self.event, self.query_id, self.variables, self.bot_uuid = _responded(), 3, variables, bot_uuid
        self.calls: list[str] = []

    async def get_query_vars(self) -> dict[str, object]:
        self.calls.append("get_query_vars")
        return self.variables

    async def get_bot_uuid(self) -> str:
        self.calls.append("get_bot_uuid")
        if isinstance(self.bot_uuid, Exception):
            raise self.bot_uuid
        return self.bot_uuid


_ATTACHED = {"_knowledge_base_uuids": ["kb-1"], "user_message_text": "hi", "sender_id": "s1"}


@pytest.mark.parametrize("together", [True, False], ids=["injection", "after-reply"])
async def test_a_turn_is_read_with_the_same_host_calls_as_before(together: bool) -> None:
    ctx = _Event(_ATTACHED)
    turn = await read_turn(ctx, "kb-1", bot_with_variables=together)
    assert (turn.kb_id, turn.text, turn.command) == ("kb-1", "hi", False)
    assert ctx.calls == (["get_query_vars", "get_bot_uuid"] if together else ["get_query_vars"])
    assert (await turn.identity()).chat_key == "bot-1:group_g-event"
    await turn.identity()
    assert ctx.calls.count("get_bot_uuid") == 1  # read once per turn
    # No memory KB, or one this pipeline does not have: the variables only, never the bot.
    for kb_id, variables in ((None, _ATTACHED), ("kb-2", _ATTACHED)):
        ctx = _Event(variables)
        assert (await read_turn(ctx, kb_id, bot_with_variables=together)).kb_id is None
        assert ctx.calls == (["get_query_vars", "get_bot_uuid"] if together and kb_id else ["get_query_vars"])


async def test_a_turn_says_a_command_and_how_a_lost_bot_is_read() -> None:
    turn = await read_turn(_Event({**_ATTACHED, "user_message_text": "！memory list"}), "kb-1")
    assert turn.command and turn.kb_id == "kb-1"
    # After the reply a bot the query cannot give comes from the event's session ...
    assert (await (await read_turn(_Event(_ATTACHED, RuntimeError("gone")), "kb-1")).identity()).chat_key == \
        "bot-session:group_g-event"
    # ... while the injection's read fails as a whole (no memory this turn rather than a guessed bot).
    with pytest.raises(RuntimeError):
        await read_turn(_Event(_ATTACHED, RuntimeError("gone")), "kb-1", bot_with_variables=True)


# ----------------------------------------------------------------------------- the scopes the core derives
def test_a_selected_pair_gives_a_scope_only_when_the_plugin_derives_it() -> None:
    scope = MemoryScope.selected("bot-1:group_g1", "bot:bot-1", "kb", Isolation.BOT)
    assert (scope.space_key, scope.kb_id, scope.isolation, scope.identity) == ("bot:bot-1", "kb", Isolation.BOT, None)
    with pytest.raises(ValidationError, match="is not the key this plugin derives"):
        MemoryScope.selected("bot-1:group_g1", "bot-1:group_g2", "kb", Isolation.SESSION)
    with pytest.raises(ValidationError, match="scope_key is not a chat's key"):
        MemoryScope.selected("bot:bot-1", "bot:bot-1", "kb", Isolation.BOT)


def test_a_chat_key_gives_the_scope_its_isolation_derives() -> None:
    assert MemoryScope.of_chat_key("bot-1:group_g1", "kb", "bot").space_key == "bot:bot-1"
    assert MemoryScope.of_chat_key("bot-1:group_g1", "kb", "session").space_key == "bot-1:group_g1"
    assert MemoryScope.of_chat_key("group_g1", "kb", "bot").space_key == "group_g1"  # no bot: its own space
