"""EventListener: profiles and recalled episodes before every model call (I1-I6 in docs/REQUIREMENTS.md).

Only in pipelines whose runner has the memory KB attached (the KB id is in the
query variable `_knowledge_base_uuids`, I4); elsewhere it does nothing at all.

Double recall. The memory KB stays in `_knowledge_base_uuids`: in LangBot 4.11.2
removing it does not keep a runner from retrieving it (a run is granted its
configured KBs as well), but it does make the host refuse a plugin's explicit,
query-scoped retrieval of the memory KB (AgenticRAG's `query_knowledge`), which must
keep working (docs/HOST-FACTS.md 5.5). Instead the injection is noted, and the
engine answers the runner's first re-retrieval of this same message with nothing.
One fixed set of host calls per turn, whatever the scope holds; the snapshot (I5) is written after the
turn, so the reply waits for none of it. Any memory failure
degrades to "no memory this turn" (I6); the user's turn never fails because of it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langbot_plugin.api.definition.components.common.event_listener import EventListener
from langbot_plugin.api.entities import context, events
from langbot_plugin.api.entities.builtin.provider.message import Message

from components.event_listener.candidate_listener import CandidateListener
from components.event_listener.conversation_hook import ConversationHook
from components.event_listener.prompt_blocks import context_variable, render_system_message
from ltm import (
    AUTO_RECALL,
    ContextPack,
    Episode,
    HostMessage,
    LTMError,
    MemoryScope,
    MemoryService,
    Profile,
    now_iso,
    utc_now,
)
from ltm.langbot import read_turn

log = logging.getLogger("LongTermMemory")


async def _nothing() -> None:
    return None


def host_history(messages: Any) -> list[HostMessage]:
    """PromptPreProcessing's `prompt` (LangBot's history for this request; empty in 4.11.2 with a plugin
    Runner, docs/HOST-FACTS.md 13.1) as (role, text) pairs: a message's text parts joined."""
    found: list[HostMessage] = []
    for message in messages if isinstance(messages, list) else []:
        role = str(getattr(message, "role", "") or "")
        content = getattr(message, "content", None)
        if isinstance(content, list):
            content = " ".join(str(getattr(part, "text", "") or "") for part in content
                               if getattr(part, "type", "") == "text")
        if role and isinstance(content, str) and content.strip():
            found.append(HostMessage(role, content))
    return found


