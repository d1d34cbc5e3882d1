"""Local LangBot stack for LongTermMemory: run-local (scripts/run-local.sh) and the e2e tests.

- `devhost.stack`: create `.lbvenv` (LangBot 4.11.2), start/stop the model server, the plugin
  runtime and LangBot on loopback, and set up admin, models, plugins, memory KB and pipeline.
- `devhost.lbclient`: a stdlib LangBot HTTP API client.
- `devhost.model_server`: a local OpenAI-compatible server (embeddings + a scripted chat model).
- `devhost/sitecustomize/`: forces every listener of the started processes onto 127.0.0.1.
"""
