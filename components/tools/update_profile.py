"""Tool `update_profile` (T3, P2): update the session or current speaker's L1 profile.

Two forms are accepted (docs/OFFICIAL-PLUGIN.md, "Tools: update_profile"): the field/action form
the tool's schema offers (`field`, `action`, `value`, `fact_key`, `previous_value`), and the list
form of earlier releases (`name`, `traits`, `preferences`, `notes`, `mode`), kept for old prompts."""

from __future__ import annotations

from typing import Any

from components.common.memory_tool import MemoryTool
from components.common.memory_views import fact_view, profile_text
from ltm import FIELD_ACTION_PARAMS, LIST_FORM_PARAMS, MemoryScope, MemoryService, profile_target


class UpdateProfile(MemoryTool):
    allowed_params = frozenset({"scope", *FIELD_ACTION_PARAMS, *LIST_FORM_PARAMS})

    async def run(self, memory: MemoryService, scope: MemoryScope, params: dict[str, Any]) -> dict[str, Any]:
        change = {k: v for k, v in params.items() if k != "scope"}
        profile = await memory.update_profile(scope, params.get("scope"), change)
        result: dict[str, Any] = {"ok": True, "scope": profile_target(params.get("scope"), change).value,
                  "profile": profile_text(profile)}
        fact = fact_view(profile, change.get("field"), change.get("fact_key"))
        if fact:
            result["fact"] = fact
        return result
