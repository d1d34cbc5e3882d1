"""One word per concept (docs/ARCHITECTURE.md, "Glossary"): a retired word that comes back as a Python
identifier in `ltm/`, `components/` or `testhost/` fails here, naming the file and line.

Identifiers only (names, attributes, parameters, keyword arguments, definitions, imports), read with
`ast`, so f-string expressions count and strings never do: the stored names (`scope_key`, `user_key`,
...) live on as data inside strings. A keyword argument of a call whose keywords are data (a catalogue
text's parameters, `dict(...)`'s keys) is data too.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("ltm", "components", "testhost")

# Callees whose keyword arguments are data, never identifiers of ours: a catalogue text's parameters,
# dict keys, and a gated write's `**meta` (`tx.applied(...)` and its kin), stored in its audit entry.
DATA_KEYWORDS_OF = frozenset({"SAY", "Phrase", "said", "Said", "dict", "update", "format", "phrase", "say", "text",
                              "Own", "own", "applied", "reverted", "noted", "carried"})

ADAPTER = ("ltm/langbot/",)
OFFICIAL_FORMAT = ("ltm/official/",)
# LangBot's own words for a KB's vector store (its collection, a `file_id` space in it) stay where the host's
# API is spoken: the adapter, and the test host's LangBot (its RAG actions and its vector stores).
HOST_STORE = (*ADAPTER, "testhost/vectors/", "testhost/fake_host.py")


@dataclass(frozen=True)
class Retired:
    pattern: str  # matched against the whole identifier
    use: str  # the glossary's word
    only_in: tuple[str, ...] = ()  # retired only below these paths ("" prefix = everywhere scanned)
    allowed_in: tuple[str, ...] = ()  # paths where the word stays (the host's or the official plugin's name)

    def applies(self, path: str) -> bool:
        if self.only_in and not path.startswith(self.only_in):
            return False
        return not path.startswith(self.allowed_in) if self.allowed_in else True


RETIRED = (
    Retired(r".*scope_key.*", "chat_key (stored as scope_key, in strings only)", allowed_in=OFFICIAL_FORMAT),
    Retired(r".*session_key.*", "chat_key", allowed_in=ADAPTER),
    Retired(r".*user_key.*", "space_key (stored as user_key, in strings only)", allowed_in=OFFICIAL_FORMAT),
    # `sender_id` / `sender_name` are the stored and host names of the speaker's id and name.
    Retired(r"(?i)(?!.*sender_(id|name)).*sender.*", "speaker", allowed_in=ADAPTER),
    Retired(r"speaker_(id|name)", "sender_id / sender_name (speaker_id / speaker_name are only recall_memory's "
            "filters)", allowed_in=("ltm/episodes/recall.py", "components/tools/recall_memory.py")),
    Retired(r"speaker_bonus|sender_bonus", "own_speaker_bonus / named_speaker_bonus"),
    Retired(r"ArchivalCandidate|archival_candidates?", "Archivable / archivable_records"),
    # In recall and consolidation "candidate" is never the word: a window entry, an archivable record,
    # a summary source. (The KB setting `consolidation_max_candidates` keeps its stored name.)
    # The KB's vector store is the host's collection; the core says `kb_id` (the SDK's `get_collection_id`,
    # the stdlib's `collections` and the abstract `Collection` are not ours).
    Retired(r"(?!(collections|get_collection_id|Collection)$)(?i:.*collection.*)", "kb_id (the KB) or an L2Space (a space)",
            allowed_in=HOST_STORE),
    Retired(r"(?i)(?!consolidation_max_candidates$).*candidate.*",
            "WindowEntry / vector_window (recall), Archivable / max_sources (consolidation)",
            only_in=("ltm/episodes/", "ltm/consolidation/")),
)
# The space as a string: a parameter or field named `space` annotated `str` (the core's space is one
# value, `L2Space`; its parts are `kb_id` and `space_key`).
STR_SPACE = Retired(r"spaces?", "an L2Space (or kb_id / space_key for one part)", allowed_in=HOST_STORE)
RETIRED_MODULES = ("records",)  # three modules of this name held three different things


def identifiers(tree: ast.AST) -> list[tuple[str, int]]:
    """Every identifier a module defines or uses, with its line, except the data keywords of a call."""
    data_keywords: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in DATA_KEYWORDS_OF:
                data_keywords.update(id(k) for k in node.keywords)
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name):
            found.append((node.id, line))
        elif isinstance(node, ast.Attribute):
            found.append((node.attr, node.end_lineno or line))
        elif isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and id(node) not in data_keywords):
            if node.arg:  # a `**kwargs` keyword has none
                found.append((node.arg, line))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append((node.name, line))
        elif isinstance(node, ast.alias):
            found.extend((part, line) for part in (node.asname or node.name).split("."))
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.extend((part, line) for part in node.module.split("."))
        elif isinstance(node, ast.Global | ast.Nonlocal):
            found.extend((name, line) for name in node.names)
    return found


def str_annotated(tree: ast.AST) -> list[tuple[str, int]]:
    """Every parameter and annotated name whose annotation is `str` (or `str | None`), with its line."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            name, annotation = node.arg, node.annotation
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name | ast.Attribute):
            target = node.target
            name, annotation = target.id if isinstance(target, ast.Name) else target.attr, node.annotation
        else:
            continue
        if annotation is not None and re.fullmatch(r"str( \| None)?|None \| str", ast.unparse(annotation)):
            found.append((name, node.lineno))
    return found


