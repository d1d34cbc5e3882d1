"""The Memory Console's "Migrate from the official plugin" section in a browser (the WebUI's sandboxed
page host stand-in of tests/test_console_browser.py): choose a bundle, dry run, then import. Import is
offered only after a dry run of the chosen file."""

from __future__ import annotations

import json
from pathlib import Path

from tests import official_install as oi
from tests.service_helpers import ident
from tests.test_console_browser import Console, console  # noqa: F401 - the fixture
from tests.test_migration_bundle import extract


async def test_the_console_dry_runs_and_imports_a_bundle(console: Console, tmp_path: Path) -> None:  # noqa: F811 - the imported fixture, taken by name
    c, fr = console, console.frame
    memory = c.harness.plugin.memory
    c.host.bots = ["bot-1", oi.BOT]
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps(extract(tmp_path, "chroma")), encoding="utf-8")
    await c.open()
    await c.tab("settings")
    section = fr.locator("#migrate")
    await section.wait_for()
    assert await section.locator("#migrate-write").is_disabled()
    await section.locator("#migrate-file").set_input_files(str(bundle))
    await section.locator("#migrate-dry:not([disabled])").click()
    await fr.locator("#migrate-report[data-dry-run=true]").wait_for()
    row = fr.locator(f"#migrate-chats tr[data-key='{oi.G1}']")
    assert "3 new" in await row.locator("td").nth(1).inner_text()  # episodes: active, superseded, archived
    assert (await row.locator("th").inner_text()).startswith("group 1 · bot bot-a")  # a label, the key on hover
    # Asking for the forgotten records asks for a new dry run before Import.
    await section.locator("#migrate-forgotten").check()
    assert await section.locator("#migrate-write").is_disabled()
    await section.locator("#migrate-forgotten").uncheck()
    gone = fr.locator(f"#migrate-chats tr[data-key='{oi.GONE}'] .migrate-problem")
    assert "not one this LangBot has" in await gone.inner_text()
    await fr.locator("#migrate-settings tr[data-setting=vector_weight][data-action=none]").wait_for()
    scope1 = await memory.scope_for(ident("1", bot=oi.BOT))
    assert await memory.all_episodes(scope1) == []  # the dry run wrote nothing
    await c.shot("migrate-01-dry-run")
    await section.locator("#migrate-write:not([disabled])").click()
    await c.confirm()
    await fr.locator("#migrate-report[data-dry-run=false]").wait_for()
    assert len(await memory.all_episodes(scope1)) == 3
    # The settings table above shows the overrides the import set.
    await fr.locator("#settings-table tr[data-setting=recency_half_life_days][data-origin=override]").wait_for()
    await c.shot("migrate-02-imported")
