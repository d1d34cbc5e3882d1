#!/usr/bin/env bash
# Builds the installable .lbpkg into dist/ (or $1). `lbp build` zips the whole tree minus
# .gitignore, which would ship tests, benchmarks and page sources; so the shipped files are staged first.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "${1:-dist}")"
lbp="$(realpath -m "${LBP:-.venv/bin/lbp}")"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp -r manifest.yaml main.py requirements.txt README.md assets components ltm "$stage/"
[ -d readme ] && cp -r readme "$stage/"
# The Memory Console page is built fresh from pages/console/ into the stage (the sources are not shipped).
"${PYTHON:-python3}" scripts/build_console.py --output "$stage/components/pages/console/index.html" >/dev/null
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
mkdir -p "$out"
(cd "$stage" && "$lbp" build -o "$out" >/dev/null)
ls "$out"/*.lbpkg
