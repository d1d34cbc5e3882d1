#!/usr/bin/env bash
# Builds the installable .lbpkg into dist/ (or $1). `lbp build` zips the whole tree minus
# .gitignore, which would ship tests, benchmarks and page sources; so the shipped files are staged first.
#
# lbp (from the langbot-plugin package) is taken from $LBP, else .venv/bin/lbp (made by
# scripts/test.sh), else .lbvenv/bin/lbp (made by scripts/run-local.sh); when none exists,
# .venv is created with the plugin's runtime requirements (requirements.txt), which bring lbp.
# LTM_VENV overrides the .venv path. Nothing is written to the output dir unless the build works.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "${1:-dist}")"
venv="${LTM_VENV:-.venv}"
if [ -n "${LBP:-}" ]; then
  lbp="$(realpath -m "$LBP")"
  if [ ! -x "$lbp" ]; then
    echo "build: LBP=$LBP is not an executable lbp (unset LBP to use or create $venv/bin/lbp)" >&2
    exit 1
  fi
elif [ -x "$venv/bin/lbp" ]; then
  lbp="$(realpath -m "$venv/bin/lbp")"
elif [ -z "${LTM_VENV:-}" ] && [ -x .lbvenv/bin/lbp ]; then
  lbp="$(realpath -m .lbvenv/bin/lbp)"
else
  PY="${PYTHON:-python3.11}"
  command -v "$PY" >/dev/null 2>&1 || PY=python3
  echo "build: no lbp found; creating $venv with requirements.txt (langbot-plugin brings lbp; about a minute)" >&2
  if [ ! -x "$venv/bin/python" ]; then
    "$PY" -m venv "$venv"
  fi
  if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements.txt >&2; then
    echo "build: installing requirements.txt into $venv failed; run 'bash scripts/test.sh' (it creates .venv) or set LBP=/path/to/lbp" >&2
    exit 1
  fi
  lbp="$(realpath -m "$venv/bin/lbp")"
fi
stage="$(mktemp -d)"
built="$(mktemp -d)"
trap 'rm -rf "$stage" "$built"' EXIT
cp -r manifest.yaml main.py requirements.txt README.md assets components ltm "$stage/"
[ -d readme ] && cp -r readme "$stage/"
# The Memory Console page is built fresh from pages/console/ into the stage (the sources are not shipped).
"${PYTHON:-python3}" scripts/build_console.py --output "$stage/components/pages/console/index.html" >/dev/null
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
(cd "$stage" && "$lbp" build -o "$built" >/dev/null)
mkdir -p "$out"
cp "$built"/*.lbpkg "$out/"
ls "$out"/*.lbpkg
