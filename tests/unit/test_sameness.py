"""The same-fact key (ltm/episodes/sameness.py): what one fact's wordings share and what tells facts apart."""

from __future__ import annotations

import pytest

from ltm.episodes.sameness import fact_key, same_fact


@pytest.mark.parametrize(("a", "b"), [
    ("my report is due on March 3", "The user's  report is due on March 3."),
    ("我的工位在3号桌", "工位在3号桌"),
    ("用户的 生日是5月", "生日是5月。"),
    # An English wrapper before CJK text (found by tests/test_expiry_property.py): the space after the
    # wrapper used to be removed first, so the wrapper stayed in the key.
    ("The user's 工位在3号桌", "工位在3号桌"),
    ("my 東京の家は駅の近く", "東京の家は駅の近く"),
])
def test_wordings_of_one_fact_share_a_key(a: str, b: str) -> None:
    assert same_fact(a, b), (fact_key(a), fact_key(b))


@pytest.mark.parametrize(("a", "b"), [
    ("my report is due on March 3", "my report is due on March 13"),
    ("工位在3号桌", "工位在13号桌"),
    ("The user's 工位在3号桌", "The user's 工位在4号桌"),
])
def test_a_changed_number_is_another_fact(a: str, b: str) -> None:
    assert not same_fact(a, b)
