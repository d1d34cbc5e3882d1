"""Every operation an audit entry, a fence or a write-ahead marker can name (A1 in docs/REQUIREMENTS.md).

`WriteGate.write_l1/write_l2/write` and `WriteTx.applied/reverted/noted` take an `Operation`, so mypy
rejects a bare string: an operation the surfaces cannot word (`op.<value>` in components/common/vocabulary)
cannot be written by accident. The members are `StrEnum`s: an entry stores the value ("remember"), exactly the
string the earlier releases stored, and a stored value read back compares equal to its member.
A new write operation is one member here plus the module that performs it.
"""

from __future__ import annotations

from enum import StrEnum


class Operation(StrEnum):
    # episodes (L2)
    REMEMBER = "remember"
    REMEMBER_DUPLICATE = "remember_duplicate"
    REMEMBER_ROLLBACK = "remember_rollback"
    SUPERSEDE = "supersede"
    ARCHIVE = "archive"
    RESTORE = "restore"
    FORGET = "forget"
    BULK_DELETE = "bulk_delete"
    IMPORT = "import"
    IMPORT_DUPLICATE = "import_duplicate"
    IMPORT_SKIPPED = "import_skipped"
    DOCUMENT_IMPORT = "document_import"
    DOCUMENT_DUPLICATE = "document_duplicate"
    DOCUMENT_SKIPPED = "document_skipped"
    DOCUMENT_DELETE = "document_delete"
    # profiles (L1)
    UPDATE_PROFILE = "update_profile"
    PROFILE_EDIT = "profile_edit"
    PROFILE_CLEAR = "profile_clear"
    PROFILE_IMPORT = "profile_import"
    # a person's erasure (both layers)
    PERSON_ERASE = "person_erase"
    # a message recalled on the platform: what it made taken back (both layers, ltm/platform_events/)
    MESSAGE_WITHDRAW = "message_withdraw"
    # candidates (L1 review queue)
    CANDIDATE_PROPOSE = "candidate_propose"
    CANDIDATE_REDACT = "candidate_redact"
    CANDIDATE_ACCEPT = "candidate_accept"
    CANDIDATE_AUTO_APPLY = "candidate_auto_apply"
    CANDIDATE_REJECT = "candidate_reject"
    # the conversation record (L1, ltm/conversation/): a turn appended (not audited, the record is its own
    # log), turns folded into the summary, the record cleared, its summary edited, a record imported
    CONVERSATION_RECORD = "conversation_record"
    CONVERSATION_FOLD = "conversation_fold"
    CONVERSATION_CLEAR = "conversation_clear"
    CONVERSATION_EDIT = "conversation_edit"
    CONVERSATION_IMPORT = "conversation_import"
    # consolidation
    CONSOLIDATION_PREVIEW = "consolidation_preview"
    CONSOLIDATION_ARCHIVE = "consolidation_archive"
    CONSOLIDATION_STAGE = "consolidation_stage"
    CONSOLIDATION_UNSTAGE = "consolidation_unstage"
    CONSOLIDATION_RUN = "consolidation_run"
    SUMMARY_REMOVE = "summary_remove"
    DRAFT_CLEAR = "draft_clear"
    DRAFT_DISCARD = "draft_discard"
    # the installation: knowledge bases, settings, fences, migrations
    KB_REGISTER = "kb_register"
    KB_REGISTER_ROLLBACK = "kb_register_rollback"
    KB_UNREGISTER = "kb_unregister"
    KB_DATA_CLEAR = "kb_data_clear"
    SETTINGS_OVERRIDE = "settings_override"
    SETTINGS_RESET = "settings_reset"
    FENCE_CLEAR = "fence_clear"
    MIGRATION = "migration"
    STORAGE_MIGRATION = "storage_migration"
    # an official installation's bundle (ltm/official/bundle/): its records go through the paths above
    OFFICIAL_MIGRATION = "official_migration"
    OFFICIAL_MIGRATION_DUPLICATE = "official_migration_duplicate"
    OFFICIAL_MIGRATION_SKIPPED = "official_migration_skipped"


# What an import audits for a record it skips as a duplicate, by the import's own operation.
DUPLICATE_OF = {
    Operation.IMPORT: Operation.IMPORT_DUPLICATE,
    Operation.DOCUMENT_IMPORT: Operation.DOCUMENT_DUPLICATE,
    Operation.OFFICIAL_MIGRATION: Operation.OFFICIAL_MIGRATION_DUPLICATE,
}

# What an import audits for a record it could not read (named in its result), by the import's own operation.
SKIPPED_OF = {
    Operation.IMPORT: Operation.IMPORT_SKIPPED,
    Operation.DOCUMENT_IMPORT: Operation.DOCUMENT_SKIPPED,
    Operation.OFFICIAL_MIGRATION: Operation.OFFICIAL_MIGRATION_SKIPPED,
}

# What an audit entry of these operations says about its episode: removed, or the status it now has
# (testhost/audit_check.py replays a space's audit log with them against what the store holds).
REMOVING = frozenset({Operation.FORGET, Operation.BULK_DELETE, Operation.PERSON_ERASE, Operation.DOCUMENT_DELETE,
                      Operation.REMEMBER_ROLLBACK, Operation.SUMMARY_REMOVE, Operation.CONSOLIDATION_UNSTAGE,
                      Operation.MESSAGE_WITHDRAW})

# The operations that make memory from the message a turn answers: refused for a turn whose message was
# recalled meanwhile (ltm/recalls.py), so a recall that came first is not undone by a late write.
FROM_MESSAGE = frozenset({Operation.REMEMBER, Operation.UPDATE_PROFILE, Operation.CANDIDATE_PROPOSE,
                          Operation.CANDIDATE_REDACT, Operation.CANDIDATE_AUTO_APPLY, Operation.CONVERSATION_RECORD})
STATUS_AFTER = {Operation.SUPERSEDE: "superseded", Operation.ARCHIVE: "archived",
                Operation.CONSOLIDATION_ARCHIVE: "archived", Operation.RESTORE: "active"}
