"""Tool `update_profile` (T3, P2): update the session or current speaker's L1 profile."""

from __future__ import annotations

from typing import Any

from components.common.memory_tool import MemoryTool
from ltm.errors import ValidationError
from ltm.identity import MemoryScope
from ltm.service import MemoryService


class UpdateProfile(MemoryTool):
    allowed_params = frozenset({"scope", "name", "traits", "preferences", "notes", "mode"})

    async def run(self, memory: MemoryService, scope: MemoryScope, params: dict[str, Any]) -> dict[str, Any]:
        target = params.get("scope")
        if not target:
            raise ValidationError("scope is required: 'session' or 'speaker'")
        change = {k: v for k, v in params.items() if k != "scope"}
        profile = await memory.update_profile(scope, target, change)
        return {"ok": True, "scope": str(target).lower(), "profile": profile.render()}
