"""Read-only `!memory` subcommands: overview, help, profile, search, list, show, health (`profile set|remove|clear`
are handed to `profile_edits.py`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from langbot_plugin.api.entities.builtin.command.context import ExecuteContext

from components.commands import profile_edits
from components.commands.args import UsageError, as_usage, page_of, split_head, statuses_of
from components.commands.registry import Call, Subcommands
from components.commands.text import clip, page_title, plural, short_time, speaker_label, statuses_label
from components.common.memory_views import profile_text, validity_label
from ltm import (
    REVIEW_SEARCH,
    Episode,
    EpisodePage,
    EpisodeStatus,
    Fence,
    HealthReport,
    Level,
    LTMError,
    MemoryScope,
    Profile,
    Profiles,
    RecallFilters,
)

PAGE_SIZE = 10
LIST_FLAGS = frozenset({"include-superseded", "include-archived"})


SUBCOMMANDS = Subcommands()


@SUBCOMMANDS("overview", "!memory — overview of this chat's memory", aliases=("",))
async def overview(call: Call) -> str:
    call.args(max_positional=0)
    memory, scope = call.memory, call.scope
    counts = ""
    if scope.kb_id:
        try:
            counts = status_counts(await memory.all_episodes(scope))
        except LTMError as exc:
            counts = f"unavailable ({exc.message})"
    profiles = await memory.profiles(scope)
    speakers = await memory.speaker_profiles(scope)
    return overview_text(scope, counts, profiles.session, len(speakers), await memory.audit_count(scope),
                           await memory.fences_of(scope))


@SUBCOMMANDS("help", "!memory help — this list")
async def help_(call: Call) -> str:
    return call.registry.help_text()


@SUBCOMMANDS("profile", "!memory profile — session and current speaker profile\n"
             "!memory profile set <field> <value> [--speaker ID | --me] — name, traits, preferences, notes\n"
             "!memory profile remove <field> [value] [--speaker ID | --me] · !memory profile clear "
             "[--speaker ID | --me]")
async def profile(call: Call) -> str:
    head, rest = split_head(call.rest)
    if head.lower() in profile_edits.ACTIONS:
        return await profile_edits.edit(call, head.lower(), rest)
    call.args(max_positional=0)
    return profiles_text(call.scope, await call.memory.profiles(call.scope))


@SUBCOMMANDS("search", "!memory search <query> [--top-k N] [--include-superseded] [--include-archived] [--status S]")
async def search(call: Call) -> str:
    args = call.args(switches=LIST_FLAGS, options=frozenset({"status", "top-k"}))
    query = " ".join(args.positional).strip()
    if not query:
        raise UsageError("search", "a search query is required")
    statuses = statuses_of(call.topic, args)
    recipe = as_usage(call.topic, lambda: REVIEW_SEARCH.with_top_k(args.option("top-k") or None))
    hits = await call.memory.recall(call.scope, query, recipe=recipe,
                                    filters=RecallFilters(statuses=statuses))
    return search_results(query, statuses, [hit.episode for hit in hits])


async def _page(call: Call, statuses: tuple[EpisodeStatus, ...], page: int) -> str:
    result = await call.memory.list_episodes(call.scope, statuses, page=page, page_size=PAGE_SIZE)
    return episode_page(call.topic, statuses, result, PAGE_SIZE)


@SUBCOMMANDS("list", "!memory list [page] [--include-superseded] [--include-archived] [--status S]")
async def list_(call: Call) -> str:
    args = call.args(switches=LIST_FLAGS, options=frozenset({"status"}), max_positional=1)
    return await _page(call, statuses_of(call.topic, args), page_of(call.topic, args))


@SUBCOMMANDS("superseded", "!memory superseded [page]")
async def superseded(call: Call) -> str:
    return await _page(call, (EpisodeStatus.SUPERSEDED,), page_of(call.topic, call.args(max_positional=1)))


@SUBCOMMANDS("archived", "!memory archived [page]")
async def archived(call: Call) -> str:
    return await _page(call, (EpisodeStatus.ARCHIVED,), page_of(call.topic, call.args(max_positional=1)))


def single_id(call: Call) -> str:
    args = call.args(max_positional=1)
    if not args.positional:
        raise UsageError(call.topic, "an episode id is required")
    return args.positional[0]


@SUBCOMMANDS("show", "!memory show <id>")
async def show(call: Call) -> str:
    return episode_detail(await call.memory.get_episode(call.scope, single_id(call)))


@SUBCOMMANDS("health", "!memory health")
async def health(call: Call) -> str:
    call.args(max_positional=0)
    return health_text(await call.memory.health(call.scope, await pipeline_kbs(call.ctx)))


async def pipeline_kbs(ctx: ExecuteContext) -> list[str] | None:
    """KB uuids the host gave this query's pipeline (`_knowledge_base_uuids`, the same list automatic
    injection checks; the listener leaves it untouched on command turns), else the local-agent
    configuration; None (skip that check) when there is no live query."""
    try:
        variables = await ctx.get_query_vars()  # ExecuteContextProxy: a query-based API
        kb_ids = variables.get("_knowledge_base_uuids") if isinstance(variables, dict) else None
        if isinstance(kb_ids, list):
            return [str(k) for k in kb_ids]
        kbs = await ctx.list_pipeline_knowledge_bases()
    except Exception:  # noqa: BLE001 - e.g. "Query ... not found" outside a pipeline
        return None
    return [str(kb.get("uuid")) for kb in kbs or [] if isinstance(kb, dict) and kb.get("uuid")]


# --------------------------------------------------------------------------- reply text
_LEVEL_LABEL = {Level.GREEN: "GREEN", Level.AMBER: "AMBER", Level.RED: "RED"}


def episode_lines(number: int, episode: Episode) -> list[str]:
    """Two lines per episode: ID and metadata, then the content snippet."""
    meta = [episode.episode_id, short_time(episode.timestamp)]
    if episode.sender_name or episode.sender_id:
        meta.append(episode.sender_name or episode.sender_id)
    meta.append(f"imp {episode.importance}")
    if episode.status is not EpisodeStatus.ACTIVE:
        meta.append(f"[{episode.status.value}]")
    validity = validity_label(episode)
    if validity:
        meta.append(f"[{validity}]")
    if episode.tags:
        meta.append(" ".join(f"#{t}" for t in episode.tags[:4]))
    return [f"{number}) " + " · ".join(meta), f"   {clip(episode.content)}"]


def episode_list(episodes: Sequence[Episode], first_number: int = 1) -> list[str]:
    lines: list[str] = []
    for offset, episode in enumerate(episodes):
        lines.extend(episode_lines(first_number + offset, episode))
        if episode.superseded_by:
            verb = "superseded" if episode.status is EpisodeStatus.SUPERSEDED else "restored; was superseded"
            lines.append(f"   {verb} by {episode.superseded_by} ({short_time(episode.superseded_at)})")
    return lines


def episode_detail(episode: Episode) -> str:
    """Everything `show` promises: status, sender, source, tags, importance, supersede and provenance."""
    fact = episode.fact
    lines = [f"Episode {episode.episode_id}", f"Status: {episode.status.value}"]
    if episode.status_changed_at:
        lines[-1] += f" (since {episode.status_changed_at})"
    validity = validity_label(episode)
    if validity:
        lines[-1] += f" · {validity}"
    lines += [
        f"Content: {episode.content}",
        f"Stored: {episode.timestamp or '-'}",
        f"Sender: {speaker_label(episode.sender_id, episode.sender_name)}",
        f"Source: {episode.source or '-'} · importance {episode.importance} · claim {fact.claim_type.value}",
        "Tags: " + (", ".join(episode.tags) if episode.tags else "-"),
    ]
    provenance = [
        ("Event at", fact.event_at), ("Valid from", fact.valid_from), ("Valid until", fact.valid_until),
        ("Source ref", fact.source_ref),
    ]
    known = [(label, value) for label, value in provenance if value]
    lines += [f"{label}: {value}" for label, value in known] or ["Fact time / provenance: unknown"]
    if episode.supersedes:
        lines.append("Supersedes: " + ", ".join(episode.supersedes))
    if episode.superseded_by:
        label = "Superseded by" if episode.status is EpisodeStatus.SUPERSEDED else "Was superseded by"
        lines.append(f"{label}: {episode.superseded_by} at {episode.superseded_at or '-'}")
    if episode.original_id:
        lines.append(f"Imported from id: {episode.original_id}")
    if episode.document_id:
        lines.append(f"Document: {episode.document_id}")
    if episode.derived_from:
        lines.append("Derived from: " + ", ".join(episode.derived_from))
    return "\n".join(lines)


def profile_block(title: str, profile: Profile | None, missing: str) -> list[str]:
    if profile is None:
        return [f"{title}: {missing}"]
    if profile.is_empty:
        return [f"{title}: (empty)"]
    lines = [f"{title}:"] + [f"  {line}" for line in profile_text(profile).splitlines()]
    if profile.updated_at:
        lines.append(f"  updated {short_time(profile.updated_at)}")
    return lines


def status_counts(episodes: Iterable[Episode]) -> str:
    counts = Counter(e.status for e in episodes)
    shown = [EpisodeStatus.ACTIVE, EpisodeStatus.SUPERSEDED, EpisodeStatus.ARCHIVED]
    parts = [f"{counts.get(s, 0)} {s.value}" for s in shown]
    if counts.get(EpisodeStatus.DELETED):
        parts.append(f"{counts[EpisodeStatus.DELETED]} deleted")
    return " · ".join(parts)


def fence_line(fences: dict[str, Fence | None]) -> str:
    active = [(layer, f) for layer, f in fences.items() if f is not None]
    if not active:
        return "Writes: open (no fence)"
    parts = [f"{layer.upper()} paused since {short_time(f.since)} after {f.operation}" for layer, f in active]
    return "Writes: " + "; ".join(parts) + " (clear in Memory Console > Diagnostics)"


def health_text(report: HealthReport) -> str:
    lines = [f"Memory health: {_LEVEL_LABEL[report.level]}"]
    lines += [f"{_LEVEL_LABEL[item.level]} {item.key}: {item.message}" for item in report.items]
    return "\n".join(lines)


def overview_text(scope: MemoryScope, counts: str, session: Profile, speaker_profiles: int, audit_entries: int,
             fences: dict[str, Fence | None]) -> str:
    lines = [
        "LongTermMemory · this chat",
        f"Session key (L1): {scope.scope_key}",
        f"Memory space (L2 user_key): {scope.user_key} ({scope.isolation.value} isolation)",
        "Speaker: " + speaker_label(scope.sender_id, scope.sender_name),
    ]
    if scope.kb_id:
        lines.append(f"Knowledge base: {scope.kb_id}")
        lines.append(f"Episodes: {counts}")
    else:
        lines.append("Knowledge base: none configured (create a Long-Term Memory knowledge base for episodes)")
    lines.append(f"Profiles: session {'set' if not session.is_empty else 'empty'} · "
                 f"{plural(speaker_profiles, 'speaker profile')}")
    lines.append(f"Audit entries: {audit_entries}")
    lines.append(fence_line(fences))
    lines.append('Type "!memory help" for commands.')
    return "\n".join(lines)


def profiles_text(scope: MemoryScope, found: Profiles) -> str:
    speaker = speaker_label(scope.sender_id, scope.sender_name)
    lines = profile_block(f"Session profile ({scope.scope_key})", found.session, "")
    lines += profile_block(f"Speaker profile of {speaker}", found.speaker, "no speaker is known for this message")
    return "\n".join(lines)


def search_results(query: str, statuses: Sequence[EpisodeStatus], episodes: Sequence[Episode]) -> str:
    title = f"Search {clip(query, 40)!r} ({statuses_label(statuses)})"
    if not episodes:
        return f"{title}: no matching episodes."
    return "\n".join([f"{title}: {plural(len(episodes), 'result')}, best first", *episode_list(episodes)])


def episode_page(topic: str, statuses: Sequence[EpisodeStatus], result: EpisodePage, page_size: int) -> str:
    label = statuses_label(statuses)
    if not result.total:
        return f"No {label} episodes in this chat's memory."
    lines = [page_title(f"Episodes ({label})", result.page, result.pages, result.total) + " · newest first"]
    lines += episode_list(result.episodes, first_number=(result.page - 1) * page_size + 1)
    if result.page < result.pages:
        lines.append(f"Next: !memory {topic} {result.page + 1}")
    if result.truncated:
        lines.append("Note: the listing stopped at the enumeration limit; older records are not counted.")
    return "\n".join(lines)
