import pytest

from ltm.errors import ValidationError
from ltm.identity import Identity, Isolation, MemoryScope, user_key_for
from ltm.langbot.identity import identity_from_retrieval, split_session_name


def test_session_keys_with_and_without_bot():
    ident = Identity.build(launcher_type="group", launcher_id=123, bot_uuid="b1", sender_id=42)
    assert ident.session_name == "group_123"
    assert ident.session_key == "b1:group_123"
    no_bot = Identity.build(launcher_type="person", launcher_id="u9", bot_uuid=None)
    assert no_bot.session_key == "person_u9"


def test_user_key_by_isolation_mode():
    ident = Identity.build(launcher_type="group", launcher_id="g", bot_uuid="b1")
    assert user_key_for(ident, Isolation.SESSION) == "b1:group_g"
    assert user_key_for(ident, "bot") == "bot:b1"


def test_bot_mode_without_bot_uuid_falls_back_to_session_space():
    ident = Identity.build(launcher_type="group", launcher_id="g", bot_uuid="")
    assert user_key_for(ident, Isolation.BOT) == "group_g"


@pytest.mark.parametrize("raw", [None, 0, "0", "", "  "])
def test_empty_sender_means_unknown(raw):
    ident = Identity.build(launcher_type="group", launcher_id="g", sender_id=raw)
    scope = MemoryScope.for_identity(ident, "session")
    assert scope.sender_id == ""


def test_launcher_type_is_validated():
    with pytest.raises(ValidationError):
        Identity.build(launcher_type="channel", launcher_id="x")
    with pytest.raises(ValidationError):
        Identity.build(launcher_type="group", launcher_id="")


def test_retrieval_settings_identity():
    assert split_session_name("group_a_b") == ("group", "a_b")
    assert split_session_name("nonsense") is None
    ident = identity_from_retrieval({"session_name": "person_7", "bot_uuid": "b", "sender_id": "7"})
    assert ident is not None and ident.session_key == "b:person_7" and ident.sender_id == "7"
    assert identity_from_retrieval({"top_k": 5}) is None
