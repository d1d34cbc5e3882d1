"""Importing a migration bundle into every chat's memory space at once, or only saying what it would do.

Order: the settings first (so `isolation` changes, when it may, before any record is written), then
each chat: its profiles, episodes, audit entries and candidates, each through the path that already
writes them (the L1 import, the episode import, the write gate, the candidate queue), so limits,
the refusal of credentials, duplicates and the audit hold as for any other write.

**Another installation's bundle** is refused whole: when this LangBot can list its bots and none of
the bundle's bots is among them. A chat whose bot this LangBot does not have is skipped with that
reason; the WebUI debug chat's bot (`DEBUG_CHAT_BOT`) is in no bot list but in every LangBot, so its
chats are imported (it never counts as evidence that the bundle is this installation's).
**Importing twice writes nothing new**: episodes are known by their official id (`original_id`), audit
entries by `official_audit_id`, candidates by their id, and a profile already stored exactly so is not
written again; settings already at the bundle's value are left alone.

A dry run reads only. It counts what would be written, what is already here and what would be skipped
and why; an episode that repeats a stored fact without having been imported before is found only by
the import itself (that check embeds the text), so the dry run's count is an upper bound there.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from ..._audit import AuditLog
from ..._gate import WriteGate
from ...candidates.candidate import Candidate
from ...candidates.queue import CandidateQueue
from ...episodes.transfer import EpisodeTransfer, parse_items
from ...errors import LTMError, ValidationError
from ...host_values import escape_bot_uuid
from ...identity import Identity, Isolation, MemoryScope, chat_of_key, scope_of_space_key
from ...kb_overrides import SettingsOverrides
from ...kb_registry import KnowledgeBaseRegistry
from ...kb_settings import KBSettings
from ...operations import Operation
from ...ports import HostDirectory
from ...profiles.book import ProfileBook
from ...skipped import SkippedRecord
from ...spaces import Space
from .official_records import NO_EQUIVALENT, SETTING_EQUIVALENTS, audit_entry, candidate
from .reading import Bundle, ChatPart, read_bundle

log = logging.getLogger("LongTermMemory")
OPERATION = Operation.OFFICIAL_MIGRATION
# LangBot 4.11.2's WebUI debug chat answers as this bot, which lives in memory: `get_bots` never lists it,
# yet every installation has it, so an official plugin tried in the debug chat kept chats under it.
DEBUG_CHAT_BOT = "websocket-proxy-bot"


@dataclass
class PartCount:
    write: int = 0  # written (import) or would be written (dry run)
    already: int = 0  # held here already: not written again
    # At an index of the part's array, a JSON Pointer inside a profile, or the part's name (all of it).
    skipped: list[SkippedRecord[int] | SkippedRecord[str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"write": self.write, "already": self.already,
                "skipped": [{"at": s.position, "reason": s.reason} for s in self.skipped]}


@dataclass
class ChatReport:
    key: str
    space_key: str = ""  # the space its episodes go to here (stored and shown as "space")
    problem: str = ""  # why nothing of the chat is imported
    parts: dict[str, PartCount] = field(default_factory=lambda: {p: PartCount() for p in
                                                                 ("profiles", "episodes", "audit", "candidates")})

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "space": self.space_key, "problem": self.problem,
                **{name: part.to_dict() for name, part in self.parts.items()}}


@dataclass
class MigrationReport:
    dry_run: bool
    fingerprint: str
    chats: list[ChatReport]
    settings: list[dict[str, Any]]  # {"name", "value", "action": set|same|none|refused, "reason"}

    def totals(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for chat in self.chats:
            for name, part in chat.parts.items():
                row = out.setdefault(name, {"write": 0, "already": 0, "skipped": 0})
                row["write"] += part.write
                row["already"] += part.already
                row["skipped"] += len(part.skipped)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "fingerprint": self.fingerprint, "totals": self.totals(),
                "settings": self.settings, "chats": [c.to_dict() for c in self.chats]}


class BundleImport:
    def __init__(self, gate: WriteGate, audit: AuditLog, kbs: KnowledgeBaseRegistry, overrides: SettingsOverrides,
                 profiles: ProfileBook, transfer: EpisodeTransfer, queue: CandidateQueue,
                 directory: HostDirectory) -> None:
        self._directory = directory
        self._gate = gate
        self._audit = audit
        self._kbs = kbs
        self._overrides = overrides
        self._profiles = profiles
        self._transfer = transfer
        self._queue = queue

    async def host_bots(self) -> list[str] | None:
        return await self._directory.bot_ids()

    async def run(self, data: str | bytes, *, dry_run: bool) -> MigrationReport:
        bundle = read_bundle(data)
        kb_id = await self._kbs_id()
        bots = await self._directory.bot_ids()
        ours = {escape_bot_uuid(b) for b in bots} if bots is not None else None
        if ours is not None and bundle.bots and not ours & {escape_bot_uuid(b) for b in bundle.bots}:
            raise ValidationError(f"this bundle comes from another LangBot installation: none of its "
                                  f"{len(bundle.bots)} bot(s) exists here (source {bundle.fingerprint[:12]}); "
                                  "nothing was imported")
        if ours is not None:
            ours.add(DEBUG_CHAT_BOT)  # after the installation check: every LangBot has it
        settings = await self._settings(bundle, dry_run)
        effective = await self._kbs.open_kb(kb_id)
        isolation = effective.isolation
        planned = next((s for s in settings if s["name"] == "isolation" and s["action"] == "set"), None)
        if dry_run and planned is not None:
            isolation = Isolation(planned["value"])
        reports = [ChatReport(key=f"chats[{i}]", problem=reason) for i, reason in bundle.problems]
        for chat in bundle.chats:
            reports.append(await self._chat(chat, bundle, kb_id, effective, isolation, ours, dry_run))
        report = MigrationReport(dry_run, bundle.fingerprint, reports, settings)
        log.info("[LongTermMemory] migration %s source=%s chats=%d totals=%s", "dry run" if dry_run else "import",
                 bundle.fingerprint[:12], len(reports), report.totals())
        return report

    async def _kbs_id(self) -> str:
        found = await self._kbs.memory_kb()
        if found is None:
            raise ValidationError("create this plugin's memory knowledge base first (LangBot: Knowledge → "
                                  "create, engine LongTermMemory); nothing was imported")
        return found[0]

    # ------------------------------------------------------------------ settings
    async def _settings(self, bundle: Bundle, dry_run: bool) -> list[dict[str, Any]]:
        view = await self._overrides.view()
        current = {v.name: v.value for v in view.values}
        plans: list[dict[str, Any]] = []
        for name, value in bundle.settings.items():
            if name == "retrieval" and isinstance(value, dict):
                for inner, inner_value in value.items():
                    plans.append(_none(str(inner), inner_value))
                continue
            if name not in SETTING_EQUIVALENTS:
                plans.append(_none(str(name), value))
                continue
            plan: dict[str, Any] = {"name": name, "value": value, "action": "set", "reason": ""}
            try:
                parsed = KBSettings.parse({"embedding_model_uuid": "-", name: value}).to_dict()[name]
            except ValidationError as exc:
                plans.append({**plan, "action": "refused", "reason": exc.message})
                continue
            plan["value"] = parsed
            if parsed == current.get(name):
                plans.append({**plan, "action": "same"})
                continue
            if not dry_run:
                try:
                    await self._overrides.set(name, parsed)
                except LTMError as exc:
                    plan = {**plan, "action": "refused", "reason": exc.message}
            plans.append(plan)
        return plans

    # ------------------------------------------------------------------ one chat
    async def _chat(self, chat: ChatPart, bundle: Bundle, kb_id: str, settings: KBSettings, isolation: Isolation,
                    ours: set[str] | None, dry_run: bool) -> ChatReport:
        report = ChatReport(key=chat.key)
        identity = chat_of_key(chat.key)
        bot_space = scope_of_space_key(chat.key, kb_id, Isolation.BOT) if identity is None else None
        if identity is None and bot_space is None:
            report.problem = ("not a chat's key this plugin derives (<bot uuid>:group_<id>, <bot uuid>:person_<id>) "
                              "nor a bot's episode space (bot:<bot uuid>)")
            return report
        bot = identity.bot_uuid if identity is not None else chat.key.removeprefix("bot:")
        if ours is not None and bot and bot not in ours:  # a chat keyed without a bot names none to check
            report.problem = "its bot is not one this LangBot has"
            return report
        if identity is None:
            if isolation is not Isolation.BOT:
                report.problem = ("a bot's shared episode space (the official KB was in bot isolation); this "
                                  "memory knowledge base is in session isolation")
                return report
            scope = bot_space.with_kb(kb_id) if bot_space else None
        else:
            scope = MemoryScope.for_identity(identity, isolation, kb_id)
        assert scope is not None
        report.space_key = scope.space_key
        try:
            if identity is not None:
                await self._chat_profiles(chat, bundle, scope, report.parts["profiles"], dry_run)
                await self._chat_audit(chat, scope, report.parts["audit"], dry_run)
                await self._chat_candidates(chat, identity, scope, report.parts["candidates"], dry_run)
            else:
                for name in ("profiles", "audit", "candidates"):
                    if getattr(chat, name):
                        report.parts[name].skipped.append(SkippedRecord(name, "a bot's space holds no " + name))
            await self._chat_episodes(chat, scope, settings, report.parts["episodes"], dry_run)
        except LTMError as exc:
            report.problem = exc.message  # e.g. a fenced space: the other chats go on
        return report

    async def _chat_profiles(self, chat: ChatPart, bundle: Bundle, scope: MemoryScope, count: PartCount,
                             dry_run: bool) -> None:
        if not chat.profiles:
            return
        payload = {"version": 1, "exported_at": bundle.created_at or None, "profiles": chat.profiles}
        found = await self._profiles.import_profiles(scope, payload, dry_run=dry_run)
        count.write, count.already = len(found.profiles), len(found.unchanged)
        count.skipped = list(found.skipped)

    async def _chat_episodes(self, chat: ChatPart, scope: MemoryScope, settings: KBSettings, count: PartCount,
                             dry_run: bool) -> None:
        if not chat.episodes:
            return
        batch = parse_items(chat.episodes, source="import")
        count.skipped = list(batch.skipped)
        held = await self._transfer.held_ids(scope, batch.records)
        fresh = [r for r in batch.records if r.original_id not in held]
        count.already = len(batch.records) - len(fresh)
        count.write = len(fresh)
        if dry_run or not fresh:  # a bundle imported before: not even an audit note is written again
            return
        result = await self._transfer.import_episodes(scope, settings, batch.records, skipped=batch.skipped,
                                                      operation=OPERATION)
        count.write, count.already = len(result.episodes), len(result.duplicates)

    async def _chat_audit(self, chat: ChatPart, scope: MemoryScope, count: PartCount, dry_run: bool) -> None:
        if not chat.audit:
            return
        log_id = Space.l1(scope.chat_key).key
        held = {str((e.get("meta") or {}).get("official_audit_id") or "") for e in await self._audit.export(log_id)}
        entries = []
        for index, raw in enumerate(chat.audit):
            try:
                audit_id, entry = audit_entry(raw, scope)
            except ValidationError as exc:
                count.skipped.append(SkippedRecord(index, exc.message))
                continue
            if audit_id in held:
                count.already += 1
                continue
            held.add(audit_id)
            entries.append(entry)
        count.write = len(entries)
        if entries and not dry_run:
            async with self._gate.write_l1(scope, OPERATION) as tx:
                for entry in entries:
                    tx.carried(entry)

    async def _chat_candidates(self, chat: ChatPart, identity: Identity, scope: MemoryScope, count: PartCount,
                               dry_run: bool) -> None:
        if not chat.candidates:
            return
        held = {c.candidate_id for c in await self._queue.all(scope)}
        fresh: list[Candidate] = []
        for index, raw in enumerate(chat.candidates):
            try:
                found = candidate(raw, identity)
            except ValidationError as exc:
                count.skipped.append(SkippedRecord(index, exc.message))
                continue
            if found.candidate_id in held:
                count.already += 1
                continue
            held.add(found.candidate_id)
            fresh.append(found)
        count.write = len(fresh)
        if fresh and not dry_run:
            added, refused = await self._queue.adopt(scope, fresh, OPERATION)
            count.write = len(added)
            if refused:
                count.skipped.append(SkippedRecord("candidates", f"{refused} did not fit: the queue is full of "
                                                                 "pending candidates"))


def _none(name: str, value: Any) -> dict[str, Any]:
    return {"name": name, "value": value, "action": "none",
            "reason": NO_EQUIVALENT.get(name, "no equivalent setting in this plugin")}
