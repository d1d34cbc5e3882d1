"""Memory knowledge-base settings ("KB settings" in docs/REQUIREMENTS.md) and their validation.

LangBot shows `creation_schema` as a form and never lets the admin edit these
settings later; it sends them to `on_knowledge_base_create` only. The plugin
therefore validates them there (a bad value rejects the KB with a clear message)
and persists them in the installation-wide `kb_configs` record (S8).
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from typing import Any

from . import params
from .errors import ValidationError
from .identity import Isolation


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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["isolation"] = self.isolation.value
        data["retrieval_strategy"] = self.retrieval_strategy.value
        return data

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
        )
