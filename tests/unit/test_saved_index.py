"""The space index saved in plugin storage (ltm/episodes/index_pages.py): a restart loads it instead of
paging the space, and a saved index that is out of date, half written or damaged is never used: it
is detected and built again from the store, so it can neither hide nor invent a record."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ltm import MemoryScope, MemoryService
from ltm.episodes import index_pages, space_index
from ltm.episodes.lexical import LexicalIndexes
from ltm.episodes.lifecycle import DeleteCriteria
from ltm.episodes.model import EpisodeStatus
from ltm.episodes.terms import tokenize
from ltm.errors import HostError, OutcomeUnknown
from ltm.ports import IndexRecord
from testhost.hooks import index_space, top
from testhost.memory_ports import InMemoryPorts, StoredVector
from tests.unit.support import ident, import_many, kv_json, memory_with_kb, remember

SIZE = 260  # above one first page (200): such a space is indexed in the background and saved


def lexical(memory: MemoryService) -> LexicalIndexes:
    return memory.parts.episodes._lexical  # white-box on purpose: what was built, loaded, saved


def saved_keys(fake: InMemoryPorts) -> list[str]:
    return [k for k in fake.store.data if k.startswith("v2/wordindex/")]


def head_key(fake: InMemoryPorts) -> str:
    (key,) = [k for k in fake.store.data if k.startswith("v2/wordindex/") and k.endswith("/head")]
    return key


async def filled(fake: InMemoryPorts) -> tuple[MemoryService, MemoryScope, list[Any]]:
    memory = await memory_with_kb(fake)
    scope = await memory.scope_for(ident())
    items = [{"content": f"note {n} about the quarterly budget", "sender_id": "bob", "sender_name": "Bob"}
             for n in range(SIZE)]
    items.append({"content": "the zebracorn stickers are in the top drawer", "sender_id": "bob", "tags": ["drawer"]})
    episodes = await import_many(memory, scope, items)
    await index_space(memory, scope)  # built from the store, then saved at once
    return memory, scope, episodes


async def restarted(fake: InMemoryPorts, scope: MemoryScope) -> MemoryService:
    """A new plugin process on the same host: nothing in memory, the storage and the store as they are."""
    memory = MemoryService(fake.ports)
    await index_space(memory, scope)
    return memory


async def word_hit(memory: MemoryService, scope: MemoryScope, k: int = 1) -> list[str]:
    return [h.episode.content for h in await memory.recall(scope, "where is the zebracorn", recipe=top(k))]


async def test_a_restart_loads_the_saved_index_instead_of_reading_the_space(fake: InMemoryPorts) -> None:
    first, scope, _ = await filled(fake)
    assert (lexical(first).builds, kv_json(fake, head_key(fake))["state"]) == (1, "clean")
    fake.calls.reset()
    memory = await restarted(fake, scope)
    assert (lexical(memory).loads, lexical(memory).builds) == (1, 0)
    # The head, its one page, and one page of the store to compare with: not the whole space.
    saved_reads = [c for c in fake.calls.of("store.get") if c.args["key"].startswith("v2/wordindex/")]
    assert fake.calls.count("index.page") == 1 and len(saved_reads) == 2
    assert await word_hit(memory, scope) == ["the zebracorn stickers are in the top drawer"]
    listed = await memory.list_episodes(scope, page=1, page_size=SIZE + 1)
    assert listed.total == SIZE + 1


@pytest.mark.parametrize("change", ["remember", "archive", "forget"])
async def test_a_change_after_the_save_makes_the_saved_index_stale(fake: InMemoryPorts, change: str) -> None:
    first, scope, episodes = await filled(fake)
    target = episodes[-1]
    lexical(first).save_delay = 3600.0  # the change is not saved again before the "restart"
    if change == "remember":
        await remember(first, scope, "a second zebracorn sheet went to the archive box")
    elif change == "archive":
        await first.archive(scope, target.episode_id)
    else:
        await first.forget(scope, target.episode_id)
    if change == "forget":  # a delete removes the saved index (its pages hold the record's words)
        assert saved_keys(fake) == []
    else:
        assert kv_json(fake, head_key(fake))["state"] == "stale"
    memory = await restarted(fake, scope)
    assert (lexical(memory).loads, lexical(memory).builds) == (0, 1)  # read from the store again
    hits = [h.episode.episode_id for h in await memory.recall(scope, "zebracorn", recipe=top(5))]
    on_store = {r.record_id: r.fields.get("status") for r in fake.index.records(scope.kb_id, scope.space_key)}
    assert all(on_store.get(i) == "active" for i in hits)
    assert (target.episode_id in hits) == (change == "remember")


async def test_the_index_is_saved_again_after_the_changes(fake: InMemoryPorts) -> None:
    first, scope, episodes = await filled(fake)
    lexical(first).save_delay = 0.0
    await first.archive(scope, episodes[-1].episode_id)
    await lexical(first).settled()
    assert kv_json(fake, head_key(fake))["state"] == "clean"
    memory = await restarted(fake, scope)
    assert lexical(memory).loads == 1
    assert "the zebracorn stickers are in the top drawer" not in await word_hit(memory, scope)  # archived
    index = lexical(memory).loaded(scope.l2)
    assert index is not None and index.status(episodes[-1].episode_id) is EpisodeStatus.ARCHIVED


@pytest.mark.parametrize("fault", [HostError("refused"), OutcomeUnknown("no answer")])
async def test_a_write_is_refused_when_the_saved_index_cannot_be_marked_stale(fake: InMemoryPorts,
                                                                              fault: Exception) -> None:
    first, scope, _ = await filled(fake)
    key = head_key(fake)
    before = fake.state().index
    fake.faults.fail("store.set", fault, where=lambda call: call.args["key"] == key)
    with pytest.raises(HostError):
        await remember(first, scope, "this must not be written while the saved index looks current")
    assert fake.state().index == before  # nothing reached the vector store
    assert await first.list_fences() == []  # an authoritative refusal: nothing to fence


async def test_a_save_cut_short_leaves_no_usable_half(fake: InMemoryPorts) -> None:
    first, scope, _ = await filled(fake)
    key = head_key(fake)
    lexical(first).save_delay = 0.0
    # The next save writes its page, then the head: the head write is lost.
    fake.faults.fail("store.set", OutcomeUnknown("no answer"), where=lambda call: call.args["key"] == key, skip=1)  # the first head write marks the head stale before the change
    added = await remember(first, scope, "a zebracorn postcard from the fair")
    await lexical(first).settled()
    memory = await restarted(fake, scope)
    # Either the new generation is complete and named (saved) or the old head stays stale: never a mix.
    hits = [h.episode.episode_id for h in await memory.recall(scope, "zebracorn postcard", recipe=top(3))]
    assert added.episode_id in hits
    assert lexical(memory).loads + lexical(memory).builds == 1


def saved_page(fake: InMemoryPorts) -> str:
    head = kv_json(fake, head_key(fake))
    return head_key(fake).removesuffix("head") + f"{head['generation']}/0"


async def test_a_damaged_or_foreign_page_is_not_loaded(fake: InMemoryPorts) -> None:
    _, scope, _ = await filled(fake)
    fake.store.data[saved_page(fake)] = b'{"generation": 99, "page": 0, "rows": []}'
    memory = await restarted(fake, scope)
    assert (lexical(memory).loads, lexical(memory).builds) == (0, 1)
    fake.store.data[saved_page(fake)] = b"not json"  # (the rebuild saved a new generation)
    memory = await restarted(fake, scope)
    assert (lexical(memory).loads, lexical(memory).builds) == (0, 1)
    assert await word_hit(memory, scope) == ["the zebracorn stickers are in the top drawer"]


async def test_a_saved_index_that_disagrees_with_the_store_is_rebuilt(fake: InMemoryPorts) -> None:
    """The store changed behind the plugin's back (say, restored from a backup): the first page the store
    lists holds a record the saved index does not know."""
    _, scope, _ = await filled(fake)
    (sample,) = [r for r in fake.index.records(scope.kb_id, scope.space_key) if "zebracorn" in r.text]
    rows = fake.index.kbs[scope.kb_id]
    first = next(iter(rows))
    stored = rows[first]
    # Replace the first listed record by another one the saved index never saw.
    changed = IndexRecord("00000000-0000-4000-8000-0000000000aa", stored.record.space_key, "bob",
                          "a zebracorn badge nobody saved", {**stored.record.fields, "content": "a zebracorn badge "
                                                             "nobody saved", "episode_id":
                                                             "00000000-0000-4000-8000-0000000000aa"})
    replaced = {changed.record_id: StoredVector(changed, stored.vector, stored.norm)}
    replaced.update((k, v) for k, v in rows.items() if k != first)
    fake.index.kbs[scope.kb_id] = replaced
    memory = await restarted(fake, scope)
    assert (lexical(memory).loads, lexical(memory).builds) == (0, 1)
    index = lexical(memory).loaded(scope.l2)
    assert index is not None and changed.record_id in index and first not in index and sample.record_id in index


async def test_a_record_the_store_lost_is_never_recalled_or_listed(fake: InMemoryPorts) -> None:
    """A record the index holds and the store does not (the index is out of date): recall and listings
    read every record they hand on from the store, so it is left out, and the index corrected."""
    memory, scope, episodes = await filled(fake)
    target = episodes[-1]
    del fake.index.kbs[scope.kb_id][target.episode_id]  # behind the plugin's back
    assert await word_hit(memory, scope) != ["the zebracorn stickers are in the top drawer"]
    index = lexical(memory).loaded(scope.l2)
    assert index is not None and target.episode_id not in index
    await lexical(memory).settled()
    page = await memory.list_episodes(scope, page=1, page_size=SIZE + 1)
    assert target.episode_id not in {e.episode_id for e in page.episodes} and page.total == SIZE


async def test_removing_the_kb_removes_its_saved_indexes_before_it_reports_done(fake: InMemoryPorts) -> None:
    memory, scope, _ = await filled(fake)
    assert saved_keys(fake)
    await memory.unregister_kb(scope.kb_id)
    assert saved_keys(fake) == []  # inside the removal, not by a clean-up that a stop could cut short
    await lexical(memory).settled()
    assert saved_keys(fake) == []


def words_in_storage(fake: InMemoryPorts, words: str) -> list[str]:
    return [k for k, v in fake.store.data.items() if words.encode() in v]


@pytest.mark.parametrize("how", ["forget", "bulk delete", "person erase"])
async def test_a_delete_leaves_no_saved_page_holding_the_deleted_words(fake: InMemoryPorts, how: str) -> None:
    """Issue 35, finding 3: the saved pages held a deleted record's text until the next save (30 s after
    the write), or for good when the plugin stopped first. Now the delete removes them before it returns,
    abandoned saves' unnamed pages included, and the next save writes the rest again."""
    _, scope, episodes = await filled(fake)
    target = episodes[-1]
    head = kv_json(fake, head_key(fake))
    orphan = head_key(fake).removesuffix("head") + f"{head['generation'] + 1}/0"  # a save cut short left it
    fake.store.data[orphan] = fake.store.data[saved_page(fake)]
    assert words_in_storage(fake, "zebracorn stickers")
    first = MemoryService(fake.ports)  # the next process, before it has used the space
    lexical(first).save_delay = 3600.0  # it stops before its next save
    if how == "forget":
        await first.forget(scope, target.episode_id)
    elif how == "bulk delete":
        await first.bulk_delete(scope, DeleteCriteria(tag="drawer"))
    else:
        await first.erase_person("bob", dry_run=False)
    assert words_in_storage(fake, "zebracorn stickers") == []
    assert saved_keys(fake) == []
    memory = await restarted(fake, scope)  # the next process builds the space from the store
    assert (lexical(memory).loads, lexical(memory).builds) == (0, 1)
    assert await word_hit(memory, scope) != ["the zebracorn stickers are in the top drawer"]


