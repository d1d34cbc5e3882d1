"""The context pack (V3) as a pure function: what the record adds to the history LangBot still gives the
model, within a budget, never repeating a turn that history carries."""

from __future__ import annotations

from ltm.conversation import ContextPack, ConversationRecord, HostMessage, RecordedTurn, Summary, SummarySource
from ltm.conversation.model import WITHHELD
from ltm.conversation.pack import context_pack


def turn(seq: int, said: str, reply: str = "", who: str = "ann") -> RecordedTurn:
    return RecordedTurn(seq, f"2026-05-01T10:{seq:02d}:00Z", who, who.title(), f"m{seq}", said,
                        reply or f"reply {seq}")


def record(*turns: RecordedTurn, summary: str = "", folded: int = 0) -> ConversationRecord:
    covers = turns[0].seq - 1 if turns else folded
    shown = Summary(summary, SummarySource.FALLBACK, covers_to=covers, folded=folded) if summary else Summary()
    return ConversationRecord(turns=turns, summary=shown, next_seq=(turns[-1].seq if turns else covers) + 1)


def history(*pairs: tuple[str, str]) -> list[HostMessage]:
    return [HostMessage(role, text) for role, text in pairs]


TURNS = tuple(turn(n, f"message number {n}") for n in range(5, 10))


def test_an_empty_history_gets_the_summary_and_every_recent_turn() -> None:
    pack = context_pack(record(*TURNS, summary="we planned a trip", folded=4), [])
    assert pack.summary == "we planned a trip" and pack.folded == 4
    assert [t.seq for t in pack.turns] == [5, 6, 7, 8, 9] and pack.carried == 0 and pack.left_out == 0


def test_turns_the_history_still_carries_are_not_repeated() -> None:
    held = history(("user", "message number 8"), ("assistant", "reply 8"), ("user", "message number 9"),
                   ("assistant", "reply 9"))
    pack = context_pack(record(*TURNS, summary="we planned a trip", folded=4), held)
    assert [t.seq for t in pack.turns] == [5, 6, 7] and pack.carried == 2
    assert pack.summary == "we planned a trip"  # the history starts inside the record: the folded turns are gone


def test_a_history_that_reaches_back_past_the_record_gets_no_summary() -> None:
    held = history(("user", "something from before the record"), ("assistant", "ok"),
                   *((role, f"{text} {n}") for n in (7, 8, 9)
                     for role, text in (("user", "message number"), ("assistant", "reply"))))
    pack = context_pack(record(*TURNS, summary="we planned a trip", folded=4), held)
    assert pack.summary == "" and pack.folded == 0
    assert [t.seq for t in pack.turns] == [5, 6] and pack.carried == 3


def test_a_repeated_message_vouches_for_one_turn_only() -> None:
    turns = (turn(1, "ok"), turn(2, "ok"), turn(3, "ok"))
    pack = context_pack(record(*turns), history(("user", "ok"), ("assistant", "reply 3")))
    assert [t.seq for t in pack.turns] == [1, 2]


def test_matching_ignores_spacing_and_cuts_at_the_same_place() -> None:
    long = "word " * 300
    turns = (turn(1, long.strip()[:999] + "…"), turn(2, "a  spaced\n message"))
    held = history(("user", long[:4000] + "..."), ("user", "a spaced message"))
    assert context_pack(record(*turns), held).turns == ()


def test_a_withheld_message_is_matched_by_its_reply() -> None:
    turns = (turn(1, "hello"), turn(2, WITHHELD, "I will not keep that."))
    held = history(("user", "my password is swordfish7"), ("assistant", "I will not keep that."))
    assert [t.seq for t in context_pack(record(*turns), held).turns] == [1]


def test_the_pack_stays_within_its_budget_newest_turns_first() -> None:
    turns = tuple(turn(n, "x" * 300, "y" * 200) for n in range(1, 30))
    pack = context_pack(record(*turns, summary="s" * 5_000, folded=12), [], max_chars=3_000)
    assert pack.chars <= 3_000
    assert len(pack.summary) == 1_500 and pack.summary.startswith("…")  # half the budget, its newest part
    assert [t.seq for t in pack.turns] == [28, 29] and pack.left_out == 27


def test_a_newest_turn_too_big_for_the_budget_is_shortened_not_dropped() -> None:
    pack = context_pack(record(turn(1, "z" * 4_000, "w" * 4_000)), [], max_chars=1_000)
    [only] = pack.turns
    assert pack.chars <= 1_000 and only.user_text.endswith("…") and only.seq == 1


def test_nothing_recorded_means_nothing_added() -> None:
    assert context_pack(ConversationRecord(), history(("user", "hi"))) == ContextPack()


def test_the_pack_for_other_plugins_is_plain_values() -> None:
    pack = context_pack(record(turn(3, "we meet at noon"), summary="earlier: the venue", folded=2), [])
    assert pack.to_dict() == {
        "summary": "earlier: the venue", "summary_turns": 2,
        "earlier_turns": [{"turn": 3, "at": "2026-05-01T10:03:00Z", "speaker": {"id": "ann", "name": "Ann"},
                           "said": "we meet at noon", "assistant": "reply 3"}]}


def test_the_turns_the_runner_shows_itself_are_left_out() -> None:
    # Turns 5-9 recorded, 1-4 folded; the Runner shows the chat's latest three turns (7-9) from LangBot's
    # transcript: the pack adds 5 and 6 and the summary of 1-4, which fell out of that window.
    pack = context_pack(record(*TURNS, summary="we planned a trip", folded=4), [], host_window=3)
    assert [t.seq for t in pack.turns] == [5, 6] and pack.carried == 3
    assert pack.summary == "we planned a trip" and pack.folded == 4


def test_the_summary_waits_until_the_runners_window_no_longer_reaches_its_first_turn() -> None:
    # The window of 9 still shows turn 1, the first folded one: neither the summary nor a turn is added.
    assert context_pack(record(*TURNS, summary="we planned a trip", folded=4), [], host_window=9).empty
    # One turn later the window (2-10) has lost turn 1: the summary comes back, the turns stay out.
    later = record(*TURNS, turn(10, "message number 10"), summary="we planned a trip", folded=4)
    pack = context_pack(later, [], host_window=9)
    assert pack.summary == "we planned a trip" and pack.turns == ()


def test_a_window_of_zero_is_a_runner_that_shows_no_history() -> None:
    shown = record(*TURNS, summary="we planned a trip", folded=4)
    assert context_pack(shown, [], host_window=0) == context_pack(shown, [])
