"""The memory core assembled over one set of host ports: every module, built once, wired once.

`MemoryService` (the facade) delegates to these parts; the test host and the benchmarks reach
them through `MemoryService.parts` (`testhost/hooks.py`) for what no surface does: the
installation's audit log, an explicit layout migration, waiting for a word index, recall at a
replayed moment. Components never do (they call the facade's methods).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ._audit import AuditLog
from ._bookkeeping import Bookkeeping
from ._fences import FenceRegistry
from ._gate import WriteGate
from ._storage import JsonStore
from .candidates.forgotten import ForgottenCandidates
from .candidates.queue import CandidateQueue
from .candidates.review import CandidateReview
from .chat_labels import ChatLabels, LastOpened
from .consolidation import Consolidator, DraftBook
from .conversation import Conversations
from .conversation.book import ConversationBook
from .diagnostics import Diagnostics, QuotedSnapshots
from .episodes.duplicates import DuplicateFinder
from .episodes.index_pages import IndexPages
from .episodes.lifecycle import DerivedInOrder, EpisodeLifecycle
from .episodes.listing import EpisodeListing
from .episodes.recall import Recaller
from .episodes.store import EpisodeStore
from .episodes.transfer import EpisodeTransfer
from .kb_overrides import SettingsOverrides
from .kb_registry import KnowledgeBaseRegistry
from .migrations.layout import LayoutMigrations
from .migrations.storage import migrate_storage
from .official.bundle.importer import BundleImport
from .official.profiles import read_l1_file
from .person import PersonRegistry
from .platform_events.events import PlatformEvents
from .platform_events.move import BotMover
from .platform_events.withdrawal import MessageWithdrawal
from .ports import HostPorts
from .profiles.book import ProfileBook
from .profiles.model import ProfileLimits
from .space_activity import SpaceActivityReader


@dataclass(frozen=True)
class MemoryParts:
    store: JsonStore
    fences: FenceRegistry
    audit: AuditLog
    gate: WriteGate
    episodes: EpisodeStore
    profiles: ProfileBook
    layouts: LayoutMigrations
    kbs: KnowledgeBaseRegistry
    overrides: SettingsOverrides
    recaller: Recaller
    listing: EpisodeListing
    drafts: DraftBook
    lifecycle: EpisodeLifecycle
    transfer: EpisodeTransfer
    consolidator: Consolidator
    diagnostics: Diagnostics
    candidates: CandidateReview
    people: PersonRegistry
    activity: SpaceActivityReader
    bundles: BundleImport
    conversations: Conversations
    labels: ChatLabels
    opened: LastOpened
    platform: PlatformEvents
    mover: BotMover


def assemble(ports: HostPorts, limits: Callable[[], ProfileLimits]) -> MemoryParts:
    store = Bookkeeping(ports.store)
    raw = store.raw()

    async def migrate() -> None:  # the release-0.1 key layout, once, before the first storage access
        await migrate_storage(raw)

    store.before_first_use(migrate)
    fences = FenceRegistry(store)
    audit = AuditLog(store)
    diagnostics = Diagnostics(store, fences, ports.index, ports.embedder, ports.directory)
    # The gate alone holds the vector store's write side; every other part reads it as a `VectorIndex`.
    gate = WriteGate(store, ports.index, fences, audit, diagnostics.note_scope)
    episodes = EpisodeStore(ports.index, ports.embedder, IndexPages(store))  # big spaces' indexes are saved
    # Limits are read per call: plugin config can change (and is empty during initialize on some hosts).
    profiles = ProfileBook(gate, store, limits, read_l1_file)
    layouts = LayoutMigrations(gate, store, ports.index, episodes)
    kbs = KnowledgeBaseRegistry(gate, store, fences, episodes, ports.index, layouts, ports.directory)
    # Summaries and review drafts derived from episodes are removed before their sources change (K5),
    # and an accepted candidate loses its words before the episode it became is deleted.
    drafts = DraftBook(store, episodes)
    queue = CandidateQueue(gate, store)
    # A snapshot quoting a deleted episode (or a summary of it) goes first, while the lineage is still there.
    derived = DerivedInOrder(QuotedSnapshots(store, drafts.lineage, diagnostics.deleted), drafts,
                             ForgottenCandidates(queue, store))
    # One fact, one record: every write path and the candidate check ask the same finder.
    duplicates = DuplicateFinder(episodes)
    lifecycle = EpisodeLifecycle(gate, episodes, derived, duplicates)
    listing = EpisodeListing(episodes)
    overrides = SettingsOverrides(gate, kbs, diagnostics, episodes)
    transfer = EpisodeTransfer(gate, episodes, store, derived, duplicates)
    labels = ChatLabels(store)  # names, not memory: written outside the gate, like the scope marker
    # The conversation record (V): per chat, in its L1 space; settings read per call (overrides apply).
    conversations = Conversations(ConversationBook(gate, store), ports.llm, kbs.memory_kb)
    people = PersonRegistry(gate, fences, kbs, diagnostics, episodes, lifecycle, drafts, profiles, queue, audit,
                            labels, conversations)
    # Platform events (X2, X3): a recalled message's memory taken back, a member who left erased.
    platform = PlatformEvents(kbs, diagnostics, gate.recalled,
                              MessageWithdrawal(gate, audit, store, episodes, lifecycle, queue), people, conversations)
    return MemoryParts(
        store=store, fences=fences, audit=audit, gate=gate, episodes=episodes, profiles=profiles, layouts=layouts,
        kbs=kbs, overrides=overrides, recaller=Recaller(episodes),
        listing=listing, drafts=drafts, lifecycle=lifecycle,
        transfer=transfer,
        consolidator=Consolidator(gate, episodes, ports.llm, drafts, profiles),
        diagnostics=diagnostics,
        candidates=CandidateReview(queue, fences, ports.llm, profiles, lifecycle, kbs.open, duplicates),
        people=people,
        activity=SpaceActivityReader(audit, listing, queue, kbs, diagnostics, labels),
        bundles=BundleImport(gate, audit, kbs, overrides, profiles, transfer, queue, ports.directory),
        conversations=conversations,
        labels=labels, opened=LastOpened(store),
        platform=platform,
        mover=BotMover(kbs, diagnostics, episodes, transfer, profiles, ports.directory),
    )
