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

A dry run reads only and runs the import's own checks, so its report is what the import then does, field
by field: the settings it would refuse, the episodes that repeat a stored fact (found by embedding them,
as the import does), the candidates the queue has room for. Records the official plugin was asked to
forget or delete are skipped and named unless the operator asks for them (`forgotten.py`).

A run cut short (a host write refused, a fence) reports what is stored, read back after the failure, not
what it planned; run again, it writes the rest: episodes get the ids the first run gave them
(`derived_episode_id`), so a supersede link a stored record holds finds its record.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..._audit import AuditLog
from ..._gate import WriteGate
from ...candidates.candidate import Candidate
from ...candidates.queue import CandidateQueue, make_room
from ...episodes.import_batch import MAX_IMPORT_RECORDS
from ...episodes.transfer import EpisodeTransfer, parse_items
from ...errors import LTMError, StateError, ValidationError
from ...guards import said_safely
from ...host_values import escape_bot_uuid
from ...identity import Identity, Isolation, MemoryScope, chat_of_key, scope_of_space_key
from ...kb_overrides import SettingsOverrides
from ...kb_registry import KnowledgeBaseRegistry
from ...kb_settings import KBSettings
from ...operations import Operation
from ...ports import HostDirectory
from ...profiles.book import ProfileBook
from ...secrets import redact_for_log
from ...skipped import SkippedRecord
from ...spaces import Space
from .forgotten import Removal, record_id, removed_ids
from .official_records import audit_entry, candidate
from .reading import ChatPart, read_bundle
from .settings_plan import plan_settings

