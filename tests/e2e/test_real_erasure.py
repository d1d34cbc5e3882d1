"""A person's erasure leaves no trace in what the plugin keeps, inside a real LangBot 4.11.2 (issue 35).

Erin speaks in the debug group chat (two memories and a speaker profile, with words of her own); Bob
then asks about one of them, so the group's injection snapshot quotes her. After the console's person
erase, LangBot's own database is read on disk: no row of `binary_storages` (the plugin storage) and no
live row of the Chroma store (`chroma.sqlite3`: metadata and full-text rows) holds her sender id or her
words, while Bob's memory is still there. LangBot's own message and monitoring tables still hold what
was said in the chat: that is the host's, not the plugin's (docs/GUARANTEES.md, "What an erasure
removes, and what it cannot").
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from tests.e2e.test_real_langbot import remember, turn, unique


def rows_holding(database: Path, words: list[str], tables: tuple[str, ...]) -> list[str]:
    """`table: value` for every text or blob cell of `tables` that holds one of `words` (read-only)."""
    found: list[str] = []
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        present = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table in tables:
            if table not in present:
                continue
            for row in db.execute(f'SELECT * FROM "{table}"'):  # the table names are the constants above
                for cell in row:
                    text = cell.decode("utf-8", "replace") if isinstance(cell, bytes) else str(cell)
                    if any(w.casefold() in text.casefold() for w in words):
                        found.append(f"{table}: {text[:120]}")
    return found


def test_a_persons_erasure_leaves_nothing_in_langbots_database_or_its_chroma_store(e2e: Any) -> None:
    data = e2e.stack.home / "data"
    langbot_db, chroma_db = data / "langbot.db", data / "chroma" / "chroma.sqlite3"
    marmalade, orrery, juggler, drum = (unique(w) for w in ("marmalade", "orrery", "juggler", "drum"))
    with e2e.chat("group") as erin:
        sender = erin.sender_id
        remember(e2e, erin, f"the {marmalade} marmalade is in the blue tin")
        remember(e2e, erin, f"the {orrery} orrery is fixed on Tuesdays")
        turn(e2e, erin, f"!memory profile set traits {juggler} --me")
    with e2e.chat("group") as bob:
        kept = remember(e2e, bob, f"the {drum} drum is blue")
        turn(e2e, bob, f"where is the {marmalade} marmalade?")  # the group's snapshot quotes Erin's memory
        marks = [sender, marmalade, orrery, juggler]
        storage, store = ("binary_storages",), ("embedding_metadata", "embedding_fulltext_search_content")
        assert rows_holding(langbot_db, marks, storage) and rows_holding(chroma_db, marks, store)

        result = e2e.client.page_api("/person/erase", {"sender_id": sender, "dry_run": False})
        assert result["ok"] and result["counts"]["episodes"] == 2 and result["failed"] == [], result
        assert result["counts"]["snapshots"] >= 1, result

        assert rows_holding(langbot_db, marks, storage) == []
        assert rows_holding(chroma_db, marks, store) == []
        assert rows_holding(chroma_db, [drum], store)  # Bob's memory stays
        listed, _ = turn(e2e, bob, "!memory list")
        assert kept in listed, listed
