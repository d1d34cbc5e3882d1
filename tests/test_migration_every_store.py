"""An official installation whose memory KB is on Qdrant or SeekDB migrates like one on Chroma (issue 34,
"Done means": fixtures on Chroma, Qdrant and SeekDB, migrated). `tests/test_migration_bundle.py` imports
the Chroma bundle; here the bundles the extractor reads from the other two are imported: every episode
with its status and supersede link (on Qdrant the official ids are UUIDs), profiles, audit and candidates
in their chats, another space untouched, and a second import writes nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import official_install as oi
from tests.service_helpers import ident
from tests.test_migration_bundle import _statuses

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
# Built and read in a process of its own: embedded SeekDB is one instance per process, which keeps the
# first folder it opened, so a second installation in this process would meet the first one's collection.
BUILD_AND_EXTRACT = """
import sys
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/scripts"]
from tests import official_install
import export_official
root = official_install.build(Path(sys.argv[2]), sys.argv[3])
sys.exit(export_official.main(["--langbot-dir", str(root), "--out", sys.argv[4]]))
"""


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    made = {}
    for store in ("qdrant", "seekdb"):
        folder = tmp_path_factory.mktemp(store)
        out = folder / "bundle.json"
        done = subprocess.run([sys.executable, "-c", BUILD_AND_EXTRACT, str(REPO), str(folder / "install"), store,
                               str(out)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        made[store] = out.read_text(encoding="utf-8")
    return made


@pytest.mark.parametrize("source", ["qdrant", "seekdb"])
async def test_a_bundle_read_from_each_store_migrates_every_part_once(harness, kb, bundles, source):
    harness.host.bots = [oi.BOT]
    memory = harness.plugin.memory
    bundle = bundles[source]
    other = await memory.scope_for(ident("77", bot=oi.BOT))
    await memory.remember(other, {"content": "group 77 keeps its own memory"})

    done = (await memory.migrate_bundle(bundle, dry_run=False)).to_dict()
    assert {part: row["write"] for part, row in done["totals"].items()} == {
        "profiles": 3, "episodes": 5, "audit": 3, "candidates": 2}, done["totals"]
    scope1 = await memory.scope_for(ident("1", bot=oi.BOT))
    by_content = {e["content"]: e for e in (await memory.export_episodes(scope1, _statuses()))["episodes"]}
    assert {c: e["status"] for c, e in by_content.items()} == {
        "the standup is at 10am": "active", "the standup is at 9am": "superseded",
        "the old retreat plan": "archived"}
    new, old = by_content["the standup is at 10am"], by_content["the standup is at 9am"]
    assert old["superseded_by"] == new["id"] and new["original_id"] == oi._point_id("e11111111111", source)
    assert (await memory.export_profiles(scope1))["speaker_profiles"]["u1"]["facts"]["traits"]["city"]["history"]
    assert len([e for e in await memory.audit_export(scope1) if (e.get("meta") or {}).get("official_audit_id")]) == 3
    person2 = await memory.scope_for(ident("2", bot=oi.BOT, kind="person"))
    assert [e.content for e in await memory.all_episodes(person2)] == ["Bo studies openings every Sunday"]
    assert [e.content for e in await memory.all_episodes(other)] == ["group 77 keeps its own memory"]

    again = (await memory.migrate_bundle(bundle, dry_run=False)).to_dict()
    assert all(row["write"] == 0 for row in again["totals"].values()), again["totals"]
