"""Memory Console page API (M1-M3, F4, H, K7, Q2 in docs/REQUIREMENTS.md): one small function per endpoint.

The console has no end-user identity (the host route is admin-only and
`PageRequest.caller` is always None). Every space-scoped endpoint takes the
selected memory space from the body, `{"space": {"scope_key", "user_key"}}`, and
builds a `MemoryScope` on the installation's memory knowledge base. The service
filters every read and write on that scope's `user_key` / `scope_key`, so an
episode id of another space comes back as "not found".

Every answer is a plain dict: `{"ok": true, ...}` or
`{"ok": false, "error": "...", "code": "..."}`. `dispatch` never raises:
`PageResponse.fail` reaches the page as "[object Object]" (docs/HOST-FACTS.md,
page component), so application errors travel as data. Bodies are validated by the
same `ltm.params` functions the tools and the command use.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from components.common.envelope import error_envelope, internal_error
from ltm import (
    CONSOLE_SEARCH,
    LISTED_STATUSES,
    MAX_CANDIDATES,
    EpisodeStatus,
    Fence,
    Identity,
    Isolation,
    LTMError,
    MemoryScope,
    MemoryService,
    NoKnowledgeBase,
    RecallFilters,
    SpaceKind,
    ValidationError,
    now_iso,
    params,
    parse_statuses,
    split_session_key,
    user_key_for,
    user_key_for_session_key,
)
from ltm.langbot import split_session_name

log = logging.getLogger("LongTermMemory")

MAX_KEY_CHARS = 512
MAX_QUERY_CHARS = 500
MAX_ID_CHARS = 100
EXPORT_FORMAT = "longterm-memory-console-export"

Body = dict[str, Any]
Result = dict[str, Any]


# ---------------------------------------------------------------------- body validation


def _allowed(body: Body, fields: set[str]) -> None:
    params.reject_unknown(body, fields)


def _text(value: Any, field: str, *, required: bool = True, limit: int = MAX_KEY_CHARS) -> str:
    return params.text(value, field, max_chars=limit, required=required)


def _status_filter(value: Any) -> tuple[EpisodeStatus, ...]:
    """`status`: one status, a list or comma list of them, or "all" (active + superseded + archived)."""
    return parse_statuses(value, "status")


def _statuses(value: Any, field: str, default: tuple[EpisodeStatus, ...]) -> tuple[EpisodeStatus, ...]:
    return parse_statuses(value, field, default=default)


# ---------------------------------------------------------------------- spaces


@dataclass(frozen=True)
class Space:
    scope: MemoryScope
    warning: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope_key": self.scope.scope_key,
            "user_key": self.scope.user_key,
            "kb_id": self.scope.kb_id,
            "isolation": self.scope.isolation.value,
            "warning": self.warning,
        }


async def _memory_kb(memory: MemoryService) -> tuple[str, Isolation]:
    found = await memory.memory_kb()
    if found is None:
        return "", Isolation.SESSION
    return found[0], found[1].isolation


async def optional_space(memory: MemoryService, body: Body) -> Space | None:
    """The selected space, or None when the body names none."""
    if body.get("space") is None:
        return None
    return await resolve_space(memory, body)


async def resolve_space(memory: MemoryService, body: Body) -> Space:
    raw = body.get("space")
    if not isinstance(raw, dict):
        raise ValidationError("space is required: an object {scope_key, user_key}; select a memory space first")
    unknown = sorted(set(raw) - {"scope_key", "user_key"})
    if unknown:
        raise ValidationError(f"unknown field(s) in space: {', '.join(unknown)}; allowed: scope_key, user_key")
    scope_key = _text(raw.get("scope_key"), "space.scope_key")
    user_key = _text(raw.get("user_key"), "space.user_key")
    kb_id, isolation = await _memory_kb(memory)
    warning = ""
    expected = user_key_for_session_key(scope_key, isolation)
    if kb_id and user_key != expected:
        warning = (f"user_key {user_key} is not the key this plugin derives for scope_key {scope_key} "
                   f"in {isolation.value} isolation ({expected})")
    return Space(MemoryScope(scope_key=scope_key, user_key=user_key, kb_id=kb_id, isolation=isolation), warning)


def _space_entry(scope_key: str, isolation: Isolation) -> dict[str, str]:
    bot_uuid, session_name = split_session_key(scope_key)
    return {"scope_key": scope_key, "user_key": user_key_for_session_key(scope_key, isolation),
            "bot_uuid": bot_uuid, "session_name": session_name}


def _fence_entry(fence: Fence, kb_id: str) -> dict[str, Any]:
    data: dict[str, Any] = {**fence.to_dict(), **fence.space.describe()}
    if fence.space.kind is SpaceKind.L2:
        data["current_kb"] = fence.space.kb_id == kb_id
    return data


def _episode(e: Any) -> dict[str, Any]:
    return e.to_public()


# ---------------------------------------------------------------------- endpoints


async def overview(memory: MemoryService, body: Body) -> Result:
    _allowed(body, set())
    found = await memory.memory_kb()
    kb_id, isolation = (found[0], found[1].isolation) if found else ("", Isolation.SESSION)
    fences = await memory.list_fences()
    return {
        "kb": {"id": kb_id, "settings": found[1].to_dict()} if found else None,
        "isolation": isolation.value,
        # The installation pseudo-scope holds only installation-level audit (fence clears).
        "scopes": [_space_entry(key, isolation) for key in await memory.known_scopes()],
        "fences": [_fence_entry(f, kb_id) for f in fences],
    }


async def derive(memory: MemoryService, body: Body) -> Result:
    _allowed(body, {"bot_uuid", "session_name", "isolation"})
    bot_uuid = _text(body.get("bot_uuid"), "bot_uuid", required=False, limit=200)
    session_name = _text(body.get("session_name"), "session_name", limit=300)
    parts = split_session_name(session_name)
    if parts is None:
        raise ValidationError("session_name must look like group_<id> or person_<id>")
    kind, launcher_id = parts
    kb_id, kb_isolation = await _memory_kb(memory)
    raw_isolation = body.get("isolation")
    if raw_isolation in (None, ""):
        isolation = kb_isolation
    else:
        try:
            isolation = Isolation(_text(raw_isolation, "isolation", limit=20).lower())
        except ValueError:
            raise ValidationError("isolation must be 'session' or 'bot'") from None
    identity = Identity.from_host(launcher_type=kind, launcher_id=launcher_id, bot_uuid=bot_uuid)
    note = ""
    if kb_id and isolation is not kb_isolation:
        note = f"the memory knowledge base uses {kb_isolation.value} isolation"
    return {
        "scope_key": identity.session_key,
        "user_key": user_key_for(identity, isolation),
        "bot_uuid": identity.bot_uuid,
        "session_name": identity.session_name,
        "isolation": isolation.value,
        "note": note,
    }


async def profiles(memory: MemoryService, body: Body) -> Result:
    _allowed(body, {"space"})
    space = await resolve_space(memory, body)
    data = await memory.export_profiles(space.scope)
    return {"space": space.to_dict(), "session_profile": data["session_profile"],
            "speaker_profiles": data["speaker_profiles"]}


async def episodes(memory: MemoryService, body: Body) -> Result:
    _allowed(body, {"space", "page", "page_size", "status"})
    space = await resolve_space(memory, body)
    page = params.page(body.get("page"))
    page_size = params.bounded_int(body.get("page_size"), "page_size", low=1, high=50, default=10)
    statuses = _status_filter(body.get("status"))
    result = await memory.list_episodes(space.scope, statuses, page, page_size)
    return {
        "space": space.to_dict(),
        "episodes": [_episode(e) for e in result.episodes],
        "page": result.page, "pages": result.pages, "total": result.total, "truncated": result.truncated,
        "statuses": [s.value for s in statuses],
    }


async def search(memory: MemoryService, body: Body) -> Result:
    _allowed(body, {"space", "query", "top_k", "statuses"})
    space = await resolve_space(memory, body)
    query = _text(body.get("query"), "query", limit=MAX_QUERY_CHARS)
    top_k = CONSOLE_SEARCH.top_k(body.get("top_k"))
    statuses = _statuses(body.get("statuses"), "statuses", (EpisodeStatus.ACTIVE,))
    hits = await memory.recall(space.scope, query, recipe=CONSOLE_SEARCH, top_k=top_k,
                               filters=RecallFilters(statuses=statuses))
    return {
        "space": space.to_dict(),
        "query": query,
        "results": [{**_episode(h.episode), "score": round(h.score, 4)} for h in hits],
        "statuses": [s.value for s in statuses],
    }


def _episode_action(action: Callable[[MemoryService, MemoryScope, str], Awaitable[Any]]
                    ) -> Callable[[MemoryService, Body], Awaitable[Result]]:
    async def endpoint(memory: MemoryService, body: Body) -> Result:
        _allowed(body, {"space", "episode_id"})
        space = await resolve_space(memory, body)
        episode_id = _text(body.get("episode_id"), "episode_id", limit=MAX_ID_CHARS)
        episode = await action(memory, space.scope, episode_id)
        return {"space": space.to_dict(), "episode": _episode(episode)}

    return endpoint


archive = _episode_action(lambda m, s, i: m.archive(s, i))
delete = _episode_action(lambda m, s, i: m.forget(s, i))


async def restore(memory: MemoryService, body: Body) -> Result:
    """Restore, and name the correction that is still active (two versions are then recalled)."""
    _allowed(body, {"space", "episode_id"})
    space = await resolve_space(memory, body)
    episode_id = _text(body.get("episode_id"), "episode_id", limit=MAX_ID_CHARS)
    result = await memory.restore(space.scope, episode_id)
    correction = result.active_correction
    return {"space": space.to_dict(), "episode": _episode(result.episode),
            "previous_status": result.previous_status.value,
            "active_correction": _episode(correction) if correction is not None else None}


async def injection(memory: MemoryService, body: Body) -> Result:
    _allowed(body, {"space"})
    space = await resolve_space(memory, body)
    return {"space": space.to_dict(), "snapshot": await memory.snapshot(space.scope)}


async def audit(memory: MemoryService, body: Body) -> Result:
    _allowed(body, {"space", "page", "page_size"})
    space = await resolve_space(memory, body)
    page = params.page(body.get("page"))
    page_size = params.bounded_int(body.get("page_size"), "page_size", low=1, high=100, default=20)
    result = await memory.audit_page(space.scope, page, page_size)
    return {"space": space.to_dict(), "entries": result.entries, "page": result.page, "pages": result.pages,
            "total": result.total}


async def audit_export(memory: MemoryService, body: Body) -> Result:
    _allowed(body, {"space"})
    space = await resolve_space(memory, body)
    entries = await memory.audit_export(space.scope)
    return {"space": space.to_dict(), "export": {"scope_key": space.scope.scope_key, "exported_at": now_iso(),
                                                  "entries": entries}}


async def export(memory: MemoryService, body: Body) -> Result:
    _allowed(body, {"space", "statuses"})
    space = await resolve_space(memory, body)
    statuses = _statuses(body.get("statuses"), "statuses", LISTED_STATUSES)
    l1 = await memory.export_profiles(space.scope)
    l2: dict[str, Any] | None = None
    l2_error = ""
    try:
        l2 = await memory.export_episodes(space.scope, statuses)
    except NoKnowledgeBase as exc:
        l2_error = exc.message
    return {
        "space": space.to_dict(),
        "export": {"format": EXPORT_FORMAT, "version": 1, "exported_at": now_iso(),
                   "scope_key": space.scope.scope_key, "user_key": space.scope.user_key,
                   "kb_id": space.scope.kb_id, "l1": l1, "l2": l2},
        "l2_error": l2_error,
    }


async def health(memory: MemoryService, body: Body) -> Result:
    _allowed(body, {"space"})
    space = await optional_space(memory, body)
    report = await memory.health(space.scope if space else None)
    return {"space": space.to_dict() if space else None, "report": report.to_dict(), "checked_at": now_iso()}


async def fence_clear(memory: MemoryService, body: Body) -> Result:
    """F4: the selected space (L1 + L2 on the memory KB); the installation fence only when named."""
    _allowed(body, {"space", "installation"})
    installation = params.flag(body.get("installation"), "installation")
    space = (await optional_space(memory, body) if installation else await resolve_space(memory, body))
    cleared = await memory.clear_fences(space.scope if space else None, installation=installation)
    if cleared:
        log.warning("[LongTermMemory] console cleared fences %s", cleared)
    remaining = await memory.fences_of(space.scope) if space else {}
    return {
        "space": space.to_dict() if space else None,
        "cleared": cleared,
        "fenced": any(v is not None for v in remaining.values()),
        "installation": installation,
    }


async def review(memory: MemoryService, body: Body) -> Result:
    """K7 / Q: the switches of both review features and, for a selected space, its pending consolidation
    drafts (the candidate queue has its own endpoint, /candidates)."""
    _allowed(body, {"space"})
    space = await optional_space(memory, body)
    found = await memory.memory_kb()
    settings = found[1] if found else None
    drafts = [d.to_public() for d in await memory.consolidation_drafts(space.scope)] if space and found else []
    return {
        "enabled": True,
        "message": "",
        "settings": {
            "consolidation_enabled": settings.consolidation_enabled if settings else False,
            "candidate_extraction_enabled": settings.candidate_extraction_enabled if settings else False,
        },
        "drafts": drafts,
        "candidates": [],
    }


# ---------------------------------------------------------------------- candidate review (Q2)


async def candidates(memory: MemoryService, body: Body) -> Result:
    """The selected space's candidate queue, newest first: pending, or every status."""
    _allowed(body, {"space", "page", "page_size", "all_statuses"})
    space = await resolve_space(memory, body)
    page = params.page(body.get("page"))
    page_size = params.bounded_int(body.get("page_size"), "page_size", low=1, high=50, default=10)
    all_statuses = params.flag(body.get("all_statuses"), "all_statuses")
    result = await memory.candidate_page(space.scope, all_statuses=all_statuses, page=page, page_size=page_size)
    found = await memory.memory_kb()
    settings = found[1] if found else None
    return {
        "space": space.to_dict(),
        "candidates": [c.to_public() for c in result.candidates],
        "page": result.page, "pages": result.pages, "total": result.total, "counts": result.counts,
        "refused": result.refused, "last_refused_at": result.last_refused_at, "limit": MAX_CANDIDATES,
        "all_statuses": all_statuses,
        "settings": {
            "enabled": settings.candidate_extraction_enabled if settings else False,
            "auto_apply": settings.candidate_auto_apply if settings else False,
            "model": bool(settings.candidate_model_uuid) if settings else False,
            "max_per_turn": settings.candidate_max_per_turn if settings else 0,
        },
    }


