"""Read-only `!memory` subcommands: overview, help, profile, search, list, show, health."""

from __future__ import annotations

from langbot_plugin.api.entities.builtin.command.context import ExecuteContext

from components.commands import render
from components.commands.args import UsageError, as_usage, page_of, statuses_of
from components.commands.registry import Call, help_text, subcommand
from ltm import REVIEW_SEARCH, EpisodeStatus, LTMError, RecallFilters

PAGE_SIZE = 10
LIST_FLAGS = frozenset({"include-superseded", "include-archived"})


@subcommand("overview", "!memory — overview of this chat's memory", aliases=("",))
async def overview(call: Call) -> str:
    call.args(max_positional=0)
    memory, scope = call.memory, call.scope
    counts = ""
    if scope.kb_id:
        try:
            counts = render.status_counts(await memory.all_episodes(scope))
        except LTMError as exc:
            counts = f"unavailable ({exc.message})"
    profiles = await memory.profiles(scope)
    speakers = await memory.speaker_profiles(scope)
    return render.overview(scope, counts, profiles.session, len(speakers), await memory.audit_count(scope),
                           await memory.fences_of(scope))


@subcommand("help", "!memory help — this list")
async def help_(call: Call) -> str:
    return help_text()


@subcommand("profile", "!memory profile — session and current speaker profile")
async def profile(call: Call) -> str:
    call.args(max_positional=0)
    return render.profiles(call.scope, await call.memory.profiles(call.scope))


@subcommand("search", "!memory search <query> [--top-k N] [--include-superseded] [--include-archived] [--status S]")
async def search(call: Call) -> str:
    args = call.args(switches=LIST_FLAGS, options=frozenset({"status", "top-k"}))
    query = " ".join(args.positional).strip()
    if not query:
        raise UsageError("search", "a search query is required")
    statuses = statuses_of(call.topic, args)
    recipe = as_usage(call.topic, lambda: REVIEW_SEARCH.with_top_k(args.option("top-k") or None))
    hits = await call.memory.recall(call.scope, query, recipe=recipe,
                                    filters=RecallFilters(statuses=statuses))
    return render.search_results(query, statuses, [hit.episode for hit in hits])


async def _page(call: Call, statuses: tuple[EpisodeStatus, ...], page: int) -> str:
    result = await call.memory.list_episodes(call.scope, statuses, page=page, page_size=PAGE_SIZE)
    return render.episode_page(call.topic, statuses, result, PAGE_SIZE)


@subcommand("list", "!memory list [page] [--include-superseded] [--include-archived] [--status S]")
async def list_(call: Call) -> str:
    args = call.args(switches=LIST_FLAGS, options=frozenset({"status"}), max_positional=1)
    return await _page(call, statuses_of(call.topic, args), page_of(call.topic, args))


@subcommand("superseded", "!memory superseded [page]")
async def superseded(call: Call) -> str:
    return await _page(call, (EpisodeStatus.SUPERSEDED,), page_of(call.topic, call.args(max_positional=1)))


@subcommand("archived", "!memory archived [page]")
async def archived(call: Call) -> str:
    return await _page(call, (EpisodeStatus.ARCHIVED,), page_of(call.topic, call.args(max_positional=1)))


def single_id(call: Call) -> str:
    args = call.args(max_positional=1)
    if not args.positional:
        raise UsageError(call.topic, "an episode id is required")
    return args.positional[0]


@subcommand("show", "!memory show <id>")
async def show(call: Call) -> str:
    return render.episode_detail(await call.memory.get_episode(call.scope, single_id(call)))


@subcommand("health", "!memory health")
async def health(call: Call) -> str:
    call.args(max_positional=0)
    return render.health_text(await call.memory.health(call.scope, await pipeline_kbs(call.ctx)))


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
