"""Command `!memory` (SPEC section 7): the operator's view of this chat's memory.

Dispatch. The SDK routes `!memory <tok> ...` to a subcommand registered under
`tok`, and everything else to the `"*"` subcommand, which delivers only its
FIRST yielded reply; an unknown token without `"*"` crashes the SDK
(contract §4.2). So this component registers exactly one `"*"` subcommand that
parses the command text itself, never raises, and yields exactly one
`CommandReturn(text=...)`. Unknown subcommands and bad arguments answer with the
usage of that subcommand.

Arguments. The host splits the command on single spaces, which breaks JSON and
quoted values, so the raw text after the command word is taken from
`ctx.command_text` and re-tokenized here: whitespace separates words, double
quotes group (`--speaker "Ann Lee"`), apostrophes are plain text. `import l2`
takes the untouched rest of the text as JSON.

Long output. One reply is one chat message, and chat platforms cut long
messages (about 4,000 characters). JSON replies (`export`, `export l2`,
`audit export`) are therefore sent whole when they fit in `MAX_REPLY_CHARS`
(3,500) and otherwise replaced by a summary (counts) plus a hint: narrow with
`--status`, page with `!memory audit [page]`, or use the Memory Console Export
or Audit tab. JSON is never cut or split: a fragment cannot be imported, and
splitting one export into several batches would break the supersede links
that `import l2` restores within one batch.

Bulk delete. `!memory delete` needs at least one filter; all given filters must
match (AND). Without `--status` every status matches (active, superseded,
archived). It enumerates this memory space first, deletes only the matches,
reports the count and audits each record. `--dry-run` lists the matches
without deleting anything.

Scope. Every subcommand acts on the current chat only: the identity comes from
the live query (current speaker = query variable `sender_id`), falling back to
the host session when there is no live query (contract §2.3-2.4).
"""

from __future__ import annotations

import logging
import re
import shlex
from collections import Counter
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from langbot_plugin.api.definition.components.command.command import Command
from langbot_plugin.api.entities.builtin.command.context import CommandReturn, ExecuteContext

from components.commands import render
from ltm.episodes import EpisodeStatus, parse_status
from ltm.errors import LTMError, ValidationError
from ltm.host_identity import identity_from_query
from ltm.identity import MemoryScope
from ltm.imports import load_json, parse_records
from ltm.service import DeleteCriteria, MemoryService, RecallFilters, parse_time_filter

log = logging.getLogger("LongTermMemory")

PAGE_SIZE = 10
SEARCH_TOP_K = 10
IMPORT_PREVIEW = 5
DRY_RUN_PREVIEW = 10
LIST_FLAGS = frozenset({"include-superseded", "include-archived"})
DELETE_FILTERS = ("speaker", "tag", "before", "status")
_WORD_SPLIT = re.compile(r"\s+")
T = TypeVar("T")

USAGE: dict[str, str] = {
    "overview": "!memory — overview of this chat's memory",
    "help": "!memory help — this list",
    "profile": "!memory profile — session and current speaker profile",
    "search": "!memory search <query> [--include-superseded] [--include-archived] [--status S]",
    "list": "!memory list [page] [--include-superseded] [--include-archived] [--status S]",
    "show": "!memory show <id>",
    "forget": "!memory forget <id> — delete one episode",
    "superseded": "!memory superseded [page]",
    "archived": "!memory archived [page]",
    "archive": "!memory archive <id> — hide an active episode",
    "restore": "!memory restore <id> — reactivate an archived or superseded episode",
    "health": "!memory health",
    "export": "!memory export [l1] — L1 profiles as JSON\n"
              "!memory export l2 [--status S] [--include-archived] [--include-superseded]",
    "import": '!memory import l2 <json> — a list of episodes or {"episodes": [...]}',
    "delete": "!memory delete [--speaker X] [--tag T] [--before TIME] [--status S] [--dry-run]\n"
              "(at least one filter; all given filters must match; TIME needs a timezone, e.g. 2026-05-01T00:00:00Z)",
    "audit": "!memory audit [page]\n!memory audit export",
    "consolidate": "!memory consolidate preview | run [proposal_id]",
    "candidates": "!memory candidates [page] [--all-statuses]\n!memory candidate accept|reject <id>",
}
# Subcommands that change memory; in groups they need a bot admin unless the operator allows all.
MUTATING = frozenset({"forget", "archive", "restore", "import", "delete"})
ADMIN_PRIVILEGE = 2
NOT_AVAILABLE = {"consolidate": "consolidation", "candidates": "candidate review", "candidate": "candidate review"}


