"""The conversation record of each chat: its recent turns and a rolling summary (V1-V4 in
docs/REQUIREMENTS.md; docs/ARCHITECTURE.md, "The conversation record").

- `model`     the record, its turns, its summary and digest, and the chat's budgets;
- `text`      what a finished turn becomes before it is stored (cleaned, bounded, no credentials);
- `digest`    the summary without a model: one short line per folded turn, within the budget;
- `prompt`    the fold's request to the chat model and the check of its answer;
- `fold`      the record's rules as pure functions (append, what to fold, fold, clear, erase a speaker);
- `pack`      the context pack: what the record adds to LangBot's own history for one request;
- `book`      the record in plugin storage, and the one gated write that changes it;
- `recorder`  `Conversations`: what the service calls (record a turn, fold, pack, clear, erase).
"""

from .model import PACK_MAX_CHARS, ConversationLimits, ConversationRecord, RecordedTurn, Summary, SummarySource
from .pack import ContextPack, HostMessage, context_pack
from .recorder import Conversations, FoldOutcome, TurnRecorded
from .text import NotRecorded, SpokenTurn, not_recorded

__all__ = [
    "PACK_MAX_CHARS",
    "ContextPack",
    "ConversationLimits",
    "ConversationRecord",
    "Conversations",
    "FoldOutcome",
    "HostMessage",
    "NotRecorded",
    "RecordedTurn",
    "SpokenTurn",
    "Summary",
    "SummarySource",
    "TurnRecorded",
    "context_pack",
    "not_recorded",
]
