"""Adjacent records (E6 in docs/REQUIREMENTS.md): the records written just before and after the most
relevant window entries join the recall window.

A chat is a run of exchanges. The answer to a question often sits a message or two away from the one
its words or its vector found ("Check out my painting for the art show!" / "Wow, what inspired it?" /
"I painted it after I visited an LGBTQ center."), and says nothing the question would find by itself.
The records around the `adjacent_top` most relevant window entries (`adjacent_reach` on either side,
within `context_seconds` of it) come from the space index (no host call) and join the window like
word matches: no vector distance, their exact BM25. Ranking then scores them as any entry, mostly
through their neighbouring context (`context_reach`). Without the space index (while it is made)
nothing is added. LoCoMo figures: bench/RESULTS.md, "Recall round (issue 44)".
"""

from __future__ import annotations

from collections.abc import Callable

from ..timefields import parse_stored
from .model import Episode
from .question import Question
from .ranking import RecallRecipe, WindowEntry, most_relevant
from .space_index import SpaceIndex


def adjacent_entries(index: SpaceIndex, entries: list[WindowEntry], question: Question, recipe: RecallRecipe,
                     lexical: dict[str, float], accepts: Callable[[Episode], bool]) -> list[WindowEntry]:
    """The window entries to add, each an accepted record adjacent to one of the most relevant `entries` and
    not among them; their raw BM25 is added to `lexical`."""
    if recipe.adjacent_top <= 0 or recipe.adjacent_reach <= 0 or not entries:
        return []
    present = {entry.episode.episode_id for entry in entries}
    added: dict[str, WindowEntry] = {}
    for anchor in most_relevant(entries, question, recipe, lexical, recipe.adjacent_top):
        at = parse_stored(anchor.episode.timestamp)
        if at is None:
            continue
        for episode in index.adjacent(anchor.episode.episode_id, recipe.adjacent_reach):
            episode_id = episode.episode_id
            if episode_id in present or episode_id in added or not accepts(episode):
                continue
            moment = parse_stored(episode.timestamp)
            if moment is not None and abs((moment - at).total_seconds()) <= recipe.context_seconds:
                added[episode_id] = WindowEntry(episode, None)
    if added:
        lexical.update(index.scores_of(question.terms, added))
    return list(added.values())
