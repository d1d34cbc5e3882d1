"""Tool `update_profile` (T3, P2): update the session or current speaker's L1 profile."""

from __future__ import annotations

from typing import Any

from components.common.memory_tool import MemoryTool
from components.common.memory_views import profile_text
from ltm import MemoryScope, MemoryService


class UpdateProfile(MemoryTool):
    allowed_params = frozenset({"scope", "name", "traits", "preferences", "notes", "mode"})

    async def run(self, memory: MemoryService, scope: MemoryScope, params: dict[str, Any]) -> dict[str, Any]:
        change = {k: v for k, v in params.items() if k != "scope"}
        profile = await memory.update_profile(scope, params.get("scope"), change)
        return {"ok": True, "scope": str(params.get("scope")).strip().lower(), "profile": profile_text(profile)}
