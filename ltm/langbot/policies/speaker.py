"""How "this speaker's records in this space" are searched: one filter where the store filters on
plugin metadata, otherwise the space's best matches over-fetched and kept where the speaker matches
(the index drops the other speakers' hits after decoding)."""

from __future__ import annotations

from typing import Any

from .. import layout
from .health import Line, line

SPEAKER_OVERFETCH = 25  # speaker search without a speaker filter: the space's best top_k x this ...
SPEAKER_OVERFETCH_MAX = 500  # ... but never more than this many rows


class BySpeakerFilter:
    health: Line | None = line("can.speaker_filter", "speaker-first recall by filter")

    @staticmethod
    def ask(space: str, speaker: str, top_k: int) -> tuple[dict[str, Any], int]:
        """The filter and how many rows to ask for."""
        return layout.speaker_filter(space, speaker), top_k


class ByOverfetch:
    health: Line | None = line("can.speaker_overfetch",
                              "speaker-first recall from the space's best {factor}x matches (at most {most})",
                              factor=SPEAKER_OVERFETCH, most=SPEAKER_OVERFETCH_MAX)

    @staticmethod
    def ask(space: str, speaker: str, top_k: int) -> tuple[dict[str, Any], int]:
        return layout.space_filter(space), min(max(top_k * SPEAKER_OVERFETCH, top_k), SPEAKER_OVERFETCH_MAX)
