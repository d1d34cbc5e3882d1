"""A profile's fields as reply lines, shared by `!memory profile` and its edits (`profile_edits.py`)."""

from __future__ import annotations

from components.commands.text import short_time
from components.common.chat_text import Own, clip, quote
from components.common.i18n import Catalogue
from ltm import Profile

PAST_VALUES_SHOWN = 3

SAY = Catalogue({
    "views.profile_name": ("Name: {value}", "名字：{value}"),
    "views.profile_traits": ("Traits: {value}", "特征：{value}"),
    "views.profile_preferences": ("Preferences: {value}", "偏好：{value}"),
    "views.profile_notes": ("Notes: {value}", "备注：{value}"),
    "views.fact_traits": ("Trait “{key}”: {value}; before: {past}", "特征“{key}”：{value}；之前：{past}"),
    "views.fact_preferences": ("Preference “{key}”: {value}; before: {past}", "偏好“{key}”：{value}；之前：{past}"),
    "views.fact_none": ("(removed)", "（已移除）"),
    "views.fact_replaced": ("{value} (until {time})", "{value}（至 {time}）"),
    "views.fact_removed": ("{value} (removed {time})", "{value}（{time} 移除）"),
    "views.fact_more": ("… {count} older", "……另有 {count} 个更早的"),
})


def profile_lines(profile: Profile) -> list[Own]:
    """The profile's fields, one line each, its values quoted (they are what users and models stored);
    then, for each named fact with a history, its current value and the values it held before."""
    out: list[Own] = []
    if profile.name:
        out.append(SAY("views.profile_name", value=quote(profile.name, 100)))
    for key, values in (("views.profile_traits", profile.traits), ("views.profile_preferences", profile.preferences)):
        if values:
            out.append(SAY(key, value=Own("; ".join(quote(v, 200) for v in values))))
    if profile.notes:
        out.append(SAY("views.profile_notes", value=quote(profile.notes, None)))
    return out + fact_lines(profile)


def fact_lines(profile: Profile) -> list[Own]:
    out: list[Own] = []
    for list_field in ("traits", "preferences"):
        for key, fact in sorted(profile.facts.get(list_field, {}).items()):
            if not fact.history:
                continue
            past = [SAY("views.fact_removed" if p.status == "removed" else "views.fact_replaced",
                        value=quote(p.value, 80), time=short_time(p.until))
                    for p in reversed(fact.history[-PAST_VALUES_SHOWN:])]
            if len(fact.history) > PAST_VALUES_SHOWN:
                past.append(SAY("views.fact_more", count=len(fact.history) - PAST_VALUES_SHOWN))
            out.append(SAY(f"views.fact_{list_field}", key=clip(key, 64),
                           value=quote(fact.value, 200) if fact.value else SAY("views.fact_none"),
                           past=Own(", ".join(past))))
    return out
