"""Memory knowledge-base settings ("KB settings" in docs/REQUIREMENTS.md), their validation, and the
effective settings an installation runs with.

LangBot shows `creation_schema` as a form and never lets the admin edit these
settings later; it sends them to `on_knowledge_base_create` only. The plugin
therefore validates them there (a bad value rejects the KB with a clear message)
and persists them in the installation-wide `kb_configs` record (S8).

An admin can override any of them afterwards (`kb_overrides.py`): the creation settings stay
the base, the overrides sit beside them in the same record, and the effective settings are the
base with the overrides laid over it, parsed by the same `KBSettings.parse` (so a bad override
gets the message a bad creation value gets).
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, fields
from typing import Any

from . import params
from .errors import ValidationError
from .identity import Isolation
from .secrets import REDACTED, secret_kind


class RetrievalStrategy(str, enum.Enum):
    AUTO = "auto"
    VECTOR = "vector"
    HYBRID = "hybrid"


DEFAULT_HALF_LIFE_DAYS = 30.0
MAX_MODEL_ID_CHARS = 200


@dataclass(frozen=True)
class KBSettings:
    embedding_model_uuid: str
    isolation: Isolation = Isolation.SESSION
    recency_half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    auto_recall_top_k: int = 5
    retrieval_strategy: RetrievalStrategy = RetrievalStrategy.AUTO
    exact_match_boost: bool = True
    consolidation_enabled: bool = False
    consolidation_model_uuid: str = ""
    consolidation_min_age_days: int = 7
    consolidation_max_candidates: int = 20
    consolidation_apply_profile_updates: bool = False
    candidate_extraction_enabled: bool = False
    candidate_auto_apply: bool = False
    candidate_max_per_turn: int = 3
    candidate_model_uuid: str = ""
    # The conversation record (V1-V4): off by default, it keeps what people said in the chat.
    conversation_enabled: bool = False
    conversation_max_turns: int = 20
    conversation_max_chars: int = 12_000
    conversation_summary_max_chars: int = 2_000
    conversation_model_uuid: str = ""  # empty: the consolidation model; neither: the fallback summary
    # Platform events (X2, X3; delivered by the event processor, ltm/platform_events/).
    withdraw_recalled_messages: bool = True  # a recalled message's memory is taken back
    erase_members_who_leave: bool = False  # a member who leaves a group is erased from its memory
    # How many of a chat's latest turns the pipeline's Runner itself shows the model from LangBot's
    # transcript (docs/ARCHITECTURE.md, "The context pack"): 25 is LocalAgent's default of 50 messages.
    conversation_host_window: int = 25

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["isolation"] = self.isolation.value
        data["retrieval_strategy"] = self.retrieval_strategy.value
        return data

    @classmethod
    def parse_creation(cls, raw: Any) -> KBSettings:
        """The settings a new KB is created with: `parse`, after no value was found to be a credential."""
        if isinstance(raw, dict):
            for name in SETTING_NAMES:
                refuse_secret_value(f"the value of {name}", raw.get(name))
        return cls.parse(raw)

    @classmethod
    def parse(cls, raw: Any) -> KBSettings:
        """Validate settings from the KB form. Keys this version does not know (LangBot's own,
        or a newer plugin's) are ignored."""
        if not isinstance(raw, dict):
            raise ValidationError("knowledge base settings must be an object")
        model = params.text(raw.get("embedding_model_uuid"), "embedding_model_uuid", max_chars=MAX_MODEL_ID_CHARS,
                            required=False)
        if not model:
            raise ValidationError("embedding_model_uuid is required: choose the embedding model for memories")

        def whole(key: str, default: int, low: int, high: int) -> int:
            return params.bounded_int(raw.get(key), key, low=low, high=high, default=default)

        def model_id(key: str) -> str:
            return params.text(raw.get(key), key, max_chars=MAX_MODEL_ID_CHARS, required=False)

        return cls(
            embedding_model_uuid=model,
            isolation=Isolation(params.choice(raw.get("isolation"), "isolation", [m.value for m in Isolation],
                                              default=Isolation.SESSION.value)),
            recency_half_life_days=params.number(raw.get("recency_half_life_days"), "recency_half_life_days",
                                                 low=0.1, high=36500.0, default=DEFAULT_HALF_LIFE_DAYS),
            auto_recall_top_k=whole("auto_recall_top_k", 5, 0, 20),
            retrieval_strategy=RetrievalStrategy(params.choice(
                raw.get("retrieval_strategy"), "retrieval_strategy", [m.value for m in RetrievalStrategy],
                default=RetrievalStrategy.AUTO.value)),
            exact_match_boost=params.flag(raw.get("exact_match_boost"), "exact_match_boost", default=True),
            consolidation_enabled=params.flag(raw.get("consolidation_enabled"), "consolidation_enabled"),
            consolidation_model_uuid=model_id("consolidation_model_uuid"),
            consolidation_min_age_days=whole("consolidation_min_age_days", 7, 0, 3650),
            consolidation_max_candidates=whole("consolidation_max_candidates", 20, 1, 200),
            consolidation_apply_profile_updates=params.flag(
                raw.get("consolidation_apply_profile_updates"), "consolidation_apply_profile_updates"),
            candidate_extraction_enabled=params.flag(raw.get("candidate_extraction_enabled"),
                                                     "candidate_extraction_enabled"),
            candidate_auto_apply=params.flag(raw.get("candidate_auto_apply"), "candidate_auto_apply"),
            candidate_max_per_turn=whole("candidate_max_per_turn", 3, 1, 10),
            candidate_model_uuid=model_id("candidate_model_uuid"),
            conversation_enabled=params.flag(raw.get("conversation_enabled"), "conversation_enabled"),
            conversation_max_turns=whole("conversation_max_turns", 20, 2, 200),
            conversation_max_chars=whole("conversation_max_chars", 12_000, 2_000, 100_000),
            conversation_summary_max_chars=whole("conversation_summary_max_chars", 2_000, 200, 20_000),
            conversation_model_uuid=model_id("conversation_model_uuid"),
            withdraw_recalled_messages=params.flag(raw.get("withdraw_recalled_messages"), "withdraw_recalled_messages",
                                                   default=True),
            erase_members_who_leave=params.flag(raw.get("erase_members_who_leave"), "erase_members_who_leave"),
            conversation_host_window=whole("conversation_host_window", 25, 0, 200),
        )


SETTING_NAMES: tuple[str, ...] = tuple(f.name for f in fields(KBSettings))
# Text settings (model ids) may be set to empty; every other setting needs a value (reset brings back
# the creation value).
BLANK_ALLOWED = frozenset({"consolidation_model_uuid", "candidate_model_uuid", "conversation_model_uuid"})


# The settings that take one of a few words, with those words (forms offer them as a choice).
SETTING_CHOICES: dict[str, tuple[str, ...]] = {
    "isolation": tuple(m.value for m in Isolation),
    "retrieval_strategy": tuple(m.value for m in RetrievalStrategy),
}


class SettingOrigin(str, enum.Enum):
    CREATION = "creation"  # the value the KB was created with (defaults filled in at creation)
    DEFAULT = "default"  # the KB was created by a version that did not have this setting
    OVERRIDE = "override"  # an admin's override for this installation


@dataclass(frozen=True)
class SettingValue:
    name: str
    value: Any  # effective, in its stored (JSON) form
    origin: SettingOrigin
    creation: Any  # the creation value (or the default), in the same form

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "origin": self.origin.value, "creation": self.creation}


