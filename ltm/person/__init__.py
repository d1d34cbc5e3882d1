"""One person across the installation's chats: what is kept about a sender id, its export and erasure."""

from .finder import PersonRegistry, chat_spaces, speaker_of
from .holdings import EXPORT_FORMAT, Outcome, PersonErasure, PersonRecords, PersonSpace, SpaceErasure

__all__ = ["EXPORT_FORMAT", "Outcome", "PersonErasure", "PersonRecords", "PersonRegistry", "PersonSpace",
           "SpaceErasure", "chat_spaces", "speaker_of"]
