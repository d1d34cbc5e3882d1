"""What tests and benchmarks do with the memory core that no surface does.

The production facade (`ltm.MemoryService`) has no method for these; they use its assembled
parts (`MemoryService.parts`, `ltm/parts.py`) directly:
- `installation_audit`: the installation's own audit log (KB registration, fence clears, migrations);
- `migrate_layout`: run the record-layout migration of a KB now (it otherwise runs at first use);
- `index_space`: build a space's word index and wait for it (recall never waits for a big space);
- `recall_at`: recall as of a given moment (benchmarks replay old conversations);
- `top`: a recipe with any `top_k`, past the range a caller may ask for.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from ltm import QUERY_RECALL, MemoryScope, MemoryService, RecallFilters, RecallRecipe, ScoredEpisode
from ltm._audit import AuditPage
from ltm.migrations.layout import MigrationReport
from ltm.spaces import INSTALLATION_KEY


async def installation_audit(memory: MemoryService, page: int = 1, page_size: int = 10) -> AuditPage:
    return await memory.parts.audit.page(INSTALLATION_KEY, page, page_size)


async def migrate_layout(memory: MemoryService, kb_id: str) -> MigrationReport:
    parts = memory.parts
    return await parts.layouts.migrate(kb_id, await parts.kbs.settings(kb_id))


async def index_space(memory: MemoryService, scope: MemoryScope) -> None:
    parts = memory.parts
    await parts.kbs.open(scope)
    await parts.episodes.word_index(scope.l2)
    await parts.episodes.word_indexes_built()


async def recall_at(memory: MemoryService, scope: MemoryScope, query: str, recipe: RecallRecipe, now: datetime,
                    filters: RecallFilters | None = None) -> list[ScoredEpisode]:
    parts = memory.parts
    settings = await parts.kbs.open(scope)
    return await parts.recaller.recall(scope, settings, query, recipe, filters=filters or RecallFilters(), now=now)


def top(top_k: int, recipe: RecallRecipe = QUERY_RECALL) -> RecallRecipe:
    """A recipe with any `top_k`, unchecked (tests that want the whole ranked window)."""
    return replace(recipe, top_k=top_k)