@dataclass(frozen=True)
class EffectiveSettings:
    kb_id: str
    settings: KBSettings
    values: tuple[SettingValue, ...]

    @property
    def overridden(self) -> tuple[SettingValue, ...]:
        return tuple(v for v in self.values if v.origin is SettingOrigin.OVERRIDE)

    def value(self, name: str) -> SettingValue:
        return next(v for v in self.values if v.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {"kb_id": self.kb_id, "settings": [v.to_dict() for v in self.values]}


def overrides_of(entry: dict[str, Any]) -> dict[str, Any]:
    """The overrides stored beside a KB's creation settings (only names this version knows)."""
    raw = entry.get("overrides")
    return {k: v for k, v in raw.items() if k in SETTING_NAMES} if isinstance(raw, dict) else {}


def effective(entry: dict[str, Any]) -> KBSettings:
    """A KB's settings as they apply now: the creation settings with the overrides laid over them."""
    return KBSettings.parse({**entry, **overrides_of(entry)})


def describe(kb_id: str, entry: dict[str, Any]) -> EffectiveSettings:
    overrides = overrides_of(entry)
    current = effective(entry).to_dict()
    base = KBSettings.parse(entry).to_dict()
    values = []
    for name in SETTING_NAMES:
        origin = (SettingOrigin.OVERRIDE if name in overrides else
                  SettingOrigin.CREATION if name in entry else SettingOrigin.DEFAULT)
        values.append(SettingValue(name, current[name], origin, base[name]))
    return EffectiveSettings(kb_id, effective(entry), tuple(values))


def shown_value(value: Any) -> str:
    """A setting's value in words (audit summaries, health): true/false, numbers, "(empty)". A value
    stored before settings were checked for credentials is never shown."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and secret_kind(value):
        return REDACTED
    return str(value) if value != "" else "(empty)"


def refuse_secret_value(what: str, value: Any) -> None:
    """A setting's value is shown to every chat (`!memory settings`, health) and audited, so a
    credential (a model id is free text: an API key pasted there by mistake) is refused before it
    is parsed, stored or audited. The message names the setting and the kind, never the value."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return  # true/false, or a type the parser refuses with its own message
    kind = secret_kind(str(value))
    if kind:
        raise ValidationError(f"refused: {what} looks like {kind}; secrets are never stored")


def setting_name(value: Any) -> str:
    refuse_secret_value("the setting name", value)  # the parser's message would quote a bad name
    return params.choice(value, "setting", SETTING_NAMES)


def parse_override(entry: dict[str, Any], name: str, value: Any) -> Any:
    """The stored form of `value` as an override of `name`, validated exactly as creation validates it
    (with every other setting as it is now)."""
    refuse_secret_value(f"the value of {name}", value)
    if params.is_blank(value) and name not in BLANK_ALLOWED:
        raise ValidationError(f"{name} needs a value (reset it to go back to the creation value)")
    parsed = KBSettings.parse({**entry, **overrides_of(entry), name: value})
    return parsed.to_dict()[name]
