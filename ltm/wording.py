"""Sentences the core says as a stable code and its parameters (audit summaries, health lines,
store traits, consolidation notes), with their English wording.

A surface shows them in its reader's language: each surface looks the code up in
its dictionaries and fills in the parameters; the English text is what the audit log stores
(its `summary`), what logs and old clients read, and the fallback for a code a dictionary lacks.
Every phrase is declared once, next to the code that says it:

    STORED = Phrase("audit.episode_stored", "stored episode ({chars} chars, importance {importance})")
    tx.applied(Operation.REMEMBER, "episode", episode_id, STORED(chars=120, importance=3))

`PHRASES` holds every declared code; `tests/test_vocabulary.py` fails when one has no entry in
either language. A parameter is a plain value (text, number), another `Said`, or a list of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

ParamValue = Union[str, int, float, "Said", Sequence["Said"], Sequence[str]]
_FIELD = re.compile(r"\{(\w+)\}")


def fill(template: str, params: Mapping[str, Any], show: Any = str) -> str:
    """`{name}` replaced by `show(params[name])`; an unknown name stays as written."""
    return _FIELD.sub(lambda m: show(params[m.group(1)]) if m.group(1) in params else m.group(0), template)


@dataclass(frozen=True)
class Said:
    """One sentence: its code, its parameters, and its English text."""

    code: str
    params: Mapping[str, ParamValue] = field(default_factory=dict)

    @property
    def english(self) -> str:
        phrase = PHRASES.get(self.code)
        return fill(phrase.english, self.params, english_of) if phrase else self.code

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "params": {k: _plain(v) for k, v in self.params.items()}}

    def __str__(self) -> str:
        return self.english


def english_of(value: Any) -> str:
    if isinstance(value, Said):
        return value.english
    if isinstance(value, (list, tuple)):
        return "; ".join(english_of(v) for v in value)
    return str(value)


def _plain(value: Any) -> Any:
    if isinstance(value, Said):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class Phrase:
    """A declared sentence: `Phrase(code, english)(**params)` is one `Said`."""

    def __init__(self, code: str, english: str) -> None:
        if code in PHRASES:
            raise ValueError(f"phrase {code!r} is declared twice")
        self.code = code
        self.english = english
        self.fields = frozenset(_FIELD.findall(english))
        PHRASES[code] = self

    def __call__(self, **params: ParamValue) -> Said:
        return Said(self.code, params)


PHRASES: dict[str, Phrase] = {}


def said_from(value: Any) -> Said | None:
    """A `Said` read back from its stored form (`{"code", "params"}`), or None."""
    if not isinstance(value, Mapping) or not isinstance(value.get("code"), str):
        return None
    raw = value.get("params")
    params = raw if isinstance(raw, Mapping) else {}
    return Said(value["code"], {str(k): _revive(v) for k, v in params.items()})


def _revive(value: Any) -> Any:
    if isinstance(value, Mapping):
        return said_from(value) or str(value)
    if isinstance(value, list):
        return [_revive(v) for v in value]
    return value
