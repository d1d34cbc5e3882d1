"""Moving an official-plugin installation over, inside a real LangBot 4.11.2 (issues 34 and 43), by the
README's guide, step by step.

Two processors (pipelines) are set up as the official plugin had them: the official plugin
(`langbot-team/LongTermMemory`) bound in Extensions, its memory KB attached to the runner. The running
LangBot's own data folder is seeded as if the official plugin had kept three chats there
(`tests/official_install.py`'s records, keyed by chats this test can talk in, with a record the
official plugin was told to forget and still keeps `active`): its memory KB's row in `knowledge_bases`,
its storage rows in `binary_storages` (LangBot's workspace, LangBot's key form) and the KB's collection
in LangBot's vector store, written with the client in LangBot's own environment. Then the guide:

1. this plugin is installed and its memory KB created (the session's setup);
2. `scripts/export_official.py` with LangBot's Python against LangBot's home;
3. the Memory Console's dry run (the forgotten record listed as skipped) and import (its real page API,
   through LangBot); a second import writes nothing;
4. each processor switched: this plugin bound and the official one unbound ("Enable All Plugins" off),
   this plugin's memory KB attached and the official one detached, read back through LangBot's API;
   then the check in each chat: `!memory help` is this plugin's, `!memory health` green on every line,
   `!memory list`, `!memory profile` and a question whose prompt carries the migrated memory and never
   the forgotten record.

What this cannot show: the official plugin's package is not installed in the test stack (it is not
on this machine and nothing is fetched), so its binding is a binding LangBot stores and returns but that
nothing answers; that it stops answering once unbound, and that its memory block leaves the prompt, is
not observed here, only that each processor binds this plugin alone and attaches only its KB.

A fourth chat sees none of it. Afterwards the seeded rows are removed and the settings the import
overrode are put back, for the session's other tests.

The three chats are the WebUI debug chat's (LangBot 4.11.2 gives them bot `websocket-proxy-bot`): its
Group Chat (`group_websocketgroup`, the same in every connection) and two Private Chats, whose keys hold
the connection's id, so they are opened before the seeding and kept open to the end. The second Private
Chat is on the second processor: LangBot sends every debug-chat reply to every open connection of the
processor with the same session type, so two Private Chats of one processor would read each other's
replies.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import uuid
from pathlib import Path
from typing import Any

from devhost.chat import ltm_block, system_texts
from devhost.langbot_setup import ensure_pipeline
from devhost.lbclient import LTM_PLUGIN, RUNNER_ID
from devhost.provision import REPO
from tests import official_install as oi
from tests.e2e.health_lines import health_checks
from tests.e2e.test_real_langbot import every_text, turn

DEBUG_BOT = "websocket-proxy-bot"  # the debug chat's bot in LangBot 4.11.2 (it lives in memory only)
GROUP = f"{DEBUG_BOT}:group_websocketgroup"
# What each chat was told in the official plugin (tests/official_install.py) and is asked about here.
CHAT1_ACTIVE = ("the standup is at 10am",)
CHAT1_KEPT = ("the standup is at 9am", "the old retreat plan")  # superseded, archived: moved, not listed
CHAT2_EPISODE, CHAT3_EPISODE = "Bo studies openings every Sunday", "group 3 picks the venue by vote"
NEVER = ("a memory the user forgot", "hunter2", "a memory of a bot that is gone", oi.FORGOTTEN)
OFFICIAL_PLUGIN = ("langbot-team", "LongTermMemory")
EVERY_EPISODE = (*CHAT1_ACTIVE, *CHAT1_KEPT, CHAT2_EPISODE, CHAT3_EPISODE)
# Run with LangBot's Python (its vector store client): argv[1] is {"do", "data", "store", "names", "extra"}.
SEEDING = ("import json, sys; from pathlib import Path; from tests import official_install as oi; "
           "a = json.loads(sys.argv[1]); names = oi.Names(**a['names']); "
           "oi.seed_langbot(Path(a['data']), a['store'], names, a['extra']) if a['do'] == 'seed' else "
           "oi.seed_tables(Path(a['data']), names, store=a['store']) if a['do'] == 'tables' else "
           "oi.unseed_langbot(Path(a['data']), a['store'], names)")


def seeding(e2e: Any, do: str, names: oi.Names, extra: dict[str, Any] | None = None) -> None:
    args = {"do": do, "data": str(e2e.stack.home / "data"), "store": e2e.stack.config.vdb, "names": names.__dict__,
            "extra": extra or {}}
    done = subprocess.run([str(e2e.stack.config.lbvenv / "bin" / "python"), "-c", SEEDING, json.dumps(args)],
                          cwd=REPO, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr


def instance_uuid(database: Path, workspace: str) -> str:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        row = db.execute("SELECT instance_uuid FROM workspaces WHERE uuid = ?", (workspace,)).fetchone()
    assert row, f"workspace {workspace} not in {database}"
    return str(row[0])


def person_key(chat: Any) -> str:
    return f"{DEBUG_BOT}:person_{chat.sender_id}"


def settings_now(e2e: Any) -> dict[str, dict[str, Any]]:
    listing = e2e.client.page_api("/settings")
    assert listing["ok"] is True, listing
    return {row["name"]: row for row in listing["settings"]}


def restore_settings(e2e: Any, before: dict[str, dict[str, Any]]) -> None:
    """The session's other e2e tests expect the setup's settings: undo the overrides the import set."""
    for name, row in settings_now(e2e).items():
        was = before[name]
        if (row["value"], row["origin"]) == (was["value"], was["origin"]):
            continue
        if was["origin"] == "override":
            done = e2e.client.page_api("/settings/set", {"name": name, "value": was["value"]})
        else:
            done = e2e.client.page_api("/settings/reset", {"name": name})
        assert done["ok"] is True, done


def counts(chat: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    """(write, already, skipped) per part of one chat of a migration report."""
    return {part: (chat[part]["write"], chat[part]["already"], len(chat[part]["skipped"]))
            for part in ("profiles", "episodes", "audit", "candidates")}


# The stores the official plugin supports (its README), so the ones an installation can be on.
OFFICIAL_STORES = ("chroma", "qdrant", "seekdb")


def official_processor(e2e: Any, name: str, official_kb: str) -> str:
    """A processor as the official plugin had it: that plugin bound, its memory KB on the runner."""
    return ensure_pipeline(e2e.client, name, llm_uuid=e2e.info.llm_model_uuid, kb_uuids=[official_kb],
                           plugins=[OFFICIAL_PLUGIN])


def switch_over(e2e: Any, pipeline_uuid: str, official_kb: str) -> None:
    """Step 4 of the guide on one processor: Extensions with this plugin bound and the official one not
    ("Enable All Plugins" off); the runner's knowledge bases with this plugin's memory KB, not the
    official one. Read back through LangBot's API, as the WebUI shows it."""
    client = e2e.client
    client.bind_plugins(pipeline_uuid, [LTM_PLUGIN])
    config = client.pipeline(pipeline_uuid)["config"]
    runner = config["ai"]["runner_config"][RUNNER_ID]
    kbs = [kb for kb in runner.get("knowledge-bases", []) if kb != official_kb] + [e2e.info.kb_uuid]
    client.configure_pipeline(pipeline_uuid, runner_id=RUNNER_ID, runner_config={**runner, "knowledge-bases": kbs})
    extensions = client.get(f"/pipelines/{pipeline_uuid}/extensions")
    assert extensions["enable_all_plugins"] is False, extensions
    assert [(p["author"], p["name"]) for p in extensions["bound_plugins"]] == [LTM_PLUGIN], extensions
    attached = client.pipeline(pipeline_uuid)["config"]["ai"]["runner_config"][RUNNER_ID]["knowledge-bases"]
    assert attached == [e2e.info.kb_uuid], attached


