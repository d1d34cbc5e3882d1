"""`!memory me` and `!memory forget-me`: a speaker asks what is kept about them, and has it erased.

`me` shows what this chat keeps about the current sender (their episodes, speaker profile and
candidates) and how much the other chats of the installation keep (counts only). `forget-me`
erases this chat's part (its L1 scope and its episode space: in bot isolation that space is
every chat of the bot's, and only the sender's own records go). It counts first; `--confirm`
erases. `--everywhere` covers every chat of the installation, and only when the operator allows
it with the plugin setting `self_service_erasure_everywhere` (off by default); otherwise a bot
admin does it in the Memory Console's People tab. No admin is needed: it only ever touches the
sender's own records.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.commands.args import UsageError
from components.commands.registry import Call, Subcommands
from components.commands.text import clip, plural, short_time
from components.commands.views import status_counts
from components.common.memory_views import profile_text
from ltm import Outcome, PersonErasure, PersonRecords

SUBCOMMANDS = Subcommands()
EVERYWHERE_SETTING = "self_service_erasure_everywhere"
SHOWN = 5


def _sender(call: Call) -> str:
    if not call.scope.sender_id:
        raise UsageError(call.topic, "this message has no known sender, so there is no one to look up")
    return call.scope.sender_id


@SUBCOMMANDS("me", "!memory me — what this chat keeps about you, and how much other chats keep")
async def me(call: Call) -> str:
    call.args(max_positional=0)
    sender = _sender(call)
    here, elsewhere = (await call.memory.find_person(sender)).split(call.scope)
    return me_text(call, here, elsewhere)


@SUBCOMMANDS("forget-me", "!memory forget-me [--everywhere] [--confirm] — erase what is kept about you "
             "(this chat; counted first, erased with --confirm)")
async def forget_me(call: Call) -> str:
    args = call.args(switches=frozenset({"everywhere", "confirm"}), max_positional=0)
    sender = _sender(call)
    everywhere = "everywhere" in args.switches
    if everywhere and not allowed_everywhere(call.config):
        return ("!memory forget-me --everywhere: erasing your memories in other chats yourself is off in this "
                f"installation (plugin setting {EVERYWHERE_SETTING}). `!memory forget-me` erases this chat's; a bot "
                "admin can erase the rest in the Memory Console (People tab).")
    result = await call.memory.erase_person(sender, dry_run="confirm" not in args.switches,
                                            chat=None if everywhere else call.scope, actor=call.scope.identity)
    return erased_text(result, everywhere)


def allowed_everywhere(config: Mapping[str, object]) -> bool:
    value = config.get(EVERYWHERE_SETTING, False)
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "on"))


# --------------------------------------------------------------------------- reply text
COUNT_NAMES = (("episodes", "episode", "episodes"),
               ("summaries", "summary built from them", "summaries built from them"),
               ("speaker_profiles", "speaker profile", "speaker profiles"), ("candidates", "candidate", "candidates"),
               ("snapshots", "injection snapshot", "injection snapshots"))


def counts_text(counts: Mapping[str, int]) -> str:
    parts = [f"{counts[key]} {one if counts[key] == 1 else many}" for key, one, many in COUNT_NAMES
             if counts.get(key)]
    return ", ".join(parts) or "nothing"


def me_text(call: Call, here: PersonRecords, elsewhere: PersonRecords) -> str:
    scope = call.scope
    lines = [f"What this chat keeps about you ({scope.sender_name or scope.sender_id}, {scope.sender_id}):"]
    episodes = sorted((e for s in here.spaces for e in s.episodes), key=lambda e: e.timestamp, reverse=True)
    lines.append(f"Episodes you said: {len(episodes)}" + (f" ({status_counts(episodes)})" if episodes else ""))
    lines += [f"  {e.episode_id} · {short_time(e.timestamp)} · {clip(e.content, 60)}" for e in episodes[:SHOWN]]
    if len(episodes) > SHOWN:
        lines.append(f"  ... and {len(episodes) - SHOWN} more")
    profile = next((s.speaker_profile for s in here.spaces if s.speaker_profile is not None), None)
    shown = profile_text(profile) if profile is not None else ""
    lines.append("Your speaker profile: " + ("; ".join(shown.splitlines()) if shown else "none"))
    candidates = sum(len(s.candidates) for s in here.spaces)
    lines.append(f"Candidates from your messages: {candidates}")
    others = elsewhere.counts()
    if elsewhere.spaces:
        lines.append(f"Elsewhere in this installation: {counts_text(others)} in "
                     f"{plural(len(elsewhere.spaces), 'other memory space')}.")
    else:
        lines.append("Elsewhere in this installation: nothing.")
    hint = "Erase what this chat keeps: !memory forget-me"
    if elsewhere.spaces:
        hint += (" · everywhere: !memory forget-me --everywhere" if allowed_everywhere(call.config)
                 else " · the rest: ask a bot admin (Memory Console, People tab)")
    lines.append(hint)
    return "\n".join(lines)


def erased_text(result: PersonErasure, everywhere: bool) -> str:
    where = "every chat of this installation" if everywhere else "this chat"
    counts = result.counts()
    fenced = result.of(Outcome.FENCED)
    failed = result.of(Outcome.FAILED)
    if not result.spaces:
        return f"Nothing is kept about you in {where}."
    if result.dry_run:
        lines = [f"This would erase from {where}: {counts_text(counts)}. Nothing is erased yet.",
                 "To erase it: !memory forget-me " + ("--everywhere " if everywhere else "") + "--confirm"]
    else:
        lines = [f"Erased from {where}: {counts_text(counts)}. Each change is in the audit log of its chat."]
    if fenced:
        lines.append(f"Writes are paused by a fence in {', '.join(s.key for s in fenced)[:200]}: nothing is erased "
                     "there until an admin clears the fence.")
    if failed:
        lines.append(f"Not erased because of an error: {', '.join(s.key for s in failed)[:200]}; try again later.")
    return "\n".join(lines)
