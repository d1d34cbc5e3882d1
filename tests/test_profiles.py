import pytest

from components.common.memory_views import profile_text
from ltm.errors import ValidationError
from ltm.profiles.model import Profile, ProfileChange, ProfileLimits

LIMITS = ProfileLimits(max_traits=3, max_preferences=2, max_notes_chars=20)


def test_merge_deduplicates_case_insensitively_and_bounds_lists():
    p = ProfileChange.parse({"traits": ["Calm", "calm", "curious"]}).apply(Profile(), LIMITS)
    assert p.traits == ["calm", "curious"]
    p = ProfileChange.parse({"traits": ["kind", "funny", "Curious"]}).apply(p, LIMITS)
    assert p.traits == ["kind", "funny", "Curious"]  # bounded to 3, newest kept
    assert p.updated_at and p.updated_at.endswith("Z")


def test_correction_replaces_instead_of_appending():
    p = ProfileChange.parse({"name": "Bob", "preferences": ["tea"]}).apply(Profile(), LIMITS)
    p = ProfileChange.parse({"name": "Robert", "preferences": ["coffee"], "mode": "replace"}).apply(p, LIMITS)
    assert p.name == "Robert" and p.preferences == ["coffee"]
    p = ProfileChange.parse({"preferences": ["coffee"], "mode": "remove"}).apply(p, LIMITS)
    assert p.preferences == []


def test_bad_input_is_rejected():
    with pytest.raises(ValidationError):
        ProfileChange.parse({})
    with pytest.raises(ValidationError):
        ProfileChange.parse({"traits": [1, 2]})
    with pytest.raises(ValidationError):
        ProfileChange.parse({"name": "x", "mode": "append"})
    with pytest.raises(ValidationError, match="notes"):
        ProfileChange.parse({"notes": "x" * 21}).apply(Profile(), LIMITS)


def test_render_is_compact_and_stable():
    p = Profile(name="Ann", traits=["calm"], preferences=["tea", "jazz"])
    assert profile_text(p) == "Name: Ann\nTraits: calm\nPreferences: tea; jazz"
