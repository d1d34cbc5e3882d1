"""The labelled extraction sets of bench/extraction/ and the matching rule that scores them.

The sets are data a later rule writer tunes on (tuning.json) and is judged on (heldout.json),
so these tests keep them what bench/extraction/README.md says they are: large enough, all
three languages with every category, the held-out set not a copy of the tuning set, key
phrases an extractor can actually find; and they pin the matching rule of
bench/extraction_sets.py on hand-made proposals.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench.extraction_quality import score
from bench.extraction_sets import (
    CATEGORIES,
    LANGUAGES,
    Expected,
    Form,
    Item,
    SetError,
    form_matches,
    load_set,
    matching,
    normalized,
    set_path,
    tokens,
)
from ltm.candidates import SESSION, SPEAKER, CandidateKind, ProfileField, ProposedMemory, extract_candidates

TUNING = load_set(set_path("tuning"))
HELDOUT = load_set(set_path("heldout"))
SETS = {"tuning": TUNING, "heldout": HELDOUT}


def _profile(field: ProfileField, content: str, target: str = SPEAKER) -> ProposedMemory:
    return ProposedMemory(CandidateKind.PROFILE, content, content, "test", target, field)


def _episode(content: str) -> ProposedMemory:
    return ProposedMemory(CandidateKind.EPISODE, content, content, "test")


# ---------------------------------------------------------------- the sets
@pytest.mark.parametrize(("name", "minimum"), [("tuning", 300), ("heldout", 200)])
def test_set_is_large_enough_with_a_real_share_of_each_language(name, minimum):
    items = SETS[name]
    assert len(items) >= minimum
    share = Counter(i.lang for i in items)
    assert set(share) == set(LANGUAGES)
    assert share["ja"] >= 0.25 * len(items)
    assert min(share.values()) >= 0.25 * len(items), share


@pytest.mark.parametrize("name", ["tuning", "heldout"])
def test_every_language_has_every_category_and_enough_positives(name):
    for lang in LANGUAGES:
        items = [i for i in SETS[name] if i.lang == lang]
        assert {i.category for i in items} == set(CATEGORIES), lang
        positives = [i for i in items if not i.negative]
        assert 0.5 <= len(positives) / len(items) <= 0.7, lang
        assert sum(i.category == "life_event" for i in items) >= 8, lang


def test_ids_and_texts_are_not_shared_between_the_sets():
    ids = [i.id for i in TUNING + HELDOUT]
    assert len(ids) == len(set(ids))
    tuning_texts = {normalized(i.text) for i in TUNING}
    assert not [i.id for i in HELDOUT if normalized(i.text) in tuning_texts]


def _shape(text: str) -> set[str]:
    """Words for Latin script, character trigrams otherwise (what "near copy" is measured on)."""
    kept = "".join(ch for ch in normalized(text) if ch.isalnum() or ch == " ")
    return set(kept.split()) if kept.isascii() else {kept[i:i + 3] for i in range(len(kept) - 2)}


def test_no_heldout_message_is_a_near_copy_of_a_tuning_message():
    copies = []
    for held in HELDOUT:
        mine = _shape(held.text)
        for tuned in (t for t in TUNING if t.lang == held.lang):
            theirs = _shape(tuned.text)
            overlap = len(mine & theirs) / max(1, len(mine | theirs))
            if overlap >= 0.45:
                copies.append((held.id, tuned.id, round(overlap, 2)))
    assert not copies


@pytest.mark.parametrize("name", ["tuning", "heldout"])
def test_episode_key_phrases_and_names_occur_in_the_message(name):
    # Episodes keep the clause as typed and names are copied, so a key phrase that is not in
    # the text could never be found: it would be a labelling typo, not a miss.
    unfindable = []
    for item in SETS[name]:
        for expected in item.expect:
            for form in expected.forms:
                if form.content is None or not (form.kind == "episode" or form.field == "name"):
                    continue
                rest = iter(tokens(item.text))
                if not all(token in rest for token in tokens(form.content)):
                    unfindable.append((item.id, form.content))
    assert not unfindable


@pytest.mark.parametrize("name", ["tuning", "heldout"])
def test_no_credential_message_yields_anything_but_the_redacted_ignore(name):
    # The extractor may miss a credential (then nothing is proposed), but it must never turn
    # one into a fact; the figures count the misses, this pins the leaks at zero.
    leaks = []
    for item in (i for i in SETS[name] if i.category == "neg.credential"):
        leaks += [(item.id, p.kind.value) for p in extract_candidates(item.text) if p.kind is not CandidateKind.IGNORE]
    assert not leaks


@pytest.mark.parametrize(("change", "message"), [
    ({"category": "neg.rumour"}, "'category' must be one of"),
    ({"lang": "fr"}, "'lang' must be one of"),
    ({"category": "neg.question"}, "a negative category expects no candidate"),
    ({"expect": []}, "a positive category expects at least one candidate"),
    ({"expect": [{"kind": "episode", "field": "traits", "content": "x"}]}, "an episode form has only"),
    ({"expect": [{"kind": "profile", "target": "speaker", "field": "note", "content": "x"}]}, "'field' must be"),
    ({"expect": [{"kind": "profile", "target": "speaker", "field": "traits"}]}, "'content' must be"),
    ({"extra": 1}, "keys must be"),
])
def test_a_malformed_set_is_refused_with_the_item_and_the_problem(tmp_path: Path, change, message):
    item = {"id": "x-1", "lang": "en", "chat": "group", "category": "plan", "text": "we fly on Friday",
            "expect": [{"kind": "episode", "content": "fly"}]}
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"items": [{**item, **change}]}), encoding="utf-8")
    with pytest.raises(SetError, match=message) as caught:
        load_set(path)
    assert "x-1" in str(caught.value)


def test_a_credential_item_must_expect_exactly_the_ignore_candidate(tmp_path: Path):
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"items": [{"id": "c-1", "lang": "en", "chat": "private",
                                           "category": "neg.credential", "text": "my PIN is 1234", "expect": []}]}))
    with pytest.raises(SetError, match="exactly one ignore"):
        load_set(path)


# ---------------------------------------------------------------- the matching rule
def test_key_phrase_tokens_must_appear_in_order_with_other_words_between():
    form = Form("episode", content="moved to Osaka")
    assert form_matches(form, _episode("I moved to Osaka last month"))
    assert not form_matches(form, _episode("Osaka: moved to"))
    assert not form_matches(form, _episode("moved to Kobe"))
    cjk = Form("episode", content="大阪に引っ越")
    assert form_matches(cjk, _episode("先月大阪に引っ越しました"))
    assert not form_matches(cjk, _episode("大阪に行きます"))


def test_kind_target_and_field_must_agree():
    form = Form("profile", SPEAKER, "traits", "Osaka")
    assert form_matches(form, _profile(ProfileField.TRAITS, "lives in Osaka"))
    assert not form_matches(form, _profile(ProfileField.PREFERENCES, "Osaka"))
    assert not form_matches(form, _profile(ProfileField.TRAITS, "Osaka", target=SESSION))
    assert not form_matches(form, _episode("lives in Osaka"))


def test_profile_polarity_must_agree_but_episode_polarity_is_not_checked():
    dislike = Form("profile", SPEAKER, "preferences", "cilantro", negated=True)
    assert form_matches(dislike, _profile(ProfileField.PREFERENCES, "dislikes cilantro"))
    assert form_matches(dislike, _profile(ProfileField.PREFERENCES, "doesn't like cilantro"))
    assert not form_matches(dislike, _profile(ProfileField.PREFERENCES, "cilantro"))
    like = Form("profile", SPEAKER, "preferences", "香菜")
    assert form_matches(like, _profile(ProfileField.PREFERENCES, "喜欢香菜"))
    assert not form_matches(like, _profile(ProfileField.PREFERENCES, "不喜欢香菜"))
    assert form_matches(Form("profile", SPEAKER, "preferences", "パクチー", negated=True),
                        _profile(ProfileField.PREFERENCES, "パクチーが苦手"))
    # A marker inside the key phrase makes the expected value negated by itself.
    assert form_matches(Form("profile", SPEAKER, "traits", "乳糖不耐受"), _profile(ProfileField.TRAITS, "乳糖不耐受"))
    assert form_matches(Form("episode", content="quit smoking"),
                        _episode("I quit smoking in 2021 and haven't touched one since"))


def test_a_name_must_be_the_whole_value_apart_from_an_honorific():
    form = Form("profile", SPEAKER, "name", "Tom")
    assert form_matches(form, _profile(ProfileField.NAME, "tom"))
    assert not form_matches(form, _profile(ProfileField.NAME, "Tom and I"))
    assert form_matches(Form("profile", SPEAKER, "name", "田中"), _profile(ProfileField.NAME, "田中さん"))


def test_ignore_matches_only_the_redacted_text_and_any_matches_any_content():
    assert form_matches(Form("ignore"), ProposedMemory(CandidateKind.IGNORE, "[redacted: looks like a PIN]", "",
                                                       "secret"))
    assert not form_matches(Form("ignore"), ProposedMemory(CandidateKind.IGNORE, "my PIN is 1234", "", "secret"))
    assert form_matches(Form("episode"), _episode("whatever it says"))


def test_matching_is_the_largest_one_to_one_pairing_not_the_first_fit():
    # The first proposal fits both expectations; taking the first fit would leave the second
    # proposal unmatched.
    expect = (Expected((Form("episode"),)), Expected((Form("episode", content="Kyoto"),)))
    produced = [_episode("Kyoto trip next week"), _episode("dinner with the team on Friday")]
    assert matching(expect, produced) == {0: 1, 1: 0}
    assert len(matching(expect[1:], [_episode("Kyoto"), _episode("Kyoto again")])) == 1


def test_score_counts_per_language_kind_category_and_leaks():
    items = [
        Item("a", "en", "group", "life_event", "I moved to Osaka",
             (Expected((Form("episode", content="moved to Osaka"), Form("profile", SPEAKER, "traits", "Osaka"))),)),
        Item("b", "ja", "private", "neg.credential", "パスワードは abc です", (Expected((Form("ignore"),)),)),
        Item("c", "ja", "group", "neg.question", "何時？", ()),
    ]
    scripted = {
        "I moved to Osaka": [_profile(ProfileField.TRAITS, "lives in Osaka"), _episode("moved to Osaka")],
        "パスワードは abc です": [_profile(ProfileField.TRAITS, "パスワードは abc")],
        "何時？": [],
    }
    report = score(items, lambda text: scripted[text])
    en, ja = report.languages["en"], report.languages["ja"]
    assert (en.correct, en.proposed, en.expected, en.found) == (1, 2, 1, 1)  # one of the two forms, not both
    assert (ja.correct, ja.proposed, ja.expected, ja.found) == (0, 1, 1, 0)
    assert report.leaks == ["b"]
    traits = report.kinds["all"]["speaker.traits"]
    assert (traits.proposed, traits.correct) == (2, 1)
    assert report.kinds["all"]["episode"].expected == 1 and report.kinds["all"]["episode"].found == 1
    assert report.categories["ja"]["neg.question"].negatives_with_proposal == 0
    assert report.categories["ja"]["neg.credential"].negatives_with_proposal == 1
    assert [m["id"] for m in report.misses] == ["a", "b"]
