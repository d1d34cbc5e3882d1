"""A profile's fields as reply lines, shared by `!memory profile` and its edits (`profile_edits.py`)."""

from __future__ import annotations

from components.common.chat_text import Own, quote
from components.common.i18n import Catalogue
from ltm import Profile

SAY = Catalogue({
    "views.profile_name": ("Name: {value}", "名字：{value}"),
    "views.profile_traits": ("Traits: {value}", "特征：{value}"),
    "views.profile_preferences": ("Preferences: {value}", "偏好：{value}"),
    "views.profile_notes": ("Notes: {value}", "备注：{value}"),
})


def profile_lines(profile: Profile) -> list[Own]:
    """The profile's fields, one line each, its values quoted (they are what users and models stored)."""
    out: list[Own] = []
    if profile.name:
        out.append(SAY("views.profile_name", value=quote(profile.name, 100)))
    for key, values in (("views.profile_traits", profile.traits), ("views.profile_preferences", profile.preferences)):
        if values:
            out.append(SAY(key, value=Own("; ".join(quote(v, 200) for v in values))))
    if profile.notes:
        out.append(SAY("views.profile_notes", value=quote(profile.notes, None)))
    return out
