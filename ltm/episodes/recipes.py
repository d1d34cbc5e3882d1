"""The named recall recipes: one per way of recalling, each with its limits and its ranking.

A recipe is named after what the recall is for, never after the surface that runs it (in the
manner of Graphiti's search recipes). Every surface asks for a recipe and, where the caller may
choose, `recipe.with_top_k(value)` (a user's value, validated: the same bad value gets the same
message everywhere) or `recipe.with_host_top_k(value)` (the host's, clamped); the service then
applies the memory KB's settings once (`RecallRecipe.resolved_for`). Tuned variants for
benchmarks are `dataclasses.replace` of a resolved recipe.
"""

from __future__ import annotations

from .ranking import MAX_TOP_K, RecallRecipe

# Before every model call, the turn's context: `top_k` is the KB setting `auto_recall_top_k`. It is
# presented as current, so a fact whose validity ended is left out; a summary takes one slot for itself
# and its sources.
AUTO_RECALL = RecallRecipe("auto recall", top_k=None, current_only=True, fold_summary_sources=True)
# A question put to memory (the model's recall tool, a host retrieval of the memory KB): the best few,
# expired facts included (the surfaces mark them), and a summary's sources with it: a summary may leave a
# detail out, so asking is how the model finds every active fact (consolidation hides none).
QUERY_RECALL = RecallRecipe("query recall", top_k=5)
# A person looking through memory (an operator's or an admin's search): a longer list, every record as it is.
REVIEW_SEARCH = RecallRecipe("review search", top_k=10)

__all__ = ["AUTO_RECALL", "MAX_TOP_K", "QUERY_RECALL", "REVIEW_SEARCH", "RecallRecipe"]
