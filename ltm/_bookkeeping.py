"""The one writer of plugin storage: `Bookkeeping`, the `JsonStore` that can also write.

Memory (profiles, candidates, drafts, document indexes, the KB configuration, settings) changes only
inside a gated write, through `WriteTx.set/delete` (ltm/_gate.py): serialized, fenced, audited. The
records that are not memory are written here directly, by the few modules handed this object:

- the audit log (`_audit.py`: appends, and a person's erasure rewriting entries to name "(erased)")
  and the fences and write-ahead markers (`_fences.py`): what the gate itself keeps;
- the injection snapshot and the per-scope marker (`diagnostics.py`): rewritten freely, never audited;
- the names a chat and its latest speaker go by (`chat_labels.py`): labels for operators, not memory;
- the saved word-index pages (`episodes/index_pages.py`): a cache of the vector records, rebuilt from them
  (and removed before records are deleted, so no page keeps their words);
- the layout marker and the one-time storage-layout migration (`migrations/`): run before, or outside,
  any memory write.

Every other module receives plugin storage typed as the read-only `JsonStore`, so a storage write
outside the gate fails type checking, and only the modules above (and `parts.py`, which assembles
them) may import this one: the `only_importers` contract in pyproject.toml
(scripts/import_contracts.py) fails for any other importer.
"""

from __future__ import annotations

import json
from typing import Any

from ._storage import JsonStore
from .errors import HostError


class Bookkeeping(JsonStore):
    async def set(self, key: str, value: Any, *, keep: bool = True) -> None:
        await self._ensure_ready()
        try:
            data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError) as exc:
            # Nothing reached the host: an authoritative, local refusal.
            raise HostError(f"storage record {key[:60]} could not be encoded ({type(exc).__name__})") from None

        def stored() -> None:
            if self._known is not None:
                self._known.add(key)
                self._remember(key, data, keep)

        await self._changed(key, self._port.set(key, data), stored)

    async def delete(self, key: str) -> None:
        await self._ensure_ready()

        def deleted() -> None:
            if self._known is not None:
                self._known.discard(key)

        await self._changed(key, self._port.delete(key), deleted)

    def raw(self) -> Bookkeeping:
        """The same storage without the first-use step and without the cache (for the step itself)."""
        return Bookkeeping(self._port, cache=False)
