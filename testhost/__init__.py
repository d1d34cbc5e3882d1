"""In-process fake LangBot host used by the plugin's tests.

- ``embedder.HashingEmbedder``: deterministic embedding model stand-in.
- ``vectors``: the vector-store backends with the host's quirks, one file per store (``vectors.BACKENDS``).
- ``hooks``: what tests and benchmarks do with the memory core that no surface does.
- ``fake_host.FakeLangBotHost``: answers the plugin's Host API calls.
- ``harness.PluginHarness``: loads the real plugin through the SDK runtime.
"""

from .embedder import HashingEmbedder
from .fake_host import LANGBOT_VERSION, FakeLangBotHost
from .harness import PLUGIN_ROOT, PluginActionError, PluginHarness, make_session
from .vectors import BACKEND_NAMES, make_backend

__all__ = [
    "BACKEND_NAMES",
    "LANGBOT_VERSION",
    "PLUGIN_ROOT",
    "FakeLangBotHost",
    "HashingEmbedder",
    "PluginActionError",
    "PluginHarness",
    "make_backend",
    "make_session",
]
