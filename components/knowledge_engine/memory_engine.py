"""KnowledgeEngine: the memory KB's lifecycle, recall for host RAG, and JSON document import.

Thin: every operation is one call into the plugin's MemoryService.
A failed retrieve or ingest never raises into the host: retrieve answers with no
results (the user's turn goes on), ingest answers a failed document with a message.
"""

from __future__ import annotations

import logging

from langbot_plugin.api.definition.components.knowledge_engine.engine import (
    KnowledgeEngine,
    KnowledgeEngineCapability,
)
from langbot_plugin.api.entities.builtin.provider.message import ContentElement
from langbot_plugin.api.entities.builtin.rag.context import (
    RetrievalContext,
    RetrievalResponse,
    RetrievalResultEntry,
)
from langbot_plugin.api.entities.builtin.rag.enums import DocumentStatus
from langbot_plugin.api.entities.builtin.rag.models import IngestionContext, IngestionResult

from components.common.memory_views import validity_label
from ltm import (
    QUERY_RECALL,
    Episode,
    LTMError,
    MemoryService,
    clean_host_text,
    is_bundle,
    load_json,
    nothing_stored,
    parse_batch,
    redact_for_log,
)
from ltm.langbot import identity_from_retrieval, identity_from_scope_spec

log = logging.getLogger("LongTermMemory")


def retrieved_text(episode: Episode) -> str:
    """The text a runner puts into the prompt: the memory, and, when its validity ended or has not
    begun, that too (a host retrieval finds expired facts like `recall_memory`, and the runner shows
    the text only)."""
    validity = validity_label(episode)
    if not validity:
        return episode.content
    bound = episode.fact.valid_until if validity == "expired" else episode.fact.valid_from
    return f"[{validity}: {bound}] {episode.content}"


