"""Record layout 2 (ltm/langbot/layout.py): what a space's `file_id` may contain, and reads that fail closed."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from ltm.langbot import layout
from ltm.ports import IndexRecord

SPACES = st.text(min_size=1, max_size=400)


@given(SPACES, SPACES)
def test_space_tokens_are_safe_on_every_store_and_never_collide(a: str, b: str) -> None:
    for space in (a, b):
        token = layout.space_token(space)
        # Milvus quotes it unescaped, Valkey's tag index splits on commas and folds case, both cap 255.
        assert re.fullmatch(r"ltm2-[0-9a-f]{64}", token) and len(token) <= 255
        assert len(layout.record_key(space, "0" * 36)) <= 255
        assert layout.gone_token(space) != token
    if a != b:
        assert layout.space_token(a) != layout.space_token(b)
        assert layout.host_id(a, "x") != layout.host_id(b, "x")


@given(SPACES, st.text(max_size=50), st.text(max_size=2000))
def test_a_record_survives_a_store_that_keeps_only_text_file_id_and_uuid(space: str, speaker: str, text: str) -> None:
    record = IndexRecord("00000000-0000-4000-8000-000000000001", space, speaker, text,
                         {"content": text, "tags": '["a"]', "importance": 3, "status": "active"})
    meta = layout.to_metadata(record)
    fixed_schema = {k: meta[k] for k in ("text", "file_id", "uuid")}
    assert layout.from_metadata(fixed_schema, space) == record
    assert layout.from_metadata(meta, space) == record


def test_reads_fail_closed() -> None:
    mine = IndexRecord("00000000-0000-4000-8000-000000000001", "bot:a", "u1", "mine", {"content": "mine"})
    theirs = IndexRecord("00000000-0000-4000-8000-000000000002", "bot:b", "u2", "theirs", {"content": "theirs"})
    meta = layout.to_metadata(theirs)
    assert layout.from_metadata(meta, "bot:a") is None
    # A row filed under my space whose text names another space (or the other way round) is dropped.
    forged = dict(meta, file_id=layout.space_token("bot:a"))
    assert layout.from_metadata(forged, "bot:a") is None and layout.from_metadata(forged, "bot:b") is None
    payload = json.loads(meta["text"])
    payload["space"] = "bot:a"
    relabelled = dict(layout.to_metadata(mine), text=json.dumps(payload))
    assert layout.from_metadata(relabelled, "bot:a") is None
    # Layout-1 rows are not read as records (only the migration picks them up).
    legacy = {"user_key": "bot:a", "file_id": f"bot:a#{mine.record_id}", "uuid": mine.record_id, "text": "mine"}
    assert layout.from_metadata(legacy, "bot:a") is None
    found = layout.legacy_record(legacy)
    assert found is not None and found[0].space_key == "bot:a" and found[1] == legacy["file_id"]
    assert layout.legacy_record(layout.to_metadata(mine)) is None


def test_newest_row_wins_when_a_store_returns_two() -> None:
    old = IndexRecord("r", "s", "", "x", {"status": "active", "status_changed_at": "2026-01-01T00:00:00+00:00"})
    new = IndexRecord("r", "s", "", "x", {"status": "archived", "status_changed_at": "2026-02-01T00:00:00+00:00"})
    assert layout.newest([old, new]) == [new] and layout.newest([new, old]) == [new]


def test_legacy_file_ids_with_quotes_are_never_sent_to_a_delete() -> None:
    assert layout.legacy_deletable("bot:a#00000000-0000-4000-8000-000000000001")
    assert not layout.legacy_deletable('x" or file_id != "#00000000-0000-4000-8000-000000000001')
    assert not layout.legacy_deletable("back\\slash#id")
