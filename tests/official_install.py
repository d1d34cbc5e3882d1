"""A LangBot 4.11.2 installation that ran the official LongTermMemory plugin, built in a temp folder from
the official data shapes (written here, not copied): `data/config.yaml`, LangBot's SQLite database with
the tables the extractor reads (the same columns as LangBot's models: `binary_storages`,
`knowledge_bases`, `workspaces`, `bots`), plugin storage rows owned by `langbot-team/LongTermMemory`,
and the memory KB's rows in its collection on Chroma, Qdrant (a local folder) or SeekDB (embedded),
written with the real clients.

Three chats of bot "bot-a": group_1 (profiles with fact history, episodes of every status with a
supersede link, an episode the official plugin was told to forget and still keeps `active` (its
`forget` on LangBot 4.11.2), audit, candidates), person_2 (a profile, episodes) and group_3 (episodes only);
plus storage and rows of a bot this LangBot does not list ("bot-gone"). `Names` puts the same records under
other keys: `seed_langbot` writes them into a running LangBot (tests/e2e/test_real_official_migration.py)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLUGIN = "langbot-team/LongTermMemory"
INSTANCE, WORKSPACE, KB = "inst-1", "ws-1", "kb-official"
BOT = "bot-a"
G1, P2, G3, GONE = f"{BOT}:group_1", f"{BOT}:person_2", f"{BOT}:group_3", "bot-gone:group_9"
SECRET = "my password is hunter2hunter2"
FORGOTTEN = "the team dinner is at the harbour"  # forgotten in the official plugin, still stored there


@dataclass(frozen=True)
class Names:
    """What the records are keyed by: the three chats (`chat1` has every kind of record, `chat2` a
    speaker profile and an episode, `chat3` an episode), their speakers and the installation's ids."""

    chat1: str = G1
    chat2: str = P2
    chat3: str = G3
    ann: str = "u1"  # chat1's speaker
    bo: str = "u2"  # chat2's speaker
    bot: str = BOT
    instance: str = INSTANCE
    workspace: str = WORKSPACE
    kb: str = KB

DDL = """
CREATE TABLE workspaces (uuid VARCHAR(36) PRIMARY KEY, instance_uuid VARCHAR(255) NOT NULL,
  name VARCHAR(255) NOT NULL, slug VARCHAR(255) NOT NULL);
CREATE TABLE bots (uuid VARCHAR(255) PRIMARY KEY, workspace_uuid VARCHAR(36), name VARCHAR(255),
  description VARCHAR(255), adapter VARCHAR(255), adapter_config JSON);
CREATE TABLE binary_storages (workspace_uuid VARCHAR(36) NOT NULL, unique_key VARCHAR(255) NOT NULL,
  key VARCHAR(255) NOT NULL, owner_type VARCHAR(255) NOT NULL, owner VARCHAR(255) NOT NULL, value BLOB NOT NULL,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP, updated_at DATETIME DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (workspace_uuid, unique_key));
CREATE TABLE knowledge_bases (uuid VARCHAR(255) PRIMARY KEY, workspace_uuid VARCHAR(36) NOT NULL, name VARCHAR,
  knowledge_engine_plugin_id VARCHAR, collection_id VARCHAR, legacy_vector_collection BOOLEAN NOT NULL DEFAULT 0,
  creation_settings JSON, retrieval_settings JSON);
"""

KB_SETTINGS = {"embedding_model_uuid": "emb-old", "isolation": "session", "recency_half_life_days": 14,
               "auto_recall_top_k": 3, "retrieval_strategy": "auto", "vector_weight": 0.7, "exact_match_boost": True,
               "consolidation_enabled": False, "consolidation_min_age_days": 7, "consolidation_max_candidates": 20,
               "consolidation_apply_profile_updates": False, "candidate_extraction_enabled": True,
               "candidate_auto_apply": False, "candidate_max_per_turn": 3}


def _profile(name: str = "", traits: list[str] | None = None, slots: dict[str, Any] | None = None,
             notes: str = "") -> dict[str, Any]:
    return {"name": name, "traits": traits or [], "preferences": [], "notes": notes,
            "updated_at": "2026-02-01T10:00:00Z", "profile_slots": {"traits": slots or {}, "preferences": {}},
            "freeform_traits": traits or [], "freeform_preferences": []}


