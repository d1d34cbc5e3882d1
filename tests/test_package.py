"""The package: lean runtime requirements, every component YAML discovered cleanly, `.lbpkg` builds."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import yaml

from testhost import PLUGIN_ROOT, PluginHarness

ROOT = Path(PLUGIN_ROOT)


def test_runtime_requirements_are_lean_and_match_pyproject():
    lines = [ln.strip() for ln in (ROOT / "requirements.txt").read_text().splitlines() if ln.strip()]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert lines == project["dependencies"]
    names = {ln.split(">")[0].split("=")[0].split("<")[0].strip().lower() for ln in lines}
    assert names <= {"langbot-plugin", "pydantic", "python-dateutil", "httpx"}
    sdk = next(ln for ln in lines if ln.startswith("langbot-plugin"))
    assert ">=" in sdk and "==" not in sdk and "<" not in sdk  # lower bound only


async def test_every_component_yaml_is_discovered_without_warnings(supported_host):
    harness = PluginHarness(supported_host)
    await harness.start()
    try:
        assert harness.discovery_warnings == []
        loaded = {c.manifest.metadata.name for c in harness.controller.plugin_container.components}
    finally:
        await harness.stop()
    declared = set()
    for path in (ROOT / "components").rglob("*.yaml"):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and doc.get("kind"):
            declared.add(doc["metadata"]["name"])
    assert declared and declared == loaded
    engine = yaml.safe_load((ROOT / "components/knowledge_engine/memory_engine.yaml").read_text(encoding="utf-8"))
    schema = engine["spec"]["creation_schema"]
    assert isinstance(schema, list) and schema[0]["name"] == "embedding_model_uuid"
    forbidden = {"bot_uuid", "sender_id", "session_name", "filters"}
    assert not forbidden & {item["name"] for item in schema + engine["spec"]["retrieval_schema"]}


def test_build_produces_an_installable_lbpkg_without_tests(tmp_path):
    lbp = Path(sys.executable).parent / "lbp"
    result = subprocess.run(
        ["bash", str(ROOT / "scripts/build.sh"), str(tmp_path)], env={"LBP": str(lbp), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    [package] = list(tmp_path.glob("*.lbpkg"))
    assert package.name == "langbot-ltm-LongTermMemory-0.1.0.lbpkg"
    names = set(zipfile.ZipFile(package).namelist())
    assert {"manifest.yaml", "main.py", "requirements.txt", "assets/icon.svg", "ltm/service.py",
            "components/knowledge_engine/memory_engine.yaml",
            # the reply languages beyond a catalogue's tuple, read at run time
            "components/common/vocabulary/messages/zh_Hant.json",
            "components/common/vocabulary/messages/ja_JP.json"} <= names
    assert not [n for n in names if n.startswith(("tests/", "bench/", ".venv/", "scripts/", "pages/"))]
    # The WebUI shows readme/README_<lang>.md to users of that language and README.md to everyone else.
    for readme in ("README.md", "readme/README_zh_Hans.md", "readme/README_ja_JP.md"):
        assert readme in names, f"{readme} is not shipped"
        assert zipfile.ZipFile(package).read(readme) == (ROOT / readme).read_bytes()
    # The console ships as its one built page, identical to a fresh build of pages/console/.
    page = "components/pages/console/index.html"
    assert page in names
    assert not [n for n in names if n.startswith("components/pages/console/") and n.endswith((".js", ".css", ".json"))]
    assert zipfile.ZipFile(package).read(page) == _build_console().build()


def _build_console():
    spec = importlib.util.spec_from_file_location("build_console", ROOT / "scripts" / "build_console.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
