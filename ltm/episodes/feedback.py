"""Words from the best records (E6 in docs/REQUIREMENTS.md): pseudo-relevance feedback on the word search.

A question and the records that answer it often share no word ("What did Melanie do with her
family?" / "We roasted marshmallows around the campfire"), while the records ranked first by the
question share words with them ("our family camping trip"). After a first ranking, the
`feedback_terms` words that weigh most in the `feedback_top` best records (a word's share of its
record times its idf in the space; words of the question and words of one record only left out) join
the question's words with `feedback_weight` x the question's number of words between them; the space
index is searched again with that weighted query and the window ranked again. Everything comes from
the space's own records and index: no host call, no model. Without the space index nothing changes.
LoCoMo figures: bench/RESULTS.md, "Recall round (issue 44)".
"""

from __future__ import annotations

from collections import Counter

from .question import Question
from .ranking import RecallRecipe, ScoredEpisode
from .space_index import SpaceIndex
from .terms import tokenize


def feedback_query(ranked: list[ScoredEpisode], question: Question, recipe: RecallRecipe, index: SpaceIndex
                   ) -> dict[str, float] | None:
    """The question's words (by their repeats) and the feedback words with their weights; None when there is
    nothing to add (feedback off, no question words, no best records, or no word of theirs to add)."""
    asked = Counter(question.terms)
    if recipe.feedback_terms <= 0 or recipe.feedback_weight <= 0 or not asked or not ranked:
        return None
    gathered: dict[str, float] = {}
    for scored in ranked[: recipe.feedback_top]:
        episode = scored.episode
        tokens = tokenize(" ".join([episode.content, " ".join(episode.tags), episode.sender_name]))
        for term, count in Counter(tokens).items():
            if term not in asked and index.frequency(term) > 1:
                gathered[term] = gathered.get(term, 0.0) + count / len(tokens) * index.idf(term)
    best = sorted(gathered.items(), key=lambda item: item[1], reverse=True)[: recipe.feedback_terms]
    total = sum(weight for _, weight in best)
    if total <= 0:
        return None
    share = recipe.feedback_weight * len(asked)
    query: dict[str, float] = {term: float(count) for term, count in asked.items()}
    query.update({term: share * weight / total for term, weight in best})
    return query
