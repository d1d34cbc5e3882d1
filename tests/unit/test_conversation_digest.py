"""The summary without a model (V2): one short line per folded turn, newest kept within the budget."""

from __future__ import annotations

from ltm.conversation.digest import digest_line, first_sentence, fitted, render
from ltm.conversation.model import DigestLine, RecordedTurn


def line(seq: int, text: str, who: str = "Ann") -> DigestLine:
    return DigestLine(seq, f"2026-05-01T10:{seq:02d}:00Z", who.lower(), who, text)


def test_the_first_sentence_in_latin_and_cjk_text() -> None:
    assert first_sentence("We leave at nine. Bring a coat!", 100) == "We leave at nine."
    assert first_sentence("明天九点出发。记得带外套。", 100) == "明天九点出发。"
    assert first_sentence("no end mark\nsecond line", 100) == "no end mark"
    assert first_sentence("word " * 100, 20) == "word word word word…"


def test_a_turns_line_keeps_who_said_what_and_the_answer() -> None:
    turn = RecordedTurn(3, "2026-05-01T10:03:00Z", "ann", "Ann", "m3", "I booked the cabin. It has a lake.",
                        "Great! When?")
    assert render([digest_line(turn)], 0) == "2026-05-01 10:03 Ann: I booked the cabin. → Great!"


def test_the_oldest_lines_go_first_and_the_rendering_says_how_many() -> None:
    lines = tuple(line(n, f"message {n}") for n in range(1, 11))
    kept, dropped = fitted(lines, 2, 120)
    assert [x.seq for x in kept] == [8, 9, 10] and dropped == 9  # 2 dropped before, 7 now
    text = render(kept, dropped)
    assert text.startswith("(+9 earlier turns)\n") and len(text) <= 120


def test_a_single_line_longer_than_the_budget_is_cut_to_it() -> None:
    kept, dropped = fitted((line(1, "z" * 5_000),), 0, 200)
    assert len(render(kept, dropped)) <= 200 and kept[0].text.endswith("…") and dropped == 0
    nothing, gone = fitted((line(1, "z" * 5_000),), 0, 10)
    assert nothing == () and gone == 1