def _candidate_action(action: Callable[[MemoryService, MemoryScope, str], Awaitable[Any]]
                      ) -> Callable[[MemoryService, Body], Awaitable[Result]]:
    async def endpoint(memory: MemoryService, body: Body) -> Result:
        _allowed(body, {"space", "candidate_id"})
        space = await resolve_space(memory, body)
        candidate_id = _text(body.get("candidate_id"), "candidate_id", limit=MAX_ID_CHARS)
        candidate = await action(memory, space.scope, candidate_id)
        return {"space": space.to_dict(), "candidate": candidate.to_public()}

    return endpoint


candidate_accept = _candidate_action(lambda m, s, i: m.accept_candidate(s, i))
candidate_reject = _candidate_action(lambda m, s, i: m.reject_candidate(s, i))


# ---------------------------------------------------------------------- consolidation drafts (K7)


def _consolidation_settings(memory_kb: Any) -> dict[str, Any]:
    settings = memory_kb[1] if memory_kb else None
    return {
        "kb": bool(memory_kb),
        "enabled": bool(settings and settings.consolidation_enabled),
        "model": bool(settings and settings.consolidation_model_uuid),
        "apply_profile_updates": bool(settings and settings.consolidation_apply_profile_updates),
        "min_age_days": settings.consolidation_min_age_days if settings else None,
        "max_candidates": settings.consolidation_max_candidates if settings else None,
    }


