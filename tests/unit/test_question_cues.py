"""Question cues (E6): a speaker or a date the question names, read and used by recall."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from ltm import MemoryScope, MemoryService
from ltm.episodes.model import Episode, EpisodeStatus
from ltm.episodes.question_cues import DateCue, date_cues, date_match, named_speakers, without_speakers
from ltm.episodes.space_index import SpaceIndex
from testhost.hooks import top
from testhost.memory_ports import InMemoryPorts
from tests.unit.support import import_many


def test_days_and_months_are_read_in_the_forms_people_write_them():
    assert date_cues("What did Gina find on 1 February, 2023?") == (DateCue(2, 2023, 1),)
    assert date_cues("Who did Maria meet on May 3, 2023?") == (DateCue(5, 2023, 3),)
    assert date_cues("What happened in August 2023?") == (DateCue(8, 2023),)
    assert date_cues("What did we plan in December?") == (DateCue(12),)
    assert date_cues("notes from 2024-03-09") == (DateCue(3, 2024, 9),)
    assert date_cues("我2023年5月3日说了什么") == (DateCue(5, 2023, 3),)
    assert date_cues("五月的事") == ()  # month names in Chinese characters are not read
    # "may" alone is a verb; only after a preposition is it the month.
    assert date_cues("May I ask what we decided?") == ()
    assert date_cues("What did we decide in May?") == (DateCue(5),)


def test_a_named_day_matches_its_own_day_and_fades_over_a_few_days():
    cue = DateCue(7, 2023, 7)
    assert cue.match(datetime(2023, 7, 7, 23, 0, tzinfo=UTC)) == 1.0
    assert 0.0 < cue.match(datetime(2023, 7, 10, 12, tzinfo=UTC)) < 1.0
    assert cue.match(datetime(2023, 7, 20, tzinfo=UTC)) == 0.0
    month = DateCue(7, 2023)
    assert month.match(datetime(2023, 7, 30, tzinfo=UTC)) == 1.0
    assert month.match(datetime(2024, 7, 30, tzinfo=UTC)) == 0.0
    assert DateCue(7).match(datetime(2024, 7, 30, tzinfo=UTC)) == 1.0
    assert date_match([cue], [None, datetime(2023, 7, 7, tzinfo=UTC)]) == 1.0
    assert DateCue(2, 2023, 30).match(datetime(2023, 3, 2, tzinfo=UTC)) == 0.0  # no such day


def test_named_speakers_are_found_as_words_and_left_out_of_the_embedded_text():
    speakers = ["Caroline", "Mel", "Ann Lee", "Bo"]
    question = "What did Caroline's friend tell Mel about Ann Lee?"
    assert named_speakers(question, speakers) == ["Caroline", "Ann Lee", "Mel"]
    assert named_speakers("What about melons and Boston?", speakers) == []
    assert without_speakers(question, ["Caroline", "Ann Lee", "Mel"]) == "What did friend tell about ?"
    assert without_speakers("Caroline?", ["Caroline"]) == "Caroline?"  # nothing but the name: kept


def _said(episode_id: str, sender_id: str, sender_name: str) -> Episode:
    return Episode(episode_id=episode_id, space_key="u", content="hello", timestamp="2024-01-01T00:00:00Z",
                   sender_id=sender_id, sender_name=sender_name)


def test_the_word_index_knows_the_speakers_of_its_space():
    index = SpaceIndex("u")
    index.add(_said("1", "c", "Caroline"))
    index.add(_said("2", "c", "Caroline"))
    index.add(_said("3", "m", "Mel"))
    assert sorted(index.speaker_names()) == ["Caroline", "Mel"]
    index.remove("3")
    index.remove("1")
    assert index.speaker_names() == ["Caroline"]
    index.remove("2")
    assert index.speaker_names() == []


def test_a_record_rewritten_with_another_speaker_leaves_the_old_name():
    index = SpaceIndex("u")
    index.add(_said("1", "c", "Caroline"))
    index.add(replace(_said("1", "c", "Caroline"), status=EpisodeStatus.ARCHIVED))  # same words: facts only
    assert index.speaker_names() == ["Caroline"]
    index.add(_said("1", "m", "Mel"))
    assert index.speaker_names() == ["Mel"]
    index.add(_said("2", "c", "Caroline"))
    assert sorted(index.speaker_names()) == ["Caroline", "Mel"]


async def test_recall_embeds_the_question_without_the_speakers_it_names(fake: InMemoryPorts, memory: MemoryService,
                                                                       alice: MemoryScope) -> None:
    await import_many(memory, alice, [
        {"content": "I started the pottery class", "sender_id": "caroline", "sender_name": "Caroline"},
        {"content": "Wow, Caroline! Pottery sounds fun", "sender_id": "mel", "sender_name": "Mel"},
    ])
    fake.calls.reset()
    hits = await memory.recall(alice, "What class did Caroline start?", recipe=top(2))
    embedded = [c.args["texts"] for c in fake.calls.of("embedder.embed")]
    assert embedded == [("What class did start?",)]
    assert hits[0].episode.sender_name == "Caroline"  # her own record, not the one addressing her
    fake.calls.reset()
    await memory.recall(alice, "What class did Dora start?", recipe=top(2))  # not a speaker here: kept
    assert [c.args["texts"] for c in fake.calls.of("embedder.embed")] == [("What class did Dora start?",)]
