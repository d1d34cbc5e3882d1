"""Local LangBot stack for LongTermMemory: run-local (scripts/run-local.sh) and the e2e tests.

- `devhost.provision`: the environments (`.lbvenv` with LangBot 4.11.2, `.embvenv` with the
  real embedding model) and the choice of embedder.
- `devhost.processes`: start/stop by process group, ports, readiness, logs, data-dir lock.
- `devhost.langbot_setup`: admin, models, plugins, memory KB and pipelines over LangBot's HTTP API.
- `devhost.stack`: one stack's configuration and lifecycle; `devhost.cli`: the run-local CLI.
- `devhost.lbclient`: a stdlib LangBot HTTP API client.
- `devhost.model_server`: a local OpenAI-compatible server (embeddings + a scripted chat model).
- `devhost/sitecustomize/`: forces every listener of the started processes onto 127.0.0.1.
"""
