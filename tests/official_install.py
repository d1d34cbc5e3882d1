"""A LangBot 4.11.2 installation that ran the official LongTermMemory plugin, built in a temp folder from
the official data shapes (written here, not copied): `data/config.yaml`, LangBot's SQLite database with
the tables the extractor reads (the same columns as LangBot's models: `binary_storages`,
`knowledge_bases`, `workspaces`, `bots`), plugin storage rows owned by `langbot-team/LongTermMemory`,
and the memory KB's rows in its collection on Chroma, Qdrant (a local folder) or SeekDB (embedded),
written with the real clients.

Three chats of bot "bot-a": group_1 (profiles with fact history, episodes of every status with a
supersede link, audit, candidates), person_2 (a profile, episodes) and group_3 (episodes only);
plus storage and rows of a bot this LangBot does not list ("bot-gone")."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

PLUGIN = "langbot-team/LongTermMemory"
INSTANCE, WORKSPACE, KB = "inst-1", "ws-1", "kb-official"
BOT = "bot-a"
G1, P2, G3, GONE = f"{BOT}:group_1", f"{BOT}:person_2", f"{BOT}:group_3", "bot-gone:group_9"
SECRET = "my password is hunter2hunter2"

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


def storage_rows() -> dict[str, Any]:
    audit = [{"audit_id": f"a0000000000{i}", "operation": op, "scope_key": G1, "user_key": G1, "sender_id": "u1",
              "sender_name": "Ann", "target_type": "episode", "target_id": "e11111111111", "summary": summary,
              "timestamp": f"2026-01-0{i + 1}T08:00:00Z", "query_id": 7, "metadata": {"x": 1}}
             for i, (op, summary) in enumerate([("remember", "the team meets on Mondays"),
                                                ("archived", "archived e11111111111"),
                                                ("remember", SECRET)])]
    candidates = [
        {"candidate_id": "c00000000001", "scope_key": G1, "user_key": G1, "candidate_type": "l2_episode",
         "status": "pending", "payload": {"content": "Ann: we decided to ship on Friday", "tags": ["candidate"],
                                          "importance": 2},
         "reason": "decision", "sender_id": "u1", "sender_name": "Ann", "query_id": 3,
         "created_at": "2026-01-05T08:00:00Z", "updated_at": "2026-01-05T08:00:00Z"},
        {"candidate_id": "c00000000002", "scope_key": G1, "user_key": G1, "candidate_type": "l1_profile",
         "status": "rejected", "payload": {"target_scope": "speaker", "field": "preferences", "action": "add",
                                           "value": "Ann: prefers tea"},
         "reason": "preference", "sender_id": "u1", "sender_name": "Ann", "query_id": 4,
         "created_at": "2026-01-06T08:00:00Z", "updated_at": "2026-01-07T08:00:00Z"},
        {"candidate_id": "c00000000003", "scope_key": G1, "user_key": G1, "candidate_type": "l1_profile",
         "status": "pending", "payload": {"target_scope": "session", "field": "notes", "action": "add",
                                          "value": "a note"},
         "reason": "note", "sender_id": "u1", "sender_name": "Ann", "query_id": 5,
         "created_at": "2026-01-08T08:00:00Z", "updated_at": "2026-01-08T08:00:00Z"},
    ]
    return {
        "kb_configs": {KB: KB_SETTINGS},
        f"ps:{G1}": _profile(notes="the release team"),
        f"pp:{G1}:u1": _profile("Ann", ["likes hiking", "lives in Berlin"], CITY_SLOT),
        f"pp:{P2}:u2": _profile("Bo", ["plays chess"]),
        f"pp:{GONE}:u9": _profile("Gone", ["left"]),
        f"audit:{G1}": audit,
        f"candidates:{G1}": candidates,
        f"inj:{G1}": {"session_profile": "", "episodes": []},
    }


def table_rows() -> dict[str, list[dict[str, Any]]]:
    """The installation's rows in LangBot's tables, in insertion order (a bot and a KB name their
    workspace), as LangBot's models take them: JSON columns as objects, binary columns as bytes."""
    storage = [{"workspace_uuid": WORKSPACE, "unique_key": f"plugin:{PLUGIN}:{key}", "key": key,
                "owner_type": "plugin", "owner": PLUGIN, "value": json.dumps(value).encode("utf-8")}
               for key, value in storage_rows().items()]
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


