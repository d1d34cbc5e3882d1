"""Named recall recipes: how each surface recalls, and the limits it accepts.

The same `top_k` means the same thing everywhere; a value outside a recipe's range
gets the same message from every surface (it comes from `ltm.params`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import params

MAX_TOP_K = 20


@dataclass(frozen=True)
class RecallRecipe:
    name: str
    default_top_k: int
    max_top_k: int = MAX_TOP_K

    def top_k(self, value: Any) -> int:
        """A caller's `top_k`, validated against this recipe's range."""
        return params.bounded_int(value, "top_k", low=1, high=self.max_top_k, default=self.default_top_k)

    def clamp_top_k(self, value: Any) -> int:
        """A host-supplied `top_k` (not a user's): out-of-range values are brought into range."""
        try:
            number = int(value)
        except (TypeError, ValueError):
            return self.default_top_k
        return max(1, min(number, self.max_top_k))


# Before every model call; its top_k comes from the KB setting `auto_recall_top_k`.
AUTO_RECALL = RecallRecipe("auto recall", default_top_k=5)
# The `recall_memory` tool.
TOOL_RECALL = RecallRecipe("tool recall", default_top_k=5)
# `!memory search`.
COMMAND_SEARCH = RecallRecipe("command search", default_top_k=10)
# The console's Episodes search.
CONSOLE_SEARCH = RecallRecipe("console search", default_top_k=10)
# Host RAG asking the knowledge engine (naive RAG, AgenticRAG's query_knowledge).
ENGINE_RETRIEVE = RecallRecipe("engine retrieve", default_top_k=5)