async def test_the_next_save_after_a_delete_holds_the_other_records(fake: InMemoryPorts) -> None:
    first, scope, episodes = await filled(fake)
    lexical(first).save_delay = 0.0
    await first.forget(scope, episodes[-1].episode_id)
    await lexical(first).settled()
    assert kv_json(fake, head_key(fake))["state"] == "clean"
    assert words_in_storage(fake, "zebracorn stickers") == []
    memory = await restarted(fake, scope)
    assert lexical(memory).loads == 1
    index = lexical(memory).loaded(scope.l2)
    assert index is not None and len(index) == SIZE


@pytest.mark.parametrize("fault", [HostError("refused"), OutcomeUnknown("no answer")])
async def test_a_delete_is_refused_when_the_saved_pages_cannot_be_removed(fake: InMemoryPorts,
                                                                          fault: Exception) -> None:
    first, scope, episodes = await filled(fake)
    before = fake.state().index
    fake.faults.fail("store.delete", fault, where=lambda call: call.args["key"].startswith("v2/wordindex/"))
    with pytest.raises(HostError):
        await first.forget(scope, episodes[-1].episode_id)
    assert fake.state().index == before  # the record is still there: the caller may try again


async def test_small_spaces_are_not_saved(fake: InMemoryPorts) -> None:
    memory = await memory_with_kb(fake)
    scope = await memory.scope_for(ident())
    await import_many(memory, scope, [{"content": f"note {n}"} for n in range(20)])
    await index_space(memory, scope)
    await lexical(memory).settled()
    assert not any(k.startswith("v2/wordindex/") for k in fake.store.data)


