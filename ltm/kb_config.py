"""Memory knowledge-base settings (SPEC section 14) and their validation.

LangBot shows `creation_schema` as a form and never lets the admin edit these
settings later; it sends them to `on_knowledge_base_create` only. The plugin
therefore validates them there (a bad value rejects the KB with a clear message)
and persists them in the installation-wide `kb_configs` record (S8).
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from typing import Any

from .errors import ValidationError
from .identity import Isolation


class RetrievalStrategy(str, enum.Enum):
    AUTO = "auto"
    VECTOR = "vector"
    HYBRID = "hybrid"


DEFAULT_HALF_LIFE_DAYS = 30.0


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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["isolation"] = self.isolation.value
        data["retrieval_strategy"] = self.retrieval_strategy.value
        return data

    @classmethod
    def parse(cls, raw: Any) -> "KBSettings":
        """Validate settings from the KB form (strings from some clients are accepted)."""
        if not isinstance(raw, dict):
            raise ValidationError("knowledge base settings must be an object")
        # Keys this version does not know (LangBot's own, or a newer plugin's) are ignored.
        model = raw.get("embedding_model_uuid")
        if not isinstance(model, str) or not model.strip():
            raise ValidationError("embedding_model_uuid is required: choose the embedding model for memories")
        return cls(
            embedding_model_uuid=model.strip(),
            isolation=_choice(raw, "isolation", Isolation, Isolation.SESSION),
            recency_half_life_days=_number(raw, "recency_half_life_days", DEFAULT_HALF_LIFE_DAYS, 0.1, 36500.0),
            auto_recall_top_k=int(_number(raw, "auto_recall_top_k", 5, 0, 50, integer=True)),
            retrieval_strategy=_choice(raw, "retrieval_strategy", RetrievalStrategy, RetrievalStrategy.AUTO),
            exact_match_boost=_flag(raw, "exact_match_boost", True),
            consolidation_enabled=_flag(raw, "consolidation_enabled", False),
            consolidation_model_uuid=_text(raw, "consolidation_model_uuid"),
            consolidation_min_age_days=int(_number(raw, "consolidation_min_age_days", 7, 0, 3650, integer=True)),
            consolidation_max_candidates=int(_number(raw, "consolidation_max_candidates", 20, 1, 200, integer=True)),
            consolidation_apply_profile_updates=_flag(raw, "consolidation_apply_profile_updates", False),
            candidate_extraction_enabled=_flag(raw, "candidate_extraction_enabled", False),
            candidate_auto_apply=_flag(raw, "candidate_auto_apply", False),
            candidate_max_per_turn=int(_number(raw, "candidate_max_per_turn", 3, 1, 10, integer=True)),
            candidate_model_uuid=_text(raw, "candidate_model_uuid"),
        )


def _missing(raw: dict[str, Any], key: str) -> bool:
    return raw.get(key) is None or raw.get(key) == ""


def _choice(raw: dict[str, Any], key: str, enum_cls: type[enum.Enum], default: Any) -> Any:
    if _missing(raw, key):
        return default
    try:
        return enum_cls(str(raw[key]).strip().lower())
    except ValueError:
        allowed = ", ".join(m.value for m in enum_cls)
        raise ValidationError(f"{key} must be one of: {allowed} (got {str(raw[key])[:30]!r})") from None


def _number(raw: dict[str, Any], key: str, default: float, low: float, high: float, integer: bool = False) -> float:
    if _missing(raw, key):
        return default
    value = raw[key]
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{key} must be a number from {low:g} to {high:g}") from None
    if integer and not number.is_integer():
        raise ValidationError(f"{key} must be a whole number from {low:g} to {high:g}")
    if not low <= number <= high:
        raise ValidationError(f"{key} must be from {low:g} to {high:g} (got {value})")
    return number


def _flag(raw: dict[str, Any], key: str, default: bool) -> bool:
    if _missing(raw, key):
        return default
    value = raw[key]
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValidationError(f"{key} must be true or false (got {str(value)[:20]!r})")


def _text(raw: dict[str, Any], key: str) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValidationError(f"{key} must be a string")
    return value.strip()
