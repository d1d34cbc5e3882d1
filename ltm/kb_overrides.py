"""Overriding the memory KB's settings for the installation ("KB settings" in docs/REQUIREMENTS.md).

LangBot never lets an admin edit a KB's creation settings (docs/HOST-FACTS.md 5.2), and
re-creating the KB drops its vectors. So the creation settings stay the base and an admin lays
overrides over them: each one validated by the creation's own parser with every other setting as
it is now (`kb_settings.parse_override`), stored beside the creation settings in the `kb_configs`
record through the write gate (the installation space), audited there, and read by every turn
from the next one on (the registry's cached record is the one rewritten).

Two settings decide where the existing records are and what they are, so they change only while
the KB holds no memory, checked with every write of the KB held back:
- `isolation` names the L2 space of every record (`user_key`); changing it on a KB with records
  would leave every one of them in a space no chat uses any more. The plugin does not re-home
  records: such a change is refused with the reason (export and import moves them by hand);
- `embedding_model_uuid` made every stored vector, and a fixed-schema store keeps the dimension of
  the first one; it may change on an empty KB only to a model whose vectors have the dimension
  the current one gives.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ._gate import WriteGate
from .diagnostics import Diagnostics
from .episodes.store import EpisodeStore
from .errors import LTMError, NoKnowledgeBase, StateError
from .identity import Isolation, MemoryScope
from .kb_registry import KnowledgeBaseRegistry
from .kb_settings import (
    EffectiveSettings,
    SettingOrigin,
    SettingValue,
    describe,
    overrides_of,
    parse_override,
    setting_name,
    shown_value,
)
from .operations import Operation
from .ports import PROBE_TEXT
from .spaces import Space
from .wording import Phrase

log = logging.getLogger("LongTermMemory")

# Settings that say where and what the stored records are: they change only on an empty KB.
RECORD_BOUND = ("isolation", "embedding_model_uuid")
SETTING_CHANGED = Phrase("audit.setting_changed", "{name}: {before} -> {after} ({origin})")
ORIGIN = {"override": Phrase("setting.origin.override", "override"),
          "creation": Phrase("setting.origin.creation", "creation value")}


@dataclass(frozen=True)
class SettingChange:
    """One override set or reset: the value before and after, and where the new value comes from."""

    name: str
    before: Any
    after: SettingValue

    @property
    def changed(self) -> bool:
        return bool(self.before != self.after.value)


class SettingsOverrides:
    def __init__(self, gate: WriteGate, kbs: KnowledgeBaseRegistry, diagnostics: Diagnostics,
                 episodes: EpisodeStore) -> None:
        self._gate = gate
        self._kbs = kbs
        self._diagnostics = diagnostics
        self._episodes = episodes

    async def _kb_id(self) -> str:
        found = await self._kbs.memory_kb()
        if found is None:
            raise NoKnowledgeBase()
        return found[0]

    async def view(self) -> EffectiveSettings:
        """The memory KB's effective settings, each with its origin and its creation value."""
        return await self._kbs.described(await self._kb_id())

    async def set(self, name: Any, value: Any, *, actor: MemoryScope | None = None) -> SettingChange:
        setting = setting_name(name)
        return await self._change(await self._kb_id(), setting, value, reset=False, actor=actor)

    async def reset(self, name: Any, *, actor: MemoryScope | None = None) -> SettingChange:
        setting = setting_name(name)
        return await self._change(await self._kb_id(), setting, None, reset=True, actor=actor)

    async def refusal(self, name: Any, value: Any) -> str | None:
        """Why `set(name, value)` would be refused now, or None: the same checks, nothing written (a
        migration's dry run says what its import will do)."""
        try:
            kb_id = await self._kb_id()
            setting = setting_name(name)
            entry = await self._kbs.entry(kb_id)
            before = describe(kb_id, entry).value(setting)
            overrides = {**overrides_of(entry), setting: parse_override(entry, setting, value)}
            after = describe(kb_id, {**entry, "overrides": overrides}).value(setting)
            if setting in RECORD_BOUND and after.value != before.value:
                await self._check_record_bound(kb_id, setting, before, after)
        except LTMError as exc:
            return exc.message
        return None

    async def _change(self, kb_id: str, name: str, value: Any, *, reset: bool,
                      actor: MemoryScope | None) -> SettingChange:
        if name in RECORD_BOUND:
            async with self._gate.kb_alone(kb_id):  # no write of the KB lands while it is checked and changed
                return await self._locked_change(kb_id, name, value, reset=reset, actor=actor)
        return await self._locked_change(kb_id, name, value, reset=reset, actor=actor)

    async def _locked_change(self, kb_id: str, name: str, value: Any, *, reset: bool,
                             actor: MemoryScope | None) -> SettingChange:
        operation = Operation.SETTINGS_RESET if reset else Operation.SETTINGS_OVERRIDE
        async with self._gate.write(actor, Space.installation(), operation) as tx:
            entry = await self._kbs.entry(kb_id)
            before = describe(kb_id, entry).value(name)
            overrides = overrides_of(entry)
            if reset:
                overrides.pop(name, None)
            else:
                overrides[name] = parse_override(entry, name, value)  # the creation's message for a bad value
                if overrides[name] == before.creation:
                    overrides.pop(name)  # the creation value again: nothing to lay over it
            after = describe(kb_id, {**entry, "overrides": overrides}).value(name)
            if overrides == overrides_of(entry):
                return SettingChange(name, before.value, after)  # nothing changes, nothing is written
            if name in RECORD_BOUND and after.value != before.value:
                await self._check_record_bound(kb_id, name, before, after)
            await self._kbs.store_overrides(tx, kb_id, overrides)
            origin = ORIGIN["override" if after.origin is SettingOrigin.OVERRIDE else "creation"]()
            tx.applied(operation, "setting", name,
                       SETTING_CHANGED(name=name, before=shown_value(before.value), after=shown_value(after.value),
                                       origin=origin),
                       kb_id=kb_id, before=before.value, after=after.value, creation=after.creation,
                       origin=after.origin.value)
        log.info("[LongTermMemory] setting %s of kb=%s: %s -> %s (%s)", name, kb_id, shown_value(before.value),
                 shown_value(after.value), after.origin.value)
        return SettingChange(name, before.value, after)

    async def _check_record_bound(self, kb_id: str, name: str, before: SettingValue, after: SettingValue) -> None:
        settings = await self._kbs.settings(kb_id)
        spaces = await self._diagnostics.known_spaces(kb_id, settings.isolation)
        holder = await self._diagnostics.holds_memories(kb_id, spaces)
        if holder is not None:
            if name == "isolation":
                raise StateError(
                    f"isolation cannot change from {before.value} to {after.value}: this memory knowledge base "
                    f"already holds memories (for example in {holder}), and every record is stored in the space "
                    f"its isolation gives it ({_space_rule(Isolation(str(before.value)))}). After the change no "
                    "chat would find them any more, and the plugin does not move records between spaces. Nothing "
                    "was changed. To change it, export each chat's episodes, create a new memory knowledge base "
                    "with the isolation you want and import them there", setting=name, space=holder)
            raise StateError(
                f"embedding_model_uuid cannot change: this memory knowledge base already holds memories (for "
                f"example in {holder}) whose vectors were made by {before.value}, and vectors of another model "
                "cannot be compared with them. Nothing was changed", setting=name, space=holder)
        if name == "embedding_model_uuid":
            old = await self._episodes.embed(str(before.value), [PROBE_TEXT])
            new = await self._episodes.embed(str(after.value), [PROBE_TEXT])
            if len(old[0]) != len(new[0]):
                raise StateError(
                    f"embedding_model_uuid cannot change to {after.value}: its vectors have {len(new[0])} "
                    f"dimensions, the vector store of this knowledge base takes {len(old[0])}. Nothing was changed",
                    setting=name)


def _space_rule(isolation: Isolation) -> str:
    return ("one space per chat" if isolation is Isolation.SESSION else "one space shared by every chat of a bot")


__all__ = ["RECORD_BOUND", "SettingChange", "SettingsOverrides"]