CITY_SLOT = {"city": {"value": "lives in Berlin", "updated_at": "2026-02-01T10:00:00Z", "confidence": 0.9,
                      "history": [{"value": "lives in Paris", "timestamp": "2025-11-01T10:00:00Z",
                                   "status": "superseded", "reason": "profile_update"}]}}


def storage_rows(n: Names = Names(), store: str = "chroma") -> dict[str, Any]:
    """The official plugin's storage rows; an audit entry names its episode by the id the store keeps."""
    audit = [{"audit_id": f"a0000000000{i}", "operation": op, "scope_key": n.chat1, "user_key": n.chat1,
              "sender_id": n.ann, "sender_name": "Ann", "target_type": "episode", "target_id": _point_id(target, store),
              "summary": summary, "timestamp": f"2026-01-0{i + 1}T08:00:00Z", "query_id": 7, "metadata": {"x": 1}}
             for i, (op, target, summary) in enumerate([("remember", "e11111111111", "the team meets on Mondays"),
                                                        ("archived", "e11111111111", "archived e11111111111"),
                                                        ("remember", "e11111111111", SECRET),
                                                        ("forget", "e10101010101", "Deleted episode e10101010101")])]
    candidates = [
        {"candidate_id": "c00000000001", "scope_key": n.chat1, "user_key": n.chat1, "candidate_type": "l2_episode",
         "status": "pending", "payload": {"content": "Ann: we decided to ship on Friday", "tags": ["candidate"],
                                          "importance": 2},
         "reason": "decision", "sender_id": n.ann, "sender_name": "Ann", "query_id": 3,
         "created_at": "2026-01-05T08:00:00Z", "updated_at": "2026-01-05T08:00:00Z"},
        {"candidate_id": "c00000000002", "scope_key": n.chat1, "user_key": n.chat1, "candidate_type": "l1_profile",
         "status": "rejected", "payload": {"target_scope": "speaker", "field": "preferences", "action": "add",
                                           "value": "Ann: prefers tea"},
         "reason": "preference", "sender_id": n.ann, "sender_name": "Ann", "query_id": 4,
         "created_at": "2026-01-06T08:00:00Z", "updated_at": "2026-01-07T08:00:00Z"},
        {"candidate_id": "c00000000003", "scope_key": n.chat1, "user_key": n.chat1, "candidate_type": "l1_profile",
         "status": "pending", "payload": {"target_scope": "session", "field": "notes", "action": "add",
                                          "value": "a note"},
         "reason": "note", "sender_id": n.ann, "sender_name": "Ann", "query_id": 5,
         "created_at": "2026-01-08T08:00:00Z", "updated_at": "2026-01-08T08:00:00Z"},
    ]
    return {
        "kb_configs": {n.kb: KB_SETTINGS},
        f"ps:{n.chat1}": _profile(notes="the release team"),
        f"pp:{n.chat1}:{n.ann}": _profile("Ann", ["likes hiking", "lives in Berlin"], CITY_SLOT),
        f"pp:{n.chat2}:{n.bo}": _profile("Bo", ["plays chess"]),
        f"pp:{GONE}:u9": _profile("Gone", ["left"]),
        f"audit:{n.chat1}": audit,
        f"candidates:{n.chat1}": candidates,
        f"inj:{n.chat1}": {"session_profile": "", "episodes": []},
    }


def table_rows(store: str = "chroma") -> dict[str, list[dict[str, Any]]]:
    """The installation's rows in LangBot's tables, in insertion order (a bot and a KB name their
    workspace), as LangBot's models take them: JSON columns as objects, binary columns as bytes."""
    storage = [{"workspace_uuid": WORKSPACE, "unique_key": f"plugin:{PLUGIN}:{key}", "key": key,
                "owner_type": "plugin", "owner": PLUGIN, "value": json.dumps(value).encode("utf-8")}
               for key, value in storage_rows(store=store).items()]
    # Another plugin's row with the same key: never read.
    storage.append({"workspace_uuid": WORKSPACE, "unique_key": "x", "key": f"ps:{G1}", "owner_type": "plugin",
                    "owner": "someone/Else", "value": b'{"name": "not ours"}'})
    return {
        "workspaces": [{"uuid": WORKSPACE, "instance_uuid": INSTANCE, "name": "Default", "slug": "default"}],
        "bots": [{"uuid": BOT, "workspace_uuid": WORKSPACE, "name": "A", "description": "", "adapter": "aiocqhttp",
                  "adapter_config": {}}],
        "knowledge_bases": [{"uuid": KB, "workspace_uuid": WORKSPACE, "name": "memory",
                             "knowledge_engine_plugin_id": PLUGIN, "collection_id": KB,
                             "creation_settings": KB_SETTINGS, "retrieval_settings": {"top_k": 5}}],
        "binary_storages": storage,
    }


