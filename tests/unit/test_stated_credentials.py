"""Japanese credentials and the English forms with no "is" are refused on every write path.

The stated-credential and code rules of `ltm/secrets/` ("パスワードは…です", "暗証番号は…",
"認証コード…", "セキュリティコードは…", "the door code for the office is 4482", "password
Fern!ght42") are the one detector behind `remember`, an import, a profile update and memory
candidates, so each path refuses them the same way: nothing is written, the error names the
kind, and a candidate is only a redacted `ignore` note that never reaches the candidate model.
"""

from __future__ import annotations

import pytest

from ltm import CandidateKind, ValidationError, parse_records
from ltm.secrets import CARD_CODE, ONE_TIME_CODE, PASSWORD, PIN
from tests.unit.support import from_the_message, stored
from tests.unit.test_identity_numbers import nothing_written, setup

# (message, the secret in it, the kind the refusal names)
FORMS = [
    ("Wi-Fiのパスワードはsakura2024です", "sakura2024", PASSWORD),
    ("暗証番号は4829です", "4829", PIN),
    ("認証コード 739201 を入力してください", "739201", ONE_TIME_CODE),
    ("カードのセキュリティコードは381です", "381", CARD_CODE),
    ("the door code for the office is 4482", "4482", PIN),
    ("my password Fern!ght42", "Fern!ght42", PASSWORD),
]
IDS = ["ja-password", "ja-pin", "ja-one-time-code", "ja-card-code", "en-door-code", "en-bare-password"]


@pytest.mark.parametrize(("text", "secret", "kind"), FORMS, ids=IDS)
async def test_remember_names_the_kind_and_writes_nothing(text: str, secret: str, kind: str) -> None:
    fake, memory, scope = await setup()
    for fields in ({"content": text}, {"content": "a walk by the river", "tags": [text]},
                   {"content": "a walk by the river", "source_ref": text}):
        with pytest.raises(ValidationError, match=f"looks like {kind}") as refused:
            await memory.remember(scope, fields)
        assert secret not in str(refused.value)
    assert nothing_written(fake, scope)


@pytest.mark.parametrize(("text", "secret", "kind"), FORMS, ids=IDS)
async def test_an_import_holding_one_is_refused_before_anything_is_written(text: str, secret: str, kind: str) -> None:
    fake, memory, scope = await setup()
    with pytest.raises(ValidationError, match="episode #3: refused: .*nothing was imported") as refused:
        parse_records([{"content": "a walk by the river"}, {"content": "tea at five"}, {"content": text}],
                      source="import")
    assert secret not in str(refused.value)
    assert nothing_written(fake, scope)


@pytest.mark.parametrize(("text", "secret", "kind"), FORMS, ids=IDS)
async def test_a_profile_value_holding_one_is_refused(text: str, secret: str, kind: str) -> None:
    fake, memory, scope = await setup()
    for target, change in (("speaker", {"preferences": [text]}), ("session", {"notes": text})):
        with pytest.raises(ValidationError, match=f"looks like {kind}"):
            await memory.update_profile(scope, target, change)
    assert fake.calls.count("store.set") == 0


@pytest.mark.parametrize(("text", "secret", "kind"), FORMS, ids=IDS)
async def test_a_candidate_is_only_the_redacted_note_and_no_model_sees_the_text(text: str, secret: str,
                                                                                 kind: str) -> None:
    for model in ("", "llm-candidates"):
        fake, memory, scope = await setup(candidate_model_uuid=model)
        run = await memory.propose_candidates(scope, text)
        (note,) = run.added
        assert (note.kind, note.content, note.evidence) == (CandidateKind.IGNORE, f"[redacted: looks like {kind}]", "")
        assert run.auto_applied == [] and secret not in from_the_message(note)
        assert fake.llm.requests == [] and stored(fake, scope) == {}
