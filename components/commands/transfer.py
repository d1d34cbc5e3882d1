"""`!memory` export, import and audit.

Long output: one reply is one chat message, and chat platforms cut long messages
(about 4,000 characters). JSON replies are sent whole when they fit and otherwise
replaced by a summary plus where to get the full document; JSON is never cut or
split (a fragment cannot be imported).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from components.commands import render
from components.commands.args import UsageError, as_usage, page_of, parse_args, split_head, statuses_of
from components.commands.registry import Call, subcommand
from components.commands.views import LIST_FLAGS
from ltm import load_json, parse_records

PAGE_SIZE = 10


@subcommand("export", "!memory export [l1] — L1 profiles as JSON\n"
            "!memory export l2 [--status S] [--include-archived] [--include-superseded]")
async def export(call: Call) -> str:
    head, rest = split_head(call.rest)
    if head.lower() in ("", "l1"):
        if rest.strip():
            raise UsageError("export", f"unexpected argument {rest.strip()[:40]!r}")
        return render.profile_export(await call.memory.export_profiles(call.scope))
    if head.lower() != "l2":
        raise UsageError("export", f"unknown export {head[:20]!r}")
    args = parse_args("export", rest, switches=LIST_FLAGS, options=frozenset({"status"}), max_positional=0)
    statuses = statuses_of(call.topic, args)
    return render.episode_export(call.scope, statuses, await call.memory.export_episodes(call.scope, statuses))


@subcommand("import", '!memory import l2 <json> — a list of episodes or {"episodes": [...]}', mutating=True)
async def import_(call: Call) -> str:
    head, raw_json = split_head(call.rest)
    if head.lower() != "l2":
        raise UsageError("import", "only 'import l2' exists" if head else "say 'import l2' and paste the JSON")
    if not raw_json.strip():
        raise UsageError("import", "paste the JSON after 'import l2'")
    payload = as_usage("import", lambda: load_json(raw_json))
    # The whole batch is validated before anything is written (parse_records raises on the first bad record).
    records = as_usage("import", lambda: parse_records(payload, source="import"))
    episodes = await call.memory.import_episodes(call.scope, records, keep_senders=call.is_admin)
    return render.imported(call.scope, episodes, _foreign_user_keys(payload, call.scope.user_key),
                           senders_kept=call.is_admin)


@subcommand("audit", "!memory audit [page]\n!memory audit export")
async def audit(call: Call) -> str:
    head, rest = split_head(call.rest)
    if head.lower() == "export":
        if rest.strip():
            raise UsageError("audit", f"unexpected argument {rest.strip()[:40]!r}")
        entries = await call.memory.audit_export(call.scope)
        return render.audit_export(call.scope, entries, Counter(str(e.get("operation")) for e in entries))
    page = page_of("audit", call.args(max_positional=1))
    return render.audit_page(await call.memory.audit_page(call.scope, page, PAGE_SIZE))


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
