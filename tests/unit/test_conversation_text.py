"""A recorded turn's sides are checked for credentials before they are cut to the record's limit."""

from __future__ import annotations

import pytest

from ltm.conversation.model import ConversationLimits
from ltm.conversation.text import WITHHELD, SpokenTurn, prepared

KEY = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"


@pytest.mark.parametrize("before", [5, 10, 25, 40])  # how much of the key lies before the cut
def test_a_key_that_the_cut_would_split_is_withheld(before: int) -> None:
    limits = ConversationLimits(max_chars=400)
    side = limits.side_chars
    text = "x" * (side - before) + " " + KEY + " and more words after it"
    turn = prepared(SpokenTurn(user_text=text, reply_text="fine"), limits, "2026-12-06T00:00:00Z")
    assert turn.user_text == WITHHELD and turn.withheld == 1
    assert "sk-proj" not in turn.user_text


def test_a_long_text_without_a_key_is_cut_to_the_limit() -> None:
    limits = ConversationLimits(max_chars=400)
    turn = prepared(SpokenTurn(user_text="word " * 500, reply_text="fine"), limits, "2026-12-06T00:00:00Z")
    assert len(turn.user_text) <= limits.side_chars and turn.user_text.endswith("…") and turn.withheld == 0
