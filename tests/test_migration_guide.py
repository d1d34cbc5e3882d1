"""The README's guide from the official plugin holds every step an operator needs (issue 43, points 1 and 4),
and the documents agree on what an import does with a record it cannot store (point 15).
`tests/test_readme_translation.py` keeps the zh_Hans and ja_JP guides carrying the same commands, ids
and code; `tests/e2e/test_real_official_migration.py` follows the guide in a real LangBot."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = re.search(r"^#{1,3} ", text[start + len(heading):], re.MULTILINE)
    return text[start:start + len(heading) + (following.start() if following else len(text))]


GUIDE = section((ROOT / "README.md").read_text(encoding="utf-8"), "### Moving from the official LongTermMemory plugin")


def test_the_guide_starts_at_installing_this_plugin_and_switches_every_processor_over():
    steps = re.findall(r"^(\d)\. ", GUIDE, re.MULTILINE)
    assert steps == ["1", "2", "3", "4"], steps
    first = GUIDE[GUIDE.index("1. "):GUIDE.index("2. ")]
    assert '"Install into LangBot"' in first and "overrides" in first and "replaced" not in GUIDE
    switch = GUIDE[GUIDE.index("4. "):GUIDE.index("What moves")]
    for needed in ("Enable All Plugins", "`langbot-ltm/LongTermMemory`", "remove `langbot-team/LongTermMemory`",
                   "Knowledge bases", "remove the\n     official plugin's memory KB", "`remember`", "`!memory help`",
                   "`!memory health`", "`!memory list`"):
        assert needed in switch, needed


def test_the_guide_says_what_does_not_move_and_what_4_11_2_refused_the_official_plugin():
    assert "forget or\n   delete" in GUIDE or "forget or delete" in GUIDE
    caveats = GUIDE[GUIDE.index("Two caveats"):]
    for refused in ("automatic episode recall", "`recall_memory`", "`!memory` subcommands"):
        assert refused in caveats, refused
    official = (ROOT / "docs" / "OFFICIAL-PLUGIN.md").read_text(encoding="utf-8")
    table = section(official, "### What does not move, and why")
    for kind in ("`deleted`", "forget or delete", "credential", "notes candidates", "injection snapshots",
                 "`vector_weight`", "`metadata` of an audit entry"):
        assert kind in table, kind


def test_the_documents_agree_that_a_record_that_cannot_be_stored_is_skipped_and_the_rest_stored():
    guarantees = (ROOT / "docs" / "GUARANTEES.md").read_text(encoding="utf-8")
    secrets = section(guarantees, "### Secrets and identity numbers")
    assert "the whole batch is refused before anything is written" not in secrets
    assert "that record is skipped and named" in secrets and "the\n  rest of the batch is stored" in secrets
