"""The official memory KB's settings against this plugin's: what becomes an override, what is already so,
what has no equivalent, and what would be refused, the same in a dry run as in the import.

A value or a name that looks like a credential is never echoed in the report (the bundle's settings
are the official KB's as stored, so anything may sit there): it is shown as `WITHHELD`.
"""

from __future__ import annotations

from typing import Any

from ...errors import LTMError, ValidationError
from ...kb_overrides import SettingsOverrides
from ...kb_settings import KBSettings
from ...secrets import secret_kind
from .official_records import NO_EQUIVALENT, SETTING_EQUIVALENTS

WITHHELD = "(withheld: it looks like a credential)"


async def plan_settings(overrides: SettingsOverrides, given: dict[str, Any], dry_run: bool) -> list[dict[str, Any]]:
    """One row per official setting: {"name", "value", "action": set|same|none|refused, "reason"}; the
    import applies each `set` as it goes, the dry run asks whether it would be refused."""
    view = await overrides.view()
    current = {v.name: v.value for v in view.values}
    plans: list[dict[str, Any]] = []
    for name, value in given.items():
        if name == "retrieval" and isinstance(value, dict):
            plans += [_none(str(inner), inner_value) for inner, inner_value in value.items()]
            continue
        if name not in SETTING_EQUIVALENTS:
            plans.append(_none(str(name), value))
            continue
        plan: dict[str, Any] = {"name": name, "value": _shown(name, value), "action": "set", "reason": ""}
        try:
            parsed = KBSettings.parse({"embedding_model_uuid": "-", name: value}).to_dict()[name]
        except ValidationError as exc:
            plans.append({**plan, "action": "refused", "reason": _said(exc.message)})
            continue
        plan["value"] = parsed
        if parsed == current.get(name):
            plans.append({**plan, "action": "same"})
            continue
        try:
            if dry_run:
                refusal = await overrides.refusal(name, parsed)
                if refusal:
                    plan = {**plan, "action": "refused", "reason": _said(refusal)}
            else:
                await overrides.set(name, parsed)
        except LTMError as exc:
            plan = {**plan, "action": "refused", "reason": _said(exc.message)}
        plans.append(plan)
    return plans


def _none(name: str, value: Any) -> dict[str, Any]:
    return {"name": _said(name), "value": _shown(name, value), "action": "none",
            "reason": NO_EQUIVALENT.get(name, "no equivalent setting in this plugin")}


# Setting names whose value is a credential whatever it looks like ("token: hunter2" reads as plain words).
_CREDENTIAL_NAMES = ("password", "passwd", "secret", "token", "api_key", "apikey", "access_key", "private_key",
                     "credential", "auth")


def _shown(name: str, value: Any) -> Any:
    """The value as the report may show it: a credential by its name or by its look is withheld."""
    lowered = str(name).lower()
    if any(word in lowered for word in _CREDENTIAL_NAMES) or secret_kind(f"{name}: {value}"):
        return WITHHELD
    if isinstance(value, str):
        return _said(value)
    if isinstance(value, (dict, list)):
        return WITHHELD if secret_kind(repr(value)) else value
    return value


def _said(text: str) -> str:
    return WITHHELD if secret_kind(text) else text