class UsageError(Exception):
    """Bad arguments for one subcommand: the reply is the reason plus that subcommand's usage."""

    def __init__(self, topic: str, reason: str = ""):
        super().__init__(reason or topic)
        self.topic = topic
        self.reason = reason


@dataclass
class Args:
    positional: list[str] = field(default_factory=list)
    switches: set[str] = field(default_factory=set)
    options: dict[str, list[str]] = field(default_factory=dict)

    def option(self, name: str) -> str:
        values = self.options.get(name) or []
        return values[-1] if values else ""


@dataclass
class Call:
    """One parsed invocation: who, where, and the arguments after the subcommand word."""

    ctx: ExecuteContext
    memory: MemoryService
    scope: MemoryScope
    topic: str
    rest: str

    def args(self, *, switches: frozenset[str] = frozenset(), options: frozenset[str] = frozenset(),
             max_positional: int | None = None) -> Args:
        return parse_args(self.topic, self.rest, switches, options, max_positional)


# --------------------------------------------------------------------------- argument parsing

def command_rest(ctx: ExecuteContext) -> str:
    """The text after the command word, as typed (the host's single-space split loses nothing here)."""
    text = (ctx.command_text or "").lstrip()
    word = ctx.command or ""
    if word and text.startswith(word):
        return text[len(word):]
    # Re-joining the host's split on single spaces restores the text exactly.
    return " ".join(ctx.crt_params)


def split_words(text: str) -> list[str]:
    """Whitespace-separated words; double quotes group, apostrophes are ordinary characters."""
    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.whitespace += "\u3000"  # full-width space typed by CJK input methods
    lexer.quotes = '"'
    lexer.escape = ""
    lexer.commenters = ""
    return list(lexer)


def parse_args(topic: str, text: str, switches: frozenset[str], options: frozenset[str],
               max_positional: int | None) -> Args:
    try:
        words = split_words(text)
    except ValueError:
        raise UsageError(topic, "unbalanced double quote") from None
    args = Args()
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.startswith("--") or word == "--":
            args.positional.append(word)
            continue
        name, has_value, value = word[2:].partition("=")
        name = name.lower()
        if name in switches and not has_value:
            args.switches.add(name)
        elif name in options:
            if not has_value:
                if index >= len(words) or words[index].startswith("--"):
                    raise UsageError(topic, f"--{name} needs a value")
                value = words[index]
                index += 1
            args.options.setdefault(name, []).append(value)
        else:
            raise UsageError(topic, f"unknown option {word.split('=')[0][:40]}")
    if max_positional is not None and len(args.positional) > max_positional:
        raise UsageError(topic, f"unexpected argument {args.positional[max_positional][:40]!r}")
    return args


def as_usage(topic: str, parse: Callable[[], T]) -> T:
    """Argument values the service validates (status, time, JSON): a bad one is a usage error."""
    try:
        return parse()
    except ValidationError as exc:
        raise UsageError(topic, exc.message) from None


def parse_page(topic: str, args: Args) -> int:
    if not args.positional:
        return 1
    raw = args.positional[0]
    try:
        page = int(raw)
    except ValueError:
        raise UsageError(topic, f"page must be a number, not {raw[:20]!r}") from None
    if page < 1:
        raise UsageError(topic, "page numbers start at 1")
    return page


def parse_statuses(topic: str, args: Args) -> tuple[EpisodeStatus, ...]:
    """Default active; `--status` replaces the default; the include switches add to it."""
    chosen: list[EpisodeStatus] = []
    for value in args.options.get("status", []):
        for part in value.split(","):
            if part.strip():
                chosen.append(as_usage(topic, partial(parse_status, part)))
    if not chosen:
        chosen = [EpisodeStatus.ACTIVE]
    if "include-superseded" in args.switches:
        chosen.append(EpisodeStatus.SUPERSEDED)
    if "include-archived" in args.switches:
        chosen.append(EpisodeStatus.ARCHIVED)
    return tuple(dict.fromkeys(chosen))


