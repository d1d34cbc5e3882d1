import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ltm.errors import ValidationError
from ltm.host_values import (
    MAX_ID_CHARS,
    MAX_NAME_CHARS,
    clean_host_text,
    clean_name,
    escape_bot_uuid,
    escape_id,
    has_stray_characters,
    id_problem,
    unescape_id,
)
from ltm.identity import (
    Identity,
    Isolation,
    MemoryScope,
    clean_id,
    derived_pair_problem,
    space_key_for,
    split_chat_key,
)
from ltm.langbot.identity import identity_from_retrieval, split_session_name


def test_session_keys_with_and_without_bot():
    ident = Identity.build(launcher_type="group", launcher_id=123, bot_uuid="b1", sender_id=42)
    assert ident.session_name == "group_123"
    assert ident.chat_key == "b1:group_123"
    no_bot = Identity.build(launcher_type="person", launcher_id="u9", bot_uuid=None)
    assert no_bot.chat_key == "person_u9"


def test_derived_pairs_are_exactly_the_plugins_keys_of_one_chat():
    """The console's one space check (issue 21, finding 3): a pair selects a space only when it is the
    pair the plugin derives for one chat in the KB's isolation mode."""
    hostile = Identity.from_host(launcher_type="group", launcher_id="g\u202e1", bot_uuid="bot-1")
    for chat in (Identity.build(launcher_type="group", launcher_id="g1", bot_uuid="bot-1"),
                 Identity.build(launcher_type="person", launcher_id="p:1", bot_uuid="bot-1"),
                 Identity.build(launcher_type="group", launcher_id="g1"), hostile):
        for isolation in Isolation:
            assert derived_pair_problem(chat.chat_key, space_key_for(chat, isolation), isolation) is None
    assert "is not the key this plugin derives" in str(derived_pair_problem("bot-1:group_g1", "bot-1:group_g2",
                                                                            "session"))
    assert "(bot:bot-1)" in str(derived_pair_problem("bot-1:group_g1", "bot-1:group_g1", "bot"))
    for not_a_chat in ("bot-1:anything", "bot-1:group_", "bot-1:group_g\u202e1", "nobody", ""):
        assert "scope_key is not a chat's key" in str(derived_pair_problem(not_a_chat, not_a_chat, "session"))


def test_user_key_by_isolation_mode():
    ident = Identity.build(launcher_type="group", launcher_id="g", bot_uuid="b1")
    assert space_key_for(ident, Isolation.SESSION) == "b1:group_g"
    assert space_key_for(ident, "bot") == "bot:b1"


def test_bot_mode_without_bot_uuid_falls_back_to_session_space():
    ident = Identity.build(launcher_type="group", launcher_id="g", bot_uuid="")
    assert space_key_for(ident, Isolation.BOT) == "group_g"


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
    assert ident is not None and ident.chat_key == "b:person_7" and ident.sender_id == "7"
    assert identity_from_retrieval({"top_k": 5}) is None


# ----------------------------------------------------------------- the boundary rule for host values

hostile_text = st.text(alphabet=st.characters() | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=60) | st.sampled_from([
    "Zed \ud83d", "\ud83d", "\x00", "g1\x00", "a\u202eb", "a\u2028b", "\ufffd", "\ufffd0041", "A", "g1:0",
    "group_x", "person_", ":", "x" * 400, "\x85", "\t", "\ufffd#" + "0" * 64,
])


@settings(max_examples=300, derandomize=True, database=None)
@given(hostile_text, hostile_text)
def test_escaped_ids_never_collide_and_read_back(a, b):
    assert unescape_id(escape_id(a)) == a or len(escape_id(a)) > 170  # hashed ids do not read back
    assert unescape_id(escape_bot_uuid(a)) == a or len(escape_bot_uuid(a)) > 170
    if a != b:
        assert escape_id(a) != escape_id(b)
        assert escape_bot_uuid(a) != escape_bot_uuid(b)
    for kept in (escape_id(a), escape_bot_uuid(a)):
        assert len(kept) <= MAX_ID_CHARS
        kept.encode("utf-8")  # storable: no lone surrogate survives
        assert not has_stray_characters(kept)
    assert id_problem(escape_bot_uuid(a), "bot_uuid", bot=True) is None


@settings(max_examples=300, derandomize=True, database=None)
@given(hostile_text, hostile_text, st.sampled_from(["group", "person"]), hostile_text, hostile_text,
       st.sampled_from(["group", "person"]))
