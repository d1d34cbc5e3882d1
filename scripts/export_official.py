"""Export everything the official LongTermMemory plugin (langbot-team/LongTermMemory) kept in one LangBot
installation into one migration bundle, for this plugin's Memory Console (Settings tab, "Migrate") or a
memory KB upload. It only reads: the official data is never changed.

Run it on the LangBot host with LangBot's own Python, from anywhere:

    python scripts/export_official.py --langbot-dir /path/to/langbot --out bundle.json

It needs nothing LangBot does not already have: the standard library, PyYAML (LangBot reads its
config with it), for PostgreSQL SQLAlchemy and asyncpg (LangBot connects with them, so it reads
`database.postgresql` exactly as LangBot does) and the client of its vector store (chromadb,
qdrant-client or pyseekdb). It lives in scripts/ rather than in the
plugin because it runs beside LangBot, not inside the plugin's runtime, and must not import the plugin.

What it reads (LangBot 4.11.2): `data/config.yaml` (`database.use`, `vdb.use`); plugin storage rows
(table `binary_storages`, owner_type "plugin", owner "langbot-team/LongTermMemory"): `ps:<scope key>`,
`pp:<scope key>:<sender id>`, `audit:<scope key>`, `candidates:<scope key>`, `kb_configs`; the
memory KB (table `knowledge_bases`, engine "langbot-team/LongTermMemory") and its collection
(`lb_<uuid5 of instance, workspace and KB>`, or the KB's `collection_id` for a pre-tenancy one);
the bots (table `bots`), whose uuids let the importer recognise this installation.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PLUGIN = "langbot-team/LongTermMemory"
BUNDLE_FORMAT = "ltm-official-migration"
BUNDLE_VERSION = 1
PAGE = 500
# Metadata LangBot adds to every vector row; not the plugin's.
HOST_KEYS = ("_langbot_instance_uuid", "_langbot_workspace_uuid", "_langbot_knowledge_base_uuid")
# A stored value nested deeper than this is left out (and said so): the plugin reads the bundle with a JSON
# parser that refuses deep nesting, which would refuse the whole bundle for one such value.
MAX_DEPTH = 100


class ExportError(Exception):
    pass


# --------------------------------------------------------------------------- LangBot's database
def _sqlite_rows(path: Path, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    if not path.is_file():
        raise ExportError(f"LangBot's database {path} does not exist (database.sqlite.path in data/config.yaml)")
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)  # read-only: nothing can change
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def postgres_url(config: dict[str, Any]) -> Any:
    """The SQLAlchemy URL LangBot 4.11.2 connects with (`pkg/persistence/databases/postgresql.py`):
    `database.postgresql.url` when set (`postgresql://` or `postgresql+asyncpg://`, libpq's `sslmode`
    read as asyncpg's `ssl`), else `host`, `port`, `user`, `password`, `database` with LangBot's defaults.
    A `host` that is a folder (or `?host=/folder` in the url) is a unix socket, as asyncpg reads it."""
    import sqlalchemy

    explicit = config.get("url")
    if not explicit:
        try:
            port = int(config.get("port", 5432))
        except (TypeError, ValueError):
            raise ExportError("database.postgresql.port in data/config.yaml is not a number") from None
        return sqlalchemy.URL.create("postgresql+asyncpg", username=str(config.get("user", "postgres")),
                                     password=str(config.get("password", "postgres")),
                                     host=str(config.get("host", "127.0.0.1")), port=port,
                                     database=str(config.get("database", "postgres")))
    try:
        url = sqlalchemy.engine.make_url(str(explicit))
    except Exception:  # noqa: BLE001 - its message quotes the url, password and all
        raise ExportError("database.postgresql.url in data/config.yaml is not a valid URL") from None
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+asyncpg")
    elif url.drivername != "postgresql+asyncpg":
        raise ExportError(f"database.postgresql.url uses {url.drivername!r}: LangBot connects with "
                          "postgresql:// or postgresql+asyncpg://")
    query = dict(url.query)
    sslmode = query.pop("sslmode", None)
    if sslmode is not None:
        query.setdefault("ssl", sslmode)
    return url.set(query=query)


def _postgres_rows(config: dict[str, Any], sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    try:
        import asyncpg  # noqa: F401 - LangBot's PostgreSQL driver; missing, it is the wrong Python
        from sqlalchemy.ext.asyncio import create_async_engine
        from sqlalchemy.pool import NullPool
    except ImportError as exc:
        raise ExportError(f"{exc}: run this script with LangBot's own Python (it has SQLAlchemy and asyncpg)"
                          ) from None
    url = postgres_url(config)
    numbered = sql
    for n in range(1, len(args) + 1):  # asyncpg numbers its parameters
        numbered = numbered.replace("?", f"${n}", 1)

    async def fetch() -> list[tuple[Any, ...]]:
        # A read-only session, like SQLite's mode=ro: the official data cannot change.
        engine = create_async_engine(url, poolclass=NullPool, connect_args={
            "server_settings": {"default_transaction_read_only": "on"}})
        try:
            async with engine.connect() as conn:
                return [tuple(r) for r in (await conn.exec_driver_sql(numbered, args)).fetchall()]
        finally:
            await engine.dispose()

    try:
        return asyncio.run(fetch())
    except Exception as exc:  # noqa: BLE001 - any driver error becomes one clear line, without the password
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        password = url.password
        if password:
            message = message.replace(str(password), "***")
        raise ExportError(f"could not read LangBot's PostgreSQL database "
                          f"{url.render_as_string(hide_password=True)}: {message}") from None


class Database:
    def __init__(self, root: Path, config: dict[str, Any]) -> None:
        db = config.get("database") or {}
        self.kind = str(db.get("use") or "sqlite")
        self._root = root
        self._config = db

    def rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        if self.kind == "postgresql":
            return _postgres_rows(self._config.get("postgresql") or {}, sql, args)
        path = Path(str((self._config.get("sqlite") or {}).get("path") or "data/langbot.db"))
        return _sqlite_rows(path if path.is_absolute() else self._root / path, sql, args)


# --------------------------------------------------------------------------- the vector store
def collection_name(instance_uuid: str, workspace_uuid: str, kb_uuid: str) -> str:
    """LangBot 4.11.2's physical collection of a knowledge base (pkg/vector/mgr.py)."""
    return "lb_" + uuid.uuid5(uuid.NAMESPACE_URL,
                              f"langbot:knowledge-vector:{instance_uuid}:{workspace_uuid}:{kb_uuid}").hex


def _local(root: Path, value: Any, default: str) -> str:
    path = Path(str(value or default))
    return str(path if path.is_absolute() else root / path)


def vector_rows(root: Path, config: dict[str, Any], collection: str) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(row id, metadata, document) of every row of the collection."""
    vdb = config.get("vdb") or {}
    use = str(vdb.get("use") or "chroma")
    if use == "chroma":
        import chromadb

        client = chromadb.PersistentClient(path=_local(root, None, "data/chroma"))
        if collection not in [c if isinstance(c, str) else c.name for c in client.list_collections()]:
            return
        yield from _paged(client.get_collection(collection).get)
    elif use == "seekdb":
        import pyseekdb

        cfg = vdb.get("seekdb") or {}
        if cfg.get("mode", "embedded") == "embedded":
            client = pyseekdb.Client(path=_local(root, cfg.get("path"), "data/seekdb"),
                                     database=cfg.get("database", "langbot"))
        else:
            client = pyseekdb.Client(host=cfg.get("host", "localhost"), port=int(cfg.get("port", 2881)),
                                     database=cfg.get("database", "langbot"), user=cfg.get("user", "root"),
                                     password=cfg.get("password", ""))
        if not client.has_collection(collection):
            return
        yield from _paged(client.get_collection(collection, embedding_function=None).get)
    elif use == "qdrant":
        from qdrant_client import QdrantClient

        cfg = vdb.get("qdrant") or {}
        if cfg.get("path"):  # a local copy of the store (LangBot itself connects by url or host)
            client = QdrantClient(path=_local(root, cfg.get("path"), ""))
        elif cfg.get("url"):
            client = QdrantClient(url=cfg["url"], api_key=cfg.get("api_key") or None)
        else:
            client = QdrantClient(host=cfg.get("host", "localhost"), port=int(cfg.get("port", 6333)),
                                  api_key=cfg.get("api_key") or None)
        try:
            if not client.collection_exists(collection):
                return
            offset = None
            while True:
                points, offset = client.scroll(collection_name=collection, limit=PAGE, offset=offset,
                                               with_payload=True, with_vectors=False)
                for point in points:
                    payload = dict(point.payload or {})
                    yield str(point.id), payload, str(payload.get("content") or "")
                if offset is None:
                    return
        finally:
            client.close()
    else:
        raise ExportError(f"vdb.use is {use!r}: this extractor reads chroma, qdrant and seekdb (the stores the "
                          "official plugin supports)")


def _paged(get: Any) -> Iterator[tuple[str, dict[str, Any], str]]:
    offset = 0
    while True:
        got = get(include=["metadatas", "documents"], limit=PAGE, offset=offset)
        ids = got.get("ids") or []
        metas = got.get("metadatas") or [None] * len(ids)
        docs = got.get("documents") or [None] * len(ids)
        for row_id, meta, doc in zip(ids, metas, docs):
            yield str(row_id), dict(meta or {}), str(doc or "")
        if len(ids) < PAGE:
            return
        offset += PAGE


def episode_record(row_id: str, meta: dict[str, Any], document: str) -> dict[str, Any]:
    """A row in the shape of the official `!memory export l2` record."""
    raw_tags = meta.get("tags")
    parts = raw_tags if isinstance(raw_tags, list) else str(raw_tags or "").split(",")
    tags = [str(t).strip() for t in parts if str(t).strip()]
    try:
        importance = int(str(meta.get("importance") or "2"))
    except ValueError:
        importance = 2
    record = {"id": row_id, "content": str(meta.get("content") or document), "tags": tags,
              "importance": importance, "timestamp": str(meta.get("timestamp") or "") or None,
              "sender_id": str(meta.get("sender_id") or ""), "sender_name": str(meta.get("sender_name") or ""),
              "source": str(meta.get("source") or "agent"), "status": str(meta.get("status") or "active")}
    if meta.get("superseded_by"):
        record["superseded_by"] = str(meta["superseded_by"])
    return record


# --------------------------------------------------------------------------- the bundle
def _json(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value).decode("utf-8")
    try:
        return json.loads(value) if isinstance(value, str) else value
    except RecursionError:
        raise ValueError("nested too deeply to read") from None


def _shallow(value: Any, what: str) -> Any:
    """`value` when it nests at most MAX_DEPTH levels; a list keeps its items that do, and says how many it
    left out; anything else deeper is left out (None)."""
    if isinstance(value, list):
        kept = [item for item in value if _depth(item) < MAX_DEPTH]
        if len(kept) < len(value):
            _say(f"{what}: {len(value) - len(kept)} item(s) nested more than {MAX_DEPTH} levels deep; left out")
        return kept
    if _depth(value) > MAX_DEPTH:
        _say(f"{what} is nested more than {MAX_DEPTH} levels deep; left out")
        return None
    return value


def _depth(value: Any) -> int:
    """How deeply `value` nests lists and objects (counted without recursion)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            pending.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _object(value: Any, what: str) -> dict[str, Any]:
    """A JSON object column (or text holding one); anything else is left out with a line saying so."""
    try:
        parsed = _shallow(_json(value), what)
    except (ValueError, UnicodeDecodeError) as exc:
        _say(f"{what} is not JSON ({exc}); left out")
        return {}
    if parsed is None:
        return {}
    if not isinstance(parsed, dict):
        _say(f"{what} is not a JSON object; left out")
        return {}
    return parsed


def _say(line: str) -> None:
    print(f"export: {line}", file=sys.stderr)


def speaker_chat(rest: str, known: set[str]) -> tuple[str, str] | None:
    """(chat key, sender id) of a speaker profile's key `pp:<chat key>:<sender id>` without the prefix; both
    parts may hold ':'. A chat known from another row wins (the longest); otherwise the key's own form:
    `<bot uuid>:person_<id>:<id>` (a private chat's speaker is its own id), else the first ':' after
    `<bot uuid>:group_<id>` (a bot uuid holds none). None when the key has no chat in it."""
    found = [k for k in known if rest.startswith(k + ":") and len(rest) > len(k) + 1]
    if found:
        chat = max(found, key=len)
        return chat, rest[len(chat) + 1:]
    bot, sep, session = rest.partition(":")
    kind, underscore, tail = session.partition("_")
    if not sep or not underscore or ":" not in tail:
        return None
    if kind == "person":
        half = len(tail) // 2
        if len(tail) % 2 and tail[half] == ":" and tail[:half] == tail[half + 1:]:
            return f"{bot}:person_{tail[:half]}", tail[:half]
    launcher, _, sender = tail.partition(":")
    return f"{bot}:{kind}_{launcher}", sender


def export(root: Path, config: dict[str, Any], plugin: str = PLUGIN, chats: set[str] | None = None
           ) -> dict[str, Any]:
    db = Database(root, config)
    storage: dict[str, Any] = {}
    for key, value in db.rows("SELECT key, value FROM binary_storages WHERE owner_type = ? AND owner = ?",
                              "plugin", plugin):
        try:
            parsed = _shallow(_json(value), f"storage key {key!r}")
        except (ValueError, UnicodeDecodeError) as exc:
            _say(f"storage key {key!r} is not JSON ({exc}); left out")
            continue
        if parsed is not None:
            storage[str(key)] = parsed
    kbs = db.rows("SELECT uuid, workspace_uuid, collection_id, legacy_vector_collection, creation_settings, "
                  "retrieval_settings FROM knowledge_bases WHERE knowledge_engine_plugin_id = ?", plugin)
    configs = storage.get("kb_configs") if isinstance(storage.get("kb_configs"), dict) else {}
    configs = {k: v for k, v in configs.items() if isinstance(v, dict)}
    kb = next((k for k in kbs if k[0] in configs), kbs[0] if kbs else None)
    workspaces = dict(db.rows("SELECT uuid, instance_uuid FROM workspaces"))
    bots = sorted(str(b[0]) for b in db.rows("SELECT uuid FROM bots"))
    settings: dict[str, Any] = {}
    grouped: dict[str, dict[str, list[Any]]] = {}

    def chat(key: str) -> dict[str, list[Any]]:
        return grouped.setdefault(key, {"profiles": [], "episodes": [], "audit": [], "candidates": []})

    fingerprint_parts = [plugin]
    unplaced = 0
    if kb is not None:
        kb_uuid, workspace_uuid, collection_id, legacy, creation, retrieval = kb
        settings = dict(configs.get(kb_uuid) or _object(creation, "the memory KB's creation_settings"))
        retrieval = _object(retrieval, "the memory KB's retrieval_settings")
        if retrieval:
            settings["retrieval"] = retrieval
        instance_uuid = str(workspaces.get(workspace_uuid) or "")
        fingerprint_parts += [instance_uuid, str(workspace_uuid), str(kb_uuid)]
        name = str(collection_id) if legacy and collection_id else collection_name(instance_uuid, workspace_uuid,
                                                                                     kb_uuid)
        for row_id, meta, document in vector_rows(root, config, name):
            space_key = str(meta.get("user_key") or "")
            if meta.get("source") == "health_probe" or space_key.startswith("ltm-health:"):
                continue  # the official health check's throwaway records
            if not space_key:
                unplaced += 1
                continue
            try:
                record = episode_record(row_id, {k: v for k, v in meta.items() if k not in HOST_KEYS}, document)
            except (ValueError, TypeError) as exc:
                _say(f"vector row {row_id!r} cannot be carried ({exc}); left out")
                continue
            chat(space_key)["episodes"].append(record)
    chat_keys = {k.split(":", 1)[1] for k in storage if k.startswith(("ps:", "audit:", "candidates:"))}
    chat_keys |= set(grouped)  # the spaces the episodes name (a chat's key in session isolation)
    for key, value in sorted(storage.items()):
        if key.startswith("ps:") and isinstance(value, dict):
            chat(key[3:])["profiles"].append({"type": "session", "scope_key": key[3:], "profile": value})
        elif key.startswith("pp:") and isinstance(value, dict):
            placed = speaker_chat(key[3:], chat_keys)
            if placed is None:
                _say(f"storage key {key!r} names no chat; left out")
                continue
            chat(placed[0])["profiles"].append({"type": "speaker", "scope_key": placed[0], "sender_id": placed[1],
                                                 "profile": value})
        elif key.startswith("audit:") and isinstance(value, list):
            chat(key[6:])["audit"].extend(value)
        elif key.startswith("candidates:") and isinstance(value, list):
            chat(key[11:])["candidates"].extend(value)
    keys = sorted(k for k in grouped if chats is None or k in chats)
    return {
        "format": BUNDLE_FORMAT, "version": BUNDLE_VERSION,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "source": {"plugin": plugin, "fingerprint": hashlib.sha256("|".join(fingerprint_parts).encode()).hexdigest(),
                   "kb_id": str(kb[0]) if kb else "", "bots": bots, "database": db.kind,
                   "vector_store": str((config.get("vdb") or {}).get("use") or "chroma"),
                   "episodes_without_space": unplaced},
        "settings": settings,
        "chats": [{"key": k, **grouped[k]} for k in keys],
    }


# Half a UTF-16 pair (a stored "\\ud800") cannot be written as UTF-8: it stays the JSON escape it was, and the
# plugin skips the record holding it, naming why.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def write_whole(out: Path, text: str) -> None:
    """The bundle at `out` whole or not at all: written beside it, then renamed over it."""
    fd, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent if str(out.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--langbot-dir", default=".", help="LangBot's working directory (holds data/)")
    parser.add_argument("--config", help="LangBot's config file (default: <langbot-dir>/data/config.yaml)")
    parser.add_argument("--out", required=True, help="where to write the bundle (JSON)")
    parser.add_argument("--chat", action="append", help="only this chat's key (repeat for several)")
    args = parser.parse_args(argv)
    root = Path(args.langbot_dir)
    config_path = Path(args.config) if args.config else root / "data" / "config.yaml"
    try:
        import yaml  # LangBot reads its config with PyYAML, so its Python has it

        config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
        bundle = export(root, config, chats=set(args.chat) if args.chat else None)
        write_whole(Path(args.out), LONE_SURROGATE.sub(_escaped, json.dumps(bundle, ensure_ascii=False, indent=1)))
    except (OSError, ExportError, sqlite3.Error) as exc:
        _say(str(exc))
        return 1
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback; the bundle is not written
        _say(f"stopped ({type(exc).__name__}: {str(exc)[:200]}); no bundle was written")
        return 1
    for item in bundle["chats"]:
        print(f"{item['key']}: {len(item['profiles'])} profiles, {len(item['episodes'])} episodes, "
              f"{len(item['audit'])} audit entries, {len(item['candidates'])} candidates", file=sys.stderr)
    print(f"export: {len(bundle['chats'])} chats -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