def single_id(call: Call) -> str:
    args = call.args(max_positional=1)
    if not args.positional:
        raise UsageError(call.topic, "an episode id is required")
    return args.positional[0]


def usage_text(topic: str, reason: str = "") -> str:
    lines = [f"Error: {reason.rstrip('.')}."] if reason else []
    lines.append("Usage: " + USAGE.get(topic, USAGE["help"]))
    return "\n".join(lines)


def help_text() -> str:
    skip = {"consolidate", "candidates"}
    lines = ["!memory commands (this chat only):"]
    lines += [USAGE[k] for k in USAGE if k not in skip]
    lines.append("list/search show active episodes unless --include-superseded, --include-archived "
                 "or --status is given.")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the component

Handler = Callable[[Call], Awaitable[str]]


class MemoryCommand(Command):
    def __init__(self) -> None:
        super().__init__()

        @self.subcommand("*", help="Inspect and manage this chat's long-term memory", usage="!memory help")
        async def dispatch(component: "MemoryCommand", ctx: ExecuteContext) -> AsyncGenerator[CommandReturn, None]:
            # Called by the SDK as fn(component, ctx); only the first yield is delivered.
            yield CommandReturn(text=await component.respond(ctx))

        self._handlers: dict[str, Handler] = {
            "": self._overview,
            "overview": self._overview,
            "profile": self._profile,
            "search": self._search,
            "list": self._list,
            "show": self._show,
            "forget": self._forget,
            "superseded": self._superseded,
            "archived": self._archived,
            "archive": self._archive,
            "restore": self._restore,
            "health": self._health,
            "export": self._export,
            "import": self._import,
            "delete": self._delete,
            "audit": self._audit,
        }

    async def respond(self, ctx: ExecuteContext) -> str:
        """The one reply text; never raises (an exception here would fail the host's command stage)."""
        topic = ""
        try:
            head, rest = self._split_subcommand(command_rest(ctx))
            topic = head.lower()
            if topic in ("help", "-h", "--help", "?"):
                return help_text()
            if topic in NOT_AVAILABLE:
                return f"!memory {topic}: {NOT_AVAILABLE[topic]} is not available in this version of LongTermMemory."
            handler = self._handlers.get(topic)
            if handler is None:
                return f"Unknown subcommand {head[:30]!r}.\n" + help_text()
            if topic in MUTATING and not self._may_change(ctx):
                return (f"!memory {topic}: in group chats only bot admins can change memory. "
                        "An admin can allow everyone with the plugin setting command_admin_only_in_groups.")
            call = await self._call(ctx, topic, rest)
            log.info("[LongTermMemory] command memory %s query=%s scope=%s user_key=%s sender=%s",
                     topic or "overview", ctx.query_id, call.scope.scope_key, call.scope.user_key,
                     call.scope.sender_id or "-")
            return render.fit_reply(await handler(call))
        except UsageError as exc:
            return usage_text(exc.topic, exc.reason)
        except LTMError as exc:
            log.info("[LongTermMemory] command memory %s refused: %s", topic or "overview", exc.code)
            return f"!memory {topic or 'overview'}: {exc.message}"
        except Exception:  # noqa: BLE001 - the operator gets one short line, the log gets the trace
            log.exception("[LongTermMemory] command memory %s failed", topic or "overview")
            return "Memory is unavailable right now (internal error, see the plugin log)."

    def _may_change(self, ctx: ExecuteContext) -> bool:
        """Group memory belongs to everyone in the group: by default only a bot admin
        (host privilege 2) changes it there. In a private chat the user manages their own."""
        launcher_type = getattr(ctx.session.launcher_type, "value", ctx.session.launcher_type)
        if launcher_type != "group" or ctx.privilege >= ADMIN_PRIVILEGE:
            return True
        config = self.plugin.get_config() or {}
        return not bool(config.get("command_admin_only_in_groups", True))

    @staticmethod
    def _split_subcommand(rest: str) -> tuple[str, str]:
        parts = _WORD_SPLIT.split(rest.strip(), maxsplit=1)
        head = parts[0] if parts else ""
        return head, parts[1] if len(parts) > 1 else ""

    async def _call(self, ctx: ExecuteContext, topic: str, rest: str) -> Call:
        # ExecuteContextProxy is a QueryBasedAPIProxy: it reads the live query's variables
        # (current speaker), and identity_from_query falls back to the session without one.
        identity = await identity_from_query(ctx, ctx.session, ctx.query_id)
        memory: MemoryService = self.plugin.memory
        scope = await memory.scope_for(identity)
        return Call(ctx=ctx, memory=memory, scope=scope, topic=topic, rest=rest)

    # ----------------------------------------------------------------------- read-only views

    async def _overview(self, call: Call) -> str:
        call.args(max_positional=0)
        memory, scope = call.memory, call.scope
        lines = [
            "LongTermMemory · this chat",
            f"Session key (L1): {scope.scope_key}",
            f"Memory space (L2 user_key): {scope.user_key} ({scope.isolation.value} isolation)",
            "Speaker: " + render.speaker_label(scope.sender_id, scope.sender_name),
        ]
        if scope.kb_id:
            lines.append(f"Knowledge base: {scope.kb_id}")
            try:
                lines.append("Episodes: " + render.status_counts(await memory.all_episodes(scope)))
            except LTMError as exc:
                lines.append(f"Episodes: unavailable ({exc.message})")
        else:
            lines.append("Knowledge base: none configured (create a Long-Term Memory knowledge base for episodes)")
        speakers = await memory.speaker_profiles(scope)
        session = (await memory.profiles(scope)).session
        lines.append(f"Profiles: session {'set' if not session.is_empty else 'empty'} · "
                     f"{render.plural(len(speakers), 'speaker profile')}")
        lines.append(f"Audit entries: {await memory.audit.count(scope.scope_key)}")
        lines.append(render.fence_line(await memory.fence_for(scope)))
        lines.append('Type "!memory help" for commands.')
        return "\n".join(lines)

    async def _profile(self, call: Call) -> str:
        call.args(max_positional=0)
        scope = call.scope
        profiles = await call.memory.profiles(scope)
        speaker = render.speaker_label(scope.sender_id, scope.sender_name)
        lines = render.profile_block(f"Session profile ({scope.scope_key})", profiles.session, "")
        lines += render.profile_block(f"Speaker profile of {speaker}", profiles.speaker,
                                      "no speaker is known for this message")
        return "\n".join(lines)

    async def _search(self, call: Call) -> str:
        args = call.args(switches=LIST_FLAGS, options=frozenset({"status"}))
        query = " ".join(args.positional).strip()
        if not query:
            raise UsageError("search", "a search query is required")
        statuses = parse_statuses(call.topic, args)
        hits = await call.memory.recall(call.scope, query, top_k=SEARCH_TOP_K,
                                        filters=RecallFilters(statuses=statuses))
        title = f"Search {render.clip(query, 40)!r} ({render.statuses_label(statuses)})"
        if not hits:
            return f"{title}: no matching episodes."
        lines = [f"{title}: {render.plural(len(hits), 'result')}, best first"]
        lines += render.episode_list([hit.episode for hit in hits])
        return "\n".join(lines)

    async def _list(self, call: Call) -> str:
        args = call.args(switches=LIST_FLAGS, options=frozenset({"status"}), max_positional=1)
        return await self._page_of(call, parse_statuses(call.topic, args), parse_page(call.topic, args))

    async def _superseded(self, call: Call) -> str:
        page = parse_page(call.topic, call.args(max_positional=1))
        return await self._page_of(call, (EpisodeStatus.SUPERSEDED,), page)

    async def _archived(self, call: Call) -> str:
        page = parse_page(call.topic, call.args(max_positional=1))
        return await self._page_of(call, (EpisodeStatus.ARCHIVED,), page)

    async def _page_of(self, call: Call, statuses: tuple[EpisodeStatus, ...], page: int) -> str:
        result = await call.memory.list_episodes(call.scope, statuses, page=page, page_size=PAGE_SIZE)
        label = render.statuses_label(statuses)
        if not result.total:
            return f"No {label} episodes in this chat's memory."
        title = render.page_title(f"Episodes ({label})", result.page, result.pages, result.total)
        lines = [title + " · newest first"]
        lines += render.episode_list(result.episodes, first_number=(result.page - 1) * PAGE_SIZE + 1)
        if result.page < result.pages:
            lines.append(f"Next: !memory {call.topic} {result.page + 1}")
        if result.truncated:
            lines.append("Note: the listing stopped at the enumeration limit; older records are not counted.")
        return "\n".join(lines)

    async def _show(self, call: Call) -> str:
        return render.episode_detail(await call.memory.get_episode(call.scope, single_id(call)))

    async def _health(self, call: Call) -> str:
        call.args(max_positional=0)
        report = await call.memory.health(call.scope, await self._pipeline_kbs(call.ctx))
        return render.health_text(report)

    @staticmethod
    async def _pipeline_kbs(ctx: ExecuteContext) -> list[str] | None:
        """KB uuids of the current pipeline; None (skip that check) when there is no live query."""
        try:
            kbs = await ctx.list_pipeline_knowledge_bases()  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - e.g. "Query ... not found" outside a pipeline
            return None
        return [str(kb.get("uuid")) for kb in kbs or [] if isinstance(kb, dict) and kb.get("uuid")]

    # ----------------------------------------------------------------------- single-record changes

    async def _forget(self, call: Call) -> str:
        episode = await call.memory.forget(call.scope, single_id(call))
        return f"Deleted episode {episode.episode_id} ({episode.status.value}): {render.clip(episode.content, 80)}"

    async def _archive(self, call: Call) -> str:
        episode = await call.memory.archive(call.scope, single_id(call))
        return (f"Archived episode {episode.episode_id}: hidden from recall, kept for history.\n"
                f"Undo: !memory restore {episode.episode_id}")

    async def _restore(self, call: Call) -> str:
        before = await call.memory.get_episode(call.scope, single_id(call))
        episode = await call.memory.restore(call.scope, before.episode_id)
        return f"Restored episode {episode.episode_id} (was {before.status.value}); it is active again."

    # ----------------------------------------------------------------------- export / import

    async def _export(self, call: Call) -> str:
        head, rest = self._split_subcommand(call.rest)
        if head.lower() in ("", "l1"):
            if rest.strip():
                raise UsageError("export", f"unexpected argument {rest.strip()[:40]!r}")
            return self._export_profiles_text(await call.memory.export_profiles(call.scope))
        if head.lower() != "l2":
            raise UsageError("export", f"unknown export {head[:20]!r}")
        args = parse_args("export", rest, LIST_FLAGS, frozenset({"status"}), 0)
        statuses = parse_statuses(call.topic, args)
        payload = await call.memory.export_episodes(call.scope, statuses)
        episodes = payload["episodes"]
        header = (f"L2 export of {call.scope.user_key} ({render.statuses_label(statuses)}): "
                  f"{render.plural(len(episodes), 'episode')}")
        summary = ["By status: " + render.status_tally(e["status"] for e in episodes)]
        if payload.get("truncated"):
            header += " (INCOMPLETE: the space holds more records than one export reads)"
        hint = ("Use the Memory Console Export tab for the full JSON, or narrow with --status "
                "(e.g. !memory export l2 --status archived).")
        return render.json_or_summary(header, payload, summary, hint)

    @staticmethod
    def _export_profiles_text(payload: dict[str, Any]) -> str:
        speakers = payload.get("speaker_profiles") or {}
        header = (f"L1 export of {payload.get('scope_key')}: session profile + "
                  f"{render.plural(len(speakers), 'speaker profile')}")
        summary = [f"Speaker profiles: {len(speakers)}"]
        hint = "Use the Memory Console Export tab for the full JSON; !memory profile shows the current ones."
        return render.json_or_summary(header, payload, summary, hint)

    async def _import(self, call: Call) -> str:
        head, raw_json = self._split_subcommand(call.rest)
        if head.lower() != "l2":
            raise UsageError("import", "only 'import l2' exists" if head else "say 'import l2' and paste the JSON")
        if not raw_json.strip():
            raise UsageError("import", "paste the JSON after 'import l2'")
        payload = as_usage("import", lambda: load_json(raw_json))
        # The whole batch is validated before anything is written (parse_records raises on the first bad record).
        records = as_usage("import", lambda: parse_records(payload, source="import"))
        episodes = await call.memory.import_episodes(call.scope, records)
        lines = [
            f"Imported {render.plural(len(episodes), 'episode')} into {call.scope.user_key} "
            f"({render.status_tally(e.status.value for e in episodes)}); new IDs, original IDs kept as original_id.",
        ]
        foreign = _foreign_user_keys(payload, call.scope.user_key)
        if foreign:
            lines.append(f"Note: user_key {', '.join(sorted(foreign))[:80]} in the JSON was ignored; "
                         "imports always go into this chat's memory.")
        for episode in episodes[:IMPORT_PREVIEW]:
            origin = f"{episode.original_id} -> " if episode.original_id else "new: "
            lines.append(origin + episode.episode_id)
        if len(episodes) > IMPORT_PREVIEW:
            lines.append(f"... and {len(episodes) - IMPORT_PREVIEW} more (!memory list)")
        return "\n".join(lines)

    # ----------------------------------------------------------------------- bulk delete

    async def _delete(self, call: Call) -> str:
        args = call.args(switches=frozenset({"dry-run"}),
                         options=frozenset(DELETE_FILTERS), max_positional=0)
        if not any(args.option(k) for k in DELETE_FILTERS):
            raise UsageError("delete", "give at least one filter")
        status_text = args.option("status")
        criteria = as_usage("delete", lambda: DeleteCriteria(
            speaker=args.option("speaker").strip(),
            tag=args.option("tag").strip(),
            before=parse_time_filter(args.option("before"), "--before"),
            status=parse_status(status_text) if status_text else None,
        ))
        described = " ".join(f"--{k} {args.option(k)}" for k in DELETE_FILTERS if args.option(k))
        if not criteria.status:
            described += " (any status)"
        if "dry-run" in args.switches:
            matches = [e for e in await call.memory.all_episodes(call.scope) if criteria.matches(e)]
            lines = [f"Dry run: {render.plural(len(matches), 'episode')} matching {described}; nothing deleted."]
            lines += [f"{e.episode_id} [{e.status.value}] {render.clip(e.content, 60)}"
                      for e in matches[:DRY_RUN_PREVIEW]]
            if len(matches) > DRY_RUN_PREVIEW:
                lines.append(f"... and {len(matches) - DRY_RUN_PREVIEW} more")
            return "\n".join(lines)
        deleted = await call.memory.bulk_delete(call.scope, criteria)
        if not deleted:
            return f"No episodes match {described}; nothing deleted."
        return f"Deleted {render.plural(len(deleted), 'episode')} matching {described}; each is in the audit log."

    # ----------------------------------------------------------------------- audit

    async def _audit(self, call: Call) -> str:
        head, rest = self._split_subcommand(call.rest)
        if head.lower() == "export":
            if rest.strip():
                raise UsageError("audit", f"unexpected argument {rest.strip()[:40]!r}")
            return self._audit_export_text(call.scope, await call.memory.audit_export(call.scope))
        page = parse_page("audit", call.args(max_positional=1))
        result = await call.memory.audit_page(call.scope, page, PAGE_SIZE)
        if not result.total:
            return "No audit entries for this chat yet."
        title = render.page_title("Audit log", result.page, result.pages, result.total, "entries")
        lines = [title + " · newest first"]
        lines += [render.audit_line(entry) for entry in result.entries]
        if result.page < result.pages:
            lines.append(f"Next: !memory audit {result.page + 1}")
        return "\n".join(lines)

    @staticmethod
    def _audit_export_text(scope: MemoryScope, entries: list[dict[str, Any]]) -> str:
        header = f"Audit export of {scope.scope_key}: {len(entries)} entries (oldest first)"
        counts = Counter(str(e.get("operation")) for e in entries)
        summary = ["By operation: " + ", ".join(f"{n} {op}" for op, n in sorted(counts.items()))]
        if entries:
            summary.append(f"From {entries[0].get('time')} to {entries[-1].get('time')}")
        hint = "Browse with !memory audit [page], or use the Memory Console Audit tab to export it."
        return render.json_or_summary(header, {"scope_key": scope.scope_key, "entries": entries}, summary, hint)


def _foreign_user_keys(payload: Any, user_key: str) -> set[str]:
    """user_keys named in an import that are not this chat's (they are ignored, and the reply says so)."""
    found: set[str] = set()
    items = payload.get("episodes") if isinstance(payload, dict) else payload
    if isinstance(payload, dict) and isinstance(payload.get("user_key"), str):
        found.add(payload["user_key"])
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("user_key"), str):
            found.add(item["user_key"])
    return {key for key in found if key and key != user_key}


__all__ = ["MemoryCommand"]
