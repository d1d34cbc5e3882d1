"""The floor of one recall inside the real LangBot: the question's embedding, then one top-k vector
search of the memory space (filtered on its `file_id`, the one filter every LongTermMemory search
carries), both through the host, exactly as the memory plugin sends them. bench/real_host.py reads
their durations from the runtime's action log. The question comes from the query variables (a third
host call, outside the floor: the benchmark sums only the two calls above)."""

from __future__ import annotations

import logging

from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import context, events

log = logging.getLogger("FloorQuery")


class FloorQuery(EventListener):
    def __init__(self) -> None:
        super().__init__()

        @self.handler(events.PromptPreProcessing)
        async def on_prompt(event_ctx: context.EventContext) -> None:
            config = self.plugin.config
            try:
                variables = await event_ctx.get_query_vars()
                text = str(variables.get("user_message_text") or "")
                vectors = await self.plugin.invoke_embedding(config.get("embedding_model_uuid"), [text])
                rows = await self.plugin.vector_search(
                    collection_id=config.get("collection_id"), query_vector=vectors[0],
                    top_k=int(config.get("top_k") or 5), filters={"file_id": config.get("file_id")},
                    search_type="vector")
                log.info("FloorQuery: query=%s rows=%d", event_ctx.query_id, len(rows))
            except Exception:  # a benchmark helper must not fail the turn either
                log.exception("FloorQuery: floor query failed")