async def review_drafts(memory: MemoryService, body: Body) -> Result:
    """The selected space's pending summary drafts, each with its sources in full."""
    _allowed(body, {"space"})
    space = await resolve_space(memory, body)
    found = await memory.memory_kb()
    drafts = await memory.consolidation_drafts(space.scope) if found else []
    return {"space": space.to_dict(), "settings": _consolidation_settings(found),
            "drafts": [d.to_public() for d in drafts]}


async def review_draft_preview(memory: MemoryService, body: Body) -> Result:
    """The same preview as `!memory consolidate preview`: archival candidates, and with a consolidation
    model one new draft (or why there is none). Changes no episode."""
    _allowed(body, {"space", "tag"})
    space = await resolve_space(memory, body)
    preview = await memory.consolidation_preview(space.scope, tag=body.get("tag"))
    return {
        "space": space.to_dict(),
        "draft": preview.draft.to_public() if preview.draft else None,
        "note": preview.draft_note,
        "rejected": preview.rejected,
        "archival": [{"episode": _episode(c.episode), "notes": list(c.notes)} for c in preview.archival],
        "archival_total": preview.archival_total,
    }


async def review_draft_approve(memory: MemoryService, body: Body) -> Result:
    """`run <proposal_id>`: the same checks, the same audit."""
    _allowed(body, {"space", "proposal_id"})
    space = await resolve_space(memory, body)
    result = await memory.consolidation_run(space.scope, _text(body.get("proposal_id"), "proposal_id",
                                                               limit=MAX_ID_CHARS))
    return {"space": space.to_dict(), "proposal_id": result.proposal_id,
            "summary": _episode(result.summary) if result.summary else None,
            "sources": [_episode(e) for e in result.sources], "profile_note": result.profile_note}


