import pytest

from ltm.errors import ValidationError
from ltm.kb_settings import KBSettings


def test_defaults_of_spec_section_14():
    s = KBSettings.parse({"embedding_model_uuid": "emb"})
    assert (s.isolation.value, s.auto_recall_top_k, s.retrieval_strategy.value) == ("session", 5, "auto")
    assert s.exact_match_boost is True and s.consolidation_enabled is False
    assert (s.consolidation_min_age_days, s.consolidation_max_candidates, s.candidate_max_per_turn) == (7, 20, 3)
    assert s.recency_half_life_days == 30


@pytest.mark.parametrize(
    "raw, message",
    [
        ({}, "embedding_model_uuid"),
        ({"embedding_model_uuid": "e", "isolation": "global"}, "isolation"),
        ({"embedding_model_uuid": "e", "auto_recall_top_k": "many"}, "auto_recall_top_k"),
        ({"embedding_model_uuid": "e", "auto_recall_top_k": 2.5}, "auto_recall_top_k"),
        ({"embedding_model_uuid": "e", "recency_half_life_days": -1}, "recency_half_life_days"),
        ({"embedding_model_uuid": "e", "exact_match_boost": "maybe"}, "exact_match_boost"),
        ({"embedding_model_uuid": "e", "retrieval_strategy": "bm25"}, "retrieval_strategy"),
    ],
)
def test_bad_settings_name_the_field(raw, message):
    with pytest.raises(ValidationError, match=message):
        KBSettings.parse(raw)


def test_string_values_from_forms_are_accepted():
    s = KBSettings.parse({"embedding_model_uuid": "e", "auto_recall_top_k": "3", "exact_match_boost": "false"})
    assert s.auto_recall_top_k == 3 and s.exact_match_boost is False
