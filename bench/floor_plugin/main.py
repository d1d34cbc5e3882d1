from __future__ import annotations

from langbot_plugin.api.definition.plugin import BasePlugin


class FloorQueryPlugin(BasePlugin):
    async def initialize(self) -> None:
        pass
