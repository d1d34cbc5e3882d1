"""Console endpoints of the Review tab: memory candidates (Q2) and consolidation drafts (K7)."""

from __future__ import annotations

from typing import Any

from components.pages.console.memory_endpoints import episode_view
from components.pages.console.requests import Body, Result, allowed, page_size
from components.pages.console.routes import Endpoints
from components.pages.console.spaces import one_record, optional_space, resolve_space
from ltm import MAX_CANDIDATES, Candidate, KBSettings, MemoryService, Said, params


def coded(said: Said) -> dict[str, Any]:
    """What the core said, as the page words it: its code and parameters, with its English as fallback."""
    return {**said.to_dict(), "english": said.english}


# The page has no chat identity: a decision made here is recorded as the console's.
REVIEWER = "console"

ROUTES = Endpoints()


@ROUTES("/review", read_only=True)
async def review(memory: MemoryService, body: Body) -> Result:
    """The switches of both review features and, for a selected space, its pending consolidation
    drafts. The candidate queue is paged by its own endpoint, /candidates (an empty `candidates`
    list here used to read as "no candidates" while some were pending)."""
    allowed(body, {"space"})
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
    }


# ---------------------------------------------------------------------- candidate review (Q2)
@ROUTES("/candidates", read_only=True)
async def candidates(memory: MemoryService, body: Body) -> Result:
    """The selected space's candidate queue, newest first: pending, or every status."""
    allowed(body, {"space", "page", "page_size", "all_statuses"})
    space = await resolve_space(memory, body)
    page = params.page(body.get("page"))
    all_statuses = params.flag(body.get("all_statuses"), "all_statuses")
    result = await memory.candidate_page(space.scope, all_statuses=all_statuses, page=page,
                                         page_size=page_size(body, high=50, default=10))
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


def _candidate_view(candidate: Candidate) -> dict[str, Any]:
    return candidate.to_public()


ROUTES.add("/candidate/accept", one_record(
    "candidate_id", "candidate", lambda m, s, i: m.accept_candidate(s, i, reviewer=REVIEWER), _candidate_view))
ROUTES.add("/candidate/reject", one_record(
    "candidate_id", "candidate", lambda m, s, i: m.reject_candidate(s, i, reviewer=REVIEWER), _candidate_view))


# ---------------------------------------------------------------------- consolidation drafts (K7)
def _consolidation_settings(memory_kb: tuple[str, KBSettings] | None) -> dict[str, Any]:
    settings = memory_kb[1] if memory_kb else None
    return {
        "kb": bool(memory_kb),
        "enabled": bool(settings and settings.consolidation_enabled),
        "model": bool(settings and settings.consolidation_model_uuid),
        "apply_profile_updates": bool(settings and settings.consolidation_apply_profile_updates),
        "min_age_days": settings.consolidation_min_age_days if settings else None,
        "max_candidates": settings.consolidation_max_candidates if settings else None,
    }


@ROUTES("/review/drafts", read_only=True)
async def review_drafts(memory: MemoryService, body: Body) -> Result:
    """The selected space's pending summary drafts, each with its sources in full."""
    allowed(body, {"space"})
    space = await resolve_space(memory, body)
    found = await memory.memory_kb()
    drafts = await memory.consolidation_drafts(space.scope) if found else []
    return {"space": space.to_dict(), "settings": _consolidation_settings(found),
            "drafts": [d.to_public() for d in drafts]}


@ROUTES("/review/draft/preview")
async def review_draft_preview(memory: MemoryService, body: Body) -> Result:
    """The same preview as `!memory consolidate preview`: archival candidates, and with a consolidation
    model one new draft (or why there is none). Changes no episode."""
    allowed(body, {"space", "tag"})
    space = await resolve_space(memory, body)
    preview = await memory.consolidation_preview(space.scope, tag=body.get("tag"))
    return {
        "space": space.to_dict(),
        "draft": preview.draft.to_public() if preview.draft else None,
        "note": preview.draft_note,
        "note_said": preview.note.to_dict() if preview.note else None,
        "rejected": preview.rejected,
        "archival": [{"episode": episode_view(c.episode), "notes": [coded(n) for n in c.notes]}
                     for c in preview.archival],
        "archival_total": preview.archival_total,
    }


@ROUTES("/review/draft/approve")
async def review_draft_approve(memory: MemoryService, body: Body) -> Result:
    """`run <proposal_id>`: the same checks, the same audit."""
    allowed(body, {"space", "proposal_id"})
    space = await resolve_space(memory, body)
    result = await memory.consolidation_run(space.scope, params.record_id(body.get("proposal_id"), "proposal_id"))
    return {"space": space.to_dict(), "proposal_id": result.proposal_id,
            "summary": episode_view(result.summary) if result.summary else None,
            "sources": [episode_view(e) for e in result.sources], "profile_note": result.profile_note,
            "profile_said": result.profile.to_dict() if result.profile else None}


@ROUTES("/review/draft/discard")
async def review_draft_discard(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space", "proposal_id"})
    space = await resolve_space(memory, body)
    draft = await memory.discard_draft(space.scope, params.record_id(body.get("proposal_id"), "proposal_id"))
    return {"space": space.to_dict(), "proposal_id": draft.proposal_id}
