"""The extractor (`scripts/export_official.py`) reads LangBot's plugin storage from a real PostgreSQL
(issue 34 point 1): LangBot 4.11.2's own tables (its SQLAlchemy models) on a PostgreSQL reached by unix
socket, holding the same official-plugin rows as `tests/official_install.py`'s SQLite database. Run the
way an operator runs it, with LangBot's own Python (`.lbvenv`), it writes the same bundle as from SQLite,
for both ways LangBot 4.11.2 spells its connection (`database.postgresql.url`, or host/port/user/
password/database), and a connection that fails says so in one line without the password. The same
rows in a SQLite file made by LangBot's models give that bundle too."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from devhost.provision import REPO, ensure_lbvenv
from tests import official_install as oi
from tests.langbot_tables import langbot_database, langbot_sqlite, socket_and_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import export_official

pytestmark = pytest.mark.slow
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "export_official.py"
PASSWORD = "Pw-never-Printed-7781"


def _config(root: Path, database: dict[str, Any]) -> None:
    config = json.loads((root / "data" / "config.yaml").read_text(encoding="utf-8"))
    config["database"] = database
    (root / "data" / "config.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML


def _extract(root: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    """The extractor run by LangBot's Python, as the README says; its exit and its bundle."""
    out = root / "bundle.json"
    out.unlink(missing_ok=True)
    python = ensure_lbvenv(REPO / ".lbvenv") / "bin" / "python"
    done = subprocess.run([str(python), str(SCRIPT), "--langbot-dir", str(root), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    return done, json.loads(out.read_text(encoding="utf-8")) if out.exists() else None


def _comparable(bundle: dict[str, Any]) -> dict[str, Any]:
    """All but the two fields that name when and from which database it was written."""
    source = {k: v for k, v in bundle["source"].items() if k != "database"}
    return {**{k: v for k, v in bundle.items() if k not in ("created_at", "source")}, "source": source}


@pytest.fixture(scope="module")
def installation(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    """One official installation (vectors on Chroma) read from SQLite, then its rows put in PostgreSQL;
    SQLite's file is moved away so only PostgreSQL can answer."""
    root = oi.build(tmp_path_factory.mktemp("official") / "install", "chroma")
    done, from_sqlite = _extract(root)
    assert done.returncode == 0 and from_sqlite is not None, done.stderr[-3000:]
    assert from_sqlite["source"]["database"] == "sqlite"
    name = langbot_database(oi.table_rows())
    shutil.move(root / "data" / "langbot.db", root / "langbot.db.away")
    return root, from_sqlite, name


def _storage(name: str) -> list[tuple[Any, ...]]:
    import psycopg

    folder, port = socket_and_port()
    with psycopg.connect(host=folder, port=port, user="postgres", dbname=name) as conn:
        return conn.execute("SELECT unique_key, key, owner, value, updated_at FROM binary_storages "
                            "ORDER BY unique_key").fetchall()


def test_host_and_port_fields_with_a_socket_folder_give_the_sqlite_bundle(installation):
    root, from_sqlite, name = installation
    folder, port = socket_and_port()
    before = _storage(name)
    _config(root, {"use": "postgresql", "postgresql": {"host": folder, "port": port, "user": "postgres",
                                                         "password": PASSWORD, "database": name,
                                                         "pool_size": 10}})
    done, bundle = _extract(root)
    assert done.returncode == 0 and bundle is not None, done.stderr[-3000:]
    assert bundle["source"]["database"] == "postgresql"
    assert _comparable(bundle) == _comparable(from_sqlite)
    # What the comparison covers: every chat, profile, episode, audit entry, candidate and setting.
    chats = {c["key"]: c for c in bundle["chats"]}
    assert set(chats) == {oi.G1, oi.P2, oi.G3, oi.GONE}
    g1 = chats[oi.G1]
    assert (len(g1["profiles"]), len(g1["episodes"]), len(g1["audit"]), len(g1["candidates"])) == (2, 6, 4, 3)
    assert bundle["settings"] == {**oi.KB_SETTINGS, "retrieval": {"top_k": 5}}
    assert bundle["source"]["bots"] == [oi.BOT]
    assert PASSWORD not in done.stdout + done.stderr
    assert _storage(name) == before  # it only read


@pytest.mark.parametrize("scheme, tls", [("postgresql", "sslmode=disable"), ("postgresql+asyncpg", "ssl=disable")])
def test_a_url_with_a_socket_host_gives_the_same_bundle(installation, scheme, tls):
    root, from_sqlite, name = installation
    folder, port = socket_and_port()
    # LangBot takes either scheme, hands query options to asyncpg as arguments (`ssl`) and reads libpq's
    # `sslmode` as `ssl`; so must the extractor.
    url = f"{scheme}://postgres:{PASSWORD}@/{name}?host={folder}&port={port}&{tls}"
    _config(root, {"use": "postgresql", "postgresql": {"url": url, "host": "unused.invalid"}})
    done, bundle = _extract(root)
    assert done.returncode == 0 and bundle is not None, done.stderr[-3000:]
    assert _comparable(bundle) == _comparable(from_sqlite)
    assert PASSWORD not in done.stdout + done.stderr


@pytest.mark.parametrize("postgresql, says", [
    ({"database": "no_such_database"}, 'database "no_such_database" does not exist'),
    ({"url": "postgresql://postgres:{pw}@/no_such_database?host={folder}&port={port}"},
     'database "no_such_database" does not exist'),
    ({"port": 1}, "could not read LangBot's PostgreSQL database"),
    ({"port": "fifty"}, "database.postgresql.port in data/config.yaml is not a number"),
    ({"url": "mysql://root:{pw}@db/langbot"}, "LangBot connects with postgresql://"),
    ({"url": "postgresql://postgres:{pw}@[::1/x"}, "not a valid URL"),
])
def test_a_connection_that_fails_says_why_in_one_line_without_the_password(installation, postgresql, says):
    root, _, _ = installation
    folder, port = socket_and_port()
    fields = {"host": folder, "port": port, "user": "postgres", "password": PASSWORD}
    for key, value in postgresql.items():
        fields[key] = value.format(pw=PASSWORD, folder=folder, port=port) if isinstance(value, str) else value
    _config(root, {"use": "postgresql", "postgresql": fields})
    done, bundle = _extract(root)
    assert done.returncode == 1 and bundle is None
    assert says in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert PASSWORD not in done.stdout + done.stderr


def test_another_python_is_told_to_use_langbots(tmp_path, capsys):
    """The test venv has neither asyncpg nor SQLAlchemy, like a Python that is not LangBot's."""
    try:
        import asyncpg  # noqa: F401
        import sqlalchemy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.fail("this venv has asyncpg and SQLAlchemy: the test cannot show the missing-driver message")
    root = tmp_path / "langbot"
    (root / "data").mkdir(parents=True)
    (root / "data" / "config.yaml").write_text(json.dumps({"database": {"use": "postgresql"}}), encoding="utf-8")
    assert export_official.main(["--langbot-dir", str(root), "--out", str(tmp_path / "b.json")]) == 1
    assert "run this script with LangBot's own Python" in capsys.readouterr().err


def test_its_session_cannot_write(installation):
    """The extractor's PostgreSQL session is read-only, like its SQLite connection (`mode=ro`): even a
    statement that writes is refused by the server."""
    _, _, name = installation
    folder, port = socket_and_port()
    config = {"host": folder, "port": port, "user": "postgres", "database": name}
    probe = ("import json, sys; sys.path.insert(0, sys.argv[1]); import export_official as x\n"
             "try:\n    x._postgres_rows(json.loads(sys.argv[2]), 'DELETE FROM binary_storages', ())\n"
             "except x.ExportError as e:\n    print(e)")
    python = ensure_lbvenv(REPO / ".lbvenv") / "bin" / "python"
    done = subprocess.run([str(python), "-c", probe, str(SCRIPT.parent), json.dumps(config)], capture_output=True,
                          text=True, timeout=300)
    assert "read-only transaction" in done.stdout, done.stdout + done.stderr
    assert len(_storage(name)) == len(oi.table_rows()["binary_storages"])


def test_sqlite_made_by_langbots_models_gives_the_same_bundle(installation, tmp_path):
    """The SQLite path on LangBot's real tables too (`tests/official_install.py` writes only the columns
    the extractor reads): the same rows in a database LangBot's models created give the same bundle."""
    root, from_sqlite, _ = installation
    copy = tmp_path / "install"
    shutil.copytree(root, copy)
    langbot_sqlite(copy / "data" / "langbot.db", oi.table_rows())
    _config(copy, {"use": "sqlite", "sqlite": {"path": "data/langbot.db"}})
    done, bundle = _extract(copy)
    assert done.returncode == 0 and bundle is not None, done.stderr[-3000:]
    assert bundle["source"]["database"] == "sqlite" and _comparable(bundle) == _comparable(from_sqlite)