log = logging.getLogger("LongTermMemory")
T = TypeVar("T")
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
    label: str = ""  # the chat as a person reads it (`chat_label`)
    space_key: str = ""  # the space its episodes go to here (stored and shown as "space")
    problem: str = ""  # why nothing of the chat is imported
    parts: dict[str, PartCount] = field(default_factory=lambda: {p: PartCount() for p in
                                                                 ("profiles", "episodes", "audit", "candidates")})

    def to_dict(self) -> dict[str, Any]:
        return {"key": said_safely(self.key), "label": self.label or chat_label(self.key), "space": self.space_key,
                "problem": self.problem,
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

    async def run(self, data: str | bytes, *, dry_run: bool, include_forgotten: bool = False) -> MigrationReport:
        """`include_forgotten`: also import the records the official plugin was asked to forget or delete
        (`forgotten.py`); by default they are skipped and named."""
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
        settings = await plan_settings(self._overrides, bundle.settings, dry_run)
        await self._placement_set(settings, dry_run)
        effective = await self._kbs.open_kb(kb_id)
        isolation = effective.isolation
        planned = next((s for s in settings if s["name"] == "isolation" and s["action"] == "set"), None)
        if dry_run and planned is not None:
            isolation = Isolation(planned["value"])
        removed = {} if include_forgotten else removed_ids(bundle.chats)
        reports = [ChatReport(key=f"chats[{i}]", problem=reason) for i, reason in bundle.problems]
        for chat in bundle.chats:
            reports.append(await self._chat(chat, kb_id, effective, isolation, ours, removed, dry_run))
        report = MigrationReport(dry_run, bundle.fingerprint, reports, settings)
        log.info("[LongTermMemory] migration %s source=%s chats=%d totals=%s", "dry run" if dry_run else "import",
                 bundle.fingerprint[:12], len(reports), report.totals())
        return report

    async def _placement_set(self, settings: list[dict[str, Any]], dry_run: bool) -> None:
        """The bundle's `isolation` decides the space of every record: when it could have been set but was
        not (a host failure, a fence), no record is written, or a second run could not set it any more."""
        failed = next((s for s in settings if s["name"] == "isolation" and s["action"] == "refused"), None)
        if dry_run or failed is None or await self._overrides.refusal("isolation", failed["value"]) is not None:
            return
        raise StateError(f"the bundle's isolation ({failed['value']}) could not be set: {failed['reason']}; "
                         "no record was imported, since each would land in a space of the old isolation; run "
                         "the import again")

    async def _kbs_id(self) -> str:
        found = await self._kbs.memory_kb()
        if found is None:
            raise ValidationError("create this plugin's memory knowledge base first (LangBot: Knowledge → "
                                  "create, engine LongTermMemory); nothing was imported")
        return found[0]

    # ------------------------------------------------------------------ one chat
    async def _chat(self, chat: ChatPart, kb_id: str, settings: KBSettings, isolation: Isolation,
                    ours: set[str] | None, removed: dict[str, Removal], dry_run: bool) -> ChatReport:
        report = ChatReport(key=chat.key, label=chat_label(chat.key))
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
                await self._chat_profiles(chat, scope, report.parts["profiles"], dry_run)
                await self._chat_audit(chat, scope, report.parts["audit"], dry_run)
                await self._chat_candidates(chat, identity, scope, report.parts["candidates"], dry_run)
            else:
                for name in ("profiles", "audit", "candidates"):
                    if getattr(chat, name):
                        report.parts[name].skipped.append(SkippedRecord(name, "a bot's space holds no " + name))
            await self._chat_episodes(chat, scope, settings, report.parts["episodes"], removed, dry_run)
        except LTMError as exc:
            report.problem = said_safely(exc.message)  # e.g. a fenced space: the other chats go on
        return report

    async def _chat_profiles(self, chat: ChatPart, scope: MemoryScope, count: PartCount, dry_run: bool) -> None:
        if not chat.profiles:
            return
        # No export time: the bundle's is when it was extracted, not when a profile changed, so a profile
        # that gives no time of its own is imported the same from every extraction.
        payload = {"version": 1, "exported_at": None, "profiles": chat.profiles}
        before = await self._profiles.import_profiles(scope, payload, dry_run=True)
        try:
            found = await self._profiles.import_profiles(scope, payload, dry_run=dry_run)
        except LTMError:
            after = await _or_none(self._profiles.import_profiles(scope, payload, dry_run=True))
            count.write = len(after.unchanged) - len(before.unchanged) if after is not None else 0
            raise
        count.write, count.already = len(found.profiles), len(found.unchanged)
        count.skipped = list(found.skipped)

    async def _chat_episodes(self, chat: ChatPart, scope: MemoryScope, settings: KBSettings, count: PartCount,
                             removed: dict[str, Removal], dry_run: bool) -> None:
        items, indexes = [], []
        for index, raw in enumerate(chat.episodes):
            removal = removed.get(record_id(raw))
            if removal is not None:
                count.skipped.append(SkippedRecord(index, removal.reason))
            else:
                items.append(raw)
                indexes.append(index)
        if not items:
            return
        batch = parse_items(items, source="import", indexes=indexes)
        count.skipped = sorted([*count.skipped, *batch.skipped], key=lambda r: r.position)
        linkable = {r.original_id for r in batch.records if r.original_id}
        if dry_run:  # the import's checks on the whole chat at once, nothing written
            planned = await self._transfer.preview_import(scope, settings, batch.records)
            count.write, count.already = len(planned.episodes), len(planned.duplicates)
            return
        held = await self._transfer.held_ids(scope, batch.records)
        try:
            # One gated write per MAX_IMPORT_RECORDS, the limit of every import; links across writes hold.
            for start in range(0, len(batch.records), MAX_IMPORT_RECORDS):
                part = batch.records[start:start + MAX_IMPORT_RECORDS]
                if all(r.original_id in held for r in part):  # imported before: not even an audit note again
                    count.already += len(part)
                    continue
                result = await self._transfer.import_episodes(
                    scope, settings, part, skipped=batch.skipped if start == 0 else (), operation=OPERATION,
                    linkable=linkable)
                count.write += len(result.episodes)
                count.already += len(result.duplicates)
        except LTMError:
            now = await _or_none(self._transfer.held_ids(scope, batch.records))
            count.write = len(now - held) if now is not None else 0  # what is stored, not what was planned
            raise

    async def _chat_audit(self, chat: ChatPart, scope: MemoryScope, count: PartCount, dry_run: bool) -> None:
        if not chat.audit:
            return
        log_id = Space.l1(scope.chat_key).key
        held = await self._official_audit_ids(log_id)
        before = set(held)
        entries = []
        for index, raw in enumerate(chat.audit):
            try:
                audit_id, entry = audit_entry(raw, scope)
            except ValidationError as exc:
                count.skipped.append(SkippedRecord(index, said_safely(exc.message)))
                continue
            if audit_id in held:
                count.already += 1
                continue
            held.add(audit_id)
            entries.append(entry)
        count.write = len(entries)
        if entries and not dry_run:
            try:
                async with self._gate.write_l1(scope, OPERATION) as tx:
                    for entry in entries:
                        tx.carried(entry)
            except LTMError:
                now = await _or_none(self._official_audit_ids(log_id))
                count.write = len(now - before) if now is not None else 0
                raise

    async def _official_audit_ids(self, log_id: str) -> set[str]:
        return {str((e.get("meta") or {}).get("official_audit_id") or "") for e in await self._audit.export(log_id)}

    async def _chat_candidates(self, chat: ChatPart, identity: Identity, scope: MemoryScope, count: PartCount,
                               dry_run: bool) -> None:
        if not chat.candidates:
            return
        queue = await self._queue.all(scope)
        held = {c.candidate_id for c in queue}
        fresh: list[Candidate] = []
        for index, raw in enumerate(chat.candidates):
            try:
                found = candidate(raw, identity)
            except ValidationError as exc:
                count.skipped.append(SkippedRecord(index, said_safely(exc.message)))
                continue
            if found.candidate_id in held:
                count.already += 1
                continue
            held.add(found.candidate_id)
            fresh.append(found)
        if not fresh:
            return
        fits = make_room(queue, len(fresh))[2]  # what the queue takes: the dry run says what the import does
        if not dry_run:
            try:
                fits = len((await self._queue.adopt(scope, fresh, OPERATION))[0])
            except LTMError:
                now = await _or_none(self._queue.all(scope))
                count.write = len({c.candidate_id for c in now} - {c.candidate_id for c in queue}) if now else 0
                raise
        count.write = fits
        if fits < len(fresh):
            count.skipped.append(SkippedRecord("candidates", f"{len(fresh) - fits} did not fit: the queue is full "
                                                             "of pending candidates"))


async def _or_none(read: Awaitable[T]) -> T | None:
    """A read after a failed write, to report what is stored; None when it fails too."""
    try:
        return await read
    except LTMError:
        return None


def chat_label(key: str) -> str:
    """A chat as a person reads it (`group 123456 · bot 1a2b3c4d`), short whatever the key's length; the
    report keeps the key itself beside it."""
    chat = chat_of_key(key)
    if chat is not None:
        bot = f" · bot {clip(chat.bot_uuid, 8)}" if chat.bot_uuid else ""
        return f"{chat.launcher_type} {clip(chat.launcher_id, 40)}{bot}"
    if key.startswith("bot:"):
        return f"bot {clip(key[4:], 8)} (shared episodes)"
    return redact_for_log(key, 40)


def clip(text: str, limit: int) -> str:
    shown = redact_for_log(text, limit + 1)
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"