def vector_rows(n: Names = Names()) -> list[tuple[str, dict[str, Any]]]:
    def row(rid: str, key: str, content: str, status: str = "active", **extra: Any) -> tuple[str, dict[str, Any]]:
        meta = {"content": content, "tags": "work,plan", "importance": "3", "timestamp": "2026-01-10T09:00:00Z",
                "user_key": key, "source": "agent", "sender_id": n.ann, "sender_name": "Ann", "bot_uuid": n.bot,
                "status": status, "superseded_by": "", "imported_episode_id": "",
                "_langbot_instance_uuid": n.instance, "_langbot_workspace_uuid": n.workspace,
                "_langbot_knowledge_base_uuid": n.kb, **extra}
        return rid, meta
    return [
        row("e11111111111", n.chat1, "the standup is at 10am"),
        row("e22222222222", n.chat1, "the standup is at 9am", "superseded", superseded_by="e11111111111",
            importance="1"),
        row("e33333333333", n.chat1, "the old retreat plan", "archived"),
        row("e44444444444", n.chat1, "a memory the user forgot", "deleted"),
        row("e55555555555", n.chat1, SECRET),
        row("e10101010101", n.chat1, FORGOTTEN),  # its forget left it as it was (the audit names it)
        row("e66666666666", n.chat2, "Bo studies openings every Sunday", sender_id=n.bo, sender_name="Bo"),
        row("e77777777777", n.chat3, "group 3 picks the venue by vote"),
        row("e88888888888", GONE, "a memory of a bot that is gone"),
        row("e99999999999", "ltm-health:x:a", "probe", source="health_probe"),
    ]


def collection(n: Names = Names()) -> str:
    return "lb_" + uuid.uuid5(uuid.NAMESPACE_URL, f"langbot:knowledge-vector:{n.instance}:{n.workspace}:{n.kb}").hex


def _vector(i: int) -> list[float]:
    return [1.0, float(i % 3), float(i % 5) / 5, 0.5]


def _point_id(rid: str, store: str) -> str:
    # Qdrant takes only UUIDs (or integers) as point ids: the official plugin's 12-hex ids are refused there
    # ("not a valid UUID"), so rows on Qdrant can only have UUID ids; these are written so, links included.
    return str(uuid.uuid5(uuid.NAMESPACE_OID, rid)) if store == "qdrant" else rid


def build(root: Path, store: str) -> Path:
    data = root / "data"
    data.mkdir(parents=True)
    vdb: dict[str, Any] = {"use": store, "qdrant": {"url": "", "host": "localhost", "port": 6333, "api_key": "",
                                                     "path": "data/qdrant"},
                           "seekdb": {"mode": "embedded", "path": "data/seekdb", "database": "langbot"}}
    config = {"database": {"use": "sqlite", "sqlite": {"path": "data/langbot.db"}}, "vdb": vdb}
    (data / "config.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    db = sqlite3.connect(data / "langbot.db")
    db.executescript(DDL)
    for table, rows in table_rows(store).items():
        for row in rows:
            values = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in row.values()]
            db.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", values)
    db.commit()
    db.close()
    write_vectors(data, store)
    return root