async def review_draft_discard(memory: MemoryService, body: Body) -> Result:
    _allowed(body, {"space", "proposal_id"})
    space = await resolve_space(memory, body)
    draft = await memory.discard_draft(space.scope, _text(body.get("proposal_id"), "proposal_id", limit=MAX_ID_CHARS))
    return {"space": space.to_dict(), "proposal_id": draft.proposal_id}


Handler = Callable[[MemoryService, Body], Awaitable[Result]]

# endpoint -> (handler, read_only). Read-only endpoints also answer GET.
ROUTES: dict[str, tuple[Handler, bool]] = {
    "/overview": (overview, True),
    "/derive": (derive, True),
    "/profiles": (profiles, True),
    "/episodes": (episodes, True),
    "/search": (search, True),
    "/episode/archive": (archive, False),
    "/episode/restore": (restore, False),
    "/episode/delete": (delete, False),
    "/injection": (injection, True),
    "/audit": (audit, True),
    "/audit/export": (audit_export, True),
    "/export": (export, True),
    "/health": (health, True),
    "/fence/clear": (fence_clear, False),
    "/review": (review, True),
    # candidate review (Q2)
    "/candidates": (candidates, True),
    "/candidate/accept": (candidate_accept, False),
    "/candidate/reject": (candidate_reject, False),
    # consolidation drafts (K7)
    "/review/drafts": (review_drafts, True),
    "/review/draft/preview": (review_draft_preview, False),
    "/review/draft/approve": (review_draft_approve, False),
    "/review/draft/discard": (review_draft_discard, False),
}


def _fail(message: str, code: str) -> Result:
    return {"ok": False, "error": message, "code": code}


async def dispatch(memory: MemoryService | None, endpoint: Any, method: Any, body: Any) -> Result:
    """Route one page request; always returns a JSON-able dict, never raises."""
    path = str(endpoint or "").strip()
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/")
    route = ROUTES.get(path)
    if route is None:
        return _fail(f"unknown endpoint {path[:80]!r}", "unknown_endpoint")
    handler, read_only = route
    verb = str(method or "POST").upper()
    if verb != "POST" and not (read_only and verb == "GET"):
        allowed = "GET or POST" if read_only else "POST"
        return _fail(f"{path} accepts {allowed}, not {verb[:10]}", "method_not_allowed")
    if body is None:
        body = {}
    if not isinstance(body, dict):
        return _fail("the request body must be a JSON object", "invalid_input")
    if memory is None:
        return _fail("the memory service is not initialized", "unavailable")
    try:
        data = await handler(memory, body)
    except LTMError as exc:
        log.info("[LongTermMemory] console %s refused: %s", path, exc.code)
        return error_envelope(exc, "console")
    except Exception:
        log.exception("[LongTermMemory] console %s failed", path)
        return internal_error("console")
    return {"ok": True, **data}
