"""The LangBot adapter: the only part of `ltm` that knows the plugin SDK and the host's shapes.

- `port`      the core's ports over the SDK (storage, vectors, embeddings, LLM, KB list),
              with SDK errors mapped onto the port failure contract;
- `layout`    how an episode record sits in a LangBot vector store (metadata, one-key filters);
- `identity`  session names, retrieval settings, sessions, events and query variables -> `Identity`;
              whether a message is the memory command, whether the memory KB is attached;
- `turn`      an event's turn read once (attached memory KB, user text, command or not, identity, time).
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
    split_session_name,
    user_text,
)
from .port import langbot_ports
from .turn import Turn, read_turn

__all__ = [
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
    "read_turn",
    "split_session_name",
    "user_text",
]
