"""The real plugin on the fake LangBot host, loaded with one LoCoMo conversation.

One `ConversationEnv` = a fresh `FakeLangBotHost` on a private Chroma database, the
real plugin started through `PluginHarness` (SDK runtime code), one memory knowledge
base, and every turn of the conversation imported through the plugin's own import
path (`ltm.imports.parse_records` + `MemoryService.import_episodes`), which keeps the
given `timestamp`. Each turn's timestamp (and `event_at`) is its LoCoMo session date,
so the benchmark asks every question "as of" the conversation's last turn (`now` on the
recall path) for the half-life decay to act as it would in a deployment.

The query scope is the conversation's group session with no sender: LoCoMo questions
are asked by a third party, so the speaker window (S6) is not used; turns carry their
speaker as sender_id/sender_name, so the default sender bonus applies when a question
names a speaker, as it would in a deployment.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime
from typing import Any

from langbot_plugin.entities.io.actions.enums import PluginToRuntimeAction as A

from bench.embedders import CachedEmbedder
from bench.locomo_data import Conversation
from ltm import QUERY_RECALL, RecallRecipe, parse_records
from ltm.episodes import lexical
from ltm.episodes.model import Episode
from ltm.identity import Identity
from ltm.langbot.layout import from_metadata, space_filter
from ltm.secrets import secret_kind
from testhost import FakeLangBotHost, PluginHarness, make_backend
from testhost.hooks import index_space, recall_at, top

MODEL_UUID = "bench-embedder"
BOT_UUID = "bench-bot"


def no_save_delay() -> None:
    """A big space's index is saved 30 s after its last write (`lexical.SAVE_DELAY`), and `index_space` waits
    for that save: half a minute per conversation spent sleeping. Saved at once instead; recall is the same."""
    lexical.SAVE_DELAY = 0.0


def quiet_logs() -> None:
    for name in ("LongTermMemory", "chromadb", "langbot_plugin", "httpx", "root", "sentence_transformers"):
        logging.getLogger(name).setLevel(logging.ERROR)
    logging.getLogger().setLevel(logging.ERROR)


def slug(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "-", name.lower()).strip("-") or "unknown"


class ConversationEnv:
    def __init__(self, conv: Conversation, embedder: CachedEmbedder, backend: str = "chroma") -> None:
        self.conv = conv
        self.embedder = embedder
        self.backend = backend
        self.host: FakeLangBotHost | None = None
        self.harness: PluginHarness | None = None
        self.kb_id = ""
        self.scope: Any = None
        self.skipped_turns: list[str] = []
        self.by_original: dict[str, Episode] = {}

    @property
    def memory(self) -> Any:
        assert self.harness is not None
        return self.harness.plugin.memory

    async def open(self) -> ConversationEnv:
        no_save_delay()
        host = FakeLangBotHost(make_backend(self.backend))
        host.embedding_models[MODEL_UUID] = self.embedder  # type: ignore[assignment]
        self.host = host
        self.harness = PluginHarness(host)
        await self.harness.start({})
        quiet_logs()
        self.kb_id = await self.harness.kb_create(config={"embedding_model_uuid": MODEL_UUID,
                                                          "isolation": "session"})
        identity = Identity.build(launcher_type="group", launcher_id=f"locomo-{self.conv.conv_id}",
                                  bot_uuid=BOT_UUID)
        self.scope = await self.memory.scope_for(identity, self.kb_id)
        items = []
        for turn in self.conv.turns:
            if secret_kind(turn.content):  # the plugin refuses the whole batch otherwise
                self.skipped_turns.append(turn.dia_id)
                continue
            items.append({
                "id": turn.dia_id, "content": turn.content, "timestamp": turn.timestamp,
                "event_at": turn.timestamp, "sender_id": slug(turn.speaker), "sender_name": turn.speaker,
                "source_ref": f"locomo:{self.conv.conv_id}:{turn.dia_id}",
            })
        # Embed the whole conversation in large batches first (cache warm-up); the
        # plugin's own 32-text batches then hit the cache.
        self.embedder.vectors([i["content"] for i in items])
        records = parse_records(items, source="import")
        written = (await self.memory.import_episodes(self.scope, records)).episodes
        await index_space(self.memory, self.scope)  # as after a bot's first turns: the word index is built
        self.by_original = {e.original_id or "": e for e in written}
        host.reset_counts()
        return self

    async def close(self) -> None:
        if self.harness is not None:
            await self.harness.stop()
        if self.host is not None:
            await self.host.close()
        self.harness = None
        self.host = None

    # ------------------------------------------------------------------ systems
    async def plugin(self, question: str, k: int, recipe: RecallRecipe | None, now: datetime | None = None
                     ) -> list[str]:
        """`MemoryService.recall` as the plugin runs it (the query recipe on the KB's settings when `recipe`
        is None), asked at `now` (None: the real clock)."""
        chosen = top(k, recipe or QUERY_RECALL)
        if now is None:
            hits = await self.memory.recall(self.scope, question, recipe=chosen)
        else:
            hits = await recall_at(self.memory, self.scope, question, chosen, now)
        return [h.episode.original_id or "" for h in hits]

    async def vector(self, question: str, k: int) -> list[str]:
        """Plain host vector search, top k, same embedding model, same Chroma collection."""
        assert self.host is not None
        emb = await self.host.call_action(A.INVOKE_EMBEDDING, {"embedding_model_uuid": MODEL_UUID,
                                                                "texts": [question]})
        res = await self.host.call_action(A.VECTOR_SEARCH, {
            "collection_id": self.kb_id, "query_vector": emb["vectors"][0], "top_k": k,
            "filters": space_filter(self.scope.space_key), "search_type": "vector",
        })
        out = []
        for row in res["results"]:
            record = from_metadata(row.get("metadata"), self.scope.space_key)
            out.append(Episode.from_record(record).original_id or "" if record is not None else "")
        return out