async def test_a_saved_index_of_another_format_is_built_again(fake: InMemoryPorts) -> None:
    """A head written by another version of the plugin (its rows laid out otherwise) is never read."""
    _, scope, _ = await filled(fake)
    head = kv_json(fake, head_key(fake))
    fake.store.data[head_key(fake)] = json.dumps({**head, "format": index_pages.FORMAT + 1}).encode()
    memory = await restarted(fake, scope)
    assert (lexical(memory).loads, lexical(memory).builds) == (0, 1)
    assert await word_hit(memory, scope) == ["the zebracorn stickers are in the top drawer"]
    assert kv_json(fake, head_key(fake))["format"] == index_pages.FORMAT  # saved again in this format


async def test_a_tokenizer_change_needs_no_rebuild_the_load_tokenizes_again(fake: InMemoryPorts,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages hold the records' fields, never postings: a process whose tokenizer differs from the one that
    saved (new stems, stopwords) posts every loaded record with its own, so no word is found by old rules."""
    _, scope, episodes = await filled(fake)
    target = episodes[-1]
    monkeypatch.setattr(space_index, "tokenize", lambda text: [w[::-1] for w in tokenize(text)])  # "another tokenizer"
    memory = await restarted(fake, scope)
    assert (lexical(memory).loads, lexical(memory).builds) == (1, 0)
    index = lexical(memory).loaded(scope.l2)
    assert index is not None
    (word,) = tokenize("zebracorn")
    assert target.episode_id in index.scores([word[::-1]])  # posted by the new rules
    assert index.scores([word]) == {}  # and not by the old ones


async def test_writes_while_the_saved_index_loads_are_replayed_not_rebuilt(fake: InMemoryPorts) -> None:
    """A restart: the first turn starts loading the saved pages, and the bot remembers before the load is
    done. The write is replayed onto the loaded index (the plugin is the only writer), so the space is
    whole at once instead of being paged out of the store again. (A delete is different: it removes the
    saved pages first, so no page keeps deleted words, and the index is then built from the store: the
    next test.)"""
    _, scope, _ = await filled(fake)
    page = fake.faults.pause("store.get", where=lambda call: call.args["key"] == saved_page(fake))
    memory = MemoryService(fake.ports)
    lexical(memory).save_delay = 0.0
    await memory.recall(scope, "zebracorn")  # starts the load in the background, does not wait for it
    await page.wait_reached()
    added = await remember(memory, scope, "a zebracorn lamp for the hallway")
    page.release()
    await lexical(memory).settled()
    assert (lexical(memory).loads, lexical(memory).builds) == (1, 0)
    index = lexical(memory).loaded(scope.l2)
    assert index is not None and added.episode_id in index
    # The replayed record is found by its word (it and the stickers score within a hair of each other).
    assert "a zebracorn lamp for the hallway" in await word_hit(memory, scope, k=2)
    assert kv_json(fake, head_key(fake))["state"] == "clean"  # saved again after the replayed writes
    again = await restarted(fake, scope)
    assert (lexical(again).loads, lexical(again).builds) == (1, 0)
    assert added.episode_id in (lexical(again).loaded(scope.l2) or ())


async def test_a_delete_while_the_saved_index_loads_removes_the_pages_and_builds_from_the_store(
        fake: InMemoryPorts) -> None:
    _, scope, episodes = await filled(fake)
    page = fake.faults.pause("store.get", where=lambda call: call.args["key"] == saved_page(fake))
    memory = MemoryService(fake.ports)
    lexical(memory).save_delay = 3600.0  # no save after the delete within the test
    await memory.recall(scope, "zebracorn")
    await page.wait_reached()
    await memory.forget(scope, episodes[-1].episode_id)
    assert not [k for k in fake.store.data if k.startswith("v2/wordindex/")]  # no page keeps its words
    page.release()
    await lexical(memory).settled()
    assert lexical(memory).builds == 1
    index = lexical(memory).loaded(scope.l2)
    assert index is not None and episodes[-1].episode_id not in index and len(index) == len(episodes) - 1


async def test_a_write_in_doubt_while_the_saved_index_loads_makes_it_a_build(fake: InMemoryPorts) -> None:
    _, scope, _ = await filled(fake)
    page = fake.faults.pause("store.get", where=lambda call: call.args["key"] == saved_page(fake))
    memory = MemoryService(fake.ports)
    await memory.recall(scope, "zebracorn")
    await page.wait_reached()
    fake.faults.fail("index.upsert", OutcomeUnknown("no answer"), after_apply=True)
    with pytest.raises(OutcomeUnknown):
        await remember(memory, scope, "a zebracorn mug, maybe written")
    page.release()
    await lexical(memory).settled()
    assert (lexical(memory).loads, lexical(memory).builds) == (0, 1)  # what the store holds decides
    index = lexical(memory).loaded(scope.l2)
    on_store = {r.record_id for r in fake.index.records(scope.kb_id, scope.space_key)}
    assert index is not None and set(index.ids()) == on_store
