"""`update_profile` in the field/action form the official LongTermMemory plugin's tool used:

    {"scope"?: "session"|"speaker", "field": "name"|"traits"|"preferences"|"notes",
     "action": "set"|"add"|"remove", "value": "...", "fact_key"?: "...", "previous_value"?: "..."}

One call changes one field. It becomes the same `ProfileChange` the list form makes, so limits,
de-duplication, the secret check and the audit are the ones every profile write has.

- name: set/add give the name; remove clears it.
- notes: set replaces them, add appends ("old; new"), remove clears them.
- traits/preferences without a fact key: add adds the item, set makes it the only item, remove
  removes it. `previous_value` names the item the new one replaces (it leaves the list).
- traits/preferences with a fact key: set and add both make `value` the fact's current value (the
  old one joins the fact's history, or `previous_value` does when the fact held nothing); remove
  removes the fact's current value (`value` is not needed).
- No scope: name, traits and preferences go to the current speaker's profile, notes to the
  session's (what the official tool inferred).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import params
from ..errors import ValidationError
from .facts import FACT_FIELDS, fact_key, item_text
from .model import MAX_NAME_CHARS, MAX_NOTES_CHARS, PROFILE_FIELDS, ProfileChange, ProfileTarget, UpdateMode

FIELD_ACTION_PARAMS = ("field", "action", "value", "fact_key", "previous_value")
LIST_FORM_PARAMS = ("name", "traits", "preferences", "notes", "mode")
ACTIONS = ("set", "add", "remove")


def names_field_action(raw: Mapping[str, Any]) -> bool:
    """True when a call uses the field/action form (and so must not also use the list form)."""
    given = [k for k in FIELD_ACTION_PARAMS if raw.get(k) is not None]
    if given and any(raw.get(k) is not None for k in LIST_FORM_PARAMS):
        raise ValidationError("use either field/action/value or name/traits/preferences/notes/mode, not both")
    return bool(given)


def profile_target(target: Any, raw: Mapping[str, Any]) -> ProfileTarget:
    """Whose profile an update changes: the scope given, or (field/action form only) the one the
    field implies: notes the session's, anything else the current speaker's."""
    if params.is_blank(target) and names_field_action(raw):
        return ProfileTarget.SESSION if raw.get("field") == "notes" else ProfileTarget.SPEAKER
    return ProfileTarget(params.choice(target, "scope", [t.value for t in ProfileTarget]))


def parse_field_action(raw: Mapping[str, Any]) -> ProfileChange:
    """The change one field/action call asks for."""
    field = params.choice(raw.get("field"), "field", PROFILE_FIELDS)
    action = params.choice(raw.get("action"), "action", ACTIONS)
    key = fact_key(raw["fact_key"]) if not params.is_blank(raw.get("fact_key")) else None
    if key and field not in FACT_FIELDS:
        raise ValidationError("fact_key is only for traits and preferences")
    previous = raw.get("previous_value")
    previous = item_text(previous, "previous_value") if not params.is_blank(previous) and field in FACT_FIELDS \
        else None  # name and notes hold one value: set replaces it whatever it was
    needs_value = not (action == "remove" and (key or field in ("name", "notes")))
    value = _value(raw.get("value"), field, required=needs_value)
    if field == "name":
        return ProfileChange(name=value, mode=UpdateMode.REMOVE if action == "remove" else UpdateMode.MERGE)
    if field == "notes":
        mode = UpdateMode.REMOVE if action == "remove" else UpdateMode.MERGE
        return ProfileChange(notes=value, mode=mode, append_notes=action == "add")
    items = [value] if value else []
    mode = {"add": UpdateMode.MERGE, "remove": UpdateMode.REMOVE,
            "set": UpdateMode.MERGE if key else UpdateMode.REPLACE}[action]
    if action == "remove":  # removing by key ignores the value: the fact's current value goes
        items = [] if key else items
    return ProfileChange(traits=items if field == "traits" else None,
                         preferences=items if field == "preferences" else None,
                         mode=mode, fact_key=key, previous_value=previous)


def _value(value: Any, field: str, *, required: bool) -> str:
    if field == "notes":
        return params.text(value, "value", max_chars=MAX_NOTES_CHARS, required=required, multiline=True)
    if params.is_blank(value) and not required:
        return ""
    if field == "name":
        return " ".join(params.text(value, "value", max_chars=MAX_NAME_CHARS).split())
    return item_text(value, "value")
