"""The id an imported record gets is derived from its space and its original id, and never changes between
versions: a supersede link a stored record holds names such an id, and an import cut short and run again
(perhaps by a newer plugin) must write each record under the id the first run gave it."""

from __future__ import annotations

import pytest

from ltm.episodes.model import derived_episode_id
from ltm.spaces import L2Space

SPACE = L2Space("kb-1", "bot-a:group_7")


def test_the_derivation_is_pinned():
    # Computed once by the version that introduced it; a change here orphans stored links.
    assert derived_episode_id(SPACE, "orig-42") == "a7851ab0-8bee-5173-b62a-87ba0362d41b"


@pytest.mark.parametrize("other", [L2Space("kb-2", "bot-a:group_7"), L2Space("kb-1", "bot-a:group_8")])
def test_another_space_gets_another_id(other):
    assert derived_episode_id(other, "orig-42") != derived_episode_id(SPACE, "orig-42")
    assert derived_episode_id(SPACE, "orig-43") != derived_episode_id(SPACE, "orig-42")
