#!/usr/bin/env bash
# Runs every test of LongTermMemory on a fresh machine: creates .venv, installs the
# test dependencies listed in pyproject.toml (only when that file changed; devhost/installer.py), runs the
# static checks (ruff, mypy, import contracts) and then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.deps-$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ]; then
  .venv/bin/python - <<'PYEOF' > .venv/requirements-all.txt
import tomllib
data = tomllib.load(open("pyproject.toml", "rb"))["project"]
for dep in data["dependencies"]:
    print(dep)
for group in data.get("optional-dependencies", {}).values():
    for dep in group:
        print(dep)
PYEOF
  # uv when it can be had (parallel; pip's sources and limits passed on), else pip; progress on stderr.
  "$PY" -m devhost.cli install --venv .venv -r .venv/requirements-all.txt
  rm -f .venv/.deps-*
  touch "$stamp"
fi
bash scripts/install-browser.sh
# Static checks first: lint, types (strict on ltm/), the layer contracts of docs/ARCHITECTURE.md.
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/lint-imports --no-cache >/dev/null || .venv/bin/lint-imports --no-cache
exec .venv/bin/python -m pytest "$@"
