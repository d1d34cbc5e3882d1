"""The extractor (`scripts/export_official.py`) on an installation holding unusual rows (issue 43, point 12):
a speaker id with ':' lands in its own chat, an odd row is left out with a line saying so (never a
traceback), a value nested too deeply for a bundle is left out and the rest kept, half a UTF-16 pair
stays an escape, and a run that fails leaves no bundle at all, never a 0-byte one."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import official_install as oi

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import export_official


def _installation(tmp_path: Path, rows: dict[str, Any], raw: dict[str, bytes] | None = None,
                  kb: dict[str, str] | None = None) -> Path:
    root = oi.build(tmp_path / "install", "chroma")
    db = sqlite3.connect(root / "data" / "langbot.db")
    values = {key: json.dumps(value).encode() for key, value in rows.items()} | (raw or {})
    for key, value in values.items():
        db.execute("DELETE FROM binary_storages WHERE key = ? AND owner = ?", (key, oi.PLUGIN))
        db.execute("INSERT INTO binary_storages (workspace_uuid, unique_key, key, owner_type, owner, value) "
                   "VALUES (?, ?, ?, 'plugin', ?, ?)", (oi.WORKSPACE, f"x:{key}", key, oi.PLUGIN, value))
    for column, value in (kb or {}).items():
        db.execute(f"UPDATE knowledge_bases SET {column} = ? WHERE uuid = ?", (value, oi.KB))
    db.commit()
    db.close()
    return root


def _run(root: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = export_official.main(["--langbot-dir", str(root), "--out", str(out)])
    return code, capsys.readouterr().err


def _nested(depth: int) -> Any:
    value: Any = "deep"
    for _ in range(depth):
        value = [value]
    return value


def test_a_speaker_id_holding_a_colon_lands_in_its_own_chat(tmp_path, capsys):
    profile = oi._profile("Cy", ["likes maps"])
    rows = {f"pp:{oi.BOT}:group_5:matrix:cy": profile,  # a chat with no other row, a sender id with ':'
            f"pp:{oi.BOT}:person_a:b:a:b": profile}  # a private chat's speaker is its own id
    code, err = _run(_installation(tmp_path, rows), tmp_path / "bundle.json", capsys)
    assert code == 0, err
    chats = {c["key"]: c for c in json.loads((tmp_path / "bundle.json").read_text())["chats"]}
    assert [p["sender_id"] for p in chats[f"{oi.BOT}:group_5"]["profiles"]] == ["matrix:cy"]
    assert [p["sender_id"] for p in chats[f"{oi.BOT}:person_a:b"]["profiles"]] == ["a:b"]


def test_unusual_rows_are_left_out_with_a_line_each_and_the_rest_exported(tmp_path, capsys):
    rows = {f"audit:{oi.G3}": [{"audit_id": "a9", "operation": "remember"}, _nested(150)],
            "kb_configs": {oi.KB: ["not", "an object"]}}  # so the KB row's own settings are read
    raw = {f"candidates:{oi.G3}": b"[" * 5000 + b"]" * 5000, f"ps:{oi.G3}": b"\xff not utf-8"}
    kb = {"creation_settings": "[1, 2]", "retrieval_settings": "not json"}
    code, err = _run(_installation(tmp_path, rows, raw, kb), tmp_path / "bundle.json", capsys)
    assert code == 0 and "Traceback" not in err, err
    assert "creation_settings is not a JSON object" in err and "retrieval_settings is not JSON" in err
    assert f"candidates:{oi.G3}" in err and "nested more than 100 levels" in err, err
    bundle = json.loads((tmp_path / "bundle.json").read_text())
    chats = {c["key"]: c for c in bundle["chats"]}
    assert chats[oi.G3]["audit"] == [{"audit_id": "a9", "operation": "remember"}]
    assert len(chats[oi.G1]["episodes"]) == 6  # everything else is there


def test_half_a_utf16_pair_is_written_as_its_escape_and_the_bundle_imports(tmp_path, capsys):
    raw = {f"ps:{oi.G3}": b'{"name": "", "notes": "half a pair \\ud800 here", "traits": [], "preferences": []}'}
    code, err = _run(_installation(tmp_path, {}, raw), tmp_path / "bundle.json", capsys)
    assert code == 0, err
    text = (tmp_path / "bundle.json").read_text(encoding="utf-8")
    assert "half a pair \\ud800 here" in text and json.loads(text)["chats"]


def test_a_run_that_fails_leaves_no_bundle(tmp_path, capsys, monkeypatch):
    out = tmp_path / "bundle.json"

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the store went away")

    monkeypatch.setattr(export_official, "vector_rows", broken)
    code, err = _run(oi.build(tmp_path / "install", "chroma"), out, capsys)
    assert code == 1 and "the store went away" in err and "Traceback" not in err, err
    assert not out.exists() and list(tmp_path.glob(".bundle.json*")) == []
