"""How a console request body is read: every field through `ltm.params`, unknown fields refused.

The same validators serve the tools and the command, so the same bad value gets the same
message on every surface. Record ids (episodes, candidates, proposals) are checked by
`params.record_id`, as everywhere else.
"""

from __future__ import annotations

from typing import Any

from ltm import EpisodeStatus, params, parse_statuses

MAX_KEY_CHARS = 512
MAX_QUERY_CHARS = 500

Body = dict[str, Any]
Result = dict[str, Any]


def allowed(body: Body, fields: set[str]) -> None:
    params.reject_unknown(body, fields)


def text(value: Any, field: str, *, required: bool = True, limit: int = MAX_KEY_CHARS) -> str:
    return params.text(value, field, max_chars=limit, required=required)


def statuses(value: Any, field: str, default: tuple[EpisodeStatus, ...] | None = None) -> tuple[EpisodeStatus, ...]:
    """One status, a list or comma list of them, or "all" (active + superseded + archived)."""
    if default is None:
        return parse_statuses(value, field)
    return parse_statuses(value, field, default=default)


def page_size(body: Body, *, high: int, default: int) -> int:
    return params.bounded_int(body.get("page_size"), "page_size", low=1, high=high, default=default)
