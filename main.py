"""LongTermMemory plugin entry point: builds the one shared memory service."""

from __future__ import annotations

import logging

from langbot_plugin.api.definition.plugin import BasePlugin

from ltm.host_port import PluginHostPort
from ltm.profiles import ProfileLimits
from ltm.service import MemoryService

log = logging.getLogger("LongTermMemory")


class LongTermMemoryPlugin(BasePlugin):
    """Components reach the service as `self.plugin.memory`."""

    memory: MemoryService

    async def initialize(self) -> None:
        # Manifest defaults are not applied by the host: read every key with a default.
        config = self.get_config() or {}
        limits = ProfileLimits.from_config(config)
        self.memory = MemoryService(PluginHostPort(self), limits)
        log.info(
            "[LongTermMemory] initialized (max traits=%d, max preferences=%d, max notes=%d chars)",
            limits.max_traits, limits.max_preferences, limits.max_notes_chars,
        )
