"""LongTermMemory plugin entry point: builds the one shared memory service."""

from __future__ import annotations

import logging

from langbot_plugin.api.definition.plugin import BasePlugin

from ltm import MemoryService, ProfileLimits
from ltm.langbot import langbot_ports

log = logging.getLogger("LongTermMemory")


class LongTermMemoryPlugin(BasePlugin):
    """Components reach the service as `self.plugin.memory`."""

    memory: MemoryService

    async def initialize(self) -> None:
        self.memory = MemoryService(langbot_ports(self), self.profile_limits)
        limits = self.profile_limits()
        log.info(
            "[LongTermMemory] initialized (max traits=%d, max preferences=%d, max notes=%d chars)",
            limits.max_traits, limits.max_preferences, limits.max_notes_chars,
        )

    def profile_limits(self) -> ProfileLimits:
        # Manifest defaults are not applied by the host (config is {} until saved), and an
        # installed worker may see the config only after initialize: read it per call.
        try:
            config = self.get_config() or {}
        except RuntimeError:  # outside any invocation on a shared runtime
            config = {}
        return ProfileLimits.from_config(config)