class MemoryInjector(EventListener):
    async def initialize(self) -> None:
        await super().initialize()
        self.conversation = ConversationHook()
        # NormalMessageResponded: candidate extraction (Q) and the conversation record (V1)
        self._candidates = CandidateListener(self, self.conversation)
        self._candidates.register()

        @self.handler(events.PromptPreProcessing)
        async def on_prompt(ctx: context.EventContext) -> None:
            try:
                await self._inject(ctx)
            except Exception:
                log.exception("[LongTermMemory] injection failed query=%s; turn continues without memory",
                              ctx.query_id)

    async def _inject(self, ctx: Any) -> None:
        memory: MemoryService = self.plugin.memory
        snapshot: dict[str, Any] = {"query_id": ctx.query_id, "time": now_iso(), "injected": False, "blocks": 0,
                                    "chars": 0, "errors": []}
        sender_id = sender_name = ""
        session_profile: Profile = Profile()
        speaker_profile: Profile | None = None
        episodes: list[Episode] = []
        pack: ContextPack | None = None  # None: the conversation record is off
        scope: MemoryScope | None = None
        text = ""
        self.conversation.forget(ctx)  # whatever an earlier query of this number left
        try:
            found = await memory.memory_kb()  # (kept by the plugin: no host call after the first turn)
            self._candidates.follow(found is not None and (found[1].candidate_extraction_enabled
                                                           or found[1].conversation_enabled))
            turn = await read_turn(ctx, found[0] if found else None, bot_with_variables=True)
            text = turn.text
            if turn.kb_id is None:
                # I4: automatic memory only in pipelines whose runner was given the memory KB. Nothing
                # is read; `_ltm_context` is set to None ("no memory here"), because a consumer written
                # like the documented one calls get_query_var, which fails on a variable that is absent.
                log.debug("[LongTermMemory] memory KB not attached to this pipeline; query=%s skipped", ctx.query_id)
                await ctx.set_query_var("_ltm_context", None)
                return
            if turn.command:
                # Command turns never reach a model: no recall, just an empty context (I3).
                await ctx.set_query_var("_ltm_context", context_variable("", "", Profile(), None, []))
                return
            identity = await turn.identity()
            sender_id, sender_name = identity.sender_id, identity.sender_name
            recording = found is not None and found[1].conversation_enabled
            if recording:  # what the reply's event records, without asking the host again (V1)
                self.conversation.heard(ctx, turn, identity)
            scope = await memory.scope_for(identity)
            # Labels for operators (ltm/chat_labels.py): written only when a name changed.
            await memory.note_names(scope, (turn.variables or {}).get("group_name"))
            snapshot.update(scope_key=scope.chat_key, user_key=scope.space_key, kb_id=scope.kb_id,
                            speaker={"id": sender_id, "name": sender_name})
            # Independent reads: the profiles and the conversation record (plugin storage) and recall
            # (embedding + vector search) run concurrently; each degrades on its own (I6).
            (session_profile, speaker_profile), episodes, pack = await asyncio.gather(
                self._profiles(memory, scope, snapshot), self._recall(memory, scope, text, snapshot),
                self._pack(memory, scope, ctx.event, snapshot) if recording else _nothing())
        except Exception as exc:  # any host or memory failure degrades to no memory (I6)
            snapshot["errors"].append(f"context: {exc}")
            # A host or memory failure is expected and named; anything else is a bug here: its traceback is logged.
            log.warning("[LongTermMemory] injection degraded query=%s: %s", ctx.query_id, type(exc).__name__,
                        exc_info=not isinstance(exc, LTMError))
        has_profiles = not session_profile.is_empty or (speaker_profile is not None and not speaker_profile.is_empty)
        # The speaker line (and the date line) go in on every turn whose speaker is known, even before
        # anything is stored: in a new group chat it is the only way the model learns who is talking.
        earlier = pack is not None and not pack.empty
        if scope is not None and (has_profiles or episodes or earlier or sender_id or sender_name):
            message = render_system_message(sender_id, sender_name, session_profile, speaker_profile, episodes,
                                            utc_now(), pack)
            ctx.event.default_prompt.append(Message(role="system", content=message))
            memory.note_injection(scope, text)
            snapshot.update(injected=True, blocks=len(episodes) + (1 if has_profiles else 0) + (1 if earlier else 0),
                            chars=len(message))
        if scope is None:
            log.warning("[LongTermMemory] no scope for query=%s; nothing injected", ctx.query_id)
            return
        snapshot.update(
            session_profile=session_profile.to_dict(),
            speaker_profile=speaker_profile.to_dict() if speaker_profile is not None else None,
            episodes=[{"id": e.episode_id, "content": e.content} for e in episodes],
            # Turn numbers and sizes only: a snapshot never holds what people said in the chat.
            conversation=None if pack is None else {"summary_chars": len(pack.summary), "summary_turns": pack.folded,
                                                    "turns": [t.seq for t in pack.turns], "carried": pack.carried,
                                                    "left_out": pack.left_out},
        )
        # The variable is read by listeners after this one, so the turn waits for it; the snapshot is a
        # diagnostic record nobody waits for: it is written after the turn (and read as written until then).
        failure = await self._set_context(ctx, context_variable(sender_id, sender_name, session_profile,
                                                                speaker_profile, episodes, pack))
        if failure:
            snapshot["errors"].append(failure)
        self._save(memory, scope, snapshot)
        log.info(
            "[LongTermMemory] injection ready query=%s kb=%s scope=%s sender=%s blocks=%d chars=%d errors=%d",
            ctx.query_id, scope.kb_id or "-", scope.chat_key, sender_id or "-", snapshot["blocks"],
            snapshot["chars"], len(snapshot["errors"]),
        )

    @staticmethod
    async def _set_context(ctx: Any, value: dict[str, Any]) -> str:
        try:
            await ctx.set_query_var("_ltm_context", value)
        except Exception as exc:  # noqa: BLE001 - I6
            return f"context variable: {exc}"
        return ""

    @staticmethod
    def _save(memory: MemoryService, scope: MemoryScope, snapshot: dict[str, Any]) -> None:
        try:
            memory.save_snapshot_later(scope, snapshot)
        except LTMError as exc:
            log.warning("[LongTermMemory] snapshot not saved scope=%s: %s", scope.chat_key, exc.code)

    @staticmethod
    async def _profiles(memory: MemoryService, scope: MemoryScope, snapshot: dict[str, Any]
                        ) -> tuple[Profile, Profile | None]:
        try:
            profiles = await memory.profiles(scope)
        except LTMError as exc:  # I6
            snapshot["errors"].append(f"profiles: {exc}")
            return Profile(), None
        return profiles.session, profiles.speaker

    @staticmethod
    async def _pack(memory: MemoryService, scope: MemoryScope, event: Any, snapshot: dict[str, Any]) -> ContextPack:
        """The chat's earlier turns and summary the model is not given otherwise (V3)."""
        try:
            return await memory.conversation_pack(scope, host_history(getattr(event, "prompt", None)))
        except LTMError as exc:  # I6
            snapshot["errors"].append(f"conversation: {exc}")
            return ContextPack()

    @staticmethod
    async def _recall(memory: MemoryService, scope: MemoryScope, text: str, snapshot: dict[str, Any]
                      ) -> list[Episode]:
        if not scope.kb_id or not text.strip():
            return []
        try:
            return [hit.episode for hit in await memory.recall(scope, text, recipe=AUTO_RECALL)]
        except LTMError as exc:  # I6
            snapshot["errors"].append(f"recall: {exc}")
            return []