def retired_uses(path: str, source: str) -> list[str]:
    tree = ast.parse(source, filename=path)
    problems = []
    for name, line in str_annotated(tree):
        if STR_SPACE.applies(path) and re.fullmatch(STR_SPACE.pattern, name):
            problems.append(f"{path}:{line}: `{name}: str` is a space as a string; use {STR_SPACE.use}")
    for name, line in identifiers(tree):
        for rule in RETIRED:
            if rule.applies(path) and re.fullmatch(rule.pattern, name):
                problems.append(f"{path}:{line}: `{name}` is a retired word; use {rule.use}")
        if name in RETIRED_MODULES and _imports_module(tree, name, line):
            problems.append(f"{path}:{line}: module `{name}`: name a module for what it holds")
    return problems


def _imports_module(tree: ast.AST, name: str, line: int) -> bool:
    return any(isinstance(node, ast.ImportFrom) and node.lineno == line and node.module
               and name in node.module.split(".") for node in ast.walk(tree))


def scanned_files() -> list[Path]:
    return sorted(p for folder in SCANNED for p in (ROOT / folder).rglob("*.py"))


def test_no_retired_word_in_the_core_the_components_or_the_test_host():
    problems = []
    for file in scanned_files():
        rel = file.relative_to(ROOT).as_posix()
        problems.extend(retired_uses(rel, file.read_text(encoding="utf-8")))
    assert not problems, "\n".join(problems)


def test_no_module_is_named_records():
    assert not [p for p in scanned_files() if p.stem in RETIRED_MODULES]


def test_tokenize_is_imported_from_terms_only():
    wrong = []
    for file in scanned_files():
        rel = file.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and any(a.name == "tokenize" for a in node.names) \
                    and (node.module or "").split(".")[-1] != "terms":
                wrong.append(f"{rel}:{node.lineno}: tokenize from {node.module}")
    assert not wrong, "\n".join(wrong)


def test_the_scan_names_each_kind_of_retired_word_with_its_place():
    source = (
        "def f(scope, sender, user_key=''):\n"
        "    chat = scope.scope_key\n"
        "    return f'{scope.session_key}', SAY('x', sender=sender), dict(user_key=chat)\n"
        "from .records import Candidate\n"
        "bonus = recipe.speaker_bonus\n"
    )
    found = retired_uses("components/tools/example.py", source)
    assert all(p.startswith("components/tools/example.py:") for p in found)
    # `sender` as a parameter and as the value passed on, never the catalogue's `sender=` keyword;
    # `user_key` as a parameter, never `dict(user_key=...)`'s key; an f-string's expression counts.
    assert sorted((p.split("`")[1], int(p.split(":")[1])) for p in found) == [
        ("records", 4), ("scope_key", 2), ("sender", 1), ("sender", 3), ("session_key", 3),
        ("speaker_bonus", 5), ("user_key", 1)]


def test_the_host_and_official_names_stay_allowed_in_their_places():
    assert retired_uses("ltm/langbot/identity.py", "sender = session.sender\n") == []
    assert retired_uses("ltm/official/bundle/reading.py", "scope_key = entry['scope_key']\n") == []
    assert retired_uses("ltm/official/profiles.py", "user_key = entry['user_key']\n") == []
    assert retired_uses("ltm/profiles/book.py", "user_key = entry['user_key']\n") != []
    assert retired_uses("ltm/episodes/recall.py", "speaker_id = ''\n") == []
    assert retired_uses("ltm/candidates/queue.py", "candidate = 1\n") == []
    assert retired_uses("ltm/episodes/recall.py", "candidates = []\n") != []
    assert retired_uses("ltm/consolidation/sources.py", "n = settings.consolidation_max_candidates\n") == []


def test_the_vector_stores_own_words_stay_with_the_host():
    source = (
        "async def search(self, collection: str, space: str, space_key: str, kb_id: str, named: L2Space):\n"
        "    await drop_collection(collection)\n"
        "    return collections.abc, context.get_collection_id(), Collection\n"
        "class Call:\n"
        "    space: str | None = None\n"
    )
    found = sorted((p.split("`")[1], int(p.split(":")[1])) for p in retired_uses("ltm/episodes/store.py", source))
    # `collection` as a parameter and as the value passed on, `drop_collection`, and a space as a string
    # (a parameter, a field); never `space_key`, `kb_id`, an `L2Space`, the stdlib's or the SDK's names.
    assert found == [("collection", 1), ("collection", 2), ("drop_collection", 2), ("space: str", 1),
                     ("space: str", 5)]
    assert retired_uses("ltm/langbot/vector_index.py", source) == []
    assert retired_uses("testhost/vectors/chroma.py", source) == []
    assert retired_uses("testhost/memory_ports.py", source) != []
