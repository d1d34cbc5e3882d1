import pytest

from ltm.episodes.model import FactTime
from ltm.errors import ValidationError
from ltm.timefields import normalize_time


def test_aware_times_normalize_to_utc_keeping_subseconds():
    assert normalize_time("2026-05-01T09:00:00+08:00", "event_at") == "2026-05-01T01:00:00Z"
    assert normalize_time("2026-05-01T01:00:00.123456Z", "event_at") == "2026-05-01T01:00:00.123456Z"
    assert normalize_time(None, "event_at") is None


@pytest.mark.parametrize("value", ["2026-05-01T09:00:00", "2026-05-01", "tomorrow", "next friday 5pm"])
def test_naive_or_relative_times_are_rejected(value):
    with pytest.raises(ValidationError):
        normalize_time(value, "event_at")


def test_validity_must_not_be_inverted_or_empty():
    with pytest.raises(ValidationError, match="earlier"):
        FactTime.parse({"valid_from": "2026-06-01T00:00:00Z", "valid_until": "2026-05-01T00:00:00Z"})
    with pytest.raises(ValidationError, match="earlier"):
        FactTime.parse({"valid_from": "2026-06-01T00:00:00Z", "valid_until": "2026-06-01T02:00:00+02:00"})
    ok = FactTime.parse({"valid_from": "2026-05-01T00:00:00Z", "valid_until": "2026-06-01T00:00:00Z",
                         "claim_type": "user_statement", "source_ref": "chat:1"})
    assert ok.claim_type.value == "user_statement"


def test_claim_type_is_validated():
    with pytest.raises(ValidationError, match="claim_type"):
        FactTime.parse({"claim_type": "rumour"})