class MemoryEngine(KnowledgeEngine):
    @classmethod
    def get_capabilities(cls) -> list[str]:
        # Document upload is how admins import a JSON file of episodes (E10).
        return [KnowledgeEngineCapability.DOC_INGESTION]

    async def on_knowledge_base_create(self, kb_id: str, config: dict) -> None:
        try:
            await self.plugin.memory.register_kb(kb_id, dict(config or {}))
        except LTMError as exc:
            # The host rolls the KB back when this hook raises; the message reaches the admin.
            raise ValueError(f"LongTermMemory: {exc.message}") from None

    async def on_knowledge_base_delete(self, kb_id: str) -> None:
        await self.plugin.memory.unregister_kb(kb_id)

    async def retrieve(self, context: RetrievalContext) -> RetrievalResponse:
        kb_id = context.get_collection_id()
        settings = dict(context.retrieval_settings or {})
        query = clean_host_text(context.query)
        try:
            identity = identity_from_retrieval(settings)
        except LTMError as exc:
            log.warning("[LongTermMemory] engine retrieve without a usable conversation: %s", exc)
            return RetrievalResponse(results=[], total_found=0, metadata={"error": exc.message})
        # L1 in docs/REQUIREMENTS.md: a shortened query, and never a secret the user may have typed.
        short_query = redact_for_log(query)
        log.info(
            "[LongTermMemory] engine retrieve collection=%s top_k=%r session=%r sender=%r bot=%r query=%r",
            kb_id, settings.get("top_k"), settings.get("session_name"), settings.get("sender_id"),
            settings.get("bot_uuid"), short_query,
        )
        if identity is None:
            # No conversation (e.g. the WebUI retrieve test): there is no scope to read, so nothing leaks.
            return RetrievalResponse(results=[], total_found=0,
                                     metadata={"note": "LongTermMemory recalls only inside a conversation"})
        recipe = QUERY_RECALL.with_host_top_k(settings.get("top_k"))
        memory: MemoryService = self.plugin.memory
        try:
            scope = await memory.scope_for(identity, kb_id)
            if memory.consume_injection(scope, query):
                # The listener already put this turn's memories into the prompt; a runner that
                # retrieves the memory KB from its own config must not get them twice.
                return RetrievalResponse(results=[], total_found=0,
                                         metadata={"note": "memories for this turn were already injected"})
            hits = await memory.recall(scope, query, recipe=recipe)
        except LTMError as exc:
            log.warning("[LongTermMemory] engine retrieve failed: %s", exc)
            return RetrievalResponse(results=[], total_found=0, metadata={"error": exc.message})
        except Exception:
            log.exception("[LongTermMemory] engine retrieve failed")
            return RetrievalResponse(results=[], total_found=0, metadata={"error": "memory recall failed"})
        entries = [
            RetrievalResultEntry(
                id=hit.episode.episode_id,
                content=[ContentElement.from_text(retrieved_text(hit.episode))],
                metadata=hit.episode.to_public(),
                distance=max(0.0, 1.0 - min(hit.score, 1.0)),
                score=hit.score,
            )
            for hit in hits
        ]
        return RetrievalResponse(results=entries, total_found=len(entries))

    async def ingest(self, context: IngestionContext) -> IngestionResult:
        """Our form names one conversation (`{"scope": ..., "episodes": [...]}`, or the upload's `scope`);
        the official plugin's form names a memory space per record (`user_key`). Either way a record this
        plugin cannot store is skipped and reported by its index; the rest is written."""
        meta = context.file_object.metadata
        document_id = meta.document_id
        kb_id = context.get_collection_id()
        memory: MemoryService = self.plugin.memory
        try:
            data = await self.plugin.get_knowledge_file_stream(context.file_object.storage_path)
            payload = load_json(data)
            if is_bundle(payload):
                return await self._migrate(data, document_id)
            spec = payload.get("scope") if isinstance(payload, dict) else None
            identity = identity_from_scope_spec(spec) or identity_from_scope_spec((meta.extra or {}).get("scope"))
            if identity is None:
                results = await memory.ingest_keyed_document(kb_id, payload, document_id, await self._bots())
            else:
                batch = parse_batch(payload, source="document", default_source_ref=f"document:{document_id}")
                scope = await memory.scope_for(identity, kb_id)
                results = [await memory.ingest_document(scope, batch.records, document_id, batch.skipped)]
        except LTMError as exc:
            log.warning("[LongTermMemory] document import failed document=%s: %s", document_id, exc)
            return IngestionResult(document_id=document_id, status=DocumentStatus.FAILED, error_message=exc.message)
        except Exception as exc:
            log.exception("[LongTermMemory] document import failed document=%s", document_id)
            return IngestionResult(document_id=document_id, status=DocumentStatus.FAILED,
                                   error_message=f"could not import the document: {type(exc).__name__}")
        written = sum(len(r.episodes) for r in results)
        skipped = [s for r in results for s in r.skipped]
        # Records that repeat a stored fact are not written (audited as document_duplicate); skipped ones are
        # audited as document_skipped. The host shows the count of what this document created.
        log.info("[LongTermMemory] document import document=%s spaces=%d records=%d duplicates=%d skipped=%d",
                 document_id, len(results), written, sum(len(r.duplicates) for r in results), len(skipped))
        report = [{"index": s.position, "reason": s.reason} for s in skipped]
        if skipped and not written and not any(r.duplicates for r in results):
            # Nothing could be stored: the host shows a failed document's message, so it says why.
            message = nothing_stored(skipped).message
            if identity is None:
                message += ('; or name the conversation: {"scope": {"bot_uuid": "...", "session_name": "group_123"}, '
                            '"episodes": [...]}')
            return IngestionResult(document_id=document_id, status=DocumentStatus.FAILED,
                                   error_message=message[:1000], metadata={"skipped": report})
        return IngestionResult(document_id=document_id, status=DocumentStatus.COMPLETED, chunks_created=written,
                               metadata={"skipped": report} if report else {})

    async def _migrate(self, data: bytes, document_id: str) -> IngestionResult:
        """A migration bundle (scripts/export_official.py) imports into every chat it names. Its records
        belong to their chats, not to this document: deleting the document does not undo the migration."""
        report = await self.plugin.memory.migrate_bundle(data, dry_run=False)
        totals = report.totals()
        log.info("[LongTermMemory] migration bundle document=%s totals=%s", document_id, totals)
        return IngestionResult(document_id=document_id, status=DocumentStatus.COMPLETED,
                               chunks_created=totals.get("episodes", {}).get("write", 0),
                               metadata={"migration": totals})

    async def _bots(self) -> list[str] | None:
        """The bot uuids this LangBot has (a record keyed to any other bot is not stored); None when the
        host does not say, and then the key's form alone decides."""
        return await self.plugin.memory.host_bots()

    async def delete_document(self, kb_id: str, document_id: str) -> bool:
        removed = await self.plugin.memory.delete_document(kb_id, document_id)
        log.info("[LongTermMemory] document delete kb=%s document=%s records=%d", kb_id, document_id, removed)
        return True
