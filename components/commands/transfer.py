"""`!memory` export, import and audit.

Long output: one reply is one chat message, and chat platforms cut long messages
(about 4,000 characters). JSON replies are sent whole when they fit and otherwise
replaced by a summary plus where to get the full document; JSON is never cut or
split (a fragment cannot be imported).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from components.commands.args import UsageError, as_usage, page_of, parse_args, split_head, statuses_of
from components.commands.registry import Call, Subcommands
from components.commands.text import clip, json_or_summary, page_title, plural, short_time, statuses_label
from components.commands.views import LIST_FLAGS
from ltm import (
    LISTED_STATUSES,
    AuditPage,
    EpisodeStatus,
    ImportResult,
    MemoryScope,
    ProfileImport,
    load_json,
    parse_records,
)

PAGE_SIZE = 10


SUBCOMMANDS = Subcommands()


@SUBCOMMANDS("export", "!memory export [l1] — L1 profiles as JSON\n"
            "!memory export l2 [--status S] — L2 episodes as JSON: every status, or only S")
async def export(call: Call) -> str:
    head, rest = split_head(call.rest)
    if head.lower() in ("", "l1"):
        if rest.strip():
            raise UsageError("export", f"unexpected argument {rest.strip()[:40]!r}")
        return profile_export(await call.memory.export_profiles(call.scope))
    if head.lower() != "l2":
        raise UsageError("export", f"unknown export {head[:20]!r}")
    args = parse_args("export", rest, switches=LIST_FLAGS, options=frozenset({"status"}), max_positional=0)
    # A backup keeps history: every status, as the console's Export tab does, unless --status narrows it.
    statuses = statuses_of(call.topic, args, default=LISTED_STATUSES)
    return episode_export(call.scope, statuses, await call.memory.export_episodes(call.scope, statuses))


@SUBCOMMANDS("import", '!memory import l2 <json> — a list of episodes or {"episodes": [...]}\n'
            "!memory import l1 <json> — what !memory export gives: the profiles it carries replace this chat's",
            mutating=True)
async def import_(call: Call) -> str:
    head, raw_json = split_head(call.rest)
    layer = head.lower()
    if layer not in ("l1", "l2"):
        raise UsageError("import", "say 'import l1' or 'import l2' and paste the JSON")
    if not raw_json.strip():
        raise UsageError("import", f"paste the JSON after 'import {layer}'")
    payload = as_usage("import", lambda: load_json(raw_json))
    if layer == "l1":  # validated whole before any write
        return profiles_imported(call.scope, await call.memory.import_profiles(call.scope, payload))
    # The whole batch is validated before anything is written (parse_records raises on the first bad record).
    records = as_usage("import", lambda: parse_records(payload, source="import"))
    result = await call.memory.import_episodes(call.scope, records, keep_senders=call.is_admin)
    return imported(call.scope, result, _foreign_user_keys(payload, call.scope.user_key), senders_kept=call.is_admin)


@SUBCOMMANDS("audit", "!memory audit [page]\n!memory audit export")
async def audit(call: Call) -> str:
    head, rest = split_head(call.rest)
    if head.lower() == "export":
        if rest.strip():
            raise UsageError("audit", f"unexpected argument {rest.strip()[:40]!r}")
        entries = await call.memory.audit_export(call.scope)
        return audit_export(call.scope, entries, Counter(str(e.get("operation")) for e in entries))
    page = page_of("audit", call.args(max_positional=1))
    return audit_page(await call.memory.audit_page(call.scope, page, PAGE_SIZE))


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


# --------------------------------------------------------------------------- reply text
def status_tally(statuses: Iterable[str]) -> str:
    """`14 active, 1 archived`: only statuses present, in lifecycle order."""
    counts = Counter(statuses)
    order = [s.value for s in EpisodeStatus] + sorted(set(counts) - {s.value for s in EpisodeStatus})
    return ", ".join(f"{counts[s]} {s}" for s in order if counts.get(s)) or "none"


def audit_line(entry: dict[str, Any]) -> str:
    who = entry.get("sender_name") or entry.get("sender_id") or ""
    parts = [short_time(entry.get("time")), str(entry.get("operation") or "?")]
    target = " ".join(str(p) for p in (entry.get("target_type"), entry.get("target_id")) if p)
    if target:
        parts.append(target)
    if who:
        parts.append(f"by {who}")
    line = " · ".join(parts)
    summary = clip(str(entry.get("summary") or ""), 80)
    return f"{line}\n   {summary}" if summary else line


def profile_export(payload: dict[str, Any]) -> str:
    speakers = payload.get("speaker_profiles") or {}
    header = (f"L1 export of {payload.get('scope_key')}: session profile + "
              f"{plural(len(speakers), 'speaker profile')}")
    summary = [f"Speaker profiles: {len(speakers)}"]
    hint = "Use the Memory Console Export tab for the full JSON; !memory profile shows the current ones."
    return json_or_summary(header, payload, summary, hint)


def episode_export(scope: MemoryScope, statuses: Sequence[EpisodeStatus], payload: dict[str, Any]) -> str:
    episodes = payload["episodes"]
    header = (f"L2 export of {scope.user_key} ({statuses_label(statuses)}): "
              f"{plural(len(episodes), 'episode')}")
    summary = ["By status: " + status_tally(e["status"] for e in episodes)]
    if payload.get("truncated"):
        header += " (INCOMPLETE: the space holds more records than one export reads)"
    hint = ("Use the Memory Console Export tab for the full JSON, or narrow with --status "
            "(e.g. !memory export l2 --status archived).")
    return json_or_summary(header, payload, summary, hint)


IMPORT_PREVIEW = 5


def imported(scope: MemoryScope, result: ImportResult, foreign_keys: set[str], *, senders_kept: bool) -> str:
    episodes = result.episodes
    lines = [
        f"Imported {plural(len(episodes), 'episode')} into {scope.user_key} "
        f"({status_tally(e.status.value for e in episodes)}); new IDs, original IDs kept as original_id.",
    ]
    if foreign_keys:
        lines.append(f"Note: user_key {', '.join(sorted(foreign_keys))[:80]} in the JSON was ignored; "
                     "imports always go into this chat's memory.")
    if not senders_kept:
        lines.append("Speakers in the JSON were not kept: the records are attributed to you (only a bot admin "
                     "imports records on behalf of other speakers).")
    for episode in episodes[:IMPORT_PREVIEW]:
        origin = f"{episode.original_id} -> " if episode.original_id else "new: "
        lines.append(origin + episode.episode_id)
    if len(episodes) > IMPORT_PREVIEW:
        lines.append(f"... and {len(episodes) - IMPORT_PREVIEW} more (!memory list)")
    lines += _not_imported(result)
    return "\n".join(lines)


def _record_label(position: int, original_id: str | None) -> str:
    return f"#{position}" + (f" ({original_id})" if original_id else "")


def _not_imported(result: ImportResult) -> list[str]:
    """Records the import did not write because the fact is stored already, and near-identical ones."""
    lines: list[str] = []
    if result.duplicates:
        lines.append(f"Already remembered, not imported: {plural(len(result.duplicates), 'record')} "
                     "(record -> the episode that holds the fact):")
        for dup in result.duplicates[:IMPORT_PREVIEW]:
            where = " (an earlier record of this import)" if dup.in_batch else ""
            lines.append(f"{_record_label(dup.position, dup.original_id)} -> {dup.existing_id}{where}")
        if len(result.duplicates) > IMPORT_PREVIEW:
            lines.append(f"... and {len(result.duplicates) - IMPORT_PREVIEW} more (!memory audit)")
    if result.similar:
        lines.append(f"Similar to stored episodes, imported anyway: {plural(len(result.similar), 'record')} "
                     "(archive or forget the outdated one):")
        for near in result.similar[:IMPORT_PREVIEW]:
            lines.append(f"#{near.position} {near.episode_id} ~ {', '.join(near.similar_ids)}")
        if len(result.similar) > IMPORT_PREVIEW:
            lines.append(f"... and {len(result.similar) - IMPORT_PREVIEW} more")
    return lines


def profiles_imported(scope: MemoryScope, found: ProfileImport) -> str:
    parts = (["the session profile"] if found.session else []) + (
        [f"{plural(len(found.speakers), 'speaker profile')} ({', '.join(found.speakers[:5])}"
         f"{', …' if len(found.speakers) > 5 else ''})"] if found.speakers else [])
    if not parts:
        return "Nothing imported: every profile in the JSON is empty (an import never clears a profile)."
    lines = [f"Imported {' and '.join(parts)} into {scope.scope_key}; each replaced the profile of the same name."]
    if found.skipped_empty:
        lines.append(f"{plural(found.skipped_empty, 'empty profile')} in the JSON left alone.")
    if found.scope_key and found.scope_key != scope.scope_key:
        lines.append(f"Note: the JSON came from {found.scope_key[:80]}; imports always go into this chat.")
    return "\n".join(lines)


def audit_page(result: AuditPage) -> str:
    if not result.total:
        return "No audit entries for this chat yet."
    lines = [page_title("Audit log", result.page, result.pages, result.total, "entries") + " · newest first"]
    lines += [audit_line(entry) for entry in result.entries]
    if result.page < result.pages:
        lines.append(f"Next: !memory audit {result.page + 1}")
    return "\n".join(lines)


def audit_export(scope: MemoryScope, entries: list[dict[str, Any]], operations: Counter[str]) -> str:
    header = f"Audit export of {scope.scope_key}: {len(entries)} entries (oldest first)"
    summary = ["By operation: " + ", ".join(f"{n} {op}" for op, n in sorted(operations.items()))]
    if entries:
        summary.append(f"From {entries[0].get('time')} to {entries[-1].get('time')}")
    hint = "Browse with !memory audit [page], or use the Memory Console Audit tab to export it."
    return json_or_summary(header, {"scope_key": scope.scope_key, "entries": entries}, summary, hint)