def vector_rows() -> list[tuple[str, dict[str, Any]]]:
    def row(rid: str, key: str, content: str, status: str = "active", **extra: Any) -> tuple[str, dict[str, Any]]:
        meta = {"content": content, "tags": "work,plan", "importance": "3", "timestamp": "2026-01-10T09:00:00Z",
                "user_key": key, "source": "agent", "sender_id": "u1", "sender_name": "Ann", "bot_uuid": BOT,
                "status": status, "superseded_by": "", "imported_episode_id": "",
                "_langbot_instance_uuid": INSTANCE, "_langbot_workspace_uuid": WORKSPACE,
                "_langbot_knowledge_base_uuid": KB, **extra}
        return rid, meta
    return [
        row("e11111111111", G1, "the standup is at 10am"),
        row("e22222222222", G1, "the standup is at 9am", "superseded", superseded_by="e11111111111",
            importance="1"),
        row("e33333333333", G1, "the old retreat plan", "archived"),
        row("e44444444444", G1, "a memory the user forgot", "deleted"),
        row("e55555555555", G1, SECRET),
        row("e66666666666", P2, "Bo studies openings every Sunday", sender_id="u2", sender_name="Bo"),
        row("e77777777777", G3, "group 3 picks the venue by vote"),
        row("e88888888888", GONE, "a memory of a bot that is gone"),
        row("e99999999999", "ltm-health:x:a", "probe", source="health_probe"),
    ]


def collection() -> str:
    return "lb_" + uuid.uuid5(uuid.NAMESPACE_URL, f"langbot:knowledge-vector:{INSTANCE}:{WORKSPACE}:{KB}").hex


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
    for table, rows in table_rows().items():
        for row in rows:
            values = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in row.values()]
            db.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", values)
    db.commit()
    db.close()
    rows = vector_rows()
    ids = [_point_id(rid, store) for rid, _ in rows]
    metas = [{**meta, "superseded_by": _point_id(meta["superseded_by"], store) if meta["superseded_by"] else ""}
             for _, meta in rows]
    vectors = [_vector(i) for i in range(len(rows))]
    docs = [meta["content"] for meta in metas]
    if store == "chroma":
        import chromadb

        client = chromadb.PersistentClient(path=str(data / "chroma"))
        client.get_or_create_collection(collection(), metadata={"hnsw:space": "cosine"}).upsert(
            ids=ids, embeddings=vectors, metadatas=metas, documents=docs)
    elif store == "qdrant":
        from qdrant_client import QdrantClient, models

        qdrant = QdrantClient(path=str(data / "qdrant"))
        qdrant.create_collection(collection(), vectors_config=models.VectorParams(size=4,
                                                                                 distance=models.Distance.COSINE))
        qdrant.upsert(collection(), points=[models.PointStruct(id=i, vector=v, payload=m)
                                            for i, v, m in zip(ids, vectors, metas)])
        qdrant.close()
    else:
        import pyseekdb

        admin = pyseekdb.AdminClient(path=str(data / "seekdb"))
        if "langbot" not in [d.name for d in admin.list_databases()]:
            admin.create_database("langbot")
        client = pyseekdb.Client(path=str(data / "seekdb"), database="langbot")
        made = client.create_collection(name=collection(), configuration=pyseekdb.HNSWConfiguration(
            dimension=4, distance="cosine"), embedding_function=None)
        made.upsert(ids=ids, embeddings=vectors, metadatas=metas, documents=docs)
    return root