def test_different_host_places_never_share_a_session_key(bot_a, id_a, kind_a, bot_b, id_b, kind_b):
    assume(id_a.strip() and id_b.strip())
    a = Identity.from_host(launcher_type=kind_a, launcher_id=id_a, bot_uuid=bot_a)
    b = Identity.from_host(launcher_type=kind_b, launcher_id=id_b, bot_uuid=bot_b)
    if a.chat_key == b.chat_key:
        assert (a.bot_uuid, kind_a, a.launcher_id) == (b.bot_uuid, kind_b, b.launcher_id)
        assert (clean_id(bot_a), id_a) == (clean_id(bot_b), id_b)
    if a.bot_uuid and space_key_for(a, "bot") == space_key_for(b, "session"):  # without a bot: its own space
        pytest.fail(f"bot-shared key {space_key_for(a, 'bot')!r} is also a session key")
    assert split_chat_key(a.chat_key) == (a.bot_uuid, a.session_name)


def test_ordinary_ids_are_kept_exactly():
    for raw in ("g1", "123456789", "wxid_abc-1", "群:聊", "my group", "Ｇ1", "g1\u200b", "u:1", "%41", "s" * 200,
                "0f3c2a4e-9d4b-4c1e-8f7a-1b2c3d4e5f60"):
        assert escape_id(raw) == raw
    assert escape_bot_uuid("0f3c2a4e-9d4b-4c1e-8f7a-1b2c3d4e5f60") == "0f3c2a4e-9d4b-4c1e-8f7a-1b2c3d4e5f60"


def test_white_space_at_the_ends_of_an_id_is_escaped_so_stripping_cannot_merge_chats():
    assert escape_id("g1 ") == "g1\ufffd0020" and escape_id(" g1") == "\ufffd0020g1"
    assert escape_id("\u3000g 1\u00a0") == "\ufffd3000g 1\ufffd00A0"
    assert {escape_id(raw).strip() for raw in ("g1", "g1 ", " g1", "g1\t")} == {
        "g1", "g1\ufffd0020", "\ufffd0020g1", "g1\ufffd0009"}
    with pytest.raises(ValidationError, match="launcher_id is required"):
        Identity.from_host(launcher_type="group", launcher_id=" \t ")


def test_bot_uuids_that_look_like_key_parts_are_escaped():
    # Without it (bot "a:group_x", group "y") and (bot "a", group "x:group_y") shared one session key,
    # and bot "group_1" read back as a session without a bot.
    one = Identity.from_host(launcher_type="group", launcher_id="y", bot_uuid="a:group_x")
    two = Identity.from_host(launcher_type="group", launcher_id="x:group_y", bot_uuid="a")
    assert one.chat_key != two.chat_key
    three = Identity.from_host(launcher_type="group", launcher_id="x", bot_uuid="group_1")
    four = Identity.from_host(launcher_type="group", launcher_id="1:group_x")
    assert three.chat_key != four.chat_key
    assert split_chat_key(three.chat_key)[0] == three.bot_uuid != ""


def test_display_names_are_cleaned_and_bounded():
    assert clean_name("Zed \ud83d") == "Zed \ufffd"
    assert clean_name("Ann\x00\nB\u2028\u202eob") == "Ann B ob"
    assert clean_name("  x\t\ty  ") == "x y"
    assert len(clean_name("n" * 10_000)) == MAX_NAME_CHARS
    ident = Identity.from_host(launcher_type="group", launcher_id="g", sender_id="u", sender_name="Zed \ud83d\x00")
    assert ident.sender_name == "Zed \ufffd"


def test_host_texts_keep_their_words():
    assert clean_host_text("I like \ud83d tea\x00\x07 a\u2028b\tc\r\n") == "I like \ufffd tea a\nb\tc\r\n"
    assert clean_host_text(None) == ""


@pytest.mark.parametrize("field, value", [
    ("launcher_id", "g\x00"), ("sender_id", "u\ud83d"), ("bot_uuid", "b:1"), ("bot_uuid", "group_b"),
    ("sender_name", "a\u202eb"), ("launcher_id", "g\ufffd"),
])
def test_values_that_skipped_the_boundary_are_refused(field, value):
    fields = {"launcher_type": "group", "launcher_id": "g", "bot_uuid": "b", "sender_id": "u", "sender_name": "n"}
    with pytest.raises(ValidationError):
        Identity.build(**{**fields, field: value})
    Identity.from_host(**{**fields, field: value})  # the same value from the host is taken


def test_scope_keys_with_stray_characters_are_refused():
    with pytest.raises(ValidationError, match="scope_key contains"):
        MemoryScope(chat_key="b:group_\ud83d", space_key="b:group_x")
    with pytest.raises(ValidationError, match="user_key contains"):
        MemoryScope(chat_key="b:group_x", space_key="bot:\x00")