def test_an_official_installation_moves_into_three_real_chats_and_a_fourth_sees_none(e2e: Any, tmp_path: Path
                                                                                      ) -> None:
    data = e2e.stack.home / "data"
    python = str(e2e.stack.config.lbvenv / "bin" / "python")  # LangBot's own Python, as the guide says
    if e2e.stack.config.vdb not in OFFICIAL_STORES:
        # The official plugin never ran on this store (LTM_E2E_VDB=pgvector, milvus), so its KB can have no
        # rows here: with its KB's row and storage in the database, the operator's command must refuse,
        # naming the stores it reads, and write no bundle.
        names = oi.Names(workspace=e2e.info.workspace_uuid, kb=str(uuid.uuid4()),
                         instance=instance_uuid(data / "langbot.db", e2e.info.workspace_uuid))
        seeding(e2e, "tables", names)
        try:
            out = tmp_path / "bundle.json"
            refused = subprocess.run([python, "scripts/export_official.py", "--langbot-dir", str(e2e.stack.home),
                                      "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=300)
            assert refused.returncode != 0 and "reads chroma, qdrant and seekdb" in refused.stderr, refused.stderr
            assert not out.exists()
        finally:
            seeding(e2e, "unseed", names)
        return
    before = settings_now(e2e)
    official_kb = str(uuid.uuid4())
    # The processors as the official plugin had them. One group connection at a time: LangBot 4.11.2 sends
    # every reply of its debug group chat to every open connection of that group; no other test holds one.
    first = official_processor(e2e, "e2e migration (official, first)", official_kb)
    other = official_processor(e2e, "e2e migration (official, second)", official_kb)
    with e2e.chat("group", first) as group, e2e.chat("person", first) as second, e2e.chat("person", other) as third:
        names = oi.Names(chat1=GROUP, chat2=person_key(second), chat3=person_key(third), ann=group.sender_id,
                         bo=second.sender_id, bot=DEBUG_BOT, instance=instance_uuid(data / "langbot.db",
                                                                                    e2e.info.workspace_uuid),
                         workspace=e2e.info.workspace_uuid, kb=official_kb)
        seeding(e2e, "seed", names, {f"pp:{names.chat3}:{third.sender_id}": oi._profile("Cy", ["collects old maps"])})
        try:
            # Step 1, this plugin installed and its memory KB created, is the session's setup.
            # Step 2: the command as the README gives it, with LangBot's Python against its home.
            out = tmp_path / "bundle.json"
            exported = subprocess.run([python, "scripts/export_official.py", "--langbot-dir", str(e2e.stack.home),
                                       "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=300)
            assert exported.returncode == 0, exported.stderr
            bundle = out.read_text(encoding="utf-8")
            source = json.loads(bundle)["source"]
            assert (source["database"], source["vector_store"]) == ("sqlite", e2e.stack.config.vdb), source
            keys = {c["key"] for c in json.loads(bundle)["chats"]}
            assert keys == {names.chat1, names.chat2, names.chat3, oi.GONE}, (keys, exported.stderr)

            # Step 3: the console's dry run, then the import.
            dry = e2e.client.page_api("/migrate", {"bundle": bundle})
            assert dry["ok"] is True and dry["dry_run"] is True, dry
            chats = {c["key"]: c for c in dry["chats"]}
            assert counts(chats[names.chat1]) == {"profiles": (2, 0, 0), "episodes": (3, 0, 3),
                                                  "audit": (3, 0, 1), "candidates": (2, 0, 1)}, chats
            reasons = [s["reason"] for s in chats[names.chat1]["episodes"]["skipped"]]
            assert any("the official plugin was asked to remove it (forget" in r for r in reasons), reasons
            assert counts(chats[names.chat2]) == {"profiles": (1, 0, 0), "episodes": (1, 0, 0),
                                                  "audit": (0, 0, 0), "candidates": (0, 0, 0)}, chats
            assert counts(chats[names.chat3]) == counts(chats[names.chat2]), chats
            assert all(chats[k]["space"] == k and not chats[k]["problem"] for k in keys - {oi.GONE}), chats
            assert chats[oi.GONE]["problem"] == "its bot is not one this LangBot has", chats
            exported_space = e2e.client.page_api("/export", {"space": {"scope_key": names.chat2,
                                                                        "user_key": names.chat2}})
            assert exported_space["export"]["l2"]["episodes"] == [], exported_space  # the dry run wrote nothing

            done = e2e.client.page_api("/migrate", {"bundle": bundle, "dry_run": False})
            assert done["ok"] is True and done["dry_run"] is False, done
            assert {k: (v["write"], v["skipped"]) for k, v in done["totals"].items()} == {
                "profiles": (4, 0), "episodes": (5, 3), "audit": (3, 1), "candidates": (2, 1)}, done["totals"]
            assert [counts(c) for c in done["chats"]] == [counts(c) for c in dry["chats"]]  # the dry run said so
            again = e2e.client.page_api("/migrate", {"bundle": bundle, "dry_run": False})
            assert again["ok"] is True and all(row["write"] == 0 for row in again["totals"].values()), again
            assert again["totals"]["episodes"]["already"] == 5 and again["totals"]["profiles"]["already"] == 4

            # Step 4: each processor switched over, then checked in its chats.
            for pipeline_uuid in (first, other):
                switch_over(e2e, pipeline_uuid, official_kb)
            for chat, episodes, profile, question in (
                    (group, CHAT1_ACTIVE, ("Ann", "lives in Berlin", "lives in Paris", "the release team"),
                     "what time is the standup?"),
                    (second, (CHAT2_EPISODE,), ("Bo", "plays chess"), "when does Bo study openings?"),
                    (third, (CHAT3_EPISODE,), ("Cy", "collects old maps"), "how is the venue picked?")):
                helped, _ = turn(e2e, chat, "!memory help")
                # This plugin answers (the official plugin is not installed here: see the module's docstring).
                assert "view" in helped and not helped.startswith("[Memory]"), helped
                health, _ = turn(e2e, chat, "!memory health")
                lines = [line.rstrip() for line in health.splitlines()]
                assert lines[0].endswith("Memory health: GREEN"), health  # green on every line, the KB attached
                # The chat's names head the report (labels, not checks); every check below them is green.
                checks = health_checks(health)
                assert checks and all(line.startswith("GREEN ") for line in checks), health
                assert "memory knowledge base is attached to this processor" in health, health
                others = [e for e in EVERY_EPISODE if e not in episodes and e not in CHAT1_KEPT]
                listed, _ = turn(e2e, chat, "!memory list")
                assert all(e in listed for e in episodes), listed
                assert not any(e in listed for e in (*others, *NEVER)), listed
                shown, _ = turn(e2e, chat, "!memory profile")
                assert all(p in shown for p in profile), shown
                _, requests = turn(e2e, chat, question)
                assert requests, "the question must reach the model"
                block = ltm_block(requests[0])
                assert all(e in block for e in episodes), system_texts(requests[0])
                assert profile[1] in block, block
                assert not any(e in every_text(requests) for e in (*others, *NEVER)), block
        finally:
            restore_settings(e2e, before)
            seeding(e2e, "unseed", names)

    with e2e.chat("person") as fourth:  # a chat the official plugin never saw
        listed, _ = turn(e2e, fourth, "!memory list")
        shown, _ = turn(e2e, fourth, "!memory profile")
        _, requests = turn(e2e, fourth, "what time is the standup, and who picks the venue?")
        seen = listed + shown + every_text(requests)
        traits = ("lives in Berlin", "plays chess", "collects old maps", "the release team")
        assert requests and not any(w in seen for w in (*EVERY_EPISODE, *traits)), seen
