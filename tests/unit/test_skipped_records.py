"""A record an import skipped is one type (`ltm.skipped.SkippedRecord`) for every import: an episode batch
names it by its index in the array, a profile file by a JSON Pointer, and the bundle importer reports both
the same way (issue 32, point 1: one name per concept)."""

from __future__ import annotations

import json
from pathlib import Path

import ltm
from ltm.episodes.transfer import nothing_stored, parse_batch
from ltm.official.bundle.importer import PartCount
from ltm.official.profiles import parse_official_export
from ltm.profiles.model import ProfileLimits
from ltm.skipped import SkippedRecord

OFFICIAL_EXPORT = Path(__file__).resolve().parents[1] / "official_l1_export.json"


def test_an_episode_batch_names_a_skipped_record_by_its_index() -> None:
    batch = parse_batch([{"content": "the boat is blue"}, {"content": ""}, 5])
    assert batch.skipped == [SkippedRecord(1, "content is required"), SkippedRecord(2, "must be a JSON object")]
    assert nothing_stored(batch.skipped).message.endswith("[1] content is required; [2] must be a JSON object")


def test_a_profile_file_names_a_skipped_item_by_its_json_pointer() -> None:
    found = parse_official_export(json.loads(OFFICIAL_EXPORT.read_text(encoding="utf-8")), ProfileLimits())
    assert found.skipped and all(isinstance(s, SkippedRecord) for s in found.skipped)
    assert SkippedRecord("/profiles/1/profile/freeform_traits/1", "an item must be a string") in found.skipped


def test_the_bundle_report_shows_every_skipped_record_alike() -> None:
    part = PartCount(skipped=[SkippedRecord(3, "bad"), SkippedRecord("/profiles/0/profile/notes", "too long"),
                              SkippedRecord("candidates", "the queue is full")])
    assert part.to_dict()["skipped"] == [{"at": 3, "reason": "bad"},
                                         {"at": "/profiles/0/profile/notes", "reason": "too long"},
                                         {"at": "candidates", "reason": "the queue is full"}]


def test_the_retired_name_is_gone() -> None:
    assert "SkippedRecord" in ltm.__all__ and "Skipped" not in ltm.__all__
    assert not hasattr(ltm, "Skipped")
