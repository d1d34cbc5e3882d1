"""Console endpoints over one selected space: profiles (and their edits), episodes, search, the episode actions,
the injection snapshot, the audit log and the export (M2, M3, A2; the export also carries the chat's
conversation record, V4)."""

from __future__ import annotations

from typing import Any

from components.pages.console.requests import MAX_QUERY_CHARS, Body, Result, allowed, page_size, statuses, text
from components.pages.console.routes import Endpoints
from components.pages.console.spaces import one_record, resolve_space
from ltm import (
    LISTED_STATUSES,
    REVIEW_SEARCH,
    Episode,
    EpisodeStatus,
    MemoryService,
    NoKnowledgeBase,
    RecallFilters,
    ValidationError,
    now_iso,
    params,
    utc_now,
)

EXPORT_FORMAT = "longterm-memory-console-export"

ROUTES = Endpoints()


def episode_view(episode: Episode) -> dict[str, Any]:
    """The public view, and whether the fact still holds ("current", "expired", "not yet valid")."""
    return {**episode.to_public(), "validity": episode.validity_at(utc_now()).value}


@ROUTES("/profiles", read_only=True)
async def profiles(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space"})
    space = await resolve_space(memory, body)
    data = await memory.export_profiles(space.scope)
    return {"space": space.to_dict(), "session_profile": data["session_profile"],
            "speaker_profiles": data["speaker_profiles"]}


PROFILE_FIELDS = {"name", "traits", "preferences", "notes"}


@ROUTES("/profile/edit")
async def profile_edit(memory: MemoryService, body: Body) -> Result:
    """Replace the given fields of one profile of the selected session (checked like `update_profile`)."""
    allowed(body, {"space", "target", "sender_id", "fields"})
    space = await resolve_space(memory, body)
    fields = body.get("fields")
    if not isinstance(fields, dict) or not fields:
        raise ValidationError("fields is required: an object with name, traits, preferences or notes")
    params.reject_unknown(fields, PROFILE_FIELDS, what="profile field")
    profile = await memory.edit_profile(space.scope, body.get("target"), body.get("sender_id"),
                                        {**fields, "mode": "replace"})
    return {"space": space.to_dict(), "profile": profile.to_dict()}


@ROUTES("/profile/clear")
async def profile_clear(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space", "target", "sender_id"})
    space = await resolve_space(memory, body)
    cleared = await memory.clear_profile(space.scope, body.get("target"), body.get("sender_id"))
    return {"space": space.to_dict(), "cleared": cleared}


@ROUTES("/episodes", read_only=True)
async def episodes(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space", "page", "page_size", "status"})
    space = await resolve_space(memory, body)
    page = params.page(body.get("page"))
    size = page_size(body, high=50, default=10)
    chosen = statuses(body.get("status"), "status")
    result = await memory.list_episodes(space.scope, chosen, page, size)
    return {
        "space": space.to_dict(),
        "episodes": [episode_view(e) for e in result.episodes],
        "page": result.page, "pages": result.pages, "total": result.total, "truncated": result.truncated,
        "statuses": [s.value for s in chosen],
    }


@ROUTES("/search", read_only=True)
async def search(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space", "query", "top_k", "statuses"})
    space = await resolve_space(memory, body)
    query = text(body.get("query"), "query", limit=MAX_QUERY_CHARS)
    recipe = REVIEW_SEARCH.with_top_k(body.get("top_k"))
    chosen = statuses(body.get("statuses"), "statuses", (EpisodeStatus.ACTIVE,))
    hits = await memory.recall(space.scope, query, recipe=recipe, filters=RecallFilters(statuses=chosen))
    return {
        "space": space.to_dict(),
        "query": query,
        "results": [{**episode_view(h.episode), "score": round(h.score, 4)} for h in hits],
        "statuses": [s.value for s in chosen],
    }


ROUTES.add("/episode/archive", one_record("episode_id", "episode", lambda m, s, i: m.archive(s, i), episode_view))


@ROUTES("/episode/restore")
async def restore(memory: MemoryService, body: Body) -> Result:
    """Restore, and name the correction that is still active (two versions are then recalled)."""
    allowed(body, {"space", "episode_id"})
    space = await resolve_space(memory, body)
    result = await memory.restore(space.scope, params.record_id(body.get("episode_id"), "episode_id"))
    correction = result.active_correction
    return {"space": space.to_dict(), "episode": episode_view(result.episode),
            "previous_status": result.previous_status.value,
            "active_correction": episode_view(correction) if correction is not None else None}


ROUTES.add("/episode/delete", one_record("episode_id", "episode", lambda m, s, i: m.forget(s, i), episode_view))


@ROUTES("/injection", read_only=True)
async def injection(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space"})
    space = await resolve_space(memory, body)
    return {"space": space.to_dict(), "snapshot": await memory.snapshot(space.scope)}


@ROUTES("/audit", read_only=True)
async def audit(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space", "page", "page_size"})
    space = await resolve_space(memory, body)
    page = params.page(body.get("page"))
    result = await memory.audit_page(space.scope, page, page_size(body, high=100, default=20))
    return {"space": space.to_dict(), "entries": result.entries, "page": result.page, "pages": result.pages,
            "total": result.total}


@ROUTES("/audit/export", read_only=True)
async def audit_export(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space"})
    space = await resolve_space(memory, body)
    entries = await memory.audit_export(space.scope)
    return {"space": space.to_dict(), "export": {"scope_key": space.scope.chat_key, "exported_at": now_iso(),
                                                  "entries": entries}}


@ROUTES("/export", read_only=True)
async def export(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space", "statuses"})
    space = await resolve_space(memory, body)
    chosen = statuses(body.get("statuses"), "statuses", LISTED_STATUSES)
    l1 = await memory.export_profiles(space.scope)
    l2: dict[str, Any] | None = None
    l2_error = ""
    try:
        l2 = await memory.export_episodes(space.scope, chosen)
    except NoKnowledgeBase as exc:
        l2_error = exc.message
    return {
        "space": space.to_dict(),
        "export": {"format": EXPORT_FORMAT, "version": 1, "exported_at": now_iso(),
                   "scope_key": space.scope.chat_key, "user_key": space.scope.space_key,
                   "kb_id": space.scope.kb_id, "l1": l1, "l2": l2,
                   # the chat's conversation record (`!memory import conversation` reads it back); an
                   # export written before it has no such key
                   "conversation": await memory.export_conversation(space.scope)},
        "l2_error": l2_error,
    }
