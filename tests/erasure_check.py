"""Proof that an erasure leaves no trace (issue 35): one checker for every surface that erases.

`capture` reads everything the plugin keeps in the test host, as the host holds it: every plugin-storage
value (profiles, audit entries, injection snapshots, candidates, summary drafts, lineage, saved
word-index pages, markers and fences), every vector row of the given KBs (text and metadata), and the
exports the console gives of the given chats (a chat's export and audit export, and the People tab's
export of the erased sender). `ErasureCheck` then says

- `traces`: every place that still holds one of the `marks` (the erased person's sender id, display
  name and distinctive words, or a removed KB's words), case-insensitively, in keys and in values;
- `others_changed`: every piece of someone else's data that is not byte-identical after the erasure.
  A record that never mentioned a mark nor a record id in `gone` (the erased episodes and the summaries
  built from them) must be unchanged, or bookkeeping (markers, fences, saved indexes, snapshots, the
  known-chat markers). A record that held both the person's and others' parts (a chat's candidate
  queue, an audit chunk, a lineage map, a closed-drafts log) must keep every other part, in order;
  additions (new audit entries) are allowed, and a record that held only the person may go.
  A chat's conversation record keeps every other speaker's turns and digest lines unchanged and in
  order; its summary text may be rebuilt from those lines (that is how the person's words leave it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from testhost import FakeLangBotHost, PluginHarness

# Plugin-storage kinds (`v2/<kind>/...`) that are state of the plugin, not anyone's data: they may change
# or go with an erasure, as long as they hold no trace. A chat's label names its latest speaker: any turn
# of anyone changes it (ltm/chat_labels.py).
BOOKKEEPING = frozenset({"writing", "fence", "wordindex", "snapshot", "scope", "label"})


@dataclass
class Installation:
    """Everything the plugin keeps in one test host at one moment."""

    storage: dict[str, Any]
    rows: dict[str, dict[str, Any]]  # "<kb>/<row id>" -> the row as the store lists it
    exports: dict[str, Any] = field(default_factory=dict)


def _decoded(raw: bytes) -> Any:
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


async def capture(host: FakeLangBotHost, kbs: Iterable[str], harness: PluginHarness | None = None,
                  chats: Iterable[dict[str, str]] = (), sender_id: str = "") -> Installation:
    """Plugin storage and the KBs' rows straight from the host; with a started `harness`, also the
    console's exports of `chats` (and of `sender_id` in the People tab)."""
    storage = {key: _decoded(value) for key, value in host.storage.items()}
    rows: dict[str, dict[str, Any]] = {}
    for kb in kbs:
        for row in await host.dump_kb(kb):
            rows[f"{kb}/{row.get('id')}"] = {k: v for k, v in row.items() if k not in ("vector", "embedding")}
    exports: dict[str, Any] = {}
    if harness is not None:
        for chat in chats:
            for endpoint in ("/export", "/audit/export", "/profiles", "/injection", "/conversation"):
                exports[f"{endpoint} {chat['scope_key']}"] = await _console(harness, endpoint, {"space": chat})
        if sender_id:  # the People tab's export of the sender (less its echo of the id it was asked for)
            found = await _console(harness, "/person/export", {"sender_id": sender_id})
            exported = dict(found.get("export") or {})
            exported.pop("sender_id", None)
            exports["/person/export"] = exported
    return Installation(storage, rows, exports)


async def _console(harness: PluginHarness, endpoint: str, body: dict[str, Any]) -> Any:
    response = await harness.page_api("console", endpoint, "POST", body)
    return response["data"] if response.get("error") is None else response


class ErasureCheck:
    def __init__(self, marks: Iterable[str], gone: Iterable[str] = ()) -> None:
        self.marks = tuple(m.casefold() for m in marks if m)
        self.gone = frozenset(gone)
        assert self.marks, "a check needs something to look for"

    # ------------------------------------------------------------------ what still holds a mark
    def holds(self, value: Any) -> bool:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        folded = text.casefold()
        return any(mark in folded for mark in self.marks)

    def touches(self, value: Any) -> bool:
        """Whether `value` holds a mark or names a record that was to go."""
        if self.holds(value):
            return True
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return any(record in text for record in self.gone)

    def traces(self, state: Installation) -> list[str]:
        found = [f"plugin storage {key}" for key, value in sorted(state.storage.items())
                 if self.holds(key) or self.holds(value)]
        found += [f"vector row {key}" for key, row in sorted(state.rows.items()) if self.holds(row)]
        found += [f"export {name}" for name, value in sorted(state.exports.items()) if self.holds(value)]
        return found

    def witnesses(self, state: Installation) -> set[str]:
        """The kinds of place that hold a mark (a check is only as good as what it saw before)."""
        kinds = {"vector row" for row in state.rows.values() if self.holds(row)}
        kinds |= {key.split("/")[1] if key.startswith("v2/") else key
                  for key, value in state.storage.items() if self.holds(key) or self.holds(value)}
        return kinds

    # ------------------------------------------------------------------ what must not have changed
    def others_changed(self, before: Installation, after: Installation) -> list[str]:
        problems = [f"vector row {key} changed or gone" for key, row in sorted(before.rows.items())
                    if not self.touches(row) and after.rows.get(key) != row]
        for key, value in sorted(before.storage.items()):
            kind = key.split("/")[1] if key.startswith("v2/") else key
            if kind in BOOKKEEPING or (kind == "audit" and key.endswith("/head")):
                continue
            if key not in after.storage:
                if not self.touches(value) and not self.touches(key):
                    problems.append(f"plugin storage {key} gone")
                continue
            if kind == "conversation":
                if not self._conversation_kept(value, after.storage[key]):
                    problems.append(f"plugin storage {key}: another speaker's turns or digest lines changed")
            elif self.touches(value) or kind == "audit":  # an audit chunk may also gain new entries
                if not self._kept(value, after.storage[key]):
                    problems.append(f"plugin storage {key}: another person's part changed")
            elif after.storage[key] != value:
                problems.append(f"plugin storage {key} changed")
        return problems

    def _conversation_kept(self, before: Any, after: Any) -> bool:
        """The other speakers' turns and digest lines, in order; the summary's text, source, speakers and
        revision are the rebuild's (ltm/conversation/fold.py, `erased`)."""
        if not (isinstance(before, dict) and isinstance(after, dict)):
            return before == after
        def digest(record: dict[str, Any]) -> Any:
            return (record.get("summary") or {}).get("digest") or []
        return self._kept(before.get("turns") or [], after.get("turns") or []) \
            and self._kept(digest(before), digest(after))

    def _kept(self, before: Any, after: Any) -> bool:
        """Every part of `before` that is not the person's is still in `after` (same order; additions allowed)."""
        if isinstance(before, dict):
            if not isinstance(after, dict):
                return False
            for key, value in before.items():
                if self.touches(key) or (not isinstance(value, (dict, list)) and self.touches(value)):
                    continue
                if key not in after or not self._kept(value, after[key]):
                    return False
            return True
        if isinstance(before, list):
            if not isinstance(after, list):
                return False
            rest = iter(after)
            return all(any(self._kept(item, candidate) for candidate in rest)
                       for item in before if not self.touches(item))
        return bool(before == after)
