"""LongTermMemory core: the scoped memory service and everything below it.

Components (`components/`) are thin adapters: they turn a LangBot turn into an
`Identity` (with `ltm.langbot`), call `MemoryService`, and render the result. They
import from this package's public surface only; storage, vector, fence and audit
internals are private (checked by the import contracts in `pyproject.toml`).
Nothing here knows how a surface shows its results.
"""

from . import params
from ._audit import AuditPage
from ._fences import Fence

# ---- candidate extraction (Q)
from .candidates import (
    MAX_CANDIDATES,
    Candidate,
    CandidateKind,
    CandidateOrigin,
    CandidatePage,
    CandidateRun,
    CandidateStatus,
    ProfileField,
)
from .chat_labels import ChatLabel

# ----
# --- consolidation (K)
from .consolidation import (
    Archivable,
    ConsolidationDisabled,
    ConsolidationPreview,
    ConsolidationRun,
    Draft,
    DraftSource,
    ProfileUpdate,
    ProposalRejected,
    Statement,
)

# ---
# ---- the conversation record (V)
from .conversation import (
    ContextPack,
    ConversationRecord,
    FoldOutcome,
    HostMessage,
    NotRecorded,
    RecordedTurn,
    SpokenTurn,
    SummarySource,
    TurnRecorded,
)

# ----
from .diagnostics import HealthItem, HealthReport, Level
from .episodes.lifecycle import DeleteCriteria, Remembered, RestoreResult
from .episodes.listing import EpisodePage
from .episodes.model import (
    LISTED_STATUSES,
    ClaimType,
    Episode,
    EpisodeStatus,
    Validity,
    clean_tags,
    parse_status,
    parse_statuses,
)
from .episodes.ranking import ScoredEpisode
from .episodes.recall import RecallFilters
from .episodes.recipes import AUTO_RECALL, MAX_TOP_K, QUERY_RECALL, REVIEW_SEARCH, RecallRecipe
from .episodes.transfer import (
    BatchDuplicate,
    BatchSimilar,
    ImportRecord,
    ImportResult,
    ParsedBatch,
    load_json,
    nothing_stored,
    parse_batch,
    parse_items,
    parse_records,
)
from .errors import (
    FencedError,
    HostError,
    HostFailure,
    InputError,
    LTMError,
    MessageRecalled,
    NoKnowledgeBase,
    NotFound,
    NotPermitted,
    OutcomeUnknown,
    PartialWrite,
    StateError,
    UnrecordedChange,
    ValidationError,
)
from .host_values import clean_host_text
from .identity import (
    Identity,
    Isolation,
    MemoryScope,
    derived_pair_problem,
    space_key_for,
    space_key_for_chat_key,
    split_chat_key,
)
from .kb_overrides import SettingChange
from .kb_settings import (
    SETTING_CHOICES,
    SETTING_NAMES,
    EffectiveSettings,
    KBSettings,
    RetrievalStrategy,
    SettingOrigin,
    SettingValue,
    shown_value,
)
from .official.bundle.importer import MigrationReport
from .official.bundle.reading import is_bundle
from .operations import Operation
from .person import EXPORT_FORMAT as PERSON_EXPORT_FORMAT
from .person import Outcome, PersonErasure, PersonRecords, PersonSpace, SpaceErasure
from .platform_events.events import EventOutcome
from .platform_events.move import BotMove, ChatMove
from .platform_events.withdrawal import Withdrawal
from .platform_values import MemberLeft, Recall
from .ports import HostPorts
from .profiles.book import Profiles
from .profiles.facts import fact_key
from .profiles.field_action import FIELD_ACTION_PARAMS, LIST_FORM_PARAMS, profile_target
from .profiles.model import Profile, ProfileLimits
from .profiles.transfer import ProfileImport
from .provenance import MessageRef
from .secrets import redact_for_log, secret_kind
from .service import MemoryService
from .skipped import SkippedRecord
from .space_activity import SpaceActivity
from .spaces import Space, SpaceKind
from .tasks import detached
from .timefields import now_iso, utc_now
from .wording import PHRASES, Said, said_from

__all__ = [
    "AUTO_RECALL",
    "FIELD_ACTION_PARAMS",
    "LISTED_STATUSES",
    "LIST_FORM_PARAMS",
    "MAX_TOP_K",
    "PERSON_EXPORT_FORMAT",
    "PHRASES",
    "QUERY_RECALL",
    "REVIEW_SEARCH",
    "SETTING_CHOICES",
    "SETTING_NAMES",
    "Archivable",
    "AuditPage",
    "BatchDuplicate",
    "BatchSimilar",
    "ChatLabel",
    "ClaimType",
    "ConsolidationDisabled",
    "ConsolidationPreview",
    "ConsolidationRun",
    "DeleteCriteria",
    "Draft",
    "DraftSource",
    "EffectiveSettings",
    "Episode",
    "EpisodePage",
    "EpisodeStatus",
    "Fence",
    "FencedError",
    "HealthItem",
    "HealthReport",
    "HostError",
    "HostFailure",
    "HostPorts",
    "Identity",
    "ImportRecord",
    "ImportResult",
    "InputError",
    "Isolation",
    "KBSettings",
    "LTMError",
    "Level",
    "MemoryScope",
    "MemoryService",
    "MigrationReport",
    "NoKnowledgeBase",
    "NotFound",
    "NotPermitted",
    "Operation",
    "Outcome",
    "OutcomeUnknown",
    "ParsedBatch",
    "PartialWrite",
    "PersonErasure",
    "PersonRecords",
    "PersonSpace",
    "Profile",
    "ProfileImport",
    "ProfileLimits",
    "ProfileUpdate",
    "Profiles",
    "ProposalRejected",
    "RecallFilters",
    "RecallRecipe",
    "Remembered",
    "RestoreResult",
    "RetrievalStrategy",
    "Said",
    "ScoredEpisode",
    "SettingChange",
    "SettingOrigin",
    "SettingValue",
    "SkippedRecord",
    "Space",
    "SpaceActivity",
    "SpaceErasure",
    "SpaceKind",
    "StateError",
    "Statement",
    "UnrecordedChange",
    "ValidationError",
    "Validity",
    "clean_host_text",
    "clean_tags",
    "derived_pair_problem",
    "detached",
    "fact_key",
    "is_bundle",
    "load_json",
    "nothing_stored",
    "now_iso",
    "params",
    "parse_batch",
    "parse_items",
    "parse_records",
    "parse_status",
    "parse_statuses",
    "profile_target",
    "redact_for_log",
    "said_from",
    "secret_kind",
    "shown_value",
    "space_key_for",
    "space_key_for_chat_key",
    "split_chat_key",
    "utc_now",
]

# ---- candidate extraction (Q)
__all__ += [
    "MAX_CANDIDATES",
    "Candidate",
    "CandidateKind",
    "CandidateOrigin",
    "CandidatePage",
    "CandidateRun",
    "CandidateStatus",
    "ProfileField",
]

# ---- the conversation record (V)
__all__ += [
    "ContextPack",
    "ConversationRecord",
    "FoldOutcome",
    "HostMessage",
    "NotRecorded",
    "RecordedTurn",
    "SpokenTurn",
    "SummarySource",
    "TurnRecorded",
]

# ---- platform events and provenance (X)
__all__ += [
    "BotMove",
    "ChatMove",
    "EventOutcome",
    "MemberLeft",
    "MessageRecalled",
    "MessageRef",
    "Recall",
    "Withdrawal",
]