def write_vectors(data: Path, store: str, n: Names = Names()) -> None:
    """The memory KB's rows into its collection in `data` (LangBot's data folder), with the store's client."""
    rows = vector_rows(n)
    ids = [_point_id(rid, store) for rid, _ in rows]
    metas = [{**meta, "superseded_by": _point_id(meta["superseded_by"], store) if meta["superseded_by"] else ""}
             for _, meta in rows]
    vectors = [_vector(i) for i in range(len(rows))]
    docs = [meta["content"] for meta in metas]
    if store == "chroma":
        import chromadb

        client = chromadb.PersistentClient(path=str(data / "chroma"))
        client.get_or_create_collection(collection(n), metadata={"hnsw:space": "cosine"}).upsert(
            ids=ids, embeddings=vectors, metadatas=metas, documents=docs)
    elif store == "qdrant":
        from qdrant_client import QdrantClient, models

        qdrant = QdrantClient(path=str(data / "qdrant"))
        qdrant.create_collection(collection(n), vectors_config=models.VectorParams(size=4,
                                                                                 distance=models.Distance.COSINE))
        qdrant.upsert(collection(n), points=[models.PointStruct(id=i, vector=v, payload=m)
                                            for i, v, m in zip(ids, vectors, metas)])
        qdrant.close()
    else:
        import pyseekdb

        admin = pyseekdb.AdminClient(path=str(data / "seekdb"))
        if "langbot" not in [d.name for d in admin.list_databases()]:
            admin.create_database("langbot")
        client = pyseekdb.Client(path=str(data / "seekdb"), database="langbot")
        made = client.create_collection(name=collection(n), configuration=pyseekdb.HNSWConfiguration(
            dimension=4, distance="cosine"), embedding_function=None)
        made.upsert(ids=ids, embeddings=vectors, metadatas=metas, documents=docs)


def storage_key(instance: str, workspace: str, key: str) -> str:
    """`binary_storages.unique_key` of a plugin's storage key in LangBot 4.11.2 (its canonical form)."""
    canonical = json.dumps([instance, workspace, "plugin", PLUGIN, key], ensure_ascii=False, separators=(",", ":"))
    return (f"v1:{hashlib.sha256(instance.encode()).hexdigest()[:24]}:{workspace}:plugin:"
            f"{hashlib.sha256(canonical.encode()).hexdigest()}")


def seed_langbot(data: Path, store: str, n: Names, extra: dict[str, Any] | None = None) -> None:
    """A LangBot's own data folder (`data/langbot.db` and its vector store), running or not, as if the
    official plugin had kept `n`'s chats there: its memory KB's row, its storage rows (plus `extra`) in
    `n.workspace`, and the KB's collection. Run it with LangBot's Python (the store's client is there)."""
    seed_tables(data, n, extra, store)
    write_vectors(data, store, n)


def seed_tables(data: Path, n: Names, extra: dict[str, Any] | None = None, store: str = "chroma") -> None:
    """The database half of `seed_langbot`: the memory KB's row and the storage rows, no vectors."""
    db = sqlite3.connect(data / "langbot.db", timeout=30)  # LangBot may be writing: wait for its lock
    try:
        with db:
            db.execute("INSERT INTO knowledge_bases (uuid, workspace_uuid, name, description, "
                       "knowledge_engine_plugin_id, collection_id, creation_settings, retrieval_settings, "
                       "created_at, updated_at) VALUES (?, ?, 'memory', 'the official plugin''s memory', ?, ?, ?, ?, "
                       "'2026-01-01 08:00:00.000000', '2026-01-01 08:00:00.000000')",
                       (n.kb, n.workspace, PLUGIN, n.kb, json.dumps(KB_SETTINGS), json.dumps({"top_k": 5})))
            for key, value in {**storage_rows(n, store), **(extra or {})}.items():
                db.execute("INSERT INTO binary_storages (workspace_uuid, unique_key, key, owner_type, owner, value) "
                           "VALUES (?, ?, ?, 'plugin', ?, ?)", (n.workspace, storage_key(n.instance, n.workspace, key),
                                                               key, PLUGIN, json.dumps(value).encode("utf-8")))
    finally:
        db.close()


def unseed_langbot(data: Path, store: str, n: Names) -> None:
    """What `seed_langbot` wrote, removed again (the plugin under test never writes there), so the other
    tests of a shared LangBot see no foreign memory KB."""
    db = sqlite3.connect(data / "langbot.db", timeout=30)
    try:
        with db:
            db.execute("DELETE FROM knowledge_bases WHERE uuid = ? AND knowledge_engine_plugin_id = ?", (n.kb, PLUGIN))
            db.execute("DELETE FROM binary_storages WHERE workspace_uuid = ? AND owner_type = 'plugin' AND owner = ?",
                       (n.workspace, PLUGIN))
    finally:
        db.close()
    if store == "chroma":
        import chromadb

        chromadb.PersistentClient(path=str(data / "chroma")).delete_collection(collection(n))
    elif store == "seekdb":
        import pyseekdb

        pyseekdb.Client(path=str(data / "seekdb"), database="langbot").delete_collection(collection(n))
