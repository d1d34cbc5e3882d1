"""The LangBot adapter: the only part of `ltm` that knows the plugin SDK and the host's shapes.

- `port`      the core's ports over the SDK (storage, vectors, embeddings, LLM, KB list),
              with SDK errors mapped onto the port failure contract;
- `layout`    how an episode record sits in a LangBot vector store (metadata, one-key filters);
- `identity`  session names, retrieval settings, sessions and query variables -> `Identity`.
"""

from .identity import (
    identity_from_query,
    identity_from_retrieval,
    identity_from_scope_spec,
    split_session_name,
)
from .port import langbot_ports

__all__ = [
    "identity_from_query",
    "identity_from_retrieval",
    "identity_from_scope_spec",
    "langbot_ports",
    "split_session_name",
]
