"""The LangBot adapter: the only part of `ltm` that knows the plugin SDK and the host's shapes.

- `port`      the core's ports over the SDK (storage, vectors, embeddings, LLM, KB list),
              with SDK errors mapped onto the port failure contract;
- `layout`    how an episode record sits in a LangBot vector store (metadata, one-key filters);
- `identity`  session names, retrieval settings, sessions, events and query variables -> `Identity`;
              whether a message is the memory command, whether the memory KB is attached;
- `turn`      an event's turn read once (attached memory KB, user text, command or not, identity, time);
- `platform_events`  a platform event an event processor receives -> `Recall` / `MemberLeft`;
- `platforms` which bots' platforms show replies as plain text.
"""

from .identity import (
    attached_kbs,
    identity_from_event,
    identity_from_query,
    identity_from_retrieval,
    identity_from_scope_spec,
    identity_from_session_name,
    is_memory_command,
    live_bot_uuid,
    memory_kb_attached,
    pipeline_kb_ids,
    split_session_name,
    user_text,
)
from .platform_events import EVENT_TYPES, platform_event
from .platforms import Platforms, shows_plain_text
from .port import langbot_ports, on_live_query
from .turn import Turn, read_turn

__all__ = [
    "EVENT_TYPES",
    "Platforms",
    "Turn",
    "attached_kbs",
    "identity_from_event",
    "identity_from_query",
    "identity_from_retrieval",
    "identity_from_scope_spec",
    "identity_from_session_name",
    "is_memory_command",
    "langbot_ports",
    "live_bot_uuid",
    "memory_kb_attached",
    "on_live_query",
    "pipeline_kb_ids",
    "platform_event",
    "read_turn",
    "shows_plain_text",
    "split_session_name",
    "user_text",
]
