"""The surfaces' own check that no field of a request holds a credential (issue 35).

The core refuses a credential in every text it stores; a request can still carry one in a field the
core only parses (a time, a choice, an id, a setting's name), and the parser's message would quote
it. So each surface refuses a request with a credential in any field, names, values and list items
alike, before it runs: the answer names the field and the kind, never the text, and nothing is
looked up, stored or audited. The same detector decides (`ltm.secrets`).
"""

from __future__ import annotations

from typing import Any

from ltm import LTMError, ValidationError
from ltm.secrets import secret_kind

REFUSAL = "refused: {field} looks like {kind}; secrets are never stored, nothing was changed"


def credential_in(value: Any, field: str) -> tuple[str, str] | None:
    """(field, kind) of the first part of `value` that holds a credential, or None."""
    if isinstance(value, str):
        kind = secret_kind(value)
        return (field, kind) if kind else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = credential_in(str(key), f"a field name of {field}") or credential_in(item, f"{field}.{key}")
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for item in value:
            found = credential_in(item, f"an item of {field}")
            if found:
                return found
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return credential_in(str(value), field)  # a card number sent as a JSON number
    return None


def refuse_credentials(fields: dict[str, Any]) -> None:
    """Raise the refusal when any field (or field name) of a request holds a credential."""
    for name, value in fields.items():
        found = credential_in(str(name), "a field name") or credential_in(value, str(name))
        if found:
            raise ValidationError(REFUSAL.format(field=found[0], kind=found[1]))


def credential_refusal(exc: LTMError | None, arguments: str) -> LTMError | None:
    """A command's error (None: a usage error), or the credential refusal when its arguments hold one
    and the error is not that refusal already (the core's own names the field: keep it)."""
    kind = secret_kind(arguments)
    if not kind or (isinstance(exc, ValidationError) and "secrets are never stored" in exc.message):
        return exc
    return ValidationError(REFUSAL.format(field="the arguments", kind=kind))
